#include "measured_chart.h"

#include <algorithm>

#include "chart_style.h"
#include "shardscope/core/summary.h"
#include "rank_ticker.h"

namespace shardscope::app {

namespace {
constexpr double kBarWidth = 0.38;
constexpr double kOffset = 0.2;  // measured at i - offset, predicted at i + offset (i: the rank's position)
}  // namespace

namespace {

report::Phase reportPhase(int p) {
  static const report::Phase kPhases[profiler::kPhases] = {report::Phase::EmbeddingForward,
                                                           report::Phase::EmbeddingBackward, report::Phase::AllToAll,
                                                           report::Phase::ReplicaSync, report::Phase::Dense};
  return kPhases[std::clamp(p, 0, profiler::kPhases - 1)];
}

}  // namespace

MeasuredChart::MeasuredChart(QWidget* parent)
    : QCustomPlot(parent), title_(new QCPTextElement(this)), slowest_(new QCPItemText(this)) {
  setObjectName(QStringLiteral("measuredPlot"));
  styleBarChart(this, 260, title_);
  ticker_ = QSharedPointer<RankTicker>::create(xAxis, 240);
  xAxis->setTicker(ticker_);

  for (int p = 0; p < profiler::kPhases; ++p) {
    const QColor colour = phaseColor(reportPhase(p));
    auto* m = new QCPBars(xAxis, yAxis);
    auto* q = new QCPBars(xAxis, yAxis);
    for (QCPBars* b : {m, q}) {
      b->setWidthType(QCPBars::wtPlotCoords);
      b->setWidth(kBarWidth);
    }
    m->setPen(QPen(colour.darker(130), 0.8));
    m->setBrush(phaseBrush(reportPhase(p)));
    QColor pale = colour;
    pale.setAlpha(70);
    q->setPen(QPen(colour.darker(115), 1.2, Qt::DashLine));
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
  legend->setWrap(profiler::kPhases + 1);
  legend->setIconSize(14, 10);
  axisRect()->insetLayout()->take(legend);
  plotLayout()->insertRow(1);
  plotLayout()->addElement(1, 0, legend);
  plotLayout()->setRowStretchFactor(1, 0.001);
  slowest_->setColor(problemColor());
  slowest_->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  setComparison(nullptr);
}

void MeasuredChart::clearBars() {
  for (std::size_t p = 0; p < measured_.size(); ++p) {
    measured_[p]->data()->clear();
    predicted_[p]->data()->clear();
    measured_[p]->removeFromLegend();
  }
}

void MeasuredChart::setComparison(const profiler::MeasuredVsPredicted* v, const QString& message) {
  clearBars();
  shares_ = false;
  // Without ranks there is nothing to scale: no axes, only the title that says why.
  const bool empty = !v || v->ranks.empty();
  for (QCPAxis* axis : {xAxis, yAxis}) axis->setVisible(!empty);
  legend->setVisible(!empty);
  if (empty) {
    title_->setText(message.isEmpty() ? tr("Measured vs predicted: no run shown") : message);
    slowest_->setVisible(false);
    xAxis->setRange(0, 1);
    yAxis->setRange(0, 1);
    replot(rpQueuedReplot);
    return;
  }
  // One position per measured rank: ranks the run did not measure (another sharding group) leave no gap.
  QVector<int> ranks;
  for (const auto& r : v->ranks) ranks.push_back(r.rank);
  ticker_->setRanks(ranks);
  if (v->devices.absolute)
    showTimes(*v);
  else
    showShares(*v);
  xAxis->setRange(-0.6, static_cast<double>(v->ranks.size()) - 0.4);
  replot(rpQueuedReplot);
}

// Like for like: the phases the run measured, measured beside predicted, in ms.
void MeasuredChart::showTimes(const profiler::MeasuredVsPredicted& v) {
  double top = 0.0;
  for (int p = 0; p < profiler::kPhases; ++p) {
    // A phase the run did not measure is not drawn: it would set the scale with nothing to compare.
    if (!v.measured_phases[static_cast<std::size_t>(p)]) continue;
    QVector<double> mk, mv, pk, pv;
    for (std::size_t i = 0; i < v.ranks.size(); ++i) {
      const auto& r = v.ranks[i];
      mk.push_back(static_cast<double>(i) - kOffset);
      mv.push_back(profiler::phaseValue(r.measured, p));
      pk.push_back(static_cast<double>(i) + kOffset);
      pv.push_back(profiler::phaseValue(r.predicted, p));
    }
    measured_[static_cast<std::size_t>(p)]->setData(mk, mv, true);
    predicted_[static_cast<std::size_t>(p)]->setData(pk, pv, true);
    measured_[static_cast<std::size_t>(p)]->setName(QString::fromUtf8(profiler::phaseName(p)));
    measured_[static_cast<std::size_t>(p)]->addToLegend();
  }
  for (const auto& r : v.ranks) top = std::max({top, r.measured_ms, r.predicted_ms});
  xAxis->setLabel(tr("measured global ranks (left bar: measured, right bar: predicted, dashed)"));
  yAxis->setLabel(tr("ms per step"));
  title_->setText(tr("Measured vs predicted per rank: %1, %2; mean error %3")
                      .arg(QString::fromStdString(v.plan_summary),
                           v.constants.rfind("calibration", 0) == 0 ? tr("calibrated") : tr("default constants"),
                           QString::fromStdString(core::formatErrorSize(v.mape))));
  yAxis->setRange(0, top > 0 ? top * 1.22 : 1.0);
  const auto slowest = std::max_element(v.ranks.begin(), v.ranks.end(), [](const auto& a, const auto& b) {
    return a.measured.embedding() < b.measured.embedding();
  });
  slowest_->position->setCoords(static_cast<double>(slowest - v.ranks.begin()),
                                std::max(slowest->measured_ms, slowest->predicted_ms));
  slowest_->setText(slowest->straggler ? tr("straggler: rank %1").arg(slowest->rank)
                                       : tr("slowest: rank %1").arg(slowest->rank));
  slowest_->setVisible(true);
}

// Across devices: each rank's share of its sharding group's embedding work, measured beside predicted.
void MeasuredChart::showShares(const profiler::MeasuredVsPredicted& v) {
  shares_ = true;
  QVector<double> mk, mv, pk, pv;
  double top = 0.0;
  for (std::size_t i = 0; i < v.ranks.size(); ++i) {
    const auto& r = v.ranks[i];
    if (r.measured_share < 0 || r.predicted_share < 0) continue;
    mk.push_back(static_cast<double>(i) - kOffset);
    mv.push_back(r.measured_share * 100.0);
    pk.push_back(static_cast<double>(i) + kOffset);
    pv.push_back(r.predicted_share * 100.0);
    top = std::max({top, r.measured_share * 100.0, r.predicted_share * 100.0});
  }
  measured_[0]->setData(mk, mv, true);
  predicted_[0]->setData(pk, pv, true);
  measured_[0]->setName(tr("embedding work"));
  measured_[0]->addToLegend();
  xAxis->setLabel(tr("measured global ranks (left bar: measured share, right bar: predicted share, dashed)"));
  yAxis->setLabel(tr("share of the group's work (%)"));
  title_->setText(tr("Share of each group's embedding work per rank: %1; mean gap %2 percentage points")
                      .arg(QString::fromStdString(v.plan_summary))
                      .arg(v.share_gap >= 0 ? v.share_gap * 100.0 : 0.0, 0, 'f', 1));
  yAxis->setRange(0, top > 0 ? top * 1.22 : 1.0);
  const auto widest =
      std::find_if(v.ranks.begin(), v.ranks.end(), [&v](const auto& r) { return r.rank == v.widest_share_gap_rank; });
  slowest_->setVisible(widest != v.ranks.end());
  if (widest == v.ranks.end()) return;
  slowest_->position->setCoords(static_cast<double>(widest - v.ranks.begin()),
                                std::max(widest->measured_share, widest->predicted_share) * 100.0);
  // The widest gap, whichever way: a straggler is named in the table and the statistics, not here.
  slowest_->setText(tr("widest gap: rank %1").arg(widest->rank));
}

void MeasuredChart::setMeasuredOnly(const profiler::RunAnalysis& a, const QString& why) {
  clearBars();
  shares_ = false;
  if (a.ranks.empty()) {
    setComparison(nullptr, why);
    return;
  }
  for (QCPAxis* axis : {xAxis, yAxis}) axis->setVisible(true);
  legend->setVisible(true);
  QVector<int> ranks;
  QVector<double> keys, fwd, bwd;
  double top = 0.0;
  for (std::size_t i = 0; i < a.ranks.size(); ++i) {
    const auto& r = a.ranks[i];
    ranks.push_back(r.rank);
    keys.push_back(static_cast<double>(i));
    fwd.push_back(r.emb_fwd_ms);
    bwd.push_back(r.emb_bwd_ms);
    top = std::max(top, r.emb_fwd_ms + r.emb_bwd_ms);
  }
  ticker_->setRanks(ranks);
  // Measured bars alone, centred on their rank: the forward and backward phases stacked.
  for (int p = 0; p < 2; ++p) {
    measured_[static_cast<std::size_t>(p)]->setData(keys, p == 0 ? fwd : bwd, true);
    measured_[static_cast<std::size_t>(p)]->setName(QString::fromUtf8(profiler::phaseName(p)));
    measured_[static_cast<std::size_t>(p)]->addToLegend();
  }
  xAxis->setLabel(tr("measured global ranks"));
  yAxis->setLabel(tr("ms per step"));
  title_->setText(tr("Measured embedding work per rank (%1)").arg(why));
  yAxis->setRange(0, top > 0 ? top * 1.22 : 1.0);
  const auto slowest = std::max_element(a.ranks.begin(), a.ranks.end(),
                                        [](const auto& x, const auto& y) { return x.compute_ms < y.compute_ms; });
  slowest_->position->setCoords(static_cast<double>(slowest - a.ranks.begin()), slowest->compute_ms);
  slowest_->setText(slowest->straggler ? tr("straggler: rank %1").arg(slowest->rank)
                                       : tr("slowest: rank %1").arg(slowest->rank));
  slowest_->setVisible(true);
  xAxis->setRange(-0.6, static_cast<double>(a.ranks.size()) - 0.4);
  replot(rpQueuedReplot);
}

}  // namespace shardscope::app
