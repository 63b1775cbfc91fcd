// Precomputed per-rank span summaries of a stored run, for views that show
// far more spans than pixels (the timeline zoomed out): per level of detail,
// buckets of short spans with counts and busy time per class, the longer
// spans kept whole, and each rank's step spans. The store knows no span
// classes: the builder is given a classifier and a tag naming its version,
// and a reader asking for another tag (or format) sees no summaries.
// docs/formats/store.md ("Span summaries") has the tables and the encoding.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "shardscope/core/store/store_types.h"

namespace shardscope::core::store {

// The summary encoding this build writes and reads; summaries of another
// format read as absent (rebuild them).
inline constexpr int kSpanSummaryFormat = 1;
// Classes a classifier may return: 0 .. kSpanSummaryClasses - 1.
inline constexpr int kSpanSummaryClasses = 16;
// Level L buckets spans by start into buckets of kSummaryBaseNs * 2^L ns;
// the spans shorter than half that width are bucketed, the others kept
// whole. A run builds the levels that pay (SpanSummaryInfo::levels).
inline constexpr std::int64_t kSummaryBaseNs = 1024;
inline constexpr int kSummaryMaxLevel = 50;

// The bucket width of level `level` (0 .. kSummaryMaxLevel).
[[nodiscard]] constexpr std::int64_t summaryLevelWidth(int level) { return kSummaryBaseNs << level; }
// The shortest span level `level` keeps whole: half its bucket width.
[[nodiscard]] constexpr std::int64_t summaryWholeNs(int level) { return summaryLevelWidth(level) / 2; }

struct SpanSummaryOptions {
  // The class of a span from its kind and name, 0 .. kSpanSummaryClasses - 1.
  std::function<int(StringId kind, StringId name)> classify;
  // Names the classifier's version (its class set and rules).
  std::string tag;
  // Spans of this class are the rank's steps: kept whole in their own list
  // (TraceStore::summarySteps), never bucketed. -1: no step class.
  int step_class = -1;
  const std::atomic<bool>* cancel = nullptr;          // checked between reads; set: Cancelled, store unchanged
  std::function<void(int done, int total)> progress;  // ranks summarised, of all
};

// What the store holds for one run (TraceStore::spanSummaryInfo).
struct SpanSummaryInfo {
  int format = 0;
  std::string tag;
  std::vector<int> levels;  // the levels built, finest first (not every level between)
  int step_class = -1;
  std::int64_t span_count = 0;  // the run's spans when built; another count means stale
  std::int64_t bytes = 0;       // encoded size of every list
  std::string created_at;
};

// Per-class part of a bucket.
struct SummaryClassWeight {
  int cls = 0;
  std::int64_t count = 0;
  std::int64_t busy_ns = 0;
  friend bool operator==(const SummaryClassWeight&, const SummaryClassWeight&) = default;
};

// The spans of one stream shorter than half the level's width whose start
// falls in [index * width, (index + 1) * width): each ends before
// (index + 1.5) * width. Its classes are a slice of the visited classes.
struct SummaryBucket {
  std::int64_t index = 0;
  std::int64_t min_start_ns = 0;
  std::int64_t max_end_ns = 0;
  std::int64_t last_ns = 0;  // the last nanosecond a span covers: end - 1, or an instant's start
  std::int64_t count = 0;
  std::int64_t busy_ns = 0;  // sum of durations
  std::uint32_t first_class = 0;
  std::uint32_t class_count = 0;
};

// A span kept whole, with the class the builder gave it.
struct SummarySpan {
  Span span;
  int cls = 0;
  friend bool operator==(const SummarySpan&, const SummarySpan&) = default;
};

struct SummaryWindowRequest {
  RunId run{};
  std::string tag;                  // must be the stored tag, else an error
  int level = 0;                    // one of SpanSummaryInfo::levels
  std::vector<RankWindow> windows;  // each rank at most once
};

// What a window holds at one level, handed over as it is decoded (a far
// view has hundreds of thousands of buckets), per requested window (its
// index in the request). Four disjoint parts that together are every span
// of the rank that overlaps its window (TraceStore::spansInWindow's rule):
//  - buckets whose every span overlaps the window;
//  - spans kept whole (not steps): every one at least half the level's
//    width, and shorter ones near the window's ends;
//  - the rank's steps (the step class), whole;
//  - edge spans, read from the spans table: near the window's ends, the
//    spans in no bucket or whole span above, those that overlap it. Steps
//    may be among them (the store cannot tell them); a visitor drops them,
//    having them as steps.
// A bucket that straddles an end of the window is replaced by finer data:
// the whole spans of the finer levels built and the finest level's buckets
// there, and of those only the straddling ones by edge spans. So buckets
// come at the level asked for and, near the ends, at the finest level.
// Each call is one stream of one chunk: buckets by index, spans by start.
class SummaryVisitor {
 public:
  virtual ~SummaryVisitor() = default;
  // Buckets of `level`; b.first_class .. + b.class_count index `classes`.
  virtual void buckets(std::size_t window, int level, int stream, std::span<const SummaryBucket> buckets,
                       std::span<const SummaryClassWeight> classes) = 0;
  virtual void spans(std::size_t window, std::span<const SummarySpan> spans) = 0;
  virtual void steps(std::size_t window, std::span<const SummarySpan> steps) = 0;
  virtual void edgeSpans(std::size_t window, std::span<const Span> spans) = 0;
};

}  // namespace shardscope::core::store
