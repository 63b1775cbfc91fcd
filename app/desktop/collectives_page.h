// The collectives of one run of the project's trace store: bus bandwidth per
// call against message size for every op and group (sharding, replica,
// world), beside the alpha-beta curve the planner prices that op and group
// with (default constants dashed, the project's calibration solid), filtered
// by op and group, and the calls that fall far below their curve listed worst
// first. The store read and the analysis (profiler::collectiveBandwidth) run
// off the GUI thread through a JobTracker.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>
#include <string>

#include "shardscope/core/calibration.h"
#include "shardscope/profiler/analysis/collective_bandwidth.h"

class QComboBox;
class QLabel;
class QStackedWidget;
class QTableWidget;

namespace shardscope::app {

class CollectivesChart;
class JobTracker;
class ProjectDocument;

class CollectivesPage : public QWidget {
  Q_OBJECT

 public:
  // Outlier table columns.
  enum Column { Op = 0, Group, Step, Seq, Size, BusBw, ModelBusBw, Ratio, SlowestRank, kColumns };
  // The outlier table lists at most this many calls (the worst).
  static constexpr int kMaxOutlierRows = 1000;

  explicit CollectivesPage(ProjectDocument* document, QWidget* parent = nullptr);
  ~CollectivesPage() override;

  void setStorePath(const QString& path);
  // Analyses run `run` of the store off the GUI thread; runShown follows.
  void showRun(qint64 run);
  [[nodiscard]] qint64 run() const { return run_; }

  // What is shown (nullptr before the first analysis arrives, or when it failed).
  [[nodiscard]] const profiler::CollectiveBandwidth* shown() const { return shown_.get(); }
  [[nodiscard]] CollectivesChart* chart() const { return chart_; }
  [[nodiscard]] QTableWidget* outlierTable() const { return outliers_; }
  // "All ops" (data: "") then each op of the run (data: the op).
  [[nodiscard]] QComboBox* opFilter() const { return op_box_; }
  // "All groups" (data: -1) then each group of the run (data: its CollectiveGroup).
  [[nodiscard]] QComboBox* groupFilter() const { return group_box_; }
  [[nodiscard]] QString headerText() const;
  // What the planner prices each curve as and over which link.
  [[nodiscard]] QString summaryToolTip() const;
  // The notes of the analysis, or why nothing is drawn.
  [[nodiscard]] QString messageText() const;
  // True while the page shows why the run has nothing to draw instead of the chart.
  [[nodiscard]] bool isEmptyStateShown() const;

 signals:
  // An analysis arrived (`message` empty) or failed (`message` says why).
  void runShown(qint64 run, const QString& message);

 private:
  void show(std::shared_ptr<const profiler::CollectiveBandwidth> result);
  void showNoRun();
  void showEmpty(const QString& why);
  void clearShown();
  void fillFilters();
  void applyFilters();
  void fillOutliers(const std::string& op, std::optional<profiler::CollectiveGroup> group);

  ProjectDocument* document_;
  QString store_path_;
  qint64 run_ = 0;
  std::shared_ptr<const profiler::CollectiveBandwidth> shown_;
  std::optional<core::Calibration> shown_calibration_;  // what the shown curves were priced with
  QLabel* header_;
  QComboBox* op_box_;
  QComboBox* group_box_;
  QLabel* summary_;
  QLabel* message_;
  QStackedWidget* stack_;
  QLabel* empty_;
  QString empty_reason_;  // what the empty state says, as plain text
  CollectivesChart* chart_;
  QLabel* outlier_title_;
  QTableWidget* outliers_;
  JobTracker* jobs_;
};

}  // namespace shardscope::app
