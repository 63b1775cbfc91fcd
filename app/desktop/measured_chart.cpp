#include "measured_chart.h"

#include <algorithm>

#include "chart_style.h"
#include "rank_ticker.h"

namespace shardscope::app {

namespace {
constexpr double kBarWidth = 0.38;
constexpr double kOffset = 0.2;  // measured at rank - offset, predicted at rank + offset
}  // namespace

MeasuredChart::MeasuredChart(QWidget* parent)
    : QCustomPlot(parent), title_(new QCPTextElement(this)), slowest_(new QCPItemText(this)) {
  setObjectName(QStringLiteral("measuredPlot"));
  styleBarChart(this, 260, title_);
  xAxis->setLabel(tr("global rank (left bar: measured, right bar: predicted)"));
  yAxis->setLabel(tr("ms per step"));
  xAxis->setTicker(QSharedPointer<RankTicker>::create(xAxis, 240));

  for (int p = 0; p < profiler::kPhases; ++p) {
    const QColor colour = seriesColor(p);
    auto* m = new QCPBars(xAxis, yAxis);
    auto* q = new QCPBars(xAxis, yAxis);
    for (QCPBars* b : {m, q}) {
      b->setWidthType(QCPBars::wtPlotCoords);
      b->setWidth(kBarWidth);
    }
    m->setPen(Qt::NoPen);
    m->setBrush(colour);
    QColor pale = colour;
    pale.setAlpha(90);
    q->setPen(QPen(colour.darker(115), 1.0));
    q->setBrush(pale);
    if (!measured_.empty()) {
      m->moveAbove(measured_.back());
      q->moveAbove(predicted_.back());
    }
    m->setName(QString::fromUtf8(profiler::phaseName(p)));
    q->removeFromLegend();
    measured_.push_back(m);
    predicted_.push_back(q);
  }
  // The legend in one row between the title and the bars: it never covers a bar.
  legend->setVisible(true);
  legend->setBorderPen(Qt::NoPen);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(profiler::kPhases);
  legend->setIconSize(14, 10);
  axisRect()->insetLayout()->take(legend);
  plotLayout()->insertRow(1);
  plotLayout()->addElement(1, 0, legend);
  plotLayout()->setRowStretchFactor(1, 0.001);
  slowest_->setColor(QColor(0xc8, 0x3c, 0x3c));
  slowest_->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  setComparison(nullptr);
}

void MeasuredChart::setComparison(const profiler::MeasuredVsPredicted* v, const QString& message) {
  for (std::size_t p = 0; p < measured_.size(); ++p) {
    measured_[p]->data()->clear();
    predicted_[p]->data()->clear();
  }
  if (!v || v->ranks.empty()) {
    title_->setText(message.isEmpty() ? tr("Measured vs predicted: no run shown") : message);
    slowest_->setVisible(false);
    xAxis->setRange(0, 1);
    yAxis->setRange(0, 1);
    replot(rpQueuedReplot);
    return;
  }
  double top = 0.0;
  const auto slowest = std::max_element(v->ranks.begin(), v->ranks.end(), [](const auto& a, const auto& b) {
    return a.measured.embedding() < b.measured.embedding();
  });
  for (int p = 0; p < profiler::kPhases; ++p) {
    QVector<double> mk, mv, pk, pv;
    for (const auto& r : v->ranks) {
      if (v->measured_phases[static_cast<std::size_t>(p)]) {
        mk.push_back(r.rank - kOffset);
        mv.push_back(profiler::phaseValue(r.measured, p));
      }
      pk.push_back(r.rank + kOffset);
      pv.push_back(profiler::phaseValue(r.predicted, p));
    }
    measured_[static_cast<std::size_t>(p)]->setData(mk, mv, true);
    predicted_[static_cast<std::size_t>(p)]->setData(pk, pv, true);
    const bool shown = v->measured_phases[static_cast<std::size_t>(p)] ||
                       std::any_of(pv.begin(), pv.end(), [](double x) { return x > 0; });
    if (shown)
      measured_[static_cast<std::size_t>(p)]->addToLegend();
    else
      measured_[static_cast<std::size_t>(p)]->removeFromLegend();
  }
  for (const auto& r : v->ranks) top = std::max({top, r.measured.total(), r.predicted.total()});
  // Short: a long calibration source must not widen the window (the page names it).
  title_->setText(tr("Measured vs predicted per rank: %1, %2; error %3%")
                      .arg(QString::fromStdString(v->plan_summary),
                           v->constants.rfind("calibration", 0) == 0 ? tr("calibrated") : tr("default constants"))
                      .arg(v->mape * 100.0, 0, 'f', 1));
  xAxis->setRange(v->ranks.front().rank - 0.6, v->ranks.back().rank + 0.6);
  yAxis->setRange(0, top > 0 ? top * 1.22 : 1.0);
  slowest_->position->setCoords(slowest->rank, std::max(slowest->measured.total(), slowest->predicted.total()));
  slowest_->setText(slowest->straggler ? tr("straggler: rank %1").arg(slowest->rank)
                                       : tr("slowest: rank %1").arg(slowest->rank));
  slowest_->setVisible(true);
  replot(rpQueuedReplot);
}

}  // namespace shardscope::app
