#include "memory_chart.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "chart_style.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/grid_choice.h"

namespace shardscope::app {

MemoryChart::MemoryChart(QWidget* parent)
    : GridBarsChart(parent),
      fits_(addBars(tr("fits"), quantityColor())),
      over_(addBars(tr("does not fit"), problemColor())),
      hbm_line_(new QCPItemStraightLine(this)),
      hbm_label_(new QCPItemText(this)) {
  setObjectName(QStringLiteral("memoryPlot"));
  hbm_line_->setPen(QPen(problemColor(), 1.5, Qt::DashLine));
  hbm_label_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
  hbm_label_->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
  hbm_label_->position->setTypeY(QCPItemPosition::ptPlotCoords);
  hbm_label_->setColor(problemColor());
  hbm_label_->setPadding(QMargins(0, 0, 4, 2));
  yAxis->setLabel(tr("max memory per GPU (GiB)"));
  xAxis->setLabel(tr("every grid: M = sharding group size, R = replicas"));
  addChosenMarker({fits_, over_});
}

void MemoryChart::setGrids(const planner::SweepResult& sweep, std::vector<int> keys, std::uint64_t hbm_bytes) {
  const double hbm_gib = std::ldexp(static_cast<double>(hbm_bytes), -30);
  QVector<double> fit_k;
  QVector<double> fit_v;
  QVector<double> over_k;
  QVector<double> over_v;
  double top = hbm_gib;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const planner::GridResult& g = sweep.grids[static_cast<std::size_t>(keys[k])];
    const double gib = std::ldexp(static_cast<double>(report::peakMemory(g)), -30);
    (g.fits ? fit_k : over_k).append(static_cast<double>(k));
    (g.fits ? fit_v : over_v).append(gib);
    top = std::max(top, gib);
  }
  fits_->setData(fit_k, fit_v, true);
  over_->setData(over_k, over_v, true);
  setKeys(sweep, std::move(keys));
  yAxis->setRange(0, top > 0 ? top * 1.15 : 1.0);
  hbm_line_->point1->setCoords(0, hbm_gib);
  hbm_line_->point2->setCoords(1, hbm_gib);
  hbm_label_->position->setCoords(1.0, hbm_gib);
  hbm_label_->setText(tr("HBM %1").arg(
      QString::fromStdString(core::formatBytes(static_cast<double>(hbm_bytes), {.unit = core::ByteUnit::GiB}))));
  hbm_line_->setVisible(hbm_gib > 0);
  hbm_label_->setVisible(hbm_gib > 0);
  replot(rpQueuedReplot);
}

int MemoryChart::barCount() const { return fits_->dataCount() + over_->dataCount(); }

}  // namespace shardscope::app
