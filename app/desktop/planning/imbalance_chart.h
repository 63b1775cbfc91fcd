// The Grid Explorer's imbalance chart: each grid's load imbalance (max over
// mean of the per-rank loads), as bars standing on 1.0 (a balanced grid has
// none). The Imbalance tab.
#pragma once

#include <vector>

#include "grid_bars_chart.h"

namespace shardscope::app {

class ImbalanceChart : public GridBarsChart {
  Q_OBJECT

 public:
  explicit ImbalanceChart(QWidget* parent = nullptr);

  // The grids to draw (indices into `sweep.grids`, in bar order).
  void setGrids(const planner::SweepResult& sweep, std::vector<int> keys);

 private:
  QCPBars* bars_;  // plottable 0
};

}  // namespace shardscope::app
