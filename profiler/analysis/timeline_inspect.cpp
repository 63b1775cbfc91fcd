// The timeline page's inspection queries (timeline_inspect.h): collective
// calls paired across ranks with a step-function index for hit tests, the
// straggler strip, step spans, span search and range totals. Spans are read
// per rank (or per set of ranks) in bounded time windows, never whole.
#include "shardscope/profiler/analysis/timeline_inspect.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis_common.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler {

namespace {

namespace st = core::store;
using analysis_detail::CallKey;
using analysis_detail::runName;

// Exact products of a time range (< 2^64) and a span count.
__extension__ typedef unsigned __int128 Wide;

constexpr std::int64_t kNone = -1;
constexpr std::string_view kAllToAllOp = "all_to_all";  // the op of an all-to-all's `collectives` rows

bool cancelRequested(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

core::Error cancelledError(const st::TraceStore& store, st::RunId run, std::string_view what) {
  return core::Error{runName(store, run) + ": " + std::string(what) + " cancelled", core::ErrorKind::Cancelled};
}

// b - a for a <= b, exact for any int64 pair.
std::uint64_t distance(std::int64_t a, std::int64_t b) {
  return static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a);
}
std::int64_t advance(std::int64_t a, std::uint64_t by) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + by);
}
std::int64_t retreat(std::int64_t a, std::uint64_t by) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - by);
}

// --- collective calls ----------------------------------------------------

// The median of a non-empty list of times, the lower middle plus half the
// gap (rounded down) for an even count. Exact at epoch scale, where the
// doubles of analysis_detail::median are not.
std::int64_t medianTime(std::vector<std::int64_t> v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const std::int64_t upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const std::int64_t lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return advance(lower, distance(lower, upper) / 2);
}

// Arrivals, waits and the last rank of a call whose arrivals are filled in.
void settleCall(CollectiveCall& call) {
  std::sort(call.arrivals.begin(), call.arrivals.end(),
            [](const CallArrival& a, const CallArrival& b) { return a.rank < b.rank; });
  const auto last =
      std::max_element(call.arrivals.begin(), call.arrivals.end(),
                       [](const CallArrival& a, const CallArrival& b) { return a.start_ns < b.start_ns; });
  for (CallArrival& a : call.arrivals) a.wait_ns = static_cast<std::int64_t>(distance(a.start_ns, last->start_ns));
  call.last_rank = last->rank;
  std::vector<std::int64_t> others;
  for (const CallArrival& a : call.arrivals)
    if (&a != &*last) others.push_back(a.start_ns);
  call.last_by_ns =
      others.empty() ? 0 : static_cast<std::int64_t>(distance(medianTime(std::move(others)), last->start_ns));
}

struct PairedCall {
  CollectiveCall call;
  std::int64_t first = 0;         // the first arrival
  std::vector<std::size_t> rows;  // its rows in the store's order
};

// The rows grouped by their call key (analysis_detail::callKeys), ordered by
// the first arrival (ties: key order).
std::vector<PairedCall> pairRows(const std::vector<st::Collective>& rows, const st::StringTable& strings) {
  const std::vector<CallKey> keys = analysis_detail::callKeys(rows);
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<PairedCall> out;
  for (std::size_t begin = 0; begin < order.size();) {
    std::size_t end = begin + 1;
    while (end < order.size() && keys[order[end]] == keys[order[begin]]) ++end;
    PairedCall p;
    const st::Collective* first = nullptr;  // earliest start, then lowest rank
    for (std::size_t k = begin; k < end; ++k) {
      const st::Collective& c = rows[order[k]];
      if (first == nullptr || std::pair(c.start_ns, c.rank) < std::pair(first->start_ns, first->rank)) first = &c;
      p.call.bytes = std::max(p.call.bytes, c.bytes);
      p.call.arrivals.push_back(CallArrival{c.rank, c.start_ns, c.end_ns, 0});
      p.rows.push_back(order[k]);
    }
    p.call.op = std::string(strings.at(first->op));
    p.call.process_group = std::string(strings.at(first->process_group));
    p.call.step = first->step;
    p.call.seq = first->seq >= 0 ? first->seq : -1;
    p.first = first->start_ns;
    settleCall(p.call);
    out.push_back(std::move(p));
    begin = end;
  }
  std::stable_sort(out.begin(), out.end(), [](const PairedCall& a, const PairedCall& b) { return a.first < b.first; });
  return out;
}

// One rank's rows as (start, end, call), turned into the step function
// callAt reads: at every start and end, the shortest row containing that
// instant and the shortest containing the open gap up to the next one.
std::vector<std::array<std::int64_t, 3>> callSteps(std::vector<std::array<std::int64_t, 3>> rows) {
  std::vector<std::int64_t> points;
  for (auto& r : rows) {
    r[1] = std::max(r[0], r[1]);  // a row that ends before it starts is an instant
    points.push_back(r[0]);
    points.push_back(r[1]);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto byEnd = rows;
  std::sort(rows.begin(), rows.end());
  std::sort(byEnd.begin(), byEnd.end(), [](const auto& a, const auto& b) { return a[1] < b[1]; });
  std::set<std::pair<std::uint64_t, std::int64_t>> open;  // (duration, call) of the rows containing the sweep
  const auto shortest = [&] { return open.empty() ? kNone : open.begin()->second; };
  std::vector<std::array<std::int64_t, 3>> out;
  out.reserve(points.size());
  std::size_t next_start = 0, next_end = 0;
  for (const std::int64_t t : points) {
    for (; next_start < rows.size() && rows[next_start][0] == t; ++next_start)
      open.emplace(distance(rows[next_start][0], rows[next_start][1]), rows[next_start][2]);
    const std::int64_t at = shortest();
    for (; next_end < byEnd.size() && byEnd[next_end][1] == t; ++next_end)
      open.erase({distance(byEnd[next_end][0], byEnd[next_end][1]), byEnd[next_end][2]});
    out.push_back({t, at, shortest()});
  }
  return out;
}

// --- reading spans ---------------------------------------------------------

// Width of a window that holds about `spans` spans of a rank at its average density.
std::uint64_t windowWidth(const st::SpanExtent& e, std::int64_t spans) {
  const std::uint64_t range = e.max_end_ns > e.min_start_ns ? distance(e.min_start_ns, e.max_end_ns) : 0;
  const Wide width = (static_cast<Wide>(range) + 1) * static_cast<Wide>(std::max<std::int64_t>(1, spans)) /
                     static_cast<Wide>(std::max<std::int64_t>(1, e.span_count));
  return static_cast<std::uint64_t>(
      std::clamp<Wide>(width, 1, static_cast<Wide>(std::numeric_limits<std::uint64_t>::max())));
}

// Calls fn(span) once for every span of the extent's rank that touches
// [from, to) (overlap as TraceStore::spansInWindow defines it), reading
// windows of about `spans_per_window` spans: a span is met in the window that
// holds max(its start, from), so one crossing windows counts once.
template <class Fn>
core::Status walkRank(const st::TraceStore& store, st::RunId run, const st::SpanExtent& e, std::int64_t from,
                      std::int64_t to, std::int64_t spans_per_window, const std::atomic<bool>* cancel,
                      std::string_view what, const Fn& fn) {
  // Every span of the rank starts in [min_start, max_end].
  const std::int64_t lo = std::max(from, e.min_start_ns);
  const std::int64_t hi = e.max_end_ns < std::numeric_limits<std::int64_t>::max() ? std::min(to, e.max_end_ns + 1) : to;
  if (e.span_count <= 0 || lo >= hi) return core::Ok{};
  const std::uint64_t width = windowWidth(e, spans_per_window);
  const int rank[] = {e.rank};
  for (std::int64_t w0 = lo; w0 < hi;) {
    if (cancelRequested(cancel)) return cancelledError(store, run, what);
    const std::int64_t w1 = distance(w0, hi) > width ? advance(w0, width) : hi;
    auto spans = store.spansInWindow(run, rank, w0, w1);
    if (!spans) return spans.error();
    for (const st::Span& s : *spans)
      if (std::max(s.start_ns, lo) >= w0) fn(s);
    w0 = w1;
  }
  return core::Ok{};
}

core::Status requireRun(const st::TraceStore& store, st::RunId run) {
  if (auto r = store.run(run); !r) return r.error();
  return core::Ok{};
}

// --- step spans ---------------------------------------------------------

// The step spans of every rank, read from the spans themselves. The one
// place to change when the store keeps step spans in its own summaries.
// (rank, step) -> earliest start, latest end of its step spans.
using StepMap = std::map<std::pair<int, std::int64_t>, std::pair<std::int64_t, std::int64_t>>;

void addStep(StepMap& steps, const st::Span& s) {
  const auto at = steps.try_emplace({s.rank, s.step}, s.start_ns, s.end_ns).first;
  at->second.first = std::min(at->second.first, s.start_ns);
  at->second.second = std::max(at->second.second, s.end_ns);
}

std::vector<StepStart> stepList(const StepMap& steps) {
  std::vector<StepStart> out;
  out.reserve(steps.size());
  for (const auto& [key, times] : steps) out.push_back(StepStart{key.first, key.second, times.first, times.second});
  return out;
}

core::Result<std::vector<StepStart>> scanStepSpans(const st::TraceStore& store, const st::StringTable& strings,
                                                   st::RunId run, std::int64_t spans_per_window) {
  auto extents = store.spanExtents(run);
  if (!extents) return extents.error();
  std::unordered_map<std::int64_t, bool> is_step;  // by kind id
  StepMap steps;
  for (const st::SpanExtent& e : *extents) {
    auto walked =
        walkRank(store, run, e, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                 spans_per_window, nullptr, "reading step spans", [&](const st::Span& s) {
                   const auto kind = static_cast<std::int64_t>(s.kind);
                   auto it = is_step.find(kind);
                   if (it == is_step.end()) it = is_step.emplace(kind, strings.at(s.kind) == span_kind::kStep).first;
                   if (it->second) addStep(steps, s);
                 });
    if (!walked) return walked.error();
  }
  return stepList(steps);
}

// --- search ----------------------------------------------------------------

char asciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool containsFolded(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                     [](char a, char b) { return asciiLower(a) == asciiLower(b); }) != text.end();
}

// Sorted ids of the strings that contain `needle`. A StringTable cannot be
// walked, but the store numbers its strings 1, 2, ... (an INTEGER PRIMARY
// KEY, never deleted), so ids are visited from 1 until every string but at
// most one, the empty one, which matches no needle, has been seen.
std::vector<std::int64_t> matchingNames(const st::StringTable& strings, std::string_view needle) {
  std::vector<std::int64_t> out;
  strings.forEach([&](st::StringId id, std::string_view text) {
    if (containsFolded(text, needle)) out.push_back(static_cast<std::int64_t>(id));
  });
  std::sort(out.begin(), out.end());
  return out;
}

// The order of spans with the same start: by rank, then stream, then the rest.
auto tieKey(const st::Span& s) {
  return std::tuple{
      s.rank, s.stream,      s.end_ns, static_cast<std::int64_t>(s.kind), static_cast<std::int64_t>(s.name),
      s.step, s.correlation, s.bytes,  static_cast<std::int64_t>(s.table)};
}

// Whether `a` is a better hit than `b` (nearest start first).
bool nearer(const st::Span& a, const st::Span& b, SearchDirection direction) {
  if (a.start_ns != b.start_ns)
    return direction == SearchDirection::Forward ? a.start_ns < b.start_ns : a.start_ns > b.start_ns;
  return tieKey(a) < tieKey(b);
}

// The ranks searched and where their spans start: [lo, hi].
struct SearchScope {
  std::vector<int> ranks;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  st::SpanExtent all;  // the ranks together, for the first window's width
};

SearchScope searchScope(const std::vector<st::SpanExtent>& extents, const std::vector<int>& ranks) {
  SearchScope scope;
  for (const st::SpanExtent& e : extents) {
    if (e.span_count <= 0 || (!ranks.empty() && std::find(ranks.begin(), ranks.end(), e.rank) == ranks.end())) continue;
    scope.ranks.push_back(e.rank);
    scope.lo = std::min(scope.lo, e.min_start_ns);
    scope.hi = std::max(scope.hi, e.max_end_ns);
    scope.all.span_count += e.span_count;
  }
  scope.all.min_start_ns = scope.lo;
  scope.all.max_end_ns = scope.hi;
  return scope;
}

// Windows from `from_ns` outward, doubling in width while fewer than half of
// `spans_per_window` spans start in one, halving when more do.
core::Result<std::optional<SpanHit>> searchWindows(const st::TraceStore& store, st::RunId run, const SearchScope& scope,
                                                   const std::vector<std::int64_t>& names, std::int64_t from_ns,
                                                   SearchDirection direction, const std::atomic<bool>* cancel,
                                                   std::int64_t spans_per_window) {
  const bool forward = direction == SearchDirection::Forward;
  const std::int64_t per_window = std::max<std::int64_t>(1, spans_per_window);
  std::uint64_t width = windowWidth(scope.all, std::min<std::int64_t>(per_window, 1024));
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // Forward: starts in [cursor, hi]. Backward: starts in [lo, cursor).
  if (forward && from_ns == kMax) return std::optional<SpanHit>{};
  std::int64_t cursor =
      forward ? std::max(from_ns + 1, scope.lo) : std::min(from_ns, scope.hi < kMax ? scope.hi + 1 : kMax);
  while (forward ? cursor <= scope.hi : cursor > scope.lo) {
    if (cancelRequested(cancel)) return cancelledError(store, run, "span search");
    std::int64_t w0 = cursor, w1 = cursor;
    if (forward) {
      const std::uint64_t room = distance(cursor, scope.hi);  // starts in [cursor, hi]
      w1 = room >= width ? advance(cursor, width) : (scope.hi < kMax ? scope.hi + 1 : kMax);
    } else {
      w0 = distance(scope.lo, cursor) > width ? retreat(cursor, width) : scope.lo;
    }
    auto spans = store.spansInWindow(run, scope.ranks, w0, w1);
    if (!spans) return spans.error();
    const st::Span* best = nullptr;
    std::int64_t fresh = 0;  // spans starting in the window: those that grow with its width
    for (const st::Span& s : *spans) {
      if (s.start_ns < w0) continue;
      ++fresh;
      if (!std::binary_search(names.begin(), names.end(), static_cast<std::int64_t>(s.name))) continue;
      if (best == nullptr || nearer(s, *best, direction)) best = &s;
    }
    if (best != nullptr) return std::optional<SpanHit>{SpanHit{*best}};
    if (fresh > per_window)
      width = std::max<std::uint64_t>(1, width / 2);
    else if (fresh * 2 < per_window && width <= std::numeric_limits<std::uint64_t>::max() / 2)
      width *= 2;
    if (forward && w1 == kMax) break;
    cursor = forward ? w1 : w0;
  }
  return std::optional<SpanHit>{};
}

}  // namespace

// --- collective calls ----------------------------------------------------

core::Result<CollectiveCalls> CollectiveCalls::load(const st::TraceStore& store, st::RunId run) {
  if (auto ok = requireRun(store, run); !ok) return ok.error();
  auto rows = store.collectives(run);
  if (!rows) return rows.error();
  auto strings = store.strings();
  if (!strings) return strings.error();
  std::vector<PairedCall> paired = pairRows(*rows, *strings);
  std::map<int, std::vector<std::array<std::int64_t, 3>>> per_rank;
  CollectiveCalls out;
  out.calls_.reserve(paired.size());
  for (std::size_t i = 0; i < paired.size(); ++i) {
    for (const std::size_t r : paired[i].rows) {
      const st::Collective& c = (*rows)[r];
      per_rank[c.rank].push_back({c.start_ns, c.end_ns, static_cast<std::int64_t>(i)});
    }
    out.calls_.push_back(std::move(paired[i].call));
  }
  for (auto& [rank, list] : per_rank) {
    out.ranks_.push_back(rank);
    out.by_rank_.push_back(callSteps(std::move(list)));
  }
  return out;
}

std::optional<std::size_t> CollectiveCalls::callAt(int rank, std::int64_t t_ns) const {
  const auto r = std::lower_bound(ranks_.begin(), ranks_.end(), rank);
  if (r == ranks_.end() || *r != rank) return std::nullopt;
  const auto& steps = by_rank_[static_cast<std::size_t>(r - ranks_.begin())];
  const auto it = std::lower_bound(steps.begin(), steps.end(), t_ns,
                                   [](const std::array<std::int64_t, 3>& s, std::int64_t t) { return s[0] < t; });
  std::int64_t call = kNone;
  if (it != steps.end() && (*it)[0] == t_ns)
    call = (*it)[1];
  else if (it != steps.begin())
    call = (*std::prev(it))[2];
  if (call == kNone) return std::nullopt;
  return static_cast<std::size_t>(call);
}

std::vector<StragglerMark> stragglerMarks(const CollectiveCalls& calls) {
  std::vector<StragglerMark> out;
  const auto& list = calls.calls();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const CollectiveCall& c = list[i];
    if ((c.op != kAllToAllOp && c.op != span_kind::kSendRecv) || c.arrivals.empty()) continue;
    std::int64_t first = c.arrivals.front().start_ns;
    for (const CallArrival& a : c.arrivals) first = std::min(first, a.start_ns);
    out.push_back(StragglerMark{c.step, i, c.last_rank, c.last_by_ns, first});
  }
  return out;  // by start: calls come by their first arrival
}

// --- spans ----------------------------------------------------------------

core::Result<std::vector<StepStart>> stepStarts(const st::TraceStore& store, const st::StringTable& strings,
                                                st::RunId run, std::int64_t spans_per_window) {
  if (auto ok = requireRun(store, run); !ok) return ok.error();
  // Stored summaries keep the step spans: no scan of the run's spans.
  if (auto has = hasTimelineSummaries(store, run); has && *has) {
    auto spans = timelineStepSpans(store, run);
    if (!spans) return spans.error();
    StepMap steps;
    for (const st::Span& s : *spans) addStep(steps, s);
    return stepList(steps);
  }
  return scanStepSpans(store, strings, run, spans_per_window);
}

core::Result<std::optional<SpanHit>> findSpan(const st::TraceStore& store, const st::StringTable& strings,
                                              st::RunId run, const std::vector<int>& ranks, std::string_view needle,
                                              std::int64_t from_ns, SearchDirection direction,
                                              const std::atomic<bool>* cancel, std::int64_t spans_per_window) {
  if (needle.empty()) return core::Error{"span search: the text to find is empty", core::ErrorKind::Usage};
  if (auto ok = requireRun(store, run); !ok) return ok.error();
  const std::vector<std::int64_t> names = matchingNames(strings, needle);
  if (names.empty()) return std::optional<SpanHit>{};
  auto extents = store.spanExtents(run);
  if (!extents) return extents.error();
  const SearchScope scope = searchScope(*extents, ranks);
  if (scope.ranks.empty()) return std::optional<SpanHit>{};
  return searchWindows(store, run, scope, names, from_ns, direction, cancel, spans_per_window);
}

core::Result<std::vector<RangeTotals>> rangeTotals(const st::TraceStore& store, const st::StringTable& strings,
                                                   st::RunId run, const std::vector<int>& ranks, std::int64_t t0_ns,
                                                   std::int64_t t1_ns, const std::vector<std::int64_t>& offsets_ns,
                                                   const std::atomic<bool>* cancel, std::int64_t spans_per_window) {
  if (t1_ns <= t0_ns)
    return core::Error{"range totals: the end (" + std::to_string(t1_ns) + " ns) must be after the start (" +
                           std::to_string(t0_ns) + " ns)",
                       core::ErrorKind::Usage};
  if (auto ok = requireRun(store, run); !ok) return ok.error();
  auto extents = store.spanExtents(run);
  if (!extents) return extents.error();
  std::vector<int> asked = ranks;
  if (asked.empty()) {
    auto known = store.ranks(run);
    if (!known) return known.error();
    for (const st::RankInfo& r : *known) asked.push_back(r.rank);
    for (const st::SpanExtent& e : *extents) asked.push_back(e.rank);
    std::sort(asked.begin(), asked.end());
    asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  }
  if (!offsets_ns.empty() && offsets_ns.size() != asked.size())
    return core::Error{"range totals: " + std::to_string(offsets_ns.size()) + " offsets for " +
                           std::to_string(asked.size()) + " ranks (give one per rank, or none)",
                       core::ErrorKind::Usage};
  SpanClassCache classes(strings);
  std::vector<RangeTotals> out;
  out.reserve(asked.size());
  for (std::size_t i = 0; i < asked.size(); ++i) {
    RangeTotals totals;
    totals.rank = asked[i];
    const std::int64_t offset = offsets_ns.empty() ? 0 : offsets_ns[i];
    std::int64_t a = 0, b = 0;
    if (__builtin_add_overflow(t0_ns, offset, &a) || __builtin_add_overflow(t1_ns, offset, &b))
      return core::Error{"range totals: rank " + std::to_string(totals.rank) + "'s offset of " +
                             std::to_string(offset) + " ns moves the range past the limits of time",
                         core::ErrorKind::Usage};
    const auto e =
        std::find_if(extents->begin(), extents->end(), [&](const st::SpanExtent& x) { return x.rank == totals.rank; });
    if (e != extents->end()) {
      auto walked = walkRank(store, run, *e, a, b, spans_per_window, cancel, "range totals", [&](const st::Span& s) {
        ++totals.spans;
        const std::int64_t lo = std::max(s.start_ns, a), hi = std::min(s.end_ns, b);
        if (hi > lo) totals.ns[static_cast<std::size_t>(classes.of(s))] += static_cast<std::int64_t>(distance(lo, hi));
      });
      if (!walked) return walked.error();
    }
    out.push_back(totals);
  }
  return out;
}

}  // namespace shardscope::profiler
