#include "imbalance_chart.h"

#include <algorithm>
#include <utility>

#include "chart_style.h"

namespace shardscope::app {

ImbalanceChart::ImbalanceChart(QWidget* parent)
    : GridBarsChart(parent), bars_(addBars(tr("max / mean load"), quantityColor())) {
  setObjectName(QStringLiteral("imbalancePlot"));
  bars_->setBaseValue(1.0);
  yAxis->setLabel(tr("imbalance (max / mean load)"));
  xAxis->setLabel(tr("every grid: M = sharding group size, R = replicas"));
  addChosenMarker({bars_});
}

void ImbalanceChart::setGrids(const planner::SweepResult& sweep, std::vector<int> keys) {
  QVector<double> k_values;
  QVector<double> excess;
  double top = 1.0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const planner::GridResult& g = sweep.grids[static_cast<std::size_t>(keys[k])];
    k_values.append(static_cast<double>(k));
    excess.append(g.imbalance.max_over_mean - 1.0);  // bars stand on the base value 1.0: their value is the excess
    top = std::max(top, g.imbalance.max_over_mean);
  }
  bars_->setData(k_values, excess, true);
  setKeys(sweep, std::move(keys));
  yAxis->setRange(1.0, 1.0 + std::max(top - 1.0, 0.01) * 1.2);
  replot(rpQueuedReplot);
}

}  // namespace shardscope::app
