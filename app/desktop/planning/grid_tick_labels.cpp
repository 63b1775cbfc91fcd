#include "grid_tick_labels.h"

#include <QEvent>
#include <QFontMetrics>
#include <QResizeEvent>
#include <qcustomplot.h>

namespace shardscope::app {

namespace {

QString uprightLabel(const planner::GridResult& g) {
  return QStringLiteral("M=%1 R=%2\n%3")
      .arg(g.grid.group_size)
      .arg(g.grid.replicas)
      .arg(g.grid.layout == core::RankLayout::Strided ? QStringLiteral("strided") : QStringLiteral("contig"));
}

QString turnedLabel(const planner::GridResult& g) {
  return QStringLiteral("%1\u00d7%2 %3")
      .arg(g.grid.group_size)
      .arg(g.grid.replicas)
      .arg(g.grid.layout == core::RankLayout::Strided ? QStringLiteral("s") : QStringLiteral("c"));
}

}  // namespace

GridTickLabels::GridTickLabels(QCustomPlot* plot, QString title)
    : QObject(plot), plot_(plot), title_(std::move(title)) {
  plot_->installEventFilter(this);
}

void GridTickLabels::setGrids(std::vector<const planner::GridResult*> grids) {
  grids_ = std::move(grids);
  apply(plot_->width());
}

bool GridTickLabels::eventFilter(QObject* watched, QEvent* event) {
  if (watched == plot_ && event->type() == QEvent::Resize && !grids_.empty()) {
    const bool was = turned_;
    apply(static_cast<QResizeEvent*>(event)->size().width());
    if (was != turned_) plot_->replot(QCustomPlot::rpQueuedReplot);
  }
  return QObject::eventFilter(watched, event);
}

void GridTickLabels::apply(int plot_width) {
  // The room one bar has: the plot's width less its margins (as last laid out, else a y axis' worth).
  const int laid_out_margins = plot_->width() - plot_->axisRect()->width();
  const int margins = plot_->axisRect()->width() > 50 && laid_out_margins > 0 ? laid_out_margins : 90;
  const int axis_width = std::max(plot_width - margins, 1);
  const double per_bar = grids_.empty() ? 0.0 : static_cast<double>(axis_width) / static_cast<double>(grids_.size());
  const QFontMetrics metrics(plot_->xAxis->tickLabelFont());
  int widest = 0;
  for (const planner::GridResult* g : grids_)
    for (const QString& line : uprightLabel(*g).split(QLatin1Char('\n')))
      widest = std::max(widest, metrics.horizontalAdvance(line));
  turned_ = per_bar < widest + 8;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (std::size_t k = 0; k < grids_.size(); ++k)
    ticker->addTick(static_cast<double>(k), turned_ ? turnedLabel(*grids_[k]) : uprightLabel(*grids_[k]));
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setTickLabelRotation(turned_ ? -90 : 0);
  // The longest reading of the ticks that fits under the plot: a cut axis label is no label.
  const QFontMetrics label_metrics(plot_->xAxis->labelFont());
  const QStringList readings =
      turned_ ? QStringList{tr("%1: M \u00d7 R (s strided, c contiguous)").arg(title_),
                            tr("M \u00d7 R (s strided, c contiguous)"), tr("M \u00d7 R, s/c: strided/contiguous"),
                            tr("M \u00d7 R")}
              : QStringList{tr("%1: M = sharding group size, R = replicas").arg(title_),
                            tr("M = sharding group size, R = replicas"), tr("M = group size, R = replicas")};
  QString label = readings.back();
  for (const QString& reading : readings) {
    // The label is centred under the axis, so the axis' width is its room (the y axis' side is not).
    if (label_metrics.horizontalAdvance(reading) + 8 <= axis_width) {
      label = reading;
      break;
    }
  }
  plot_->xAxis->setLabel(label);
}

}  // namespace shardscope::app
