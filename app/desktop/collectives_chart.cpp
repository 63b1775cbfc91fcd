#include "collectives_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QToolTip>

#include "chart_style.h"

namespace shardscope::app {

namespace {

using profiler::CollectiveGroup;

// "1 KiB", "32 KiB", "1 MiB": ticks at powers of two, labelled in binary units.
QString bytesLabel(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(QString::number(bytes, 'g', 3), QString::fromLatin1(kUnits[unit]));
}

class ByteLogTicker : public QCPAxisTickerLog {
 protected:
  QString getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format*/, int /*precision*/) override {
    return bytesLabel(tick);
  }
};

QCPScatterStyle::ScatterShape shapeOf(CollectiveGroup group) {
  switch (group) {
    case CollectiveGroup::Sharding:
      return QCPScatterStyle::ssDisc;
    case CollectiveGroup::Replica:
      return QCPScatterStyle::ssSquare;
    case CollectiveGroup::World:
      return QCPScatterStyle::ssDiamond;
    case CollectiveGroup::Other:
      break;
  }
  return QCPScatterStyle::ssTriangle;
}

const QColor kOutlier(0xc8, 0x3c, 0x3c);
const QColor kKey(0x55, 0x55, 0x55);
constexpr int kSourceChars = 40;
constexpr int kLegendColumns = 3;

}  // namespace

CollectivesChart::CollectivesChart(QWidget* parent) : QCustomPlot(parent), title_(new QCPTextElement(this)) {
  setObjectName(QStringLiteral("collectivesPlot"));
  setBackground(palette().base());
  setMinimumHeight(280);
  QFont bold = font();
  bold.setBold(true);
  title_->setFont(bold);
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, title_);

  auto x_ticker = QSharedPointer<ByteLogTicker>::create();
  x_ticker->setLogBase(2.0);
  x_ticker->setSubTickCount(0);
  xAxis->setScaleType(QCPAxis::stLogarithmic);
  xAxis->setTicker(x_ticker);
  xAxis->setLabel(tr("message size (NCCL-tests size, log scale)"));
  auto y_ticker = QSharedPointer<QCPAxisTickerLog>::create();
  y_ticker->setLogBase(10.0);
  y_ticker->setSubTickCount(8);
  yAxis->setScaleType(QCPAxis::stLogarithmic);
  yAxis->setTicker(y_ticker);
  yAxis->setNumberFormat(QStringLiteral("g"));
  yAxis->setNumberPrecision(4);
  yAxis->setLabel(tr("bus bandwidth (GB/s, log scale)"));
  for (QCPAxis* axis : {xAxis, yAxis}) {
    axis->grid()->setPen(QPen(QColor(0, 0, 0, 30), 1, Qt::DotLine));
    axis->grid()->setSubGridVisible(false);
  }
  // The legend in rows between the title and the plot: curves and points fill
  // every corner of a bandwidth plot, so inside it would cover some.
  legend->setVisible(true);
  legend->setBorderPen(Qt::NoPen);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(kLegendColumns);
  legend->setIconSize(24, 18);
  legend->setColumnSpacing(18);
  legend->setRowSpacing(0);
  axisRect()->insetLayout()->take(legend);
  plotLayout()->insertRow(1);
  plotLayout()->addElement(1, 0, legend);
  plotLayout()->setRowStretchFactor(1, 0.001);
  // Room on the right for half of the last tick label ("1 GiB"): QCustomPlot
  // drops a label the widget border would clip.
  axisRect()->setMinimumMargins(QMargins(0, 0, 30, 0));
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setMouseTracking(true);
  connect(this, &QCustomPlot::mouseMove, this, &CollectivesChart::onMouseMove);
  setBandwidth(nullptr);
}

const profiler::CallBandwidth* CollectivesChart::callAtPixel(const QPointF& pos) const {
  constexpr double kReachPx = 8.0;
  const profiler::CallBandwidth* best = nullptr;
  double best_d2 = kReachPx * kReachPx;
  for (const auto& c : drawn_) {
    if (c.size_bytes <= 0 || c.busbw_gbps <= 0) continue;  // not on a log axis
    const double dx = xAxis->coordToPixel(c.size_bytes) - pos.x();
    const double dy = yAxis->coordToPixel(c.busbw_gbps) - pos.y();
    const double d2 = dx * dx + dy * dy;
    if (d2 <= best_d2) {
      best_d2 = d2;
      best = &c;
    }
  }
  return best;
}

QString CollectivesChart::callToolTip(const profiler::CallBandwidth& c) {
  QString text =
      tr("%1 in the %2 group").arg(QString::fromStdString(c.op), QString::fromUtf8(profiler::toString(c.group)));
  if (!c.ranks.empty()) text += tr(" (ranks %1)").arg(QString::fromStdString(c.ranks));
  if (c.step >= 0) text += tr(", step %1").arg(c.step);
  if (c.seq >= 0) text += tr(", call %1 of its group").arg(c.seq);
  text += tr("\n%1 in %2 ms: %3 GB/s bus bandwidth")
              .arg(bytesLabel(c.size_bytes))
              .arg(c.transfer_ms, 0, 'f', 3)
              .arg(c.busbw_gbps, 0, 'g', 4);
  const double model = c.calibrated_busbw_gbps > 0 ? c.calibrated_busbw_gbps : c.model_busbw_gbps;
  if (model <= 0 && c.ratio > 0)
    text += tr("\n%1% of this run's median for its op, group and size").arg(c.ratio * 100.0, 0, 'f', 0);
  if (model > 0)
    text += tr("\nthe planner's model (%1): %2 GB/s; this call reached %3% of it")
                .arg(c.calibrated_busbw_gbps > 0 ? tr("calibrated") : tr("default constants"))
                .arg(model, 0, 'g', 4)
                .arg(c.ratio * 100.0, 0, 'f', 0);
  if (c.slowest_rank >= 0) text += tr("\nstarted last (the others waited for it): rank %1").arg(c.slowest_rank);
  return text;
}

void CollectivesChart::onMouseMove(QMouseEvent* event) {
  const profiler::CallBandwidth* c = callAtPixel(event->position());
  if (c == nullptr) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(event->globalPosition().toPoint(), callToolTip(*c), this);
}

const CollectivesChart::SeriesGraphs* CollectivesChart::find(const std::string& op, CollectiveGroup group) const {
  for (const auto& s : series_)
    if (s.op == op && s.group == group) return &s;
  return nullptr;
}

void CollectivesChart::setBandwidth(const profiler::CollectiveBandwidth* r, const std::string& op,
                                    std::optional<CollectiveGroup> group, const QString& message) {
  clearGraphs();
  series_.clear();
  drawn_.clear();
  outliers_ = nullptr;
  if (r == nullptr) {
    title_->setText(message.isEmpty() ? tr("Bus bandwidth vs message size: no run shown") : message);
    xAxis->setRange(1024.0, 1024.0 * 1024.0 * 1024.0);
    yAxis->setRange(0.01, 1000.0);
    replot(rpQueuedReplot);
    return;
  }
  const profiler::CollectiveBandwidth& b = *r;
  double lo = std::numeric_limits<double>::max(), hi = 0.0;
  for (std::size_t i = 0; i < b.series.size(); ++i) {
    const auto& s = b.series[i];
    if ((!op.empty() && s.op != op) || (group && s.group != *group)) continue;
    addSeries(b, i, lo, hi);
  }
  // Rings around the outliers of the drawn series.
  QVector<double> keys, values;
  for (const std::size_t i : b.outliers) {
    const auto& c = b.calls[i];
    if (find(c.op, c.group) == nullptr) continue;
    keys.push_back(c.size_bytes);
    values.push_back(c.busbw_gbps);
  }
  outliers_ = addGraph();
  outliers_->setLineStyle(QCPGraph::lsNone);
  outliers_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kOutlier, 1.6), Qt::NoBrush, 14));
  outliers_->setName(b.againstModel() ? tr("below %1% of the model").arg(b.outlier_fraction * 100.0, 0, 'f', 0)
                                      : tr("below %1% of the run's median").arg(b.outlier_fraction * 100.0, 0, 'f', 0));
  outliers_->setData(keys, values);
  if (keys.isEmpty()) outliers_->removeFromLegend();
  addLegendKeys(b);
  title_->setText(tr("Bus bandwidth per collective call vs message size: run %1%2")
                      .arg(static_cast<qint64>(b.run.id))
                      .arg(b.grid.empty() ? tr(" (no model: see the notes)")
                                          : QStringLiteral(" \u00b7 ") + QString::fromStdString(b.grid)));
  xAxis->setRange(b.size_lo, b.size_hi);
  if (hi <= 0.0) {
    lo = 0.01;
    hi = 1000.0;
  }
  yAxis->setRange(lo / 2.0, hi * 2.0);
  replot(rpQueuedReplot);
}

void CollectivesChart::addSeries(const profiler::CollectiveBandwidth& r, std::size_t index, double& lo, double& hi) {
  const auto& s = r.series[index];
  const QColor colour = seriesColor(static_cast<int>(index));
  SeriesGraphs g{s.op, s.group, addGraph(), nullptr, nullptr};
  QVector<double> keys, values;
  double point_lo = std::numeric_limits<double>::max();
  for (const std::size_t i : s.calls) {
    const auto& c = r.calls[i];
    drawn_.push_back(c);
    keys.push_back(c.size_bytes);
    values.push_back(c.busbw_gbps);
    point_lo = std::min(point_lo, c.busbw_gbps);
    hi = std::max(hi, c.busbw_gbps);
  }
  lo = std::min(lo, point_lo);
  g.points->setLineStyle(QCPGraph::lsNone);
  QColor fill = colour;
  fill.setAlpha(170);
  g.points->setScatterStyle(QCPScatterStyle(shapeOf(s.group), QPen(colour.darker(120), 1.0), fill, 7));
  g.points->setData(keys, values);
  g.points->setName(tr("%1 in the %2 group (%3)")
                        .arg(QString::fromStdString(s.op), QString::fromUtf8(profiler::toString(s.group)),
                             s.calls.size() == 1 ? tr("1 call") : tr("%1 calls").arg(s.calls.size())));
  if (s.curve >= 0) {
    const auto& curve = r.curves[static_cast<std::size_t>(s.curve)];
    // Curves reach far below the points at small sizes: the range follows them only so far.
    const double floor = point_lo / 100.0;
    auto line = [&](const std::vector<double>& busbw, Qt::PenStyle style) {
      QCPGraph* graph = addGraph();
      QVector<double> x, y;
      for (std::size_t i = 0; i < busbw.size(); ++i)
        if (busbw[i] > 0) {
          x.push_back(curve.sizes[i]);
          y.push_back(busbw[i]);
          lo = std::min(lo, std::max(floor, busbw[i]));
          hi = std::max(hi, busbw[i]);
        }
      graph->setData(x, y, true);
      graph->setPen(QPen(colour, 1.6, style));
      graph->removeFromLegend();
      return graph;
    };
    g.model = line(curve.busbw_gbps, Qt::DashLine);
    if (curve.calibrated) g.calibrated = line(curve.calibrated_busbw_gbps, Qt::SolidLine);
  }
  series_.push_back(g);
}

// Line-style keys: what dashed and solid mean, once for every colour.
void CollectivesChart::addLegendKeys(const profiler::CollectiveBandwidth& r) {
  const bool model = std::any_of(series_.begin(), series_.end(), [](const auto& s) { return s.model != nullptr; });
  const bool calibrated =
      std::any_of(series_.begin(), series_.end(), [](const auto& s) { return s.calibrated != nullptr; });
  if (model) {
    QCPGraph* key = addGraph();
    key->setPen(QPen(kKey, 1.6, Qt::DashLine));
    key->setName(tr("planner's model, default constants"));
  }
  if (calibrated) {
    QCPGraph* key = addGraph();
    key->setPen(QPen(kKey, 1.6, Qt::SolidLine));
    // A long source (files, hosts) would widen the legend over the points: the page names it in full.
    QString source = QString::fromStdString(r.calibration);
    if (source.size() > kSourceChars) source = source.left(kSourceChars - 1) + QChar(0x2026);
    key->setName(tr("planner's model, calibrated (%1)").arg(source));
  }
}

}  // namespace shardscope::app
