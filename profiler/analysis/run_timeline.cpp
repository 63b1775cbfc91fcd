// From a run's spans, per rank: time in each kind of collective and the part
// spent waiting for peers, and the device timeline (busy, idle, compute,
// communication and their overlap). Definitions: docs/analysis.md.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis_common.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler {

namespace st = core::store;

namespace {

using namespace analysis_detail;

// What a work span is on the device timeline.
enum class Work : std::uint8_t { Compute, Comm, Copy };

// Compute kernels: the engine's compute and the kernels of imported traces.
// Copies (memcpy, memset and kernels named so) keep the device busy but are not compute.
bool isCompute(std::string_view kind) {
  static const std::set<std::string_view, std::less<>> kinds = {span_kind::kEmbFwd, span_kind::kEmbBwd,
                                                                span_kind::kDense, span_kind::kInput, "kernel"};
  return kinds.contains(kind);
}
bool isCopy(std::string_view kind) { return kind == "memory" || kind == "memcpy" || kind == "memset"; }

using Interval = std::pair<std::int64_t, std::int64_t>;

// Sorted, disjoint union of `v` (sorted in place).
std::vector<Interval> unite(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}
std::int64_t lengthOf(const std::vector<Interval>& u) {
  std::int64_t n = 0;
  for (const auto& iv : u) n += iv.second - iv.first;
  return n;
}
// Intersection of two disjoint sorted unions.
std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) out.emplace_back(lo, hi);
    (a[i].second < b[j].second ? i : j)++;
  }
  return out;
}

// One rank's work spans, by the step that launched them.
struct RankWork {
  struct Item {
    std::int64_t start, end, step;
    Work work;
  };
  std::vector<Item> items;
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> steps;  // launch step -> (first start, last end)
};

// The device's own step windows: step k runs from the start of its first
// work until the next step's first work starts (consecutive profiled steps),
// else until its last work ends. Work is counted in the window it runs in,
// whichever step launched it (pipelined trainers run step k's kernels while
// the CPU launches step k + 1).
std::vector<Interval> deviceWindows(const RankWork& w) {
  std::vector<Interval> windows;
  for (auto it = w.steps.begin(); it != w.steps.end(); ++it) {
    const auto [first, last] = it->second;
    std::int64_t end = last;
    if (auto next = std::next(it); next != w.steps.end()) {
      const std::int64_t next_first = next->second.first;
      end = next->first == it->first + 1 ? next_first : std::min(last, next_first);
    }
    if (!windows.empty()) end = std::max(end, windows.back().second);
    const std::int64_t begin = windows.empty() ? first : std::max(first, windows.back().second);
    windows.emplace_back(begin, std::max(begin, end));
  }
  return unite(windows);
}

void timeline(RankWork& w, RankAnalysis& r) {
  std::vector<Interval> all, compute, comm;
  for (const auto& it : w.items) {
    all.emplace_back(it.start, it.end);
    if (it.work == Work::Compute) compute.emplace_back(it.start, it.end);
    if (it.work == Work::Comm) comm.emplace_back(it.start, it.end);
  }
  std::vector<RankWork::Item>().swap(w.items);
  const auto windows = deviceWindows(w);
  const auto busy = intersect(unite(all), windows);
  const auto computing = intersect(unite(compute), windows);
  const auto communicating = intersect(unite(comm), windows);
  const double d = static_cast<double>(std::max<std::int64_t>(1, r.steps)) * kNsPerMs;
  r.window_ms = static_cast<double>(lengthOf(windows)) / d;
  r.busy_ms = static_cast<double>(lengthOf(busy)) / d;
  r.idle_ms = std::max(0.0, r.window_ms - r.busy_ms);
  r.compute_union_ms = static_cast<double>(lengthOf(computing)) / d;
  r.comm_union_ms = static_cast<double>(lengthOf(communicating)) / d;
  r.overlap_ms = static_cast<double>(lengthOf(intersect(computing, communicating))) / d;
}

// The wait in one collective call: duration - the shortest duration of the
// same call among the ranks that recorded it; unknown when no peer recorded it.
struct CallWait {
  std::int64_t wait = 0;
  bool known = false;
};

}  // namespace

std::vector<analysis_detail::CallKey> analysis_detail::callKeys(const std::vector<st::Collective>& rows) {
  std::map<std::tuple<int, st::StringId, st::StringId, st::StringId, std::int64_t, std::int64_t>, int> seen;
  std::vector<CallKey> keys;
  keys.reserve(rows.size());
  for (const auto& c : rows) {
    const bool numbered = c.seq >= 0;
    const std::int64_t seq = numbered ? c.seq : -1;
    const std::int64_t step = numbered ? -2 : c.step;  // a sequence number needs no step
    const int nth = seen[{c.rank, c.process_group, c.group, c.op, seq, step}]++;
    keys.push_back(CallKey{c.process_group, c.group, c.op, seq, step, nth});
  }
  return keys;
}

namespace {

// An import's collective rows paired across ranks (callKeys).
// Returns per rank (start, end) -> the waits of its rows there, in row order.
std::map<int, std::unordered_map<std::int64_t, std::map<std::int64_t, std::vector<CallWait>>>> importedWaits(
    const std::vector<st::Collective>& rows) {
  const std::vector<CallKey> keys = callKeys(rows);
  std::map<CallKey, std::pair<std::int64_t, int>> calls;  // -> (shortest, members)
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& c = rows[i];
    auto [it, fresh] = calls.try_emplace(keys[i], c.end_ns - c.start_ns, 0);
    it->second.first = std::min(it->second.first, c.end_ns - c.start_ns);
    ++it->second.second;
  }
  std::map<int, std::unordered_map<std::int64_t, std::map<std::int64_t, std::vector<CallWait>>>> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& c = rows[i];
    const auto& [shortest, members] = calls.at(keys[i]);
    CallWait w;
    w.known = members >= 2 || c.peers == 0;  // a group of one waits for nobody
    w.wait = w.known ? c.end_ns - c.start_ns - shortest : 0;
    out[c.rank][c.start_ns][c.end_ns].push_back(w);
  }
  return out;
}

// Calls fn(span) once for every span of `rank`, in start order per time
// window of about `per_window` spans (a span that crosses windows counts in
// the one it starts in), so a rank of millions of spans is never held whole.
template <class Fn>
core::Status forEachSpanOf(const st::TraceStore& store, st::RunId id, const std::vector<st::SpanExtent>& extents,
                           int rank, std::int64_t spans_per_window, const Fn& fn) {
  const std::int64_t per_window = std::max<std::int64_t>(1, spans_per_window);
  const auto ext =
      std::find_if(extents.begin(), extents.end(), [&](const st::SpanExtent& e) { return e.rank == rank; });
  if (ext == extents.end() || ext->span_count <= 0) return core::Ok{};
  const std::int64_t windows = std::max<std::int64_t>(1, (ext->span_count + per_window - 1) / per_window);
  // Offsets from lo in unsigned arithmetic: timestamps may be anywhere in int64.
  const std::int64_t lo = ext->min_start_ns;
  const std::int64_t last = std::max(ext->max_end_ns, ext->min_start_ns);
  const std::uint64_t range = static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(lo);  // hi = last + 1
  const std::uint64_t width = range / static_cast<std::uint64_t>(windows) + 1;
  const int rank_list[] = {rank};
  for (std::uint64_t off = 0;; off += width) {
    const auto at = [&](std::uint64_t o) { return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + o); };
    const bool final = range - off < width;  // this window reaches `last`
    const std::int64_t t0 = at(off);
    const std::int64_t t1 = final ? last : at(off + width);
    // [t0, t1) windows; the final one is [t0, last] (spans starting at `last` kept below).
    const std::int64_t query_end = final && last < std::numeric_limits<std::int64_t>::max() ? last + 1 : t1;
    auto spans = store.spansInWindow(id, rank_list, t0, query_end);
    if (!spans) return spans.error();
    for (const auto& sp : *spans)
      if (sp.start_ns >= t0 && (sp.start_ns < t1 || (final && sp.start_ns <= last))) fn(sp);
    if (final) break;
  }
  return core::Ok{};
}

}  // namespace

core::Status analysis_detail::spanTimes(const st::TraceStore& store, st::RunId id, const st::StringTable& strings,
                                        const AnalysisOptions& options, const std::vector<st::Collective>& collectives,
                                        bool imported, std::map<int, RankAnalysis>& ranks, RunAnalysis& a,
                                        SpanFindings& found) {
  // Spans one rank at a time (memory: one window of spans, plus an interval per work span).
  auto extents = store.spanExtents(id);
  if (!extents) return extents.error();
  auto forEachSpan = [&](int rank, const auto& fn) {
    return forEachSpanOf(store, id, *extents, rank, options.spans_per_window, fn);
  };
  // Engine runs: one call = (step, kind, group, n-th call of that kind in the step on a rank).
  struct Call {
    int rank;
    std::size_t kind;
    std::int64_t duration;
    std::tuple<std::int64_t, std::size_t, int, int> key;
  };
  std::vector<Call> calls;
  std::map<std::tuple<std::int64_t, std::size_t, int, int>, std::int64_t> shortest;
  // Imported runs: waits from the collective rows, found by the span's rank and times.
  auto import_waits = imported ? importedWaits(collectives) : decltype(importedWaits(collectives)){};
  struct KindTime {
    double ns = 0.0, wait_ns = 0.0;
    bool known = false;
  };
  std::map<std::pair<int, std::size_t>, KindTime> per;  // (rank, kind)
  const auto& kinds = commKinds();
  for (auto& entry : ranks) {
    const int rank = entry.first;  // named, not bound: lambdas below capture them
    RankAnalysis& r = entry.second;
    std::map<std::tuple<std::int64_t, std::size_t>, int> seen;  // (step, kind) -> calls so far
    RankWork work;
    auto& waits_here = import_waits[rank];
    bool any = false;
    auto walked = forEachSpan(rank, [&](const st::Span& sp) {
      any = true;
      const std::string_view kind = strings.at(sp.kind);
      if (kind == span_kind::kStep && imported && !strings.at(sp.name).starts_with("ProfilerStep#"))
        found.fallback_steps[std::string(strings.at(sp.name))].insert(rank);
      const auto k = std::find(kinds.begin(), kinds.end(), kind);
      const bool comm = k != kinds.end();
      if (sp.step >= 0 && (comm || isCompute(kind) || isCopy(kind))) {
        work.items.push_back(
            {sp.start_ns, sp.end_ns, sp.step, comm ? Work::Comm : (isCompute(kind) ? Work::Compute : Work::Copy)});
        auto [it, fresh] = work.steps.try_emplace(sp.step, sp.start_ns, sp.end_ns);
        it->second.first = std::min(it->second.first, sp.start_ns);
        it->second.second = std::max(it->second.second, sp.end_ns);
      }
      if (!comm) return;
      const auto ki = static_cast<std::size_t>(k - kinds.begin());
      KindTime& kt = per[{rank, ki}];
      kt.ns += static_cast<double>(sp.end_ns - sp.start_ns);
      if (imported) {
        const auto at_start = waits_here.find(sp.start_ns);
        if (at_start == waits_here.end()) return;
        const auto here = at_start->second.find(sp.end_ns);
        if (here == at_start->second.end() || here->second.empty()) return;
        if (here->second.front().known) {
          kt.wait_ns += static_cast<double>(here->second.front().wait);
          kt.known = true;
        }
        here->second.erase(here->second.begin());
        return;
      }
      int group = 0;  // dense_allreduce spans every rank
      if (kind == span_kind::kReplicaSync)
        group = r.replica_group;
      else if (kind != span_kind::kDenseAllreduce)
        group = r.sharding_group;
      const int nth = seen[{sp.step, ki}]++;
      Call c{rank, ki, sp.end_ns - sp.start_ns, {sp.step, ki, group, nth}};
      auto [it, inserted] = shortest.emplace(c.key, c.duration);
      if (!inserted) it->second = std::min(it->second, c.duration);
      calls.push_back(c);
    });
    if (!walked) return walked.error();
    a.has_spans = a.has_spans || any;
    if (any && work.items.empty()) found.without_device_work.push_back(rank);
    import_waits.erase(rank);
    if (!work.items.empty()) timeline(work, r);
  }
  for (const auto& c : calls) {
    KindTime& kt = per[{c.rank, c.kind}];
    kt.wait_ns += static_cast<double>(c.duration - shortest[c.key]);
    kt.known = true;
  }
  for (const auto& [key, v] : per) {
    RankAnalysis& r = ranks[key.first];
    const double d = static_cast<double>(std::max<std::int64_t>(1, r.steps)) * kNsPerMs;
    r.comm.push_back({std::string(kinds[key.second]), v.ns / d, v.known ? v.wait_ns / d : -1.0});
  }
  for (auto& [rank, r] : ranks) {
    bool known = false;
    r.wait_ms = 0.0;
    for (const auto& c : r.comm)
      if (c.wait_ms >= 0) {
        r.wait_ms += c.wait_ms;
        known = true;
      }
    if (!known && !r.comm.empty()) r.wait_ms = -1.0;
  }
  if (!a.has_spans)
    a.warnings.push_back("run has no spans (tracing off): collective times per kind and waits are not available");
  return core::Ok{};
}

}  // namespace shardscope::profiler
