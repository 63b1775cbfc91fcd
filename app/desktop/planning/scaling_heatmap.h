// The Grid Explorer's heatmap: predicted throughput per GPU over world size
// N (columns, 8..4,096) x sharding group size M (rows), one cell per planned
// grid (the better layout), on a log colour scale from 1/1000 of the best
// cell to the best; each cell says its share of the best cell ("OOM" where
// nothing fits), the chosen grid's cell is outlined, and the weak-scaling
// reading (ScalingAnnotations: each N's best grid, the cause of each drop)
// is drawn over it. A click on a cell emits its row and column.
#pragma once

#include <qcustomplot.h>

#include <cstddef>
#include <vector>

#include "scaling_annotations.h"

namespace shardscope::app {

class ScalingHeatmap : public QCustomPlot {
  Q_OBJECT

 public:
  // `scaling`: where the heatmap's result is read (the planning session's, which outlives the plot).
  explicit ScalingHeatmap(ScalingAnnotations::ScalingSource scaling, QWidget* parent = nullptr);

  // Draws the source's current result, annotations included. No replot (setChosen replots).
  void fill();
  // Outlines the cell of `grid` where the heatmap has one (nullptr: none).
  void setChosen(const planner::GridResult* grid);

  // Planned cells (a grid was priced) and those of them that fit, of the result drawn last.
  [[nodiscard]] int plannedCells() const;
  [[nodiscard]] int fittingCells() const { return fitting_; }
  [[nodiscard]] ScalingAnnotations* annotations() const { return annotations_; }

 signals:
  void cellClicked(std::size_t m_index, std::size_t n_index);

 private:
  void onMousePress(QMouseEvent* event);

  ScalingAnnotations::ScalingSource scaling_;
  QCPColorMap* map_;
  QCPItemRect* marker_;
  ScalingAnnotations* annotations_;
  std::vector<QCPItemText*> labels_;
  int fitting_ = 0;
};

}  // namespace shardscope::app
