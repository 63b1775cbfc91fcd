// Painting of the timeline view: ruler, straggler strip, lanes, overlays.
// Rectangles are batched per class and filled with one drawRects call each,
// so a frame costs one pass over the answer, not one brush change per span.
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <array>
#include <chrono>
#include <cmath>

#include "chart_style.h"
#include "shardscope/core/time_text.h"
#include "shardscope/report/timeline_ticks.h"
#include "timeline_view.h"

namespace shardscope::app {

namespace {

constexpr int kLabelPad = 6;
constexpr int kStepBand = 14;         // a collapsed lane this tall or more has a band for "step N" above its spans
constexpr int kStepBandMinLane = 40;  // lanes shorter than this mark steps by lines only
constexpr double kMinLabelRoom = 24;  // a name cut shorter than this by a nested span is left out
// "12.3 µs", "4.56 ms", "1.2 s".
QString durationText(std::int64_t ns) {
  return QString::fromStdString(core::formatDuration(std::chrono::nanoseconds(ns)));
}

}  // namespace

void TimelineView::paintEvent(QPaintEvent* event) {
  (void)event;
  QPainter p(viewport());
  p.fillRect(viewport()->rect(), palette().base());
  if (ranks_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(viewport()->rect(), Qt::AlignCenter, tr("No run shown: pick a run with spans"));
    return;
  }
  p.save();
  p.setClipRect(QRect(0, kRulerHeight + kStripHeight, viewport()->width(), viewport()->height()));
  paintLanes(p);
  paintOverlays(p);
  p.restore();
  paintStrip(p);
  paintRuler(p);
}

void TimelineView::paintRuler(QPainter& p) const {
  const QRect bar(0, 0, viewport()->width(), kRulerHeight);
  p.fillRect(bar, palette().window());
  p.setPen(palette().color(QPalette::Mid));
  p.drawLine(bar.bottomLeft(), bar.bottomRight());
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRect(kLabelPad, 0, kGutter - 2 * kLabelPad, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
             QString::fromUtf8("↔ ") + durationText(t1_ - t0_));
  // Labels are times since the run's first span.
  for (const report::TimeTick& tick :
       report::timeTicks(t0_, t1_, run_t0_, report::timeTickStep(t1_ - t0_, dataWidth(), 90))) {
    const double x = kGutter + columnOf(tick.t_ns, -1);
    if (x < kGutter) continue;
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(QPointF(x, kRulerHeight - 7), QPointF(x, kRulerHeight));
    p.setPen(palette().color(QPalette::WindowText));
    const QString label = QString::fromStdString(tick.label);
    // A label the viewport would cut is left out: its tick still marks the time.
    if (x + 3 + p.fontMetrics().horizontalAdvance(label) > viewport()->width()) continue;
    p.drawText(QRectF(x + 3, 0, 120, kRulerHeight - 4), Qt::AlignBottom | Qt::AlignLeft, label);
  }
}

void TimelineView::paintStrip(QPainter& p) const {
  const QRect strip(0, kRulerHeight, viewport()->width(), kStripHeight);
  p.fillRect(strip, palette().alternateBase());
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRect(kLabelPad, kRulerHeight, kGutter - 2 * kLabelPad, kStripHeight), Qt::AlignVCenter | Qt::AlignLeft,
             tr("last into a2a"));
  // Every mark first, then the labels over them.
  for (const auto& mark : marks_) {
    const double x = kGutter + columnOf(mark.start_ns, -1);
    if (x < kGutter || x > viewport()->width()) continue;
    const double share =
        max_mark_ns_ > 0 ? static_cast<double>(mark.last_by_ns) / static_cast<double>(max_mark_ns_) : 0.0;
    QColor c = problemColor();
    c.setAlphaF(static_cast<float>(0.25 + 0.75 * std::clamp(share, 0.0, 1.0)));
    p.fillRect(QRectF(x - 1, kRulerHeight + 2, 3, kStripHeight - 4), c);
  }
  double next_label = kGutter;
  for (const auto& mark : marks_) {
    const double x = kGutter + columnOf(mark.start_ns, -1);
    // Label the marks that matter (at least a fifth of the worst), where there is room.
    if (x < next_label || x > viewport()->width() || mark.last_by_ns <= 0 || mark.last_by_ns * 5 < max_mark_ns_) {
      continue;
    }
    const QString text = QStringLiteral("r%1 +%2").arg(mark.last_rank).arg(durationText(mark.last_by_ns));
    const int w = p.fontMetrics().horizontalAdvance(text) + 6;
    p.fillRect(QRectF(x + 3, kRulerHeight + 1, w, kStripHeight - 2), palette().alternateBase());
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRectF(x + 6, kRulerHeight, w, kStripHeight), Qt::AlignVCenter | Qt::AlignLeft, text);
    next_label = x + 3 + w + 12;
  }
}

void TimelineView::paintLanes(QPainter& p) const {
  const int bottom = viewport()->height();
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    const int top = laneTop(i);
    const int h = laneHeight(i);
    if (top + h < kRulerHeight + kStripHeight || top > bottom) continue;
    paintLane(p, i, top, h);
  }
}

void TimelineView::paintLane(QPainter& p, std::size_t lane_index, int top, int height) const {
  const TimelineLane& lane = lanes_[lane_index];
  const int width = viewport()->width();
  const bool odd = (std::lower_bound(ranks_.begin(), ranks_.end(), lane.rank) - ranks_.begin()) % 2 == 1;
  p.fillRect(QRect(kGutter, top, width - kGutter, height), odd ? palette().alternateBase() : palette().base());
  // Label.
  QString label;
  if (lane.whole_rank) {
    label = QString::fromUtf8("▸ rank %1").arg(lane.rank);
  } else if (lane.stream == profiler::kStepRowStream) {
    label = QString::fromUtf8("▾ rank %1 steps").arg(lane.rank);
  } else {
    label = QStringLiteral("    stream %1").arg(lane.stream);
  }
  p.fillRect(QRect(0, top, kGutter, height), palette().window());
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRect(kLabelPad, top, kGutter - 2 * kLabelPad, height), Qt::AlignVCenter | Qt::AlignLeft, label);
  // A tall collapsed lane keeps a band at its top for the step numbers.
  const int band = lane.whole_rank && height >= kStepBandMinLane && steps_.contains(lane.rank) ? kStepBand : 0;
  const int span_top = top + band;
  const int span_height = height - band;
  const auto rows = rowsOf(lane);
  // Blocks batched per class (translucent), then items, longest first so nested ones stay visible.
  std::array<QVector<QRectF>, profiler::kSpanClassCount> blocks;
  std::vector<const profiler::TimelineItem*> order;
  const double right = width - kGutter;
  for (const profiler::TimelineRow* row : rows) {
    for (const auto& block : row->blocks) {
      auto [x0, x1] = blockColumns(row->rank, block);
      if (x1 < 0 || x0 > right) continue;
      blocks[static_cast<std::size_t>(block.dominant)].push_back(
          QRectF(kGutter + std::max(x0, 0.0), span_top + 2, std::max(1.0, std::min(x1, right) - std::max(x0, 0.0)),
                 span_height - 4));
    }
    for (const auto& item : row->items) order.push_back(&item);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->end_ns - a->start_ns > b->end_ns - b->start_ns; });
  p.setPen(Qt::NoPen);
  for (std::size_t c = 0; c < blocks.size(); ++c) {
    if (blocks[c].isEmpty()) continue;
    p.setBrush(block_brush_[c]);
    p.drawRects(blocks[c]);
  }
  // Drawn in order (longest first): a nested span paints over its parent. Names come last, over the wait hatch.
  std::vector<std::pair<const profiler::TimelineItem*, QRectF>> labels;
  for (const auto* item : order) {
    const double x0 = std::max(columnOf(item->start_ns, lane.rank), -1.0);
    const double x1 = std::min(columnOf(item->end_ns, lane.rank), right + 1);
    if (x1 < 0 || x0 > right) continue;
    const auto c = static_cast<std::size_t>(item->cls);
    p.setBrush(span_brush_[c]);
    // Spans wide enough get an outline, so neighbours of one class stay apart.
    p.setPen(x1 - x0 >= 4 ? QPen(outline_[c], 1) : QPen(Qt::NoPen));
    const QRectF rect(kGutter + x0, span_top + 1, std::max(1.0, x1 - x0), span_height - 2);
    p.drawRect(rect);
    // A span drawn over an earlier one's name ends that name before it (or hides it when little would be left).
    for (auto& [earlier, box] : labels) {
      if (box.isEmpty() || rect.left() >= box.right() || rect.right() <= box.left()) continue;
      box = rect.left() - box.left() >= kMinLabelRoom
                ? QRectF(box.left(), box.top(), rect.left() - 2 - box.left(), box.height())
                : QRectF();
    }
    if (const QRectF box = labelBox(*item, lane.rank, span_top, span_height); !box.isEmpty()) {
      labels.emplace_back(item, box);
    }
  }
  p.setPen(Qt::NoPen);
  paintWait(p, lane, top, height);
  paintStepMarkers(p, lane_index, top, height);
  for (const auto& [item, box] : labels) {
    if (box.isEmpty()) continue;
    const auto c = static_cast<std::size_t>(item->cls);
    // The name on its class's ground: neither a hatch nor the wait's pattern runs through the letters.
    p.fillRect(box.adjusted(-2, 0, 2, 0), label_fill_[c]);
    p.setPen(label_pen_[c]);
    const std::string_view name = strings_->at(item->name);
    p.drawText(box, Qt::AlignVCenter | Qt::AlignLeft,
               p.fontMetrics().elidedText(QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())),
                                          Qt::ElideRight, static_cast<int>(std::ceil(box.width()))));
  }
  p.setPen(Qt::NoPen);
}

// The highlighted call's wait on this lane's rank: hatched from the rank's arrival to the last arrival.
void TimelineView::paintWait(QPainter& p, const TimelineLane& lane, int top, int height) const {
  if (!highlight_) return;
  for (const auto& arrival : highlight_->arrivals) {
    if (arrival.rank != lane.rank || arrival.wait_ns <= 0) continue;
    const double x0 = std::max(columnOf(arrival.start_ns, arrival.rank), 0.0);
    const double xw = std::min(columnOf(arrival.start_ns + arrival.wait_ns, arrival.rank), 1.0 * dataWidth());
    if (xw < 0 || x0 > dataWidth()) continue;
    p.fillRect(QRectF(kGutter + x0, top, std::max(1.0, xw - x0), height), QBrush(problemColor(), Qt::FDiagPattern));
  }
}

void TimelineView::paintStepMarkers(QPainter& p, std::size_t lane_index, int top, int height) const {
  const auto markers = stepMarkers(lane_index);
  if (markers.empty()) return;
  const bool band = height >= kStepBandMinLane;
  QColor line = palette().color(QPalette::WindowText);
  line.setAlphaF(0.45f);
  p.setPen(QPen(line, 1, Qt::DashLine));
  for (const auto& m : markers) {
    const double x = std::round(kGutter + m.column) + 0.5;
    p.drawLine(QPointF(x, top), QPointF(x, top + height));
  }
  if (!band) return;
  QFont small = p.font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  p.save();
  p.setFont(small);
  p.setPen(palette().color(QPalette::WindowText));
  for (const auto& m : markers) {
    if (!m.labelled) continue;
    p.drawText(QRectF(kGutter + m.column + 3, top, 80, kStepBand), Qt::AlignVCenter | Qt::AlignLeft,
               tr("step %1").arg(m.step));
  }
  p.restore();
}

void TimelineView::paintOverlays(QPainter& p) const {
  const int top_lanes = kRulerHeight + kStripHeight;
  const int bottom = viewport()->height();
  if (range_) {
    const double x0 = kGutter + std::max(columnOf(range_->first, -1), 0.0);
    const double x1 = kGutter + std::min(columnOf(range_->second, -1), static_cast<double>(dataWidth()));
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlphaF(0.18f);
    p.fillRect(QRectF(x0, top_lanes, std::max(1.0, x1 - x0), bottom - top_lanes), fill);
    p.setPen(QPen(palette().color(QPalette::Highlight), 1));
    p.drawLine(QPointF(x0, top_lanes), QPointF(x0, bottom));
    p.drawLine(QPointF(x1, top_lanes), QPointF(x1, bottom));
  }
  // Vertical extent of each rank's lanes.
  auto rankExtent = [this](int rank) -> std::optional<std::pair<int, int>> {
    std::optional<std::pair<int, int>> e;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      if (lanes_[i].rank != rank) continue;
      const int t = laneTop(i);
      const int b = t + laneHeight(i);
      e = e ? std::pair{std::min(e->first, t), std::max(e->second, b)} : std::pair{t, b};
    }
    return e;
  };
  // Outlines stay in the data area: a call that started left of the view does not cross the lane labels.
  p.setClipRect(QRect(kGutter, top_lanes, dataWidth(), bottom - top_lanes));
  if (highlight_) {
    for (const auto& arrival : highlight_->arrivals) {
      const auto extent = rankExtent(arrival.rank);
      if (!extent) continue;
      const double x0 = kGutter + columnOf(arrival.start_ns, arrival.rank);
      const double x1 = kGutter + columnOf(arrival.end_ns, arrival.rank);
      const QRectF box(x0, extent->first, std::max(2.0, x1 - x0), extent->second - extent->first);
      p.setPen(QPen(Qt::black, 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(box);
      QPainterPath arrow;
      arrow.moveTo(x0, box.top());
      arrow.lineTo(x0 + 5, box.top() - 5);
      arrow.lineTo(x0 - 5, box.top() - 5);
      arrow.closeSubpath();
      p.fillPath(arrow, Qt::black);
    }
  }
  if (selected_) {
    const auto lane_extent = rankExtent(selected_->rank);
    if (lane_extent) {
      const std::int64_t a = selected_->block ? selected_->density.start_ns : selected_->item.start_ns;
      const std::int64_t b = selected_->block ? selected_->density.end_ns : selected_->item.end_ns;
      // The lane that shows the span: its stream's lane when expanded, else the rank's lane.
      std::pair<int, int> ys = *lane_extent;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        if (lanes_[i].rank == selected_->rank && !lanes_[i].whole_rank && lanes_[i].stream == selected_->stream) {
          ys = {laneTop(i), laneTop(i) + laneHeight(i)};
        }
      }
      const double x0 = kGutter + columnOf(a, selected_->rank);
      const double x1 = kGutter + columnOf(b, selected_->rank);
      p.setPen(QPen(palette().color(QPalette::Highlight), 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(x0 - 1, ys.first, std::max(3.0, x1 - x0 + 2), ys.second - ys.first));
    }
  }
}

}  // namespace shardscope::app
