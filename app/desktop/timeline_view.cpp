// The timeline view's state and interaction; painting is in timeline_view_paint.cpp.
#include "timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <limits>

#include "chart_style.h"

namespace shardscope::app {

namespace {

constexpr std::int64_t kMinWindowNs = 1'000;  // 1 us across the whole view
constexpr double kWheelStep = 1.25;           // zoom per wheel notch
constexpr double kKeyZoom = 1.5;
constexpr double kKeyPan = 0.15;  // of the view per key press
constexpr int kRankGap = 3;
constexpr int kClickSlop = 4;          // pixels a press may move and still be a click
constexpr double kMarkerMinGap = 3.0;  // step markers closer than this to the previous one are not drawn
constexpr double kBlockOpacity = 0.55;

// A brush at `opacity`: a colour's alpha, or a hatch tile drawn translucent.
QBrush translucent(const QBrush& brush, double opacity) {
  if (brush.style() != Qt::TexturePattern) {
    QColor c = brush.color();
    c.setAlphaF(static_cast<float>(opacity));
    return QBrush(c);
  }
  const QPixmap tile = brush.texture();
  QPixmap faded(tile.size());
  faded.fill(Qt::transparent);
  QPainter p(&faded);
  p.setOpacity(opacity);
  p.drawPixmap(0, 0, tile);
  p.end();
  return QBrush(faded);
}

}  // namespace

report::Phase phaseOf(profiler::SpanClass cls) {
  using profiler::SpanClass;
  using report::Phase;
  switch (cls) {
    case SpanClass::EmbeddingForward:
      return Phase::EmbeddingForward;
    case SpanClass::EmbeddingBackward:
      return Phase::EmbeddingBackward;
    case SpanClass::AllToAll:
      return Phase::AllToAll;
    case SpanClass::ReplicaSync:
      return Phase::ReplicaSync;
    case SpanClass::AllReduce:
      return Phase::DenseAllReduce;
    case SpanClass::Dense:
      return Phase::Dense;
    case SpanClass::Memcpy:
      return Phase::Memcpy;
    case SpanClass::Input:
      return Phase::Input;
    case SpanClass::Step:
      return Phase::Step;
    case SpanClass::Other:
      break;
  }
  return Phase::Other;
}

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  viewport()->setMouseTracking(false);
  viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(480, 200);
  for (std::size_t c = 0; c < profiler::kSpanClassCount; ++c) {
    const report::Phase phase = phaseOf(static_cast<profiler::SpanClass>(c));
    const QColor colour = phaseColor(phase);
    span_brush_[c] = phaseBrush(phase);
    block_brush_[c] = translucent(span_brush_[c], kBlockOpacity);
    outline_[c] = colour.darker(150);
    label_fill_[c] = phaseGround(phase);
    const QColor& g = label_fill_[c];
    const int luma = (299 * g.red() + 587 * g.green() + 114 * g.blue()) / 1000;
    label_pen_[c] = luma >= 128 ? QColor(Qt::black) : QColor(Qt::white);
  }
  gesture_end_.setSingleShot(true);
  gesture_end_.setInterval(600);
  connect(&gesture_end_, &QTimer::timeout, this, &TimelineView::recordHistory);
}

void TimelineView::setRun(const std::vector<int>& ranks, std::int64_t t0_ns, std::int64_t t1_ns) {
  ranks_ = ranks;
  run_t0_ = t0_ns;
  run_t1_ = std::max(t1_ns, t0_ns + 1);
  expanded_.clear();
  streams_.clear();
  answer_.reset();
  answer_rows_.clear();
  offsets_.clear();
  selected_.reset();
  range_.reset();
  highlight_.reset();
  marks_.clear();
  max_mark_ns_ = 0;
  steps_.clear();
  gesture_end_.stop();
  rebuildLanes();
  verticalScrollBar()->setValue(0);
  const auto [w0, w1] = wholeRun();
  t1_ = t0_;          // no window yet: the same run shown again still asks for its window
  setWindow(w0, w1);  // one request: the whole run, the history's first entry
  history_ = {{t0_, t1_}};
  history_at_ = 0;
}

void TimelineView::setWindowAnswer(std::shared_ptr<const profiler::TimelineWindow> window) {
  if (!window) return;
  answer_ = std::move(window);
  answer_offsets_ = offsets_;
  answer_rows_.clear();
  bool new_stream = false;
  for (std::size_t i = 0; i < answer_->rows.size(); ++i) {
    const auto& row = answer_->rows[i];
    answer_rows_[{row.rank, row.stream}] = i;
    new_stream |= streams_[row.rank].insert(row.stream).second && expanded_.contains(row.rank);
  }
  if (new_stream) rebuildLanes();
  viewport()->update();
}

int TimelineView::dataWidth() const { return std::max(1, viewport()->width() - kGutter); }

std::int64_t TimelineView::offsetOf(int rank) const {
  if (offsets_.empty()) return 0;
  const auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank);
  if (it == ranks_.end() || *it != rank) return 0;
  return offsets_[static_cast<std::size_t>(it - ranks_.begin())];
}

std::int64_t TimelineView::answerOffsetOf(int rank) const {
  if (answer_offsets_.empty()) return 0;
  const auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank);
  if (it == ranks_.end() || *it != rank) return 0;
  return answer_offsets_[static_cast<std::size_t>(it - ranks_.begin())];
}

std::pair<double, double> TimelineView::blockColumns(int rank, const profiler::DensityBlock& block) const {
  // The block's columns are of the answer's window for this rank; map them to store time, then to this view.
  const double per_column = static_cast<double>(answer_->t1_ns - answer_->t0_ns) / answer_->pixels;
  const double base = static_cast<double>(answer_->t0_ns + answerOffsetOf(rank) - offsetOf(rank) - t0_);
  const double scale = dataWidth() / static_cast<double>(t1_ - t0_);
  return {(base + block.first_pixel * per_column) * scale, (base + (block.last_pixel + 1) * per_column) * scale};
}

double TimelineView::columnOf(std::int64_t t, int rank) const {
  const double span = static_cast<double>(t1_ - t0_);
  return static_cast<double>(t - offsetOf(rank) - t0_) * dataWidth() / span;
}

std::int64_t TimelineView::timeAtColumn(double column) const {
  const double span = static_cast<double>(t1_ - t0_);
  return t0_ + static_cast<std::int64_t>(std::llround(column * span / dataWidth()));
}

profiler::TimelineRequest TimelineView::request() const {
  profiler::TimelineRequest r;
  r.ranks = ranks_;
  r.t0_ns = t0_;
  r.t1_ns = t1_;
  r.pixels = dataWidth();
  if (!offsets_.empty()) r.offsets_ns = offsets_;
  return r;
}

void TimelineView::setWindow(std::int64_t t0_ns, std::int64_t t1_ns) {
  const std::int64_t extent = run_t1_ - run_t0_;
  const std::int64_t max_span = extent + extent / 5 + kMinWindowNs;
  std::int64_t span = std::clamp<std::int64_t>(t1_ns - t0_ns, kMinWindowNs, max_span);
  // Keep some of the run in view: the window may not leave the run by more than its own width.
  const std::int64_t lo = run_t0_ - span / 2;
  const std::int64_t hi = run_t1_ + span / 2 - span;
  t0_ns = std::clamp(t0_ns, std::min(lo, hi), std::max(lo, hi));
  if (t0_ns == t0_ && t0_ns + span == t1_) return;
  t0_ = t0_ns;
  t1_ = t0_ns + span;
  if (!ranks_.empty()) emit windowRequested(request());
  viewport()->update();
  emit viewChanged();
}

void TimelineView::refresh() {
  if (!ranks_.empty()) emit windowRequested(request());
}

void TimelineView::navigateTo(std::int64_t t0_ns, std::int64_t t1_ns) {
  recordHistory();
  setWindow(t0_ns, t1_ns);
  recordHistory();
}

std::pair<std::int64_t, std::int64_t> TimelineView::wholeRun() const {
  const std::int64_t pad = (run_t1_ - run_t0_) / 100;
  return {run_t0_ - pad, run_t1_ + pad};
}

void TimelineView::showWholeRun() {
  const auto [w0, w1] = wholeRun();
  navigateTo(w0, w1);
}

void TimelineView::zoomAt(double factor, int x) {
  const double column = std::clamp(static_cast<double>(x), 0.0, static_cast<double>(dataWidth()));
  const std::int64_t anchor = timeAtColumn(column);
  const double span = static_cast<double>(t1_ - t0_) / factor;
  const auto t0 = anchor - static_cast<std::int64_t>(std::llround(span * column / dataWidth()));
  setWindow(t0, t0 + std::max<std::int64_t>(1, std::llround(span)));
  gestureMoved();
}

void TimelineView::panPixels(int dx) {
  const auto shift = static_cast<std::int64_t>(std::llround(static_cast<double>(dx) * (t1_ - t0_) / dataWidth()));
  setWindow(t0_ - shift, t1_ - shift);
  gestureMoved();
}

void TimelineView::fitSelection() {
  std::optional<std::pair<std::int64_t, std::int64_t>> target = range_;
  if (!target && selected_) {
    const std::int64_t off = offsetOf(selected_->rank);
    target = selected_->block ? std::pair{selected_->density.start_ns - off, selected_->density.end_ns - off}
                              : std::pair{selected_->item.start_ns - off, selected_->item.end_ns - off};
  }
  if (!target) {
    showWholeRun();
    return;
  }
  const std::int64_t pad = std::max<std::int64_t>((target->second - target->first) / 20, kMinWindowNs / 2);
  navigateTo(target->first - pad, target->second + pad);
}

void TimelineView::gestureMoved() { gesture_end_.start(); }

void TimelineView::recordHistory() {
  gesture_end_.stop();
  const std::pair current{t0_, t1_};
  if (history_.empty()) {
    history_.push_back(current);
    history_at_ = 0;
  } else if (history_[history_at_] != current) {
    history_.resize(history_at_ + 1);
    history_.push_back(current);
    history_at_ = history_.size() - 1;
  }
  emit viewChanged();
}

bool TimelineView::canGoBack() const { return history_at_ > 0 || (gesture_end_.isActive() && !history_.empty()); }

bool TimelineView::canGoForward() const { return !gesture_end_.isActive() && history_at_ + 1 < history_.size(); }

void TimelineView::goBack() {
  if (gesture_end_.isActive()) recordHistory();
  if (history_at_ == 0) return;
  --history_at_;
  setWindow(history_[history_at_].first, history_[history_at_].second);
  emit viewChanged();
}

void TimelineView::goForward() {
  if (history_at_ + 1 >= history_.size()) return;
  ++history_at_;
  setWindow(history_[history_at_].first, history_[history_at_].second);
  emit viewChanged();
}

void TimelineView::rebuildLanes() {
  lanes_.clear();
  for (const int rank : ranks_) {
    if (!expanded_.contains(rank)) {
      lanes_.push_back({rank, 0, true});
      continue;
    }
    const auto it = streams_.find(rank);
    if (it == streams_.end() || it->second.empty()) {
      lanes_.push_back({rank, 0, true});
      continue;
    }
    for (const int stream : it->second) lanes_.push_back({rank, stream, false});  // the step row (-1) first
  }
  layoutLanes();
  viewport()->update();
  emit viewChanged();
}

void TimelineView::layoutLanes() {
  int gaps = 0;
  for (std::size_t k = 0; k + 1 < lanes_.size(); ++k) gaps += lanes_[k + 1].rank != lanes_[k].rank ? kRankGap : 0;
  const int visible = viewport()->height() - kRulerHeight - kStripHeight;
  const int n = std::max<int>(1, static_cast<int>(lanes_.size()));
  lane_height_ = std::clamp((visible - gaps) / n, kMinLaneHeight, kMaxLaneHeight);
  lane_y_.assign(lanes_.size(), 0);
  int y = 0;
  for (std::size_t k = 0; k < lanes_.size(); ++k) {
    if (k > 0 && lanes_[k].rank != lanes_[k - 1].rank) y += kRankGap;
    lane_y_[k] = y;
    y += lane_height_;
  }
  updateScrollRange();
}

void TimelineView::setExpanded(int rank, bool expanded) {
  if (expanded == expanded_.contains(rank)) return;
  if (expanded) {
    expanded_.insert(rank);
  } else {
    expanded_.erase(rank);
  }
  rebuildLanes();
}

int TimelineView::laneHeight(std::size_t i) const {
  (void)i;
  return lane_height_;
}

int TimelineView::laneTop(std::size_t i) const {
  const int base = kRulerHeight + kStripHeight - verticalScrollBar()->value();
  if (lane_y_.empty()) return base;
  if (i < lane_y_.size()) return base + lane_y_[i];
  return base + lane_y_.back() + lane_height_;
}

std::optional<std::size_t> TimelineView::laneAt(int y) const {
  if (y < kRulerHeight + kStripHeight) return std::nullopt;
  const int content_y = y - laneTop(0);
  const auto after = std::upper_bound(lane_y_.begin(), lane_y_.end(), content_y);
  if (after == lane_y_.begin()) return std::nullopt;
  const auto i = static_cast<std::size_t>(after - lane_y_.begin()) - 1;
  if (content_y < lane_y_[i] + lane_height_) return i;
  return std::nullopt;
}

void TimelineView::updateScrollRange() {
  const int content = lanes_.empty() ? 0
                                     : laneTop(lanes_.size() - 1) + verticalScrollBar()->value() +
                                           laneHeight(lanes_.size() - 1) - kRulerHeight - kStripHeight;
  const int visible = viewport()->height() - kRulerHeight - kStripHeight;
  verticalScrollBar()->setRange(0, std::max(0, content - visible));
  verticalScrollBar()->setPageStep(std::max(1, visible));
  verticalScrollBar()->setSingleStep(lane_height_);
}

std::vector<const profiler::TimelineRow*> TimelineView::rowsOf(const TimelineLane& lane) const {
  std::vector<const profiler::TimelineRow*> rows;
  if (!answer_) return rows;
  if (!lane.whole_rank) {
    const auto it = answer_rows_.find({lane.rank, lane.stream});
    if (it != answer_rows_.end()) rows.push_back(&answer_->rows[it->second]);
    return rows;
  }
  for (auto it = answer_rows_.lower_bound({lane.rank, std::numeric_limits<int>::min()});
       it != answer_rows_.end() && it->first.first == lane.rank; ++it) {
    if (it->first.second != profiler::kStepRowStream) rows.push_back(&answer_->rows[it->second]);
  }
  return rows;
}

std::optional<TimelineHit> TimelineView::hitAt(QPoint point) const {
  const auto lane_index = laneAt(point.y());
  if (!lane_index || point.x() < kGutter || !answer_) return std::nullopt;
  const TimelineLane& lane = lanes_[*lane_index];
  const double column = point.x() - kGutter;
  const std::int64_t t = timeAtColumn(column) + offsetOf(lane.rank);
  const std::int64_t slop = std::max<std::int64_t>(1, (t1_ - t0_) * 2 / dataWidth());
  std::optional<TimelineHit> best;
  for (const profiler::TimelineRow* row : rowsOf(lane)) {
    for (const auto& item : row->items) {
      if (item.start_ns > t + slop || item.end_ns < t - slop) continue;
      const bool shorter =
          !best || best->block || item.end_ns - item.start_ns < best->item.end_ns - best->item.start_ns;
      if (shorter) best = TimelineHit{row->rank, row->stream, false, item, {}};
    }
  }
  if (best) return best;
  for (const profiler::TimelineRow* row : rowsOf(lane)) {
    for (const auto& block : row->blocks) {
      const auto [x0, x1] = blockColumns(row->rank, block);
      if (column >= x0 - 1 && column <= x1 + 1) return TimelineHit{row->rank, row->stream, true, {}, block};
    }
  }
  return std::nullopt;
}

void TimelineView::select(const TimelineHit& hit) {
  selected_ = hit;
  viewport()->update();
}

void TimelineView::setRange(std::optional<std::pair<std::int64_t, std::int64_t>> range) {
  range_ = range;
  viewport()->update();
}

void TimelineView::clearSelection() {
  selected_.reset();
  range_.reset();
  highlight_.reset();
  viewport()->update();
  emit selectionCleared();
}

void TimelineView::setHighlight(std::optional<profiler::CollectiveCall> call) {
  highlight_ = std::move(call);
  viewport()->update();
}

void TimelineView::setOffsets(std::vector<std::int64_t> offsets) {
  if (!offsets.empty() && offsets.size() != ranks_.size()) offsets.clear();
  offsets_ = std::move(offsets);
  if (!ranks_.empty()) emit windowRequested(request());
  viewport()->update();
  emit viewChanged();
}

void TimelineView::setStragglerMarks(std::vector<profiler::StragglerMark> marks) {
  marks_ = std::move(marks);
  max_mark_ns_ = 0;
  for (const auto& m : marks_) max_mark_ns_ = std::max(max_mark_ns_, m.last_by_ns);
  viewport()->update();
}

void TimelineView::setSteps(const std::vector<profiler::StepStart>& steps) {
  steps_.clear();
  for (const auto& s : steps) steps_[s.rank].emplace_back(s.start_ns, s.step);
  for (auto& [rank, list] : steps_) std::sort(list.begin(), list.end());
  viewport()->update();
}

std::vector<StepMarker> TimelineView::stepMarkers(std::size_t lane) const {
  std::vector<StepMarker> out;
  if (lane >= lanes_.size() || !lanes_[lane].whole_rank) return out;
  const int rank = lanes_[lane].rank;
  const auto it = steps_.find(rank);
  if (it == steps_.end()) return out;
  const auto& list = it->second;
  const std::int64_t off = offsetOf(rank);
  auto first =
      std::lower_bound(list.begin(), list.end(), std::pair{t0_ + off, std::numeric_limits<std::int64_t>::min()});
  const double width = dataWidth();
  const int label_width = fontMetrics().horizontalAdvance(QStringLiteral("step 0000")) + 8;
  double last_label = -1e9;
  for (auto s = first; s != list.end(); ++s) {
    const double column = columnOf(s->first, rank);
    if (column > width) break;
    if (!out.empty() && column - out.back().column < kMarkerMinGap) continue;
    const bool labelled = column - last_label >= label_width;
    if (labelled) last_label = column;
    out.push_back({column, s->second, labelled});
  }
  return out;
}

QRectF TimelineView::labelBox(const profiler::TimelineItem& item, int rank, int lane_top, int lane_height) const {
  constexpr double kMinLabelWidth = 48;  // an item this wide gets its name written in it
  const double right = dataWidth();
  const double x0 = std::max(columnOf(item.start_ns, rank), 0.0);
  const double x1 = std::min(columnOf(item.end_ns, rank), right);
  if (x1 - std::max(columnOf(item.start_ns, rank), -1.0) < kMinLabelWidth || !strings_) return {};
  const QString name =
      QString::fromUtf8(strings_->at(item.name).data(), static_cast<qsizetype>(strings_->at(item.name).size()));
  const double avail = x1 - x0 - 6;
  const double w = std::min<double>(fontMetrics().horizontalAdvance(name), avail);
  const double h = std::min(fontMetrics().height(), lane_height - 2);
  return {kGutter + x0 + 3, lane_top + (lane_height - h) / 2.0, std::max(0.0, w), h};
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  layoutLanes();
  if (!ranks_.empty()) emit windowRequested(request());
}

void TimelineView::scrollContentsBy(int dx, int dy) {
  (void)dx;
  (void)dy;
  viewport()->update();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const int delta = event->angleDelta().y() != 0 ? event->angleDelta().y() : event->angleDelta().x();
  if (delta == 0) return;
  const QPoint at = event->position().toPoint();
  if (at.x() < kGutter) {  // over the labels: scroll the lanes
    verticalScrollBar()->setValue(verticalScrollBar()->value() - delta / 120 * 3 * lane_height_);
  } else if (event->modifiers() & Qt::ShiftModifier) {
    panPixels(delta / 120 * dataWidth() / 10);
  } else {
    zoomAt(std::pow(kWheelStep, delta / 120.0), at.x() - kGutter);
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  press_at_ = last_at_ = event->position().toPoint();
  moved_ = false;
  drag_ = (event->modifiers() & Qt::ShiftModifier) && press_at_.x() >= kGutter ? Drag::Range : Drag::Pan;
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint at = event->position().toPoint();
  if ((at - press_at_).manhattanLength() > kClickSlop) moved_ = true;
  if (drag_ == Drag::Pan && moved_) {
    panPixels(at.x() - last_at_.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - (at.y() - last_at_.y()));
  } else if (drag_ == Drag::Range && moved_) {
    const auto a = timeAtColumn(std::min(press_at_.x(), at.x()) - kGutter);
    const auto b = timeAtColumn(std::max(press_at_.x(), at.x()) - kGutter);
    setRange(std::pair{a, std::max(b, a + 1)});
  }
  last_at_ = at;
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const Drag drag = std::exchange(drag_, Drag::None);
  if (drag == Drag::Range && moved_ && range_) {
    emit rangeSelected(range_->first, range_->second);
    return;
  }
  if (moved_) return;
  const QPoint at = event->position().toPoint();
  if (at.x() < kGutter) {
    if (const auto lane = laneAt(at.y())) setExpanded(lanes_[*lane].rank, !isExpanded(lanes_[*lane].rank));
    return;
  }
  if (const auto hit = hitAt(at)) {
    range_.reset();
    select(*hit);
    emit spanClicked(*hit);
  } else {
    clearSelection();
  }
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (const auto hit = hitAt(event->position().toPoint())) {
    select(*hit);
    fitSelection();
  }
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const int center = dataWidth() / 2;
  const bool alt = (event->modifiers() & Qt::AltModifier) != 0;
  switch (event->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoomAt(kKeyZoom, center);
      break;
    case Qt::Key_S:
    case Qt::Key_Minus:
      zoomAt(1.0 / kKeyZoom, center);
      break;
    case Qt::Key_A:
      panPixels(static_cast<int>(dataWidth() * kKeyPan));
      break;
    case Qt::Key_D:
      panPixels(-static_cast<int>(dataWidth() * kKeyPan));
      break;
    case Qt::Key_Left:
      if (alt) {
        goBack();
      } else {
        panPixels(static_cast<int>(dataWidth() * kKeyPan));
      }
      break;
    case Qt::Key_Right:
      if (alt) {
        goForward();
      } else {
        panPixels(-static_cast<int>(dataWidth() * kKeyPan));
      }
      break;
    case Qt::Key_Backspace:
      goBack();
      break;
    case Qt::Key_Up:
      verticalScrollBar()->setValue(verticalScrollBar()->value() - lane_height_);
      break;
    case Qt::Key_Down:
      verticalScrollBar()->setValue(verticalScrollBar()->value() + lane_height_);
      break;
    case Qt::Key_PageUp:
      verticalScrollBar()->triggerAction(QAbstractSlider::SliderPageStepSub);
      break;
    case Qt::Key_PageDown:
      verticalScrollBar()->triggerAction(QAbstractSlider::SliderPageStepAdd);
      break;
    case Qt::Key_F:
      fitSelection();
      break;
    case Qt::Key_0:
    case Qt::Key_Home:
      showWholeRun();
      break;
    case Qt::Key_Escape:
      clearSelection();
      break;
    default:
      QAbstractScrollArea::keyPressEvent(event);
      return;
  }
  event->accept();
}

}  // namespace shardscope::app
