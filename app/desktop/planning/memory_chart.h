// The Grid Explorer's memory chart: each grid's peak memory per GPU (the max
// over its ranks) against the GPU's HBM, a dashed line; the grids that do not
// fit in red. The Memory per GPU tab.
#pragma once

#include <cstdint>
#include <vector>

#include "grid_bars_chart.h"

namespace shardscope::app {

class MemoryChart : public GridBarsChart {
  Q_OBJECT

 public:
  explicit MemoryChart(QWidget* parent = nullptr);

  // The grids to draw (indices into `sweep.grids`, in bar order) against `hbm_bytes` of HBM per GPU.
  void setGrids(const planner::SweepResult& sweep, std::vector<int> keys, std::uint64_t hbm_bytes);
  // Bars drawn: every grid, those that fit and those that do not.
  [[nodiscard]] int barCount() const;

 private:
  QCPBars* fits_;  // plottable 0
  QCPBars* over_;  // plottable 1: grids that do not fit, in red
  QCPItemStraightLine* hbm_line_;
  QCPItemText* hbm_label_;
};

}  // namespace shardscope::app
