// The Grid Explorer: every grid (M x R, layout) of the project's cluster, as
// stacked step-time bars (ms or share of the step, StepTimeChart), memory per
// GPU against HBM (MemoryChart), load imbalance (ImbalanceChart), the step
// against the sync interval (SyncIntervalChart), a table (GridTable), and a
// heatmap of predicted throughput per GPU over world size (8..4,096) x M with
// its weak-scaling reading (ScalingHeatmap: the best grid of each world size,
// the cause of each drop). The page composes them: the controls, the answer
// in one sentence, the layout, and what the window's PlanningSession says
// (sweeps off the GUI thread, debounced, stale results dropped). Clicking a
// row, a bar or a heatmap cell chooses the grid (a cell at another world size
// rescales the cluster, as one undoable edit).
#pragma once

#include <QWidget>
#include <vector>

#include "grid_table.h"
#include "imbalance_chart.h"
#include "memory_chart.h"
#include "scaling_heatmap.h"
#include "shardscope/planner/sweep.h"
#include "step_time_chart.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace shardscope::app {

class CalibrationBar;
class PlanningSession;
class SyncIntervalChart;

class GridExplorerPage : public QWidget {
  Q_OBJECT

 public:
  explicit GridExplorerPage(PlanningSession* session, QWidget* parent = nullptr);

  [[nodiscard]] PlanningSession* session() const { return session_; }
  [[nodiscard]] const planner::SweepResult& result() const;
  // The charts and the table it composes.
  [[nodiscard]] GridTable* gridTable() const { return table_; }
  [[nodiscard]] QStandardItemModel* gridModel() const { return table_->gridModel(); }
  [[nodiscard]] StepTimeChart* stepPlot() const { return step_plot_; }
  [[nodiscard]] MemoryChart* memoryPlot() const { return memory_plot_; }
  [[nodiscard]] ImbalanceChart* imbalancePlot() const { return imbalance_plot_; }
  [[nodiscard]] ScalingHeatmap* heatmapPlot() const { return heatmap_plot_; }
  // The heatmap's best-grid outlines, drop labels and hover texts.
  [[nodiscard]] ScalingAnnotations* scalingAnnotations() const { return heatmap_plot_->annotations(); }
  // Step time of the Plan page's grid against the replica sync interval k.
  [[nodiscard]] SyncIntervalChart* syncPlot() const { return sync_plot_; }
  // The outline around the chosen grid's bar in the step, memory and imbalance charts.
  [[nodiscard]] const std::vector<QCPItemRect*>& chosenMarkers() const { return chosen_markers_; }
  [[nodiscard]] CalibrationBar* calibrationBar() const { return calibration_bar_; }
  [[nodiscard]] int stepBarCount() const;      // keys of the stacked step bars (fitting grids)
  [[nodiscard]] int memoryBarCount() const;    // keys of the memory bars (every grid)
  [[nodiscard]] int heatmapCellCount() const;  // planned cells shown in the heatmap
  [[nodiscard]] bool isRunning() const;
  [[nodiscard]] quint64 currentJobId() const;
  [[nodiscard]] quint64 shownJobId() const;
  [[nodiscard]] QString messageText() const;
  [[nodiscard]] QString chosenText() const { return chosen_text_; }
  // The answer in one sentence above the charts (the decision report's wording).
  [[nodiscard]] QString decisionText() const;

  // Step bars in ms (default: zoomed on the best grids) or as each part's share of the step (%).
  void setStepShares(bool shares);
  void setStepScale(StepTimeChart::Scale scale);
  // The project's replica sync interval (an undoable edit; the sweep reruns).
  void setSyncInterval(int steps);
  // The trainer the plans are for (an undoable edit; the sweep reruns).
  void setTarget(core::PlanTarget target);
  // Chooses the grid shown in table row `row` (as sorted in the view).
  void chooseRow(int row);
  // Chooses the heatmap cell (row m_index, column n_index of session()->scaling()).
  void chooseHeatmapCell(std::size_t m_index, std::size_t n_index);

 public slots:
  void rerun();
  void cancel();

 signals:
  void sweepFinished(quint64 job_id);
  void gridChosen(const QString& text);

 private:
  void buildControls();
  void buildDecision();
  QWidget* buildLayout();
  void onSweepStarted();
  void onProgress(int done, int total);
  void onFinished(quint64 job_id);
  void showChosen();
  void fillPlots();
  void fillHeatmap();
  void showDecision(int chosen);

  PlanningSession* session_;
  QProgressBar* progress_;
  QPushButton* cancel_button_;
  QLabel* message_;
  QComboBox* step_units_;
  QSpinBox* sync_interval_;
  QComboBox* target_;
  StepTimeChart* step_plot_;
  QLabel* decision_;
  MemoryChart* memory_plot_;
  ImbalanceChart* imbalance_plot_;
  ScalingHeatmap* heatmap_plot_;
  SyncIntervalChart* sync_plot_;
  std::vector<QCPItemRect*> chosen_markers_;
  QLabel* heatmap_status_;
  QTabWidget* side_tabs_;
  GridTable* table_;
  CalibrationBar* calibration_bar_;
  QString chosen_text_;
};

}  // namespace shardscope::app
