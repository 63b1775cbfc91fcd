#include "sync_interval_chart.h"

#include <algorithm>
#include <vector>

#include "chart_style.h"

namespace shardscope::app {

SyncIntervalChart::SyncIntervalChart(QWidget* parent)
    : QCustomPlot(parent),
      title_(new QCPTextElement(this)),
      others_(new QCPBars(xAxis, yAxis)),
      current_(new QCPBars(xAxis, yAxis)) {
  setObjectName(QStringLiteral("syncPlot"));
  styleBarChart(this, 260);
  for (QCPBars* bars : {others_, current_}) {
    bars->setWidthType(QCPBars::wtPlotCoords);
    bars->setWidth(0.7);
    bars->setPen(Qt::NoPen);
  }
  others_->setBrush(QColor(0x7a, 0x5c, 0xb8, 140));
  others_->setName(tr("same placement, sync every k steps"));
  current_->setBrush(QColor(0x7a, 0x5c, 0xb8));
  current_->setName(tr("the project's k"));
  // The bars fall with k: the legend sits top right, over the shortest.
  legend->setVisible(true);
  legend->setBrush(QColor(255, 255, 255, 220));
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  yAxis->setLabel(tr("predicted step time (ms)"));
  xAxis->setLabel(tr("replicas sync weights + optimizer state every k steps"));
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, title_);
  setGrid(nullptr);
}

void SyncIntervalChart::setGrid(const planner::GridResult* grid) {
  std::vector<std::uint32_t> ks = {1, 2, 4, 8, 16};
  const std::uint32_t planned = grid ? std::max<std::uint32_t>(1, grid->plan.sync_interval) : 1;
  if (std::find(ks.begin(), ks.end(), planned) == ks.end()) ks.push_back(planned);
  std::sort(ks.begin(), ks.end());
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  QVector<double> keys, values, current_key, current_value;
  double top = 0;
  for (std::size_t i = 0; grid && i < ks.size(); ++i) {
    const double ms = planner::stepMsAtSyncInterval(*grid, ks[i]);
    (ks[i] == planned ? current_key : keys).append(static_cast<double>(i));
    (ks[i] == planned ? current_value : values).append(ms);
    ticker->addTick(static_cast<double>(i), QString::number(ks[i]));
    top = std::max(top, ms);
  }
  others_->setData(keys, values, true);
  current_->setData(current_key, current_value, true);
  title_->setText(!grid ? tr("Nothing planned")
                  : grid->grid.replicas <= 1
                      ? tr("M = %1 \u00d7 R = 1: one replica, nothing to sync").arg(grid->grid.group_size)
                      : tr("M = %1 \u00d7 R = %2: step time against the sync interval k")
                            .arg(grid->grid.group_size)
                            .arg(grid->grid.replicas));
  xAxis->setTicker(ticker);
  xAxis->setRange(-0.6, static_cast<double>(ks.size()) - 0.4);
  yAxis->setRange(0, top > 0 ? top * 1.2 : 1.0);
  replot(rpQueuedReplot);
}

}  // namespace shardscope::app
