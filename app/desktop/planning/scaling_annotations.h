// The weak-scaling reading drawn over the Grid Explorer's scaling heatmap: an
// outline around each world size's best fitting grid, over each column whose
// throughput per GPU dropped the phase that grew most ("sync", "a2a", ...;
// "memory" where no grid fits, one label over a run of such columns), and the
// hover texts of cells and labels. The reading is
// planner::ScalingResult::weakScaling, the wording report/weak_scaling_text.h.
#pragma once

#include <QObject>
#include <QRectF>
#include <QString>
#include <cstddef>
#include <functional>
#include <vector>

#include "shardscope/planner/scaling_sweep.h"

class QCPItemRect;
class QCPItemText;
class QCustomPlot;

namespace shardscope::app {

class ScalingAnnotations : public QObject {
  Q_OBJECT

 public:
  // Where the heatmap's result is read (the planning session's, which outlives the plot).
  using ScalingSource = std::function<const planner::ScalingResult&()>;
  // Draws on `plot`, whose x axis is the world-size column and y axis the M row (the plot is the parent).
  ScalingAnnotations(QCustomPlot* plot, ScalingSource scaling);

  // Draws the annotations of the source's current result, replacing the previous ones. No replot.
  void update();

  // The outlines around each world size's best fitting grid, in column order.
  [[nodiscard]] const std::vector<QCPItemRect*>& bestMarkers() const { return best_markers_; }
  // The label drawn over column n_index: "sync", "memory", ...; "" where none is.
  [[nodiscard]] QString labelOver(std::size_t n_index) const;
  // The drawn labels' rectangles in the plot's pixels, as last laid out.
  [[nodiscard]] std::vector<QRectF> labelRects() const;
  // Whether the labels are turned upright (too wide side by side for their columns).
  [[nodiscard]] bool labelsUpright() const { return upright_; }
  // What the outlines and the labels shown mean, for the heatmap's status line.
  [[nodiscard]] QString legendText() const;
  // The hover text at a pixel of the plot: a cell's grid and step by phase, or
  // a column's best grid and the cause of its drop above or below it; "" elsewhere.
  [[nodiscard]] QString toolTipAt(QPointF pos) const;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct Column {
    QString label;  // "" where throughput per GPU did not drop
    planner::StepPhase cause = planner::StepPhase::Memory;
    QString description;  // report::weakScalingDescription
    int best_row = -1;    // the best fitting grid's M row, -1: none fits
  };
  void clear();
  void addLabel(std::size_t first, std::size_t last);
  void layOutLabels();
  [[nodiscard]] int columnAt(double x) const;

  QCustomPlot* plot_;
  ScalingSource scaling_;
  std::vector<Column> columns_;
  std::vector<QCPItemRect*> best_markers_;
  std::vector<QCPItemText*> labels_;
  std::vector<int> label_of_column_;  // index into labels_, -1: none
  bool upright_ = false;
};

}  // namespace shardscope::app
