// The timeline's drawing surface: a time ruler, the per-step straggler strip,
// and one lane per rank (expandable to its step row and one lane per stream)
// with spans in the colours of the phase palette (report/phase_style.h) and
// step boundaries marked on collapsed ranks. Lanes share the height there is
// (between a readable minimum and a maximum; more lanes scroll). It paints the newest window answer it was
// given, re-mapped to the current view, so panning and zooming never wait for
// the store: every change of the view asks for a new window
// (windowRequested) and the page's worker answers it.
//
// Mouse: wheel zooms at the pointer (Shift+wheel pans, wheel over the lane
// labels scrolls the lanes), drag pans, Shift+drag selects a time range,
// click selects a span, double-click zooms to it, a click on a lane label
// expands or collapses the rank. Keys: W/S or +/- zoom, A/D or Left/Right
// pan, Up/Down/PageUp/PageDown scroll lanes, F fits the selection (or the
// run), 0/Home shows the whole run, Alt+Left/Right or Backspace go back and
// forward in the zoom history, Esc clears the selection.
#pragma once

#include <QAbstractScrollArea>
#include <QBrush>
#include <QColor>
#include <QTimer>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "shardscope/profiler/analysis/timeline_inspect.h"
#include "shardscope/profiler/analysis/timeline_window.h"
#include "shardscope/report/phase_style.h"

namespace shardscope::app {

// The phase a span class is drawn as (the view and its legend share it): the
// all-reduce class is the dense all-reduce's, hatched like the replica sync.
[[nodiscard]] report::Phase phaseOf(profiler::SpanClass cls);

struct TimelineLane {
  int rank = 0;
  int stream = 0;           // profiler::kStepRowStream for the step row
  bool whole_rank = false;  // a collapsed rank: every stream of it in one lane
  friend bool operator==(const TimelineLane&, const TimelineLane&) = default;
};

// A step boundary drawn on a collapsed rank's lane: the step's start on that rank.
struct StepMarker {
  double column = 0.0;  // data column (the rank's offset applied)
  std::int64_t step = -1;
  bool labelled = false;  // room for "step N" beside it
};

// What a click found: one span (an item) or a density block of merged spans.
struct TimelineHit {
  int rank = 0;
  int stream = 0;
  bool block = false;
  profiler::TimelineItem item;
  profiler::DensityBlock density;
};

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  // A new run: its ranks and time extent. Collapses every rank, clears the
  // selection, the highlight, the offsets and the history, and shows the whole run.
  void setRun(const std::vector<int>& ranks, std::int64_t t0_ns, std::int64_t t1_ns);
  // Names of the spans (the run's strings), for labels inside wide spans.
  void setStrings(std::shared_ptr<const core::store::StringTable> strings) { strings_ = std::move(strings); }
  [[nodiscard]] const core::store::StringTable* strings() const { return strings_.get(); }
  // The newest answer to a request of this view (older ones are ignored).
  void setWindowAnswer(std::shared_ptr<const profiler::TimelineWindow> window);
  [[nodiscard]] const profiler::TimelineWindow* shownWindow() const { return answer_.get(); }

  // The view's time window (store time, before per-rank offsets).
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> window() const { return {t0_, t1_}; }
  // Asks for the current window again (the store changed, e.g. summaries were built).
  void refresh();
  // Moves the view to [t0, t1) as a navigation (one entry of the history).
  void navigateTo(std::int64_t t0_ns, std::int64_t t1_ns);
  void showWholeRun();
  // Zooms by `factor` (> 1 zooms in) keeping the time under data column `x` in place.
  void zoomAt(double factor, int x);
  void panPixels(int dx);
  void fitSelection();
  [[nodiscard]] bool canGoBack() const;
  [[nodiscard]] bool canGoForward() const;
  void goBack();
  void goForward();
  // Pixels of the data area (the window's width in columns).
  [[nodiscard]] int dataWidth() const;
  [[nodiscard]] int dataLeft() const { return kGutter; }
  // Data column of store time t on `rank` (offset applied), may be outside the area.
  [[nodiscard]] double columnOf(std::int64_t t, int rank) const;

  // Lanes, top to bottom.
  [[nodiscard]] const std::vector<TimelineLane>& lanes() const { return lanes_; }
  void setExpanded(int rank, bool expanded);
  [[nodiscard]] bool isExpanded(int rank) const { return expanded_.contains(rank); }
  // Viewport y of the top of lane i (after scrolling) and its height.
  [[nodiscard]] int laneTop(std::size_t i) const;
  [[nodiscard]] int laneHeight(std::size_t i) const;
  [[nodiscard]] std::optional<std::size_t> laneAt(int y) const;

  // What is drawn at a viewport point (nullopt: nothing).
  [[nodiscard]] std::optional<TimelineHit> hitAt(QPoint point) const;
  void select(const TimelineHit& hit);
  [[nodiscard]] const std::optional<TimelineHit>& selected() const { return selected_; }
  void setRange(std::optional<std::pair<std::int64_t, std::int64_t>> range);
  [[nodiscard]] const std::optional<std::pair<std::int64_t, std::int64_t>>& range() const { return range_; }
  void clearSelection();

  // One collective call outlined on every member rank, with each rank's wait.
  void setHighlight(std::optional<profiler::CollectiveCall> call);
  [[nodiscard]] const std::optional<profiler::CollectiveCall>& highlight() const { return highlight_; }
  // Per-rank offsets (parallel to the run's ranks; empty: none): rank i is
  // drawn shifted left by offsets[i], so ranks line up on a chosen event.
  void setOffsets(std::vector<std::int64_t> offsets);
  [[nodiscard]] const std::vector<std::int64_t>& offsets() const { return offsets_; }
  void setStragglerMarks(std::vector<profiler::StragglerMark> marks);
  // Every rank's steps (profiler::stepStarts), marked on collapsed lanes.
  void setSteps(const std::vector<profiler::StepStart>& steps);
  // The step boundaries drawn on lane i now (none on expanded lanes: their step row shows the steps); markers
  // closer than a few pixels to the previous one are merged into it.
  [[nodiscard]] std::vector<StepMarker> stepMarkers(std::size_t lane) const;

  // The request for what the view shows now.
  [[nodiscard]] profiler::TimelineRequest request() const;
  // The box of a span's name written inside it on a lane, in viewport pixels (empty: too narrow for a name).
  [[nodiscard]] QRectF labelBox(const profiler::TimelineItem& item, int rank, int lane_top, int lane_height) const;

  static constexpr int kGutter = 132;
  static constexpr int kRulerHeight = 24;
  static constexpr int kStripHeight = 18;
  static constexpr int kMinLaneHeight = 18;   // more lanes than fit at this height scroll
  static constexpr int kMaxLaneHeight = 120;  // few lanes grow to fill the view up to this

 signals:
  void windowRequested(const shardscope::profiler::TimelineRequest& request);
  void spanClicked(const shardscope::app::TimelineHit& hit);
  void rangeSelected(std::int64_t t0_ns, std::int64_t t1_ns);
  void selectionCleared();
  // The view's window or lanes changed (the page updates its buttons).
  void viewChanged();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> wholeRun() const;  // the run, padded by 1 % each side
  void setWindow(std::int64_t t0_ns, std::int64_t t1_ns);                // clamps, asks for the window, repaints
  void gestureMoved();                                                   // a wheel/drag/key step: history at its end
  void recordHistory();
  void rebuildLanes();
  void layoutLanes();  // lane height and tops for the viewport's height, the scroll range
  void updateScrollRange();
  [[nodiscard]] std::int64_t offsetOf(int rank) const;
  [[nodiscard]] std::int64_t answerOffsetOf(int rank) const;
  // View columns [x0, x1) of a density block of `rank` in the shown answer.
  [[nodiscard]] std::pair<double, double> blockColumns(int rank, const profiler::DensityBlock& block) const;
  [[nodiscard]] std::int64_t timeAtColumn(double column) const;
  [[nodiscard]] std::vector<const profiler::TimelineRow*> rowsOf(const TimelineLane& lane) const;
  void paintRuler(QPainter& p) const;
  void paintStrip(QPainter& p) const;
  void paintLanes(QPainter& p) const;
  void paintLane(QPainter& p, std::size_t lane_index, int top, int height) const;
  void paintWait(QPainter& p, const TimelineLane& lane, int top, int height) const;
  void paintStepMarkers(QPainter& p, std::size_t lane_index, int top, int height) const;
  void paintOverlays(QPainter& p) const;

  std::vector<int> ranks_;
  std::shared_ptr<const core::store::StringTable> strings_;
  std::int64_t run_t0_ = 0;
  std::int64_t run_t1_ = 1;
  std::int64_t t0_ = 0;
  std::int64_t t1_ = 1;
  std::set<int> expanded_;
  std::map<int, std::set<int>> streams_;  // rank -> streams seen in answers (kStepRowStream included)
  std::vector<TimelineLane> lanes_;
  std::vector<int> lane_y_;  // top of each lane in content pixels (before scrolling)
  int lane_height_ = kMinLaneHeight;
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> steps_;  // rank -> (start, step) by start
  // The phase palette's brushes per span class, built once: phaseBrush draws a hatch tile each call.
  std::array<QBrush, profiler::kSpanClassCount> span_brush_;
  std::array<QBrush, profiler::kSpanClassCount> block_brush_;  // translucent: merged spans
  std::array<QColor, profiler::kSpanClassCount> outline_;
  std::array<QColor, profiler::kSpanClassCount> label_fill_;  // behind a name: the brush's ground colour
  std::array<QColor, profiler::kSpanClassCount> label_pen_;   // black or white, whichever reads on label_fill_
  std::shared_ptr<const profiler::TimelineWindow> answer_;
  std::vector<std::int64_t> answer_offsets_;                // the offsets the answer was asked with
  std::map<std::pair<int, int>, std::size_t> answer_rows_;  // (rank, stream) -> row of the answer
  std::vector<std::int64_t> offsets_;
  std::optional<TimelineHit> selected_;
  std::optional<std::pair<std::int64_t, std::int64_t>> range_;
  std::optional<profiler::CollectiveCall> highlight_;
  std::vector<profiler::StragglerMark> marks_;
  std::int64_t max_mark_ns_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> history_;
  std::size_t history_at_ = 0;
  QTimer gesture_end_;
  // Mouse gesture state.
  enum class Drag { None, Pan, Range };
  Drag drag_ = Drag::None;
  QPoint press_at_;
  QPoint last_at_;
  bool moved_ = false;
};

}  // namespace shardscope::app
