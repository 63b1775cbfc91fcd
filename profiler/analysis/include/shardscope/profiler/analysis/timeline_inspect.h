// What the timeline page asks about a run beyond drawing it: the collective
// calls across ranks (each rank's arrival and wait, for highlighting one call
// and aligning ranks on it), the per-step straggler strip, each rank's step
// starts, span search by name, and per-class totals of a time range.
// Every function reads the store it is given and keeps no state of the view;
// the page runs them off the GUI thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/timeline_window.h"

namespace shardscope::profiler {

// Spans are read per rank in time windows of about this many spans (the
// run analysis's default), so a rank of millions of spans is never held whole.
inline constexpr std::int64_t kInspectSpansPerWindow = 250'000;

// One rank's part in a collective call.
struct CallArrival {
  int rank = 0;
  std::int64_t start_ns = 0;  // when the rank entered the call (its arrival)
  std::int64_t end_ns = 0;
  std::int64_t wait_ns = 0;  // last arrival of the call - this rank's arrival (>= 0)
};

// One collective call as every member rank recorded it (store rows paired
// as the run analysis pairs them: process group + seq, else the n-th call of
// the same group and op in the step on each rank).
struct CollectiveCall {
  std::string op;             // "all_to_all", "all_reduce", ...
  std::string process_group;  // "sharding", "replica", "world", an import's name, or ""
  std::int64_t step = -1;     // the step of the first arrival's row
  std::int64_t seq = -1;
  std::int64_t bytes = 0;             // the largest row's bytes
  std::vector<CallArrival> arrivals;  // by rank
  int last_rank = -1;                 // the rank that arrived last (the lowest such rank on a tie)
  // Its arrival - the median arrival of the others (0 alone). The median of
  // an even count is the lower middle plus half the gap, rounded down.
  std::int64_t last_by_ns = 0;
};

// A run's collective calls, ordered by their first arrival. Built once per run.
class CollectiveCalls {
 public:
  // Errors: the run does not exist, a store failure.
  [[nodiscard]] static core::Result<CollectiveCalls> load(const core::store::TraceStore& store, core::store::RunId run);
  [[nodiscard]] const std::vector<CollectiveCall>& calls() const { return calls_; }
  // The call whose row on `rank` contains time t (start <= t <= end); the
  // shortest such row when calls nest (then the lower call index). nullopt
  // when none does. O(log rows).
  [[nodiscard]] std::optional<std::size_t> callAt(int rank, std::int64_t t_ns) const;

 private:
  std::vector<CollectiveCall> calls_;
  // Per rank, the answer of callAt as a step function of time: sorted
  // (t, call at exactly t, call strictly between t and the next t), where t
  // runs over the starts and ends of the rank's rows and -1 means none.
  std::vector<std::vector<std::array<std::int64_t, 3>>> by_rank_;
  std::vector<int> ranks_;  // sorted; parallel to by_rank_
};

// Per step and all-to-all call (ops all_to_all / send_recv), the rank that was
// last into it and by how much: the straggler strip above the rows.
struct StragglerMark {
  std::int64_t step = -1;
  std::size_t call = 0;  // index into CollectiveCalls::calls()
  int last_rank = -1;
  std::int64_t last_by_ns = 0;
  std::int64_t start_ns = 0;  // the call's first arrival (where the mark is drawn)
};
// One mark per all-to-all call, ordered by start.
[[nodiscard]] std::vector<StragglerMark> stragglerMarks(const CollectiveCalls& calls);

// Each rank's step spans (kind "step"): start and end per (rank, step), the
// earliest start and latest end when a rank has several spans of one step.
// Ordered by rank, then step. Errors: the run does not exist, a store failure.
struct StepStart {
  int rank = 0;
  std::int64_t step = -1;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};
[[nodiscard]] core::Result<std::vector<StepStart>> stepStarts(const core::store::TraceStore& store,
                                                              const core::store::StringTable& strings,
                                                              core::store::RunId run,
                                                              std::int64_t spans_per_window = kInspectSpansPerWindow);

// The next (forward) or previous span after/before `from_ns` (strictly) on
// `ranks` (empty: all) whose name contains `needle` (ASCII case-insensitive),
// the nearest start first, ties by rank, then stream (then the span's other
// fields, so the answer does not depend on the store's row order). nullopt
// when none. Reads windows that double in width outward from `from_ns`
// (about `spans_per_window` spans at most) and checks `cancel` between them.
// Errors: an empty needle (Usage), the run does not exist, cancelled, a store failure.
struct SpanHit {
  core::store::Span span;
};
enum class SearchDirection { Forward, Backward };
[[nodiscard]] core::Result<std::optional<SpanHit>> findSpan(
    const core::store::TraceStore& store, const core::store::StringTable& strings, core::store::RunId run,
    const std::vector<int>& ranks, std::string_view needle, std::int64_t from_ns, SearchDirection direction,
    const std::atomic<bool>* cancel = nullptr, std::int64_t spans_per_window = kInspectSpansPerWindow);

// Per rank, per span class: time inside [t0_ns, t1_ns) (spans clipped to the
// range; nested spans each count), and the spans that touch it (overlap as
// TraceStore::spansInWindow defines it). Step spans count in their own class.
// One entry per entry of `ranks`, in its order (empty: every rank of the run,
// sorted). offsets_ns (empty, or one per entry of `ranks`) shift the range
// per rank as the timeline's aligned view does: entry i covers
// [t0_ns + offsets_ns[i], t1_ns + offsets_ns[i]).
// Errors: t1_ns <= t0_ns, an offsets length other than the ranks', a shifted
// range past the int64 limits (Usage), the run does not exist, cancelled, a store failure.
struct RangeTotals {
  int rank = 0;
  std::array<std::int64_t, kSpanClassCount> ns{};
  std::int64_t spans = 0;
};
[[nodiscard]] core::Result<std::vector<RangeTotals>> rangeTotals(
    const core::store::TraceStore& store, const core::store::StringTable& strings, core::store::RunId run,
    const std::vector<int>& ranks, std::int64_t t0_ns, std::int64_t t1_ns,
    const std::vector<std::int64_t>& offsets_ns = {}, const std::atomic<bool>* cancel = nullptr,
    std::int64_t spans_per_window = kInspectSpansPerWindow);

}  // namespace shardscope::profiler
