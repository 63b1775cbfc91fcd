// The Grid Explorer: every grid (M x R, layout) of the project's cluster, as
// stacked step-time bars (ms or share of the step), memory per GPU against
// HBM, load imbalance, a table, and a heatmap of predicted throughput per
// GPU over world size (8..4,096) x M with its weak-scaling reading (the
// best grid of each world size, the cause of each drop). The sweeps come from the window's
// PlanningSession (off the GUI thread, debounced, stale results dropped).
// Clicking a row, a bar or a heatmap cell chooses the grid (a cell at
// another world size rescales the cluster, as one undoable edit).
#pragma once

#include <QWidget>
#include <vector>

#include "shardscope/planner/sweep.h"
#include "step_time_chart.h"

class QCPAbstractPlottable;
class QCPBars;
class QCPColorMap;
class QCPItemStraightLine;
class QCPItemText;
class QCPItemRect;
class QComboBox;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QProgressBar;
class QPushButton;
class QStandardItemModel;
class QSpinBox;
class QTabWidget;
class QTableView;

namespace shardscope::app {

class CalibrationBar;
class GridTickLabels;
class ScalingAnnotations;
class SyncIntervalChart;
class PlanningSession;

class GridExplorerPage : public QWidget {
  Q_OBJECT

 public:
  // Columns of the grid table.
  enum Column {
    ColRank,
    ColM,
    ColR,
    ColLayout,
    ColStep,
    ColEmbedding,
    ColAllToAll,
    ColReplicaSync,
    ColDense,
    ColSamples,
    ColMemory,
    ColMaxMean,
    ColGap,
    ColFits,
    ColumnCount
  };
  static constexpr int kGridIndexRole = Qt::UserRole + 1;  // index into result().grids, on ColRank
  static constexpr int kSortRole = Qt::UserRole + 2;

  explicit GridExplorerPage(PlanningSession* session, QWidget* parent = nullptr);

  [[nodiscard]] PlanningSession* session() const { return session_; }
  [[nodiscard]] const planner::SweepResult& result() const;
  [[nodiscard]] QTableView* gridTable() const { return table_; }
  [[nodiscard]] QStandardItemModel* gridModel() const { return model_; }
  [[nodiscard]] StepTimeChart* stepPlot() const { return step_plot_; }
  [[nodiscard]] QCustomPlot* memoryPlot() const { return memory_plot_; }
  [[nodiscard]] QCustomPlot* imbalancePlot() const { return imbalance_plot_; }
  [[nodiscard]] QCustomPlot* heatmapPlot() const { return heatmap_plot_; }
  // The heatmap's best-grid outlines, drop labels and hover texts.
  [[nodiscard]] ScalingAnnotations* scalingAnnotations() const { return scaling_annotations_; }
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
  void buildMemoryPlot();
  void buildImbalancePlot();
  void buildHeatmap();
  QCPItemRect* addChosenMarker(QCustomPlot* plot);
  static void markChosen(QCPItemRect* marker, const std::vector<QCPBars*>& bars, const std::vector<int>& keys,
                         int chosen);
  void buildTable();
  void onSweepStarted();
  void onProgress(int done, int total);
  void onFinished(quint64 job_id);
  void showChosen();
  void fillTable();
  void fillPlots();
  void fillStepPlot();
  void markCalibratedColumns();
  void showDecision(int chosen);
  void fillHeatmap();
  void onPlottableClick(QCPAbstractPlottable* plottable, int data_index, QMouseEvent* event);
  void onHeatmapClick(QMouseEvent* event);

  PlanningSession* session_;
  QProgressBar* progress_;
  QPushButton* cancel_button_;
  QLabel* message_;
  QComboBox* step_units_;
  QSpinBox* sync_interval_;
  QComboBox* target_;
  StepTimeChart* step_plot_;
  QLabel* decision_;
  QCustomPlot* memory_plot_;
  QCustomPlot* imbalance_plot_;
  QCustomPlot* heatmap_plot_;
  SyncIntervalChart* sync_plot_;
  std::vector<QCPItemRect*> chosen_markers_;
  QLabel* heatmap_status_;
  QTabWidget* side_tabs_;
  QCPBars* memory_bars_;
  QCPBars* memory_over_bars_;  // grids that do not fit, in red
  QCPBars* imbalance_bars_;
  QCPItemStraightLine* hbm_line_;
  QCPItemText* hbm_label_;
  QCPColorMap* heatmap_;
  QCPItemRect* heatmap_marker_;
  ScalingAnnotations* scaling_annotations_ = nullptr;
  GridTickLabels* memory_ticks_ = nullptr;
  GridTickLabels* imbalance_ticks_ = nullptr;
  std::vector<QCPItemText*> heatmap_labels_;
  QStandardItemModel* model_;
  QTableView* table_;
  CalibrationBar* calibration_bar_;

  double hbm_gib_ = 0;
  std::vector<int> step_keys_;    // bar key -> grid index
  std::vector<int> memory_keys_;  // bar key -> grid index (memory and imbalance plots)
  QString chosen_text_;
};

}  // namespace shardscope::app
