#include "table_size_chart.h"

#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

namespace shardscope::app {

TableSizeChart::TableSizeChart(QWidget* parent)
    : QWidget(parent), plot_(new QCustomPlot(this)), bars_(new QCPBars(plot_->xAxis, plot_->yAxis)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);

  plot_->setBackground(palette().base());
  plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
  auto log_ticker = QSharedPointer<QCPAxisTickerLog>::create();
  plot_->yAxis->setTicker(log_ticker);
  plot_->yAxis->setNumberFormat("eb");
  plot_->yAxis->setNumberPrecision(0);
  plot_->yAxis->setLabel(tr("Size (GB, log)"));
  plot_->yAxis->grid()->setSubGridVisible(false);
  plot_->xAxis->grid()->setVisible(false);
  plot_->xAxis->setTickLabelRotation(-60);
  plot_->xAxis->setSubTicks(false);
  plot_->xAxis->setTickLength(0, 3);

  bars_->setWidthType(QCPBars::wtPlotCoords);
  bars_->setWidth(0.7);
  bars_->setPen(Qt::NoPen);
  bars_->setBrush(QColor(0x3a, 0x7c, 0xc2));
}

void TableSizeChart::setTables(const std::vector<core::TableSpec>& tables) {
  QVector<double> keys;
  QVector<double> values;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  double lo = 1.0;
  double hi = 1.0;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    // Empty tables still get a (floor-height) bar so every name has a slot.
    const double gb = std::max(static_cast<double>(tables[i].weightBytes()) / 1e9, 1e-9);
    keys.append(static_cast<double>(i));
    values.append(gb);
    ticker->addTick(static_cast<double>(i), QString::fromStdString(tables[i].name));
    lo = i == 0 ? gb : std::min(lo, gb);
    hi = i == 0 ? gb : std::max(hi, gb);
  }
  const double floor = std::pow(10.0, std::floor(std::log10(lo)));
  const double ceil = std::pow(10.0, std::ceil(std::log10(hi) + 0.01));
  bars_->setBaseValue(floor);
  bars_->setData(keys, values, /*alreadySorted=*/true);
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setRange(-0.6, static_cast<double>(tables.size()) - 0.4);
  plot_->yAxis->setRange(floor, ceil);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

int TableSizeChart::barCount() const { return bars_->dataCount(); }

}  // namespace shardscope::app
