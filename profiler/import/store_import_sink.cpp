// StoreImportSink: imported events -> one trace-store run with the engine's
// conventions (docs/formats/import-trace.md). A rank's events are held in a
// compact form until its file ends (steps of GPU work come from their
// launches, which may appear anywhere in the file); past a cap the rank is
// written as it streams.
#include "shardscope/profiler/import/store_import_sink.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <sstream>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "import_checks.h"
#include "import_gpus.h"
#include "import_stored.h"
#include "shardscope/core/summary.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler {

namespace st = core::store;
using import_detail::groupText;
using import_detail::StoredInfo;

namespace {
// CPU threads get streams from here on (GPU events keep their CUDA stream).
constexpr std::int64_t kCpuStreamBase = 100000;
constexpr std::uint32_t kNoColl = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kNoStored = std::numeric_limits<std::uint32_t>::max();

struct Ev {
  std::int64_t start = 0, end = 0, stream = 0, corr = 0, step = -1;
  st::StringId name = st::kNoString;
  TraceEventKind kind = TraceEventKind::Kernel;
  KernelClass cls = KernelClass::Other;
  std::uint32_t coll = kNoColl;
  std::uint32_t stored = kNoStored;  // a row the file described (State::stored)
};
// A rank holds up to max_buffered_events of these: `stored` lives in what was padding.
static_assert(sizeof(Ev) <= 64);
struct CollInfo {
  std::int64_t bytes = 0;
  st::StringId group = st::kNoString;
  st::StringId process_group = st::kNoString;  // its name, when the trace says
  std::int64_t seq = -1;                       // the call's number in its process group, -1 unknown
  int peers = 0;
};
// Where a rank's steps come from (docs/import.md#steps).
enum class StepSource { ProfilerStep, Annotation, WholeTrace };
struct Marks {
  std::int64_t fwd_first = std::numeric_limits<std::int64_t>::max();
  std::int64_t fwd_last_end = std::numeric_limits<std::int64_t>::min();
  std::int64_t bwd_first = std::numeric_limits<std::int64_t>::max();
};

// a - b, saturated (timestamps come from files: any int64).
std::int64_t diff(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return a > b ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

bool isGpu(TraceEventKind k) {
  return k == TraceEventKind::Kernel || k == TraceEventKind::Memcpy || k == TraceEventKind::Memset ||
         k == TraceEventKind::GpuAnnotation;
}
bool isGpuWork(TraceEventKind k) {
  return k == TraceEventKind::Kernel || k == TraceEventKind::Memcpy || k == TraceEventKind::Memset;
}

}  // namespace

struct StoreImportSink::State {
  StoreImportOptions opts;
  KernelClassifier cls;
  st::RunWriter writer;
  std::map<int, std::string> seen_ranks;  // rank -> source
  import_detail::JobChecks checks{false, nullptr};
  bool failed_or_done = false;
  // Clock reference (set by the first rank that decides its offset).
  bool have_ref = false;
  std::int64_t ref_step = -1, ref_start = 0, ref_base = 0;
  int ref_rank = -1;
  // The current rank.
  bool in_rank = false;
  ImportRankInfo info;
  ImportedRank report;
  std::vector<Ev> buf;
  std::vector<CollInfo> colls;
  std::vector<StoredInfo> stored;                                              // rows the file described
  std::vector<std::pair<st::StringId, std::uint64_t*>> stored_kinds;           // their kinds' counters in `report`
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> windows;       // start -> (end, step)
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> step_windows;  // step -> (start, end)
  std::unordered_map<std::int64_t, std::int64_t> launch;                       // correlation -> launch start
  static constexpr std::size_t kMaxLaunches = 1'000'000;
  std::int64_t max_corr = 0;
  std::map<std::int64_t, Marks> marks;
  std::unordered_map<std::int64_t, std::int64_t> tids;  // CPU tid -> stream
  std::map<std::int64_t, st::StepSummary> sums;
  bool streaming = false;
  bool offset_decided = false;
  bool rank_accepted = false;  // the rank passed the duplicate and job checks
  std::int64_t offset = 0;
  std::vector<std::string>* warnings = nullptr;
  std::string config;  // runs.config_json as begun; finish() adds the ranks' GPUs
  // Steps without ProfilerStep: an iteration annotation's occurrences, or the whole trace.
  StepSource step_source = StepSource::ProfilerStep;
  bool steps_decided = false;
  st::StringId step_mark = st::kNoString;                   // the iteration annotation
  std::unordered_map<st::StringId, std::string> iteration;  // annotation -> its name if it names an iteration, else ""
  std::int64_t first_start = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_end = std::numeric_limits<std::int64_t>::min();

  explicit State(st::RunWriter w) : writer(std::move(w)) {}

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view x) const { return std::hash<std::string_view>{}(x); }
  };
  std::unordered_map<std::string, st::StringId, Hash, std::equal_to<>> ids;  // no copy per lookup

  core::Result<st::StringId> intern(std::string_view s) {
    if (auto it = ids.find(s); it != ids.end()) return it->second;
    auto id = writer.intern(s);
    if (id && ids.size() < 4'000'000) ids.emplace(std::string(s), *id);
    return id;
  }

  void learn(const Ev& e) {
    if (e.kind == TraceEventKind::ProfilerStep) {
      windows[e.start] = {e.end, e.step};
      step_windows[e.step] = {e.start, e.end};
    } else if (step_source == StepSource::Annotation && e.kind == TraceEventKind::Annotation && e.name == step_mark) {
      openStep(e.start);
    } else if (e.kind == TraceEventKind::Runtime && e.corr != 0) {
      launch[e.corr] = e.start;
      max_corr = std::max(max_corr, e.corr);
      // Launches whose kernels never come (syncs, event records) would stay:
      // past kMaxLaunches keep the newer half (correlation ids increase), so
      // a streamed rank's memory stays bounded. A kernel whose launch was
      // dropped takes the step its own start falls in.
      if (launch.size() > kMaxLaunches) {
        const std::int64_t keep_from = max_corr - static_cast<std::int64_t>(kMaxLaunches / 2);
        std::erase_if(launch, [&](const auto& kv) { return kv.first < keep_from; });
      }
    }
  }
  std::int64_t stepAt(std::int64_t t) const {
    auto it = windows.upper_bound(t);
    if (it == windows.begin()) return -1;
    --it;
    return t < it->second.first ? it->second.second : -1;
  }
  std::int64_t stepOf(Ev& e) {
    if (e.kind == TraceEventKind::ProfilerStep) return e.step;
    if (e.stored != kNoStored) return stored[e.stored].step;
    if (isGpu(e.kind) && e.corr != 0) {
      auto it = launch.find(e.corr);
      if (it != launch.end()) return stepAt(it->second);
    }
    return stepAt(e.start);
  }
  void mark(const Ev& e, std::int64_t step) {
    if (step < 0 || e.kind != TraceEventKind::Kernel) return;
    if (e.cls == KernelClass::EmbFwd) {
      Marks& m = marks[step];
      m.fwd_first = std::min(m.fwd_first, e.start);
      m.fwd_last_end = std::max(m.fwd_last_end, e.end);
    } else if (e.cls == KernelClass::EmbBwd) {
      Marks& m = marks[step];
      m.bwd_first = std::min(m.bwd_first, e.start);
    }
  }
  std::string_view a2aPhase(const Ev& e, std::int64_t step) const {
    auto it = marks.find(step);
    if (step < 0 || it == marks.end()) return span_kind::kA2aPooled;
    const Marks& m = it->second;
    if (m.fwd_first != std::numeric_limits<std::int64_t>::max() && e.start < m.fwd_first) return span_kind::kA2aIds;
    if (m.bwd_first == std::numeric_limits<std::int64_t>::max()) return span_kind::kA2aPooled;
    if (m.fwd_last_end == std::numeric_limits<std::int64_t>::min()) return span_kind::kA2aGrads;
    const std::int64_t boundary = m.fwd_last_end + (m.bwd_first - m.fwd_last_end) / 2;
    return e.start < boundary ? span_kind::kA2aPooled : span_kind::kA2aGrads;
  }
  std::string_view kindOf(const Ev& e, std::int64_t step) const {
    switch (e.kind) {
      case TraceEventKind::ProfilerStep:
        return span_kind::kStep;
      case TraceEventKind::Runtime:
        return "cuda_runtime";
      case TraceEventKind::CpuOp:
        return "cpu_op";
      case TraceEventKind::Annotation:
        return "user_annotation";
      case TraceEventKind::GpuAnnotation:
        return "gpu_user_annotation";
      case TraceEventKind::Memcpy:
        return "memcpy";
      case TraceEventKind::Memset:
        return "memset";
      case TraceEventKind::Kernel:
        break;
    }
    switch (e.cls) {
      case KernelClass::EmbFwd:
        return span_kind::kEmbFwd;
      case KernelClass::EmbBwd:
        return span_kind::kEmbBwd;
      case KernelClass::AllToAll:
        return a2aPhase(e, step);
      case KernelClass::AllReduce:
        return span_kind::kDenseAllreduce;
      case KernelClass::ReduceScatter:
        return span_kind::kReduceScatter;
      case KernelClass::AllGather:
        return span_kind::kAllGather;
      case KernelClass::SendRecv:
        return span_kind::kSendRecv;
      case KernelClass::Broadcast:
        return span_kind::kBroadcast;
      case KernelClass::Reduce:
        return span_kind::kReduce;
      case KernelClass::Dense:
        return span_kind::kDense;
      case KernelClass::Memory:
        return "memory";
      case KernelClass::Other:
        break;
    }
    return "kernel";
  }

  // A step from `start` until the next one starts (its end is set then, or at endRank).
  void openStep(std::int64_t start) {
    if (!step_windows.empty()) {
      auto& [last_start, last_end_] = step_windows.rbegin()->second;
      if (start <= last_start) return;
      last_end_ = start;
      windows[last_start].first = start;
    }
    const auto step = static_cast<std::int64_t>(step_windows.size());
    step_windows[step] = {start, std::numeric_limits<std::int64_t>::max()};
    windows[start] = {std::numeric_limits<std::int64_t>::max(), step};
    report.steps = static_cast<std::int64_t>(step_windows.size());
  }

  // A trace without ProfilerStep: one step per iteration annotation ("## forward ##",
  // else the most frequent annotation naming a forward pass) when one occurs at
  // least twice, else the whole trace as one step. Decided on the events buffered.
  void decideSteps() {
    steps_decided = true;
    if (!windows.empty() || report.stored > 0) return;  // a ShardScope export says its steps
    std::unordered_map<st::StringId, std::int64_t> count;
    for (const Ev& e : buf)
      if (e.kind == TraceEventKind::Annotation && !iteration[e.name].empty()) ++count[e.name];
    std::tuple<bool, std::int64_t> best{false, 0};  // (TorchRec's "## forward ##", occurrences)
    for (const auto& [id, n] : count) {
      const std::tuple<bool, std::int64_t> key{iteration[id] == "## forward ##", n};
      if (n < 2) continue;
      if (step_mark == st::kNoString || key > best || (key == best && iteration[id] < iteration[step_mark])) {
        best = key;
        step_mark = id;
      }
    }
    const std::string where = "rank " + std::to_string(info.rank) + " (" + info.source + "): no ProfilerStep events: ";
    if (step_mark != st::kNoString) {
      step_source = StepSource::Annotation;
      report.step_source = "annotation \"" + iteration[step_mark] + "\"";
      for (const Ev& e : buf)
        if (e.kind == TraceEventKind::Annotation && e.name == step_mark) openStep(e.start);
      warnings->push_back(where + "one step per \"" + iteration[step_mark] + "\" annotation (" +
                          std::to_string(step_windows.size()) + " steps)");
      return;
    }
    step_source = StepSource::WholeTrace;
    report.step_source = "whole trace";
    openStep(std::numeric_limits<std::int64_t>::min() + 1);
    warnings->push_back(where + "no iteration annotation either (## forward ##): the whole trace is one step");
  }

  void decideOffset() {
    offset_decided = true;
    if (info.time_origin_ns) {  // a ShardScope export: store times less the origin, on one clock already
      offset = *info.time_origin_ns;
      report.clock_reference = "otherData.origin_ns";
      return;
    }
    const std::int64_t base = info.base_time_ns;
    // Steps from annotations count from the trace's start, not the job's: no common reference.
    const bool real_steps = step_source == StepSource::ProfilerStep;
    if (!have_ref) {
      have_ref = true;
      ref_rank = info.rank;
      ref_base = base;
      offset = 0;
      if (real_steps && !step_windows.empty()) {
        ref_step = step_windows.begin()->first;
        ref_start = step_windows.begin()->second.first;
        report.clock_reference = "ProfilerStep#" + std::to_string(ref_step) + " start";
      } else {
        report.clock_reference = "none (first rank)";
      }
      return;
    }
    if (ref_step >= 0 && real_steps) {
      if (auto it = step_windows.find(ref_step); it != step_windows.end()) {
        offset = diff(ref_start, it->second.first);
        report.clock_reference = "ProfilerStep#" + std::to_string(ref_step) + " start";
        return;
      }
    }
    if (base != 0 && ref_base != 0) {
      offset = diff(base, ref_base);
      report.clock_reference = "baseTimeNanoseconds";
      if (ref_step >= 0)
        warnings->push_back("rank " + std::to_string(info.rank) + " (" + info.source + ") has no ProfilerStep#" +
                            std::to_string(ref_step) + ": aligned on baseTimeNanoseconds");
      return;
    }
    if (ref_step >= 0 && real_steps && !step_windows.empty()) {
      offset = diff(ref_start, step_windows.begin()->second.first);
      report.clock_reference = "ProfilerStep#" + std::to_string(step_windows.begin()->first) + " start";
      warnings->push_back("rank " + std::to_string(info.rank) + ": first profiler step " +
                          std::to_string(step_windows.begin()->first) + " differs from the reference step " +
                          std::to_string(ref_step) + ": aligned on it anyway");
      return;
    }
    offset = 0;
    report.clock_reference = "none";
    warnings->push_back("rank " + std::to_string(info.rank) + " (" + info.source +
                        "): no common reference (profiler steps or baseTimeNanoseconds): clock left as is");
  }

  // Span kinds are a few string constants (kindOf): their string id and
  // counter are found by the constant's address, not hashed per span.
  struct KindSlot {
    const char* text = nullptr;
    st::StringId id = st::kNoString;
    std::uint64_t* count = nullptr;
  };
  std::vector<KindSlot> kind_slots;  // of the current rank (counters are in its report)
  core::Result<KindSlot*> kindSlot(std::string_view kind) {
    for (KindSlot& k : kind_slots)
      if (k.text == kind.data()) return &k;
    auto id = intern(kind);
    if (!id) return id.error();
    kind_slots.push_back({kind.data(), *id, &report.spans_by_kind[std::string(kind)]});
    return &kind_slots.back();
  }

  core::Status process(Ev& e) {
    if (e.stored != kNoStored) return processStored(e);
    const std::int64_t step = stepOf(e);
    auto k = kindSlot(kindOf(e, step));
    if (!k) return k.error();
    st::Span s;
    s.rank = info.rank;
    if (isGpu(e.kind)) {
      s.stream = static_cast<int>(e.stream);
    } else {
      auto [it, inserted] = tids.emplace(e.stream, kCpuStreamBase + static_cast<std::int64_t>(tids.size()));
      s.stream = static_cast<int>(it->second);
    }
    s.kind = (*k)->id;
    s.name = e.name;
    if (__builtin_add_overflow(e.start, offset, &s.start_ns) || __builtin_add_overflow(e.end, offset, &s.end_ns))
      return core::Error{info.source + ": rank " + std::to_string(info.rank) +
                         ": timestamps out of range after clock alignment (offset " + std::to_string(offset) + " ns)"};
    s.step = step;
    s.correlation = e.corr;
    if (e.coll != kNoColl) s.bytes = colls[e.coll].bytes;
    if (auto a = writer.addSpan(s); !a) return a.error();
    ++*(*k)->count;
    if (e.coll != kNoColl) {
      const CollInfo& c = colls[e.coll];
      st::Collective col;
      col.rank = info.rank;
      col.step = step;
      auto op = intern(toText(e.cls));
      if (!op) return op.error();
      col.op = *op;
      col.group = c.group;
      col.process_group = c.process_group;
      col.seq = c.seq;
      col.bytes = c.bytes;
      col.peers = c.peers;
      col.start_ns = s.start_ns;
      col.end_ns = s.end_ns;
      if (auto a = writer.addCollective(col); !a) return a.error();
      ++report.collectives;
    }
    if (isGpuWork(e.kind)) ++report.gpu_events;
    summarise(e, step);
    return core::Ok{};
  }

  // What the event adds to its step's summary.
  void summarise(const Ev& e, std::int64_t step) {
    if (step >= 0) {
      st::StepSummary& sum = sums[step];
      const std::int64_t d = diff(e.end, e.start);
      if (e.kind == TraceEventKind::Kernel) {
        if (e.cls == KernelClass::EmbFwd)
          sum.emb_fwd_ns += d;
        else if (e.cls == KernelClass::EmbBwd)
          sum.emb_bwd_ns += d;
        else if (e.cls == KernelClass::Dense)
          sum.dense_ns += d;
        else if (isCollective(e.cls))
          sum.comm_ns += d;
      } else if (e.kind == TraceEventKind::ProfilerStep) {
        sum.total_ns = d;
      }
    }
  }

  // An event that described its row (TraceEvent::stored): kept as it says, its strings interned. A
  // `step` span opens its step as a ProfilerStep does, so that the step summaries have their windows.
  core::Status takeStored(const TraceEvent& e, Ev& v) {
    const StoredRow& r = *e.stored;
    if (r.kind.empty() == r.op.empty())
      return core::Error{info.source + ": a described row is either a span (kind) or a collective (op)"};
    if (e.stream < std::numeric_limits<int>::min() || e.stream > std::numeric_limits<int>::max())
      return core::Error{info.source + ": stream " + std::to_string(e.stream) + " does not fit in 32 bits"};
    auto row = StoredInfo::of(r, [this](std::string_view t) { return intern(t); });
    if (!row) return row.error();
    StoredInfo& x = *row;
    if (x.kind != st::kNoString) {
      x.count = storedKindCount(x.kind, r.kind);
      v.cls = import_detail::summaryClass(r.kind);
      if (r.kind == span_kind::kStep) {
        v.kind = TraceEventKind::ProfilerStep;
        v.step = r.step;
      }
    }
    v.stored = static_cast<std::uint32_t>(stored.size());
    stored.push_back(x);
    if (report.stored++ == 0) report.step_source = "the file's step spans";
    return core::Ok{};
  }
  std::uint64_t* storedKindCount(st::StringId id, std::string_view kind) {
    for (const auto& [k, count] : stored_kinds)
      if (k == id) return count;
    std::uint64_t* count = &report.spans_by_kind[std::string(kind)];
    stored_kinds.emplace_back(id, count);
    return count;
  }

  core::Status processStored(const Ev& e) {
    const StoredInfo& x = stored[e.stored];
    std::int64_t start = 0, end = 0;
    if (__builtin_add_overflow(e.start, offset, &start) || __builtin_add_overflow(e.end, offset, &end))
      return core::Error{info.source + ": rank " + std::to_string(info.rank) +
                         ": timestamps out of range after adding otherData.origin_ns (" + std::to_string(offset) +
                         " ns)"};
    if (x.kind == st::kNoString) {
      if (auto a = writer.addCollective(x.collective(info.rank, start, end)); !a) return a.error();
      ++report.collectives;
      return core::Ok{};
    }
    if (auto a = writer.addSpan(x.span(info.rank, static_cast<int>(e.stream), e.name, start, end, e.corr)); !a)
      return a.error();
    ++*x.count;
    summarise(e, x.step);
    return core::Ok{};
  }

  // Steps of a trace without ProfilerStep: the last one ends with the rank's
  // last event; each gets its total and a `step` span named for its source.
  core::Status writeFallbackSteps() {
    if (step_source == StepSource::ProfilerStep || step_windows.empty() || first_start > last_end) return core::Ok{};
    auto& last = step_windows.rbegin()->second;
    last.second = std::max(last.first, last_end);
    if (step_source == StepSource::WholeTrace) last.first = first_start;
    const std::string name = step_source == StepSource::WholeTrace
                                 ? std::string("whole trace")
                                 : "iteration annotation " + report.step_source.substr(11);
    auto name_id = intern(name);
    if (!name_id) return name_id.error();
    auto k = kindSlot(span_kind::kStep);
    if (!k) return k.error();
    for (const auto& [step, w] : step_windows) {
      st::Span sp;
      sp.rank = info.rank;
      sp.stream = static_cast<int>(kCpuStreamBase);
      sp.kind = (*k)->id;
      sp.name = *name_id;
      sp.step = step;
      if (__builtin_add_overflow(w.first, offset, &sp.start_ns) || __builtin_add_overflow(w.second, offset, &sp.end_ns))
        continue;
      if (auto a = writer.addSpan(sp); !a) return a;
      ++*(*k)->count;
      sums[step].total_ns = diff(w.second, w.first);
    }
    return core::Ok{};
  }

  core::Status drain() {
    for (const Ev& e : buf) learn(e);
    if (!steps_decided) decideSteps();
    if (!offset_decided) decideOffset();
    for (Ev& e : buf) {
      e.step = e.kind == TraceEventKind::ProfilerStep ? e.step : stepOf(e);
      mark(e, e.step);
    }
    for (Ev& e : buf) {
      if (e.kind != TraceEventKind::ProfilerStep) e.step = -1;  // recomputed in process()
      if (auto s = process(e); !s) return s;
    }
    buf.clear();
    buf.shrink_to_fit();
    colls.clear();
    colls.shrink_to_fit();
    stored.clear();
    stored.shrink_to_fit();
    return core::Ok{};
  }

  void resetRank() {
    in_rank = false;
    info = {};
    report = {};
    buf.clear();
    colls.clear();
    stored.clear();
    stored_kinds.clear();
    windows.clear();
    step_windows.clear();
    launch.clear();
    max_corr = 0;
    marks.clear();
    tids.clear();
    sums.clear();
    kind_slots.clear();
    streaming = false;
    offset_decided = false;
    rank_accepted = false;
    offset = 0;
    step_source = StepSource::ProfilerStep;
    steps_decided = false;
    step_mark = st::kNoString;
    iteration.clear();
    first_start = std::numeric_limits<std::int64_t>::max();
    last_end = std::numeric_limits<std::int64_t>::min();
  }

  // The rank is new and its file agrees with the others (one job). A
  // provisional rank is accepted when its events must be written before the
  // file says its own.
  core::Status accept(const ImportRankInfo& rank) {
    if (rank.rank < 0) return core::Error{rank.source + ": rank: missing (expected a rank >= 0)"};
    if (auto it = seen_ranks.find(rank.rank); it != seen_ranks.end())
      return core::Error{rank.source + ": rank " + std::to_string(rank.rank) + " was already imported from " +
                         it->second + " (duplicate rank: two files of the same rank?)"};
    if (auto c = checks.all(rank); !c) return c;
    const int world = rank.world_size > 0 ? rank.world_size : checks.worldSize();
    if (world > 0 && rank.rank >= world)
      return core::Error{rank.source + ": distributedInfo.rank: " + std::to_string(rank.rank) +
                         " (expected < world_size " + std::to_string(world) + ")"};
    seen_ranks[rank.rank] = rank.source;
    rank_accepted = true;
    report.rank = rank.rank;
    return core::Ok{};
  }
};

StoreImportSink::StoreImportSink(std::unique_ptr<State> s) : s_(std::move(s)) {
  s_->warnings = &warnings_;
  s_->checks = import_detail::JobChecks(s_->opts.force, &warnings_);
}
StoreImportSink::~StoreImportSink() = default;

core::Result<std::unique_ptr<StoreImportSink>> StoreImportSink::create(const std::filesystem::path& store,
                                                                       const StoreImportOptions& options,
                                                                       KernelClassifier classifier) {
  st::RunHeader h;
  h.kind = options.kind;
  h.label = options.label;
  h.model_json = options.model_json;
  h.cluster_json = options.cluster_json;
  h.plan_json = options.plan_json;
  if (options.config_json.empty()) {
    nlohmann::ordered_json j;
    j["schema"] = "shardscope.import/1";
    j["mode"] = std::string(st::toText(options.kind));
    h.config_json = j.dump();
  } else {
    h.config_json = options.config_json;
  }
  auto w = st::RunWriter::begin(store, h);
  if (!w) return w.error();
  auto state = std::make_unique<State>(std::move(w).value());
  state->opts = options;
  state->config = h.config_json;
  state->cls = std::move(classifier);
  return std::unique_ptr<StoreImportSink>(new StoreImportSink(std::move(state)));
}

st::RunId StoreImportSink::run() const { return s_->writer.run(); }

core::Status StoreImportSink::beginRank(const ImportRankInfo& rank) {
  State& s = *s_;
  if (s.failed_or_done) return core::Error{"import: the run is already finished"};
  if (s.in_rank) return core::Error{rank.source + ": beginRank while rank " + std::to_string(s.info.rank) + " is open"};
  s.resetRank();
  s.info = rank;
  s.report.rank = rank.rank;
  s.report.source = rank.source;
  if (rank.rank_final)
    if (auto a = s.accept(rank); !a) return a;
  // Untouched capacity costs no memory; growing by doubling would copy the
  // buffer and briefly hold it twice.
  s.buf.reserve(std::min<std::size_t>(s.opts.max_buffered_events, std::size_t{1} << 20));
  s.in_rank = true;
  return core::Ok{};
}

core::Status StoreImportSink::event(const TraceEvent& e) {
  State& s = *s_;
  if (!s.in_rank) return core::Error{"import: event outside a rank"};
  auto name = s.intern(e.name);
  if (!name) return name.error();
  Ev v;
  v.start = e.start_ns;
  v.end = std::max(e.start_ns, e.end_ns);
  v.stream = e.stream;
  v.corr = e.correlation;
  v.step = e.step;
  v.name = *name;
  v.kind = e.kind;
  if (e.stored != nullptr) {
    if (auto t = s.takeStored(e, v); !t) return t;
  } else if (e.kind == TraceEventKind::Kernel) {
    v.cls = s.cls.classify(e.name, e.collective);
    if (isCollective(v.cls)) {
      CollInfo c;
      // Element counts beyond 2^50 are not real messages: no bytes rather than an overflow.
      constexpr std::int64_t kMaxNelems = std::int64_t{1} << 50;
      // The store's convention per op (engine-trace.md): bytes sent + received
      // for an all-to-all, else the NCCL-tests size (the buffer of an all-reduce,
      // broadcast or reduce, an all-gather's output, a reduce-scatter's input).
      if (e.in_nelems >= 0 && e.in_nelems < kMaxNelems && e.out_nelems >= 0 && e.out_nelems < kMaxNelems) {
        std::int64_t n = e.in_nelems + e.out_nelems;
        if (v.cls == KernelClass::AllReduce || v.cls == KernelClass::ReduceScatter || v.cls == KernelClass::Broadcast ||
            v.cls == KernelClass::Reduce)
          n = e.in_nelems;
        else if (v.cls == KernelClass::AllGather)
          n = e.out_nelems;
        else if (v.cls == KernelClass::SendRecv)
          n = std::max(e.in_nelems, e.out_nelems);
        c.bytes = n * dtypeBytes(e.dtype);
      }
      auto [text, n] = groupText(e.group_ranks);
      c.peers = std::max(0, (n > 0 ? n : e.group_size) - 1);
      if (auto k = s.checks.processGroup(e.process_group, text, s.info.source); !k) return k;
      // The communicator: its ranks, and its process group when the trace names it (two groups
      // of the same ranks count their calls apart), with the call's sequence number in it.
      if (!text.empty()) {
        auto g = s.intern(text);
        if (!g) return g.error();
        c.group = *g;
      }
      if (!e.process_group.empty()) {
        auto g = s.intern(e.process_group);
        if (!g) return g.error();
        c.process_group = *g;
      }
      c.seq = std::max<std::int64_t>(-1, e.seq);
      v.coll = static_cast<std::uint32_t>(s.colls.size());
      s.colls.push_back(c);
    }
    if (s.info.device < 0 && e.device >= 0) s.info.device = e.device;
  } else if (isGpuWork(e.kind)) {
    v.cls = KernelClass::Memory;
  } else if (e.kind == TraceEventKind::Annotation && !s.steps_decided) {
    auto [it, fresh] = s.iteration.try_emplace(v.name);
    if (fresh && import_detail::namesIteration(e.name)) it->second = std::string(e.name);
  }
  s.first_start = std::min(s.first_start, v.start);
  s.last_end = std::max(s.last_end, v.end);
  ++s.report.events;
  if (v.kind == TraceEventKind::ProfilerStep) ++s.report.steps;
  if (!s.streaming) {
    s.buf.push_back(v);
    if (s.buf.size() >= s.opts.max_buffered_events) {
      // Its events are written now: a provisional rank becomes the rank.
      if (!s.rank_accepted)
        if (auto a = s.accept(s.info); !a) return a;
      s.streaming = true;
      s.report.streamed = true;
      warnings_.push_back("rank " + std::to_string(s.info.rank) + " (" + s.info.source + "): more than " +
                          std::to_string(s.opts.max_buffered_events) +
                          " events: written as streamed, steps and all-to-all phases from what came before");
      return s.drain();
    }
    return core::Ok{};
  }
  s.learn(v);
  std::int64_t step = v.kind == TraceEventKind::ProfilerStep ? v.step : s.stepOf(v);
  s.mark(v, step);
  if (v.coll != kNoColl || v.stored != kNoStored) {
    auto st = s.process(v);
    s.colls.clear();
    s.stored.clear();
    return st;
  }
  return s.process(v);
}

core::Status StoreImportSink::updateRank(const ImportRankInfo& rank) {
  State& s = *s_;
  if (!s.in_rank) return core::Error{"import: updateRank outside a rank"};
  if (!s.rank_accepted) {  // the file said its rank after its events
    if (auto a = s.accept(rank); !a) return a;
  } else if (rank.rank != s.info.rank && s.info.rank_final) {
    return core::Error{rank.source + ": rank changed from " + std::to_string(s.info.rank) + " to " +
                       std::to_string(rank.rank) + " while importing"};
  } else if (rank.rank != s.info.rank) {
    return core::Error{rank.source + ": distributedInfo.rank is " + std::to_string(rank.rank) +
                       ", but it follows more than " + std::to_string(s.opts.max_buffered_events) +
                       " events, written as rank " + std::to_string(s.info.rank) +
                       " (the rank given for the file): give --rank " + std::to_string(rank.rank)};
  } else if (auto c = s.checks.all(rank); !c) {
    return c;
  }
  if (rank.time_origin_ns && s.offset_decided && s.offset != *rank.time_origin_ns)
    return core::Error{rank.source + ": otherData.origin_ns follows more than " +
                       std::to_string(s.opts.max_buffered_events) +
                       " events, written on the file's own clock (expected otherData before traceEvents)"};
  // PyTorch writes baseTimeNanoseconds after traceEvents: a streamed first
  // rank decided its offset before it was known; keep it as the reference.
  if (s.have_ref && s.ref_rank == rank.rank && s.ref_base == 0) s.ref_base = rank.base_time_ns;
  const int device = s.info.device;
  s.info = rank;
  s.info.rank_final = true;
  if (s.info.device < 0) s.info.device = device;
  s.report.rank = rank.rank;
  return core::Ok{};
}

core::Status StoreImportSink::endRank() {
  State& s = *s_;
  if (!s.in_rank) return core::Error{"import: endRank outside a rank"};
  if (!s.rank_accepted)
    if (auto a = s.accept(s.info); !a) return a;
  if (auto d = s.drain(); !d) return d;
  if (auto w = s.writeFallbackSteps(); !w) return w;
  for (auto& [step, sum] : s.sums) {
    if (s.step_windows.count(step) == 0) continue;
    sum.step = step;
    sum.rank = s.info.rank;
    if (auto a = s.writer.addStepSummary(sum); !a) return a;
  }
  st::RankInfo r;
  r.rank = s.info.rank;
  r.host = s.info.host;
  r.device = s.info.device;
  s.report.gpu = import_detail::rankGpuName(s.info.gpus, s.info.device);
  r.sharding_group = 0;  // one group of every imported rank (docs/formats/import-trace.md)
  r.replica_group = 0;
  if (auto a = s.writer.addRank(r); !a) return a;
  if (auto c = s.writer.commit(); !c) return c;
  s.report.clock_offset_ns = s.offset;
  // Ranks of one job start their profilers within seconds of each other;
  // an offset of many minutes means traces of different runs.
  constexpr std::int64_t kSuspiciousOffsetNs = std::int64_t{600} * 1'000'000'000;
  if (!s.info.time_origin_ns && (s.offset > kSuspiciousOffsetNs || s.offset < -kSuspiciousOffsetNs))
    warnings_.push_back("rank " + std::to_string(s.info.rank) + " (" + s.info.source + "): its clock is " +
                        std::to_string(s.offset / 60'000'000'000) + " min away from the first rank's on " +
                        s.report.clock_reference + ": are these traces of one job?");
  done_.push_back(s.report);
  s.resetRank();
  return core::Ok{};
}

core::Status StoreImportSink::finish() {
  State& s = *s_;
  if (s.failed_or_done) return core::Error{"import: the run is already finished"};
  if (s.in_rank) return fail("a rank was not finished");
  if (done_.empty()) {
    (void)fail("no rank imported");
    return core::Error{"import: no rank imported"};
  }
  if (s.checks.worldSize() > 0 && static_cast<int>(done_.size()) < s.checks.worldSize())
    warnings_.push_back("imported " + std::to_string(done_.size()) + " of world_size " +
                        std::to_string(s.checks.worldSize()) + " ranks");
  if (done_.size() == 1)
    warnings_.push_back("one rank imported: no peer to compare with, so waits for peers are unknown");
  import_detail::warnMissingWork(done_, warnings_);
  // The GPUs are known only once every file is read: the configuration is rewritten once, at the end.
  if (auto c = s.writer.setConfig(import_detail::configWithGpus(s.config, done_)); !c) {
    (void)fail(c.error().message);
    return c;
  }
  s.failed_or_done = true;
  return s.writer.finish();
}

core::Status StoreImportSink::fail(std::string_view reason) {
  State& s = *s_;
  if (s.failed_or_done) return core::Ok{};
  s.failed_or_done = true;
  return s.writer.fail(reason);
}

}  // namespace shardscope::profiler
