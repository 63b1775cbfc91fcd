#include "rank_load_chart.h"

#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "chart_style.h"
#include "rank_ticker.h"

namespace shardscope::app {

namespace {

const QColor kOtherColour(0xc4, 0xc4, 0xc4);

}  // namespace

RankLoadChart::RankLoadChart(QWidget* parent)
    : QCustomPlot(parent),
      title_(new QCPTextElement(this)),
      mean_line_(nullptr),
      measured_(nullptr),
      critical_box_(new QCPItemRect(this)),
      critical_label_(new QCPItemText(this)) {
  setObjectName(QStringLiteral("rankLoadPlot"));
  styleBarChart(this, 270, title_);
  xAxis->setLabel(tr("group rank"));
  yAxis->setLabel(tr("load (ms)"));
  // The y axis and the legend take about this much of the width.
  xAxis->setTicker(QSharedPointer<RankTicker>::create(xAxis, 240));

  static_assert(kSeriesColours == report::kStackedTables);
  for (std::size_t i = 0; i <= report::kStackedTables; ++i) {
    auto* bars = new QCPBars(xAxis, yAxis);
    bars->setWidthType(QCPBars::wtPlotCoords);
    bars->setWidth(0.8);
    bars->setPen(Qt::NoPen);
    bars->setBrush(i < report::kStackedTables ? seriesColor(static_cast<int>(i)) : kOtherColour);
    if (!bars_.empty()) bars->moveAbove(bars_.back());
    bars_.push_back(bars);
  }
  // The replica sync on top of each rank's tables, in the phase palette (hatched): its own segment.
  sync_bars_ = new QCPBars(xAxis, yAxis);
  sync_bars_->setWidthType(QCPBars::wtPlotCoords);
  sync_bars_->setWidth(0.8);
  sync_bars_->setPen(QPen(phaseColor(report::Phase::ReplicaSync).darker(140), 0.6));
  sync_bars_->setBrush(phaseBrush(report::Phase::ReplicaSync));
  sync_bars_->moveAbove(bars_.back());

  // The legend to the right of the bars, not over them.
  legend->setVisible(true);
  legend->setBrush(QColor(255, 255, 255, 230));
  legend->setBorderPen(Qt::NoPen);
  QFont legend_font = font();
  legend_font.setPointSizeF(legend_font.pointSizeF() * 0.9);
  legend->setFont(legend_font);
  axisRect()->insetLayout()->take(legend);
  plotLayout()->addElement(1, 1, legend);
  plotLayout()->setColumnStretchFactor(1, 0.001);
  legend->setMargins(QMargins(4, 2, 4, 2));
  legend->setRowSpacing(0);
  legend->setIconSize(14, 10);

  mean_line_ = addGraph(xAxis, yAxis);
  mean_line_->setPen(QPen(QColor(0x30, 0x30, 0x30), 1.2, Qt::DashLine));
  mean_line_->setSelectable(QCP::stNone);
  measured_ = addGraph(xAxis, yAxis);
  measured_->setLineStyle(QCPGraph::lsNone);
  measured_->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(Qt::black, 1.2), QColor(0xff, 0xd7, 0x00), 9));
  measured_->setSelectable(QCP::stNone);
  measured_->removeFromLegend();
  critical_box_->setPen(QPen(problemColor(), 1.5));
  critical_box_->setBrush(Qt::NoBrush);
  critical_label_->setColor(problemColor());
  critical_label_->setPadding(QMargins(0, 0, 0, 2));
  QFont critical_font = font();
  critical_font.setBold(true);
  critical_label_->setFont(critical_font);

  // Many ranks: zoom and drag along the ranks only.
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  setMouseTracking(true);
  connect(this, &QCustomPlot::mouseMove, this, &RankLoadChart::onMouseMove);
  connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] { rebin(); });
  setContextMenuPolicy(Qt::CustomContextMenu);
  connect(this, &QWidget::customContextMenuRequested, this, &RankLoadChart::onContextMenu);
  setSnapshot(nullptr);
}

int RankLoadChart::rankCount() const { return snapshot_ ? static_cast<int>(snapshot_->groupSize()) : 0; }

void RankLoadChart::setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot, const QString& message) {
  snapshot_ = std::move(snapshot);
  for (QCPBars* bars : bars_) {
    bars->data()->clear();
    bars->removeFromLegend();
  }
  sync_bars_->data()->clear();
  sync_bars_->removeFromLegend();
  mean_line_->removeFromLegend();
  ranks_per_bar_ = 0;
  if (!snapshot_ || snapshot_->breakdown.cancelled) {
    title_->setText(message.isEmpty() ? tr("Load per group rank: nothing planned") : message);
    mean_line_->data()->clear();
    measured_->data()->clear();
    measured_->removeFromLegend();
    critical_box_->setVisible(false);
    critical_label_->setVisible(false);
    xAxis->setRange(0, 1);
    yAxis->setRange(0, 1);
    replot(rpQueuedReplot);
    return;
  }
  const report::PlanSnapshot& s = *snapshot_;
  const std::uint32_t M = s.groupSize();
  const planner::RankLoadStack& stack = s.stack;
  for (std::size_t i = 0; i < stack.tables.size(); ++i) {
    bars_[i]->setName(QString::fromStdString(s.grid.plan.tables[stack.tables[i]].name));
    bars_[i]->addToLegend();
  }
  if (stack.other_tables > 0) {
    bars_.back()->setName(tr("other (%1 tables)").arg(stack.other_tables));
    bars_.back()->addToLegend();
  }
  if (std::any_of(stack.sync_ms.begin(), stack.sync_ms.end(), [](double v) { return v > 0; })) {
    sync_bars_->setName(tr("replica sync"));
    sync_bars_->addToLegend();
  }
  double top = 0, total = 0;
  for (double l : s.breakdown.rank_load_ms) {
    top = std::max(top, l);
    total += l;
  }
  const double mean = M > 0 ? total / M : 0;
  const QLocale locale;
  title_->setText(stack.other_tables > 0
                      ? tr("Load per group rank: %1 heaviest of %2 tables, %3 others in grey")
                            .arg(stack.tables.size())
                            .arg(locale.toString(static_cast<qulonglong>(s.grid.plan.tables.size())),
                                 locale.toString(static_cast<qulonglong>(stack.other_tables)))
                      : tr("Load per group rank by table (%1 tables)").arg(s.grid.plan.tables.size()));
  ranks_per_bar_ = 0;  // rebinned for the new range below
  xAxis->setRange(-0.6, M - 0.4);
  rebin();
  bars_top_ = top;
  setMeasured(measured_ms_, measured_->name());

  mean_line_->setData({-0.6, M - 0.4}, {mean, mean}, true);
  mean_line_->setName(tr("mean %1 ms").arg(mean, 0, 'f', 3));
  mean_line_->addToLegend();
  // The slowest rank: named above its bar (text kept inside the plot at the edges).
  const std::uint32_t critical = s.grid.critical_rank;
  const double critical_load = critical < M ? s.breakdown.rank_load_ms[critical] : 0.0;
  const double where = M > 1 ? static_cast<double>(critical) / (M - 1) : 0.5;
  const Qt::Alignment side = where < 0.2 ? Qt::AlignLeft : where > 0.8 ? Qt::AlignRight : Qt::AlignHCenter;
  critical_label_->setPositionAlignment(side | Qt::AlignBottom);
  critical_label_->position->setCoords(side == Qt::AlignLeft    ? critical - 0.5
                                       : side == Qt::AlignRight ? critical + 0.5
                                                                : static_cast<double>(critical),
                                       critical_load);
  critical_label_->setText(tr("slowest: group rank %1, %2 ms").arg(critical).arg(critical_load, 0, 'f', 3));
  critical_label_->setVisible(critical < M);
  replot(rpQueuedReplot);
}

void RankLoadChart::setMeasured(std::vector<double> compute_ms, const QString& label) {
  measured_ms_ = std::move(compute_ms);
  QVector<double> keys, values;
  double top = bars_top_;
  const std::uint32_t M = snapshot_ ? snapshot_->groupSize() : 0;
  if (measured_ms_.size() == M)
    for (std::uint32_t r = 0; r < M; ++r)
      if (!std::isnan(measured_ms_[r])) {
        keys.push_back(r);
        values.push_back(measured_ms_[r]);
        top = std::max(top, measured_ms_[r]);
      }
  measured_->setData(keys, values, true);
  measured_->setName(label);
  if (keys.isEmpty())
    measured_->removeFromLegend();
  else
    measured_->addToLegend();
  if (snapshot_ && !snapshot_->breakdown.cancelled) yAxis->setRange(0, top > 0 ? top * 1.2 : 1.0);
  replot(rpQueuedReplot);
}

std::uint32_t RankLoadChart::barRank(std::uint32_t bar) const {
  const auto& loads = snapshot_->breakdown.rank_load_ms;
  const std::uint32_t first = bar * ranks_per_bar_;
  const std::uint32_t last = std::min<std::uint32_t>(first + ranks_per_bar_, static_cast<std::uint32_t>(loads.size()));
  return static_cast<std::uint32_t>(std::max_element(loads.begin() + first, loads.begin() + last) - loads.begin());
}

void RankLoadChart::rebin() {
  if (!snapshot_ || snapshot_->breakdown.cancelled) return;
  const std::uint32_t M = snapshot_->groupSize();
  // Bars of a power of two of ranks, so at most kMaxBars are in view.
  const QCPRange range = xAxis->range();
  const double lo = std::max(0.0, std::ceil(range.lower - 0.5));
  const double hi = std::min(M - 1.0, std::floor(range.upper + 0.5));
  const double span = std::max(1.0, hi - lo + 1);  // ranks in view
  std::uint32_t k = 1;
  while (span / k > kMaxBars && k < M) k *= 2;
  if (k == ranks_per_bar_) return;
  ranks_per_bar_ = k;
  const std::uint32_t bars = (M + k - 1) / k;
  const planner::RankLoadStack& stack = snapshot_->stack;
  QVector<double> keys(static_cast<qsizetype>(bars));
  std::vector<std::uint32_t> shown(bars);
  for (std::uint32_t b = 0; b < bars; ++b) {
    shown[b] = barRank(b);
    const std::uint32_t first = b * k;
    const std::uint32_t last = std::min(first + k, M) - 1;
    keys[static_cast<qsizetype>(b)] = k == 1 ? first : (first + last) / 2.0;
  }
  auto fill = [&](QCPBars* series, const std::vector<double>& values) {
    QVector<double> v(static_cast<qsizetype>(bars));
    for (std::uint32_t b = 0; b < bars; ++b) v[static_cast<qsizetype>(b)] = values[shown[b]];
    series->setData(keys, v, true);
  };
  for (std::size_t i = 0; i < stack.tables.size(); ++i) fill(bars_[i], stack.load_ms[i]);
  if (stack.other_tables > 0) fill(bars_.back(), stack.load_ms.back());
  if (stack.sync_ms.size() == M) fill(sync_bars_, stack.sync_ms);
  // Bars thinner than a few pixels touch and are not antialiased, so they
  // keep their colours instead of fading into the background.
  const bool dense = span / k > 128;
  for (QCPBars* series : bars_) {
    series->setWidth(k * (dense ? 1.0 : 0.8));
    series->setAntialiased(!dense);
  }
  sync_bars_->setWidth(k * (dense ? 1.0 : 0.8));
  sync_bars_->setAntialiased(!dense);
  // The slowest rank's bar, boxed.
  const std::uint32_t critical = snapshot_->grid.critical_rank;
  if (critical < M) {
    const std::uint32_t first = critical / k * k;
    const std::uint32_t last = std::min(first + k, M) - 1;
    const double load = snapshot_->breakdown.rank_load_ms[critical];
    critical_box_->topLeft->setCoords(first - 0.5, load);
    critical_box_->bottomRight->setCoords(last + 0.5, 0);
  }
  critical_box_->setVisible(critical < M);
}

std::optional<RankLoadChart::Hit> RankLoadChart::hitAt(double key, double value) const {
  if (!snapshot_ || snapshot_->breakdown.cancelled || value < 0 || ranks_per_bar_ == 0) return std::nullopt;
  const long rank = std::lround(key);
  if (rank < 0 || rank >= rankCount()) return std::nullopt;
  // One rank per bar: not in the gap between bars. Several: the bar shows its heaviest rank.
  if (ranks_per_bar_ == 1 && std::abs(key - static_cast<double>(rank)) > 0.45) return std::nullopt;
  const std::uint32_t shown = barRank(static_cast<std::uint32_t>(rank) / ranks_per_bar_);
  const planner::RankLoadStack& stack = snapshot_->stack;
  double base = 0;
  for (std::size_t s = 0; s < stack.load_ms.size(); ++s) {
    const double v = stack.load_ms[s][shown];
    if (v > 0 && value >= base && value < base + v) {
      Hit hit;
      hit.group_rank = shown;
      hit.series = s;
      if (s < stack.tables.size()) hit.table = stack.tables[s];
      return hit;
    }
    base += v;
  }
  if (shown < stack.sync_ms.size() && stack.sync_ms[shown] > 0 && value >= base &&
      value < base + stack.sync_ms[shown]) {
    Hit hit;
    hit.group_rank = shown;
    hit.series = stack.load_ms.size();
    hit.sync = true;
    return hit;
  }
  return std::nullopt;
}

std::optional<RankLoadChart::Hit> RankLoadChart::hitAtPixel(const QPointF& pixel) const {
  if (!axisRect()->rect().contains(pixel.toPoint())) return std::nullopt;
  return hitAt(xAxis->pixelToCoord(pixel.x()), yAxis->pixelToCoord(pixel.y()));
}

QString RankLoadChart::hoverText(double key, double value) const {
  const std::optional<Hit> hit = hitAt(key, value);
  if (!hit) return {};
  QString text = QString::fromStdString(hit->sync    ? report::syncOnRankText(*snapshot_, hit->group_rank)
                                        : hit->table ? report::tableOnRankText(*snapshot_, *hit->table, hit->group_rank)
                                                     : report::otherTablesOnRankText(*snapshot_, hit->group_rank));
  if (ranks_per_bar_ > 1) {
    const std::uint32_t first = hit->group_rank / ranks_per_bar_ * ranks_per_bar_;
    const std::uint32_t last = std::min<std::uint32_t>(first + ranks_per_bar_, snapshot_->groupSize()) - 1;
    text +=
        tr("\n(this bar: group ranks %1\u2013%2, showing the heaviest; zoom in for each rank)").arg(first).arg(last);
  }
  return text;
}

void RankLoadChart::onMouseMove(QMouseEvent* event) {
  if (event->buttons() != Qt::NoButton) return;  // dragging
  const std::optional<Hit> hit = hitAtPixel(event->position());
  if (!hit) {
    QToolTip::hideText();
    return;
  }
  const QString text =
      hoverText(xAxis->pixelToCoord(event->position().x()), yAxis->pixelToCoord(event->position().y()));
  QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void RankLoadChart::onContextMenu(const QPoint& pos) {
  const std::optional<Hit> hit = hitAtPixel(pos);
  if (!hit || !hit->table) return;
  emit tableMenuRequested(QString::fromStdString(snapshot_->grid.plan.tables[*hit->table].name), mapToGlobal(pos));
}

}  // namespace shardscope::app
