// The Plan page: the shard plan of the chosen grid (else the best fitting
// one), per rank and per table. A header names the grid, its step time, fit,
// algorithm and gap to the lower bound, and lists its problems in red; per-
// rank stacked bars of load by table; a tables x ranks placement heatmap; a
// sortable rank table and table list; the imbalance statistics and the
// tables that make the slowest rank slow; and the project's constraints.
// Right-clicking a table (bar segment, heatmap cell or row label, list row)
// pins it to a group rank, forces or forbids a sharding type or clears its
// constraints: each one undoable project edit, after which the session
// re-plans. Every shard is priced again (planner::breakdownOf) off the GUI
// thread for big plans, with job ids so a stale result is dropped.
#pragma once

#include <QWidget>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/device.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/report/plan_snapshot.h"

class QCustomPlot;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QMenu;
class QPushButton;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTableWidget;

namespace shardscope::app {

class JobTracker;
class PlacementHeatmap;
class PlanningSession;
class RankLoadChart;
class RankLoadModel;
class TableLoadModel;

class PlanPage : public QWidget {
  Q_OBJECT

 public:
  explicit PlanPage(PlanningSession* session, QWidget* parent = nullptr);
  ~PlanPage() override;

  [[nodiscard]] PlanningSession* session() const { return session_; }

  // The charts, for the Export page: they hold what the page shows and
  // render with QCustomPlot::toPixmap(w, h) also while the page is hidden
  // (wait with waitUntilShown first: big plans are priced off-thread).
  [[nodiscard]] QCustomPlot* rankLoadPlot() const;
  [[nodiscard]] QCustomPlot* placementPlot() const;
  [[nodiscard]] RankLoadChart* rankLoadChart() const { return rank_chart_; }
  [[nodiscard]] PlacementHeatmap* placementHeatmap() const { return heatmap_; }

  [[nodiscard]] QTableView* rankTable() const { return rank_table_; }
  [[nodiscard]] RankLoadModel* rankModel() const { return rank_model_; }
  [[nodiscard]] QTableView* tableList() const { return table_list_; }
  [[nodiscard]] TableLoadModel* tableModel() const { return table_model_; }
  [[nodiscard]] QTableWidget* criticalTables() const { return critical_tables_; }
  [[nodiscard]] QListWidget* constraintList() const { return constraint_list_; }

  // What is shown (nullptr: nothing planned yet, or nothing to plan).
  [[nodiscard]] std::shared_ptr<const report::PlanSnapshot> snapshot() const { return shown_; }
  [[nodiscard]] QString headerText() const;        // plain text of the header and its problems
  [[nodiscard]] QString imbalanceText() const;     // plain text of the statistics
  [[nodiscard]] QString measuredNoteText() const;  // what the measured overlay shows, or why there is none
  // A breakdown is being computed off the GUI thread.
  [[nodiscard]] bool isPricing() const { return pricing_; }
  // Runs the event loop until the page shows the session's current grid
  // (the session idle and its breakdown done); false after timeout_ms.
  bool waitUntilShown(int timeout_ms);
  // Plans needing more shard prices than this are broken down off the GUI
  // thread (default 5,000: a few ms inline). For tests.
  void setInlineWorkLimit(std::size_t shard_prices) { inline_work_ = shard_prices; }

  // The measured embedding load of the newest complete run of a plan in a
  // trace store: per group rank, forward + backward compute in ms per step
  // (NaN where none was measured), and the device the run ran on.
  struct MeasuredLoad {
    qint64 run = 0;
    std::vector<double> compute_ms;
    core::DeviceInfo device;
  };
  // Reads it (store path, plan, cancel flag), off the GUI thread; nullopt
  // when the store holds no complete run of the plan. The main window's
  // reads the trace store (profiler/workflow/stored_runs.h); without a source
  // the page shows no overlay.
  using MeasuredSource = std::function<core::Result<std::optional<MeasuredLoad>>(
      const std::string& store, const core::ShardPlan& plan, const std::atomic<bool>* cancel)>;
  void setMeasuredSource(MeasuredSource source);
  // The trace store whose runs the rank-load chart overlays: the newest
  // complete run of the shown plan, its measured embedding compute per group
  // rank (read off the GUI thread). Call refreshMeasured after a new run.
  void setStorePath(const QString& path);
  void refreshMeasured();
  // A run on another device: its per-rank shares of the group's embedding work, scaled to the predicted total.
  [[nodiscard]] std::vector<double> scaledToPrediction(const std::vector<double>& measured) const;
  void showMeasuredNote(const QString& text);

  // The constraint edits the context menus make; each is one undoable
  // project edit (ignored for a table the project's model does not have).
  void pinTable(const QString& table, std::uint32_t group_rank);
  void forceShardingType(const QString& table, core::ShardingType type);
  void forbidShardingType(const QString& table, core::ShardingType type);
  void clearTableConstraints(const QString& table);
  // Removes line `row` of the constraint list.
  void removeConstraint(int row);

  // The context menu of `table` ("Pin to group rank", "Force sharding type",
  // "Forbid sharding type", "Clear constraints of t3"); the caller owns it.
  [[nodiscard]] QMenu* tableMenu(const QString& table, QWidget* parent = nullptr);

 signals:
  // The page shows a new snapshot (or none).
  void planShown();
  // The measured overlay changed: run > 0 shown, 0 none for this plan.
  void measuredShown(qint64 run);

 private:
  struct Key {
    quint64 job = 0;
    std::uint32_t group_size = 0;
    int layout = -1;
    bool chosen = false;
    bool operator==(const Key&) const = default;
  };
  void buildTabs();
  [[nodiscard]] QGroupBox* buildImbalanceBox();
  [[nodiscard]] QGroupBox* buildConstraintsBox();
  [[nodiscard]] const planner::GridResult* currentGrid() const;
  [[nodiscard]] Key currentKey() const;
  void refresh();  // the session's grid changed (or may have)
  void showSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot, const Key& key);
  void showHeader();
  void showImbalance();
  void showConstraints();
  void showStatus();
  void editConstraints(const core::Constraints& constraints, const std::string& description);
  void openTableMenu(const QString& table, const QPoint& global_pos);
  [[nodiscard]] bool hasTable(const std::string& table) const;

  PlanningSession* session_;
  QLabel* header_;
  QLabel* problems_;
  QLabel* status_;
  RankLoadChart* rank_chart_;
  PlacementHeatmap* heatmap_;
  QTabWidget* tabs_;
  RankLoadModel* rank_model_;
  QSortFilterProxyModel* rank_proxy_;
  QTableView* rank_table_;
  TableLoadModel* table_model_;
  QSortFilterProxyModel* table_proxy_;
  QTableView* table_list_;
  QLineEdit* table_filter_;
  QLabel* imbalance_;
  QTableWidget* critical_tables_;
  QListWidget* constraint_list_;
  QPushButton* remove_constraint_;

  std::shared_ptr<const report::PlanSnapshot> shown_;
  Key shown_key_;
  Key pending_key_;
  bool pricing_ = false;
  std::size_t inline_work_;
  bool columns_sized_ = false;
  QLabel* measured_note_;      // what the measured overlay shows, or why there is none
  JobTracker* measured_jobs_;  // the overlay's store reads
  MeasuredSource measured_source_;
  QString store_path_;
  JobTracker* pricing_jobs_;  // breakdowns off the GUI thread; a result of an older one is dropped
  QString header_plain_;
};

}  // namespace shardscope::app
