// The Grid Explorer: every grid (M x R, layout) of the project's cluster,
// planned by planner::sweep off the GUI thread, as stacked step-time bars,
// memory per GPU against HBM and a table. Clicking a row or a bar chooses the
// grid (stored in the project). Edits rerun the sweep (debounced); a result
// of an older run is dropped.
#pragma once

#include <QFuture>
#include <QWidget>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "shardscope/planner/sweep.h"

class QCPAbstractPlottable;
class QCPBars;
class QCPItemStraightLine;
class QCPItemText;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QProgressBar;
class QPushButton;
class QStandardItemModel;
class QTableView;
class QTimer;

namespace shardscope::app {

class ProjectDocument;

// What one sweep run hands back to the GUI thread: a plain value.
struct SweepOutcome {
  planner::SweepResult result;
  std::string error;  // non-empty: nothing was planned (malformed project, exception)
};

class GridExplorerPage : public QWidget {
  Q_OBJECT

 public:
  // Columns of the grid table.
  enum Column {
    ColRank, ColM, ColR, ColLayout, ColStep, ColEmbedding, ColAllToAll, ColReplicaSync, ColDense,
    ColSamples, ColMemory, ColMaxMean, ColGap, ColFits, ColumnCount
  };
  static constexpr int kGridIndexRole = Qt::UserRole + 1;  // index into result().grids, on ColRank
  static constexpr int kSortRole = Qt::UserRole + 2;

  explicit GridExplorerPage(ProjectDocument* document, QWidget* parent = nullptr);
  ~GridExplorerPage() override;

  [[nodiscard]] const planner::SweepResult& result() const { return result_; }
  [[nodiscard]] QTableView* gridTable() const { return table_; }
  [[nodiscard]] QStandardItemModel* gridModel() const { return model_; }
  [[nodiscard]] int stepBarCount() const;    // keys of the stacked step bars (fitting grids)
  [[nodiscard]] int memoryBarCount() const;  // keys of the memory bars (every grid)
  [[nodiscard]] bool isRunning() const { return running_; }
  [[nodiscard]] quint64 currentJobId() const { return job_id_; }
  [[nodiscard]] quint64 shownJobId() const { return shown_job_id_; }
  [[nodiscard]] QString messageText() const;
  [[nodiscard]] QString chosenText() const { return chosen_text_; }

  // Chooses the grid shown in table row `row` (as sorted in the view).
  void chooseRow(int row);

 public slots:
  void rerun();   // start a sweep now (cancels a running one)
  void cancel();  // stop the running sweep; the grids done so far are shown

 signals:
  void sweepFinished(quint64 job_id);
  void gridChosen(const QString& text);

 private:
  void scheduleRerun();
  void onProgress(quint64 job_id, int done, int total);
  void onFinished(quint64 job_id, const SweepOutcome& outcome);
  void showResult();
  void fillTable();
  void fillPlots();
  void chooseGrid(int grid_index);
  void onPlottableClick(QCPAbstractPlottable* plottable, int data_index, QMouseEvent* event);

  ProjectDocument* document_;
  QTimer* debounce_;
  QProgressBar* progress_;
  QPushButton* cancel_button_;
  QLabel* message_;
  QCustomPlot* step_plot_;
  QCustomPlot* memory_plot_;
  std::vector<QCPBars*> step_bars_;  // embedding, all-to-all, replica sync, dense (stacked)
  QCPBars* memory_bars_;
  QCPBars* memory_over_bars_;  // grids that do not fit, in red
  QCPItemStraightLine* hbm_line_;
  QCPItemText* hbm_label_;
  std::vector<QCPItemText*> step_totals_;  // step ms above each stacked bar
  QStandardItemModel* model_;
  QTableView* table_;

  quint64 job_id_ = 0;        // the newest run
  quint64 shown_job_id_ = 0;  // the run whose result is shown
  bool running_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  std::vector<QFuture<SweepOutcome>> futures_;  // outstanding runs, waited for on destruction

  planner::SweepResult result_;
  double hbm_gib_ = 0;
  std::vector<int> step_keys_;    // bar key -> grid index
  std::vector<int> memory_keys_;  // bar key -> grid index
  QString chosen_text_;
};

}  // namespace shardscope::app
