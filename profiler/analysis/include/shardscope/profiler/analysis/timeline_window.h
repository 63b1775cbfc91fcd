// What a timeline view draws for one time window of a stored run, at the
// view's resolution: spans at least one pixel wide as items, narrower ones
// merged per row into density blocks (Qt Creator's timeline rule), so a
// frame's cost follows the pixels on screen, not the spans in the window.
// Far zoom reads the run's precomputed span summaries (docs/timeline.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

// What a span is drawn as (its colour and legend entry). Order is the
// legend's and breaks ties between equally busy classes in a density block.
enum class SpanClass : std::uint8_t {
  EmbeddingForward,
  EmbeddingBackward,
  AllToAll,
  ReplicaSync,
  AllReduce,
  Dense,
  Memcpy,
  Input,
  Step,
  Other,
};
inline constexpr std::size_t kSpanClassCount = 10;

// "embedding forward", "all-to-all", ... for legends and details.
[[nodiscard]] std::string_view toString(SpanClass cls);

// The class of a span from its kind (docs/formats/engine-trace.md and
// import-trace.md). An imported "kernel" (one the importer's rules did not
// class) is classed by its name: NCCL collectives and CUDA memcpy/memset
// kernels are recognised there; other kinds ignore the name.
[[nodiscard]] SpanClass spanClassOf(std::string_view kind, std::string_view name = {});

// spanClassOf for a store's spans, remembered per kind (and per kernel name,
// the one kind classed by its name): one hash lookup per span.
class SpanClassCache {
 public:
  explicit SpanClassCache(const core::store::StringTable& strings) : strings_(strings) {}
  [[nodiscard]] SpanClass of(const core::store::Span& span);

 private:
  const core::store::StringTable& strings_;
  std::unordered_map<std::int64_t, SpanClass> by_kind_;
  std::unordered_map<std::int64_t, SpanClass> by_kernel_name_;
};

// The stream of the row that holds a rank's step spans (kind "step"), kept
// apart so that a step does not cover the work inside it.
inline constexpr int kStepRowStream = -1;

struct TimelineRequest {
  core::store::RunId run{};
  std::vector<int> ranks;  // empty: every rank of the run
  std::int64_t t0_ns = 0;  // the window [t0_ns, t1_ns), t1_ns > t0_ns
  std::int64_t t1_ns = 0;
  int pixels = 0;  // the view's width in pixels, > 0
  // The aligned view's per-rank shifts, parallel to `ranks` (empty: all 0):
  // rank i's window is [t0_ns + offsets_ns[i], t1_ns + offsets_ns[i]) and its
  // pixel columns count from its own window's start.
  std::vector<std::int64_t> offsets_ns = {};
  // Read every span of the window even when summaries exist (exact blocks;
  // slow for windows of millions of spans).
  bool exact = false;
};

// A span drawn on its own. Times are the span's own, not clipped to the window.
struct TimelineItem {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  SpanClass cls = SpanClass::Other;
  core::store::StringId kind = core::store::kNoString;
  core::store::StringId name = core::store::kNoString;
  std::int64_t step = -1;
  std::int64_t bytes = 0;
  std::int64_t correlation = 0;
  friend bool operator==(const TimelineItem&, const TimelineItem&) = default;
};

// Spans narrower than a pixel that occupy one run of consecutive pixel
// columns [first_pixel, last_pixel] of a row, drawn as one rectangle.
struct DensityBlock {
  int first_pixel = 0;  // columns of the view, 0 .. pixels - 1
  int last_pixel = 0;
  std::int64_t start_ns = 0;  // earliest start and latest end of the merged spans (not clipped)
  std::int64_t end_ns = 0;
  std::int64_t count = 0;                 // spans merged
  std::int64_t busy_ns = 0;               // sum of their durations (nested spans count each)
  SpanClass dominant = SpanClass::Other;  // the class with the most busy ns, then the most spans
  friend bool operator==(const DensityBlock&, const DensityBlock&) = default;
};

// One (rank, stream) of the window; the step row of a rank has stream
// kStepRowStream. Items and blocks are sorted by time.
struct TimelineRow {
  int rank = 0;
  int stream = 0;
  std::vector<TimelineItem> items;
  std::vector<DensityBlock> blocks;
};

struct TimelineWindow {
  std::int64_t t0_ns = 0;
  std::int64_t t1_ns = 0;
  int pixels = 0;
  // Rows that have spans in the window, by rank, then the step row, then
  // stream. A row without spans here is absent: a view keeps its own row
  // list (from TraceStore::ranks and earlier windows) so rows do not jump.
  std::vector<TimelineRow> rows;
  std::int64_t span_count = 0;  // spans in the window (items + merged)
  // The summary level the window was read at and its bucket width (block
  // edges merge over a bucket's spans), or -1: read from the spans, exact.
  int summary_level = -1;
  std::int64_t summary_bucket_ns = 0;
};

// The window as a view draws it. A span is in the window when it overlaps
// [t0_ns, t1_ns) as TraceStore::spansInWindow defines it (an instant at or
// after t0 counts), including spans that started before t0. It is an item
// when (end - start) * pixels >= t1 - t0, i.e. at least one pixel wide.
// When the run has current timeline summaries, the window holds far more
// spans than pixels and `exact` is false, it is read from them at the
// coarsest level that keeps every span a pixel wide whole (buckets of at most
// two pixels): the same rows, items, span count and per row the same spans
// merged (count, busy, earliest start, latest end); block edges are within a
// column of the exact ones (docs/timeline.md).
// Errors: a malformed request (Usage: no pixels, an empty window, offsets not
// parallel to ranks, a rank twice with different offsets), an unknown run, a
// store failure.
[[nodiscard]] core::Result<TimelineWindow> timelineWindow(const core::store::TraceStore& store,
                                                          const core::store::StringTable& strings,
                                                          const TimelineRequest& request);
// Same, reading the store's strings first (one query more; a view that asks
// for many windows keeps a StringTable and calls the overload above).
[[nodiscard]] core::Result<TimelineWindow> timelineWindow(const core::store::TraceStore& store,
                                                          const TimelineRequest& request);

// The version of spanClassOf's classes that summaries are built with; bump it
// when SpanClass or spanClassOf changes, and stored summaries read as absent.
inline constexpr std::string_view kTimelineSummaryTag = "shardscope.span-class/1";
// Runs with more spans get summaries when the workflow finishes them; below
// it a whole-run window is read from the spans fast enough.
inline constexpr std::int64_t kTimelineSummaryMinSpans = 200'000;

// Builds (replaces) the run's timeline summaries with spanClassOf's classes,
// the step spans as the step list; one transaction, so an error or a cancel
// leaves the store as it was. Needs a store opened ReadWrite. `progress`
// counts ranks.
[[nodiscard]] core::Status buildTimelineSummaries(core::store::TraceStore& store, core::store::RunId run,
                                                  const std::atomic<bool>* cancel = nullptr,
                                                  std::function<void(int done, int total)> progress = {});
// Whether the run has summaries that timelineWindow uses: built with this
// build's tag and format over the spans the run has now.
[[nodiscard]] core::Result<bool> hasTimelineSummaries(const core::store::TraceStore& store, core::store::RunId run);
// Every rank's step spans (kind "step"), by rank then start, from the
// summaries. An error (InvalidInput) when the run has no current summaries:
// ask hasTimelineSummaries first and read the steps from the spans then.
[[nodiscard]] core::Result<std::vector<core::store::Span>> timelineStepSpans(const core::store::TraceStore& store,
                                                                             core::store::RunId run);
// Opens `store` for writing and builds the run's summaries when it has more
// than kTimelineSummaryMinSpans spans. True when it built them.
[[nodiscard]] core::Result<bool> buildTimelineSummariesIfLarge(const std::filesystem::path& store,
                                                               core::store::RunId run,
                                                               const std::atomic<bool>* cancel = nullptr,
                                                               std::function<void(int done, int total)> progress = {});

// The pixel column of time t in a window of `pixels` columns over
// [t0_ns, t1_ns), clamped to 0 .. pixels - 1. Exact (no floating point).
[[nodiscard]] int pixelColumn(std::int64_t t, std::int64_t t0_ns, std::int64_t t1_ns, int pixels);

}  // namespace shardscope::profiler
