// The timeline page's inspection queries (timeline_inspect.h) on generated
// runs: several ranks and streams, steps, nested spans, instants, spans
// crossing range edges, equal starts, a rank without spans, and collectives
// rows with and without sequence numbers (nested, one-rank and partial
// calls). Every answer is compared with a brute-force reference computed
// over all the spans and rows the generator wrote.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/timeline_inspect.h"

using namespace shardscope;
namespace st = core::store;

namespace {

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kEpoch = 1'700'000'000'000'000'000;  // epoch-scale nanoseconds
constexpr int kRanks = 4;                                   // ranks 0..3 have spans; rank 4 is listed without any

// What the generator writes, by text; writeRun interns it.
struct SpanText {
  int rank = 0;
  int stream = 0;
  std::string kind, name;
  std::int64_t start = 0, end = 0, step = -1;
};
struct RowText {
  int rank = 0;
  std::int64_t step = -1;
  std::string op, group, process_group;  // "" process group: none (kNoString)
  std::int64_t start = 0, end = 0, seq = -1, bytes = 0;
};

// A run as written: its spans and rows (in writing order) and every string's text.
struct Generated {
  std::filesystem::path path;
  st::RunId run{};
  std::vector<st::Span> spans;
  std::vector<st::Collective> rows;
  std::map<std::int64_t, std::string> text;
  std::string_view at(st::StringId id) const {
    const auto it = text.find(static_cast<std::int64_t>(id));
    return it == text.end() ? std::string_view{} : std::string_view{it->second};
  }
};

Generated writeRun(const std::filesystem::path& path, const std::vector<SpanText>& spans,
                   const std::vector<RowText>& rows, std::size_t rowsPerCommit = 500) {
  st::RunHeader h;
  h.kind = st::RunKind::Emulate;
  h.label = "inspect";
  st::WriterOptions options;
  options.rows_per_commit = rowsPerCommit;  // small commits: blocks of several batches overlap in time
  auto w = st::RunWriter::begin(path, h, options);
  if (!w) qFatal("%s", w.error().message.c_str());
  Generated g{path, w->run(), {}, {}, {}};
  auto id = [&](const std::string& text) {
    if (text.empty()) return st::kNoString;
    const st::StringId s = w->intern(text).value();
    g.text[static_cast<std::int64_t>(s)] = text;
    return s;
  };
  for (int rank = 0; rank <= kRanks; ++rank) {
    if (!w->addRank({rank, "host", rank, rank % 2, rank / 2})) qFatal("addRank");
  }
  for (const SpanText& s : spans) {
    st::Span sp{s.rank, s.stream, id(s.kind), id(s.name), s.start, s.end, s.step, s.start % 991, s.end - s.start};
    g.spans.push_back(sp);
  }
  if (auto s = w->addSpans(g.spans); !s) qFatal("%s", s.error().message.c_str());
  for (const RowText& r : rows) {
    st::Collective c{r.rank, r.step, id(r.op), id(r.group), st::kNoString, r.bytes, 1, r.start, r.end};
    c.process_group = id(r.process_group);
    c.seq = r.seq;
    if (auto s = w->addCollective(c); !s) qFatal("%s", s.error().message.c_str());
    g.rows.push_back(c);
  }
  if (auto s = w->finish(); !s) qFatal("%s", s.error().message.c_str());
  return g;
}

const std::vector<std::string> kKinds = {"emb_fwd", "emb_bwd", "a2a_ids", "a2a_pooled",  "dense",
                                         "kernel",  "memcpy",  "input",   "replica_sync"};
const std::vector<std::string> kSpanNames = {"emb_fwd Table_A", "emb_bwd table_b", "AllToAll ids", "pooled exchange",
                                             "dense GEMM",      "input ids",       "sync replicas"};
const std::vector<std::string> kKernelNames = {"ncclDevKernel_SendRecv", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                               "gemm_128x64", "Memcpy DtoH (Device -> Pinned)"};

// Seeded spans on ranks 0..3 over about [base - 1 ms, base + 160 ms): ten
// 10 ms steps per rank, instants, long spans, nested pairs (some starting
// together) and short spans on a coarse grid, so that starts tie across
// ranks and streams.
std::vector<SpanText> generateSpans(std::uint64_t seed, std::int64_t base, int perRank) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  auto pick = [&](const std::vector<std::string>& v) { return v[static_cast<std::size_t>(uniform(0, 8)) % v.size()]; };
  std::vector<SpanText> out;
  for (int rank = 0; rank < kRanks; ++rank) {
    for (std::int64_t step = 0; step < 10; ++step) {
      const std::int64_t s = base + step * 10 * kMs + uniform(0, 200 * kUs);
      out.push_back({rank, 0, "step", "ProfilerStep#" + std::to_string(step), s, s + 9 * kMs, step});
    }
    if (rank == 2) out.push_back({rank, 0, "step", "ProfilerStep#3", base + 35 * kMs, base + 41 * kMs, 3});  // again
    for (int i = 0; i < perRank; ++i) {
      const int stream = std::array{0, 1, 100000}[static_cast<std::size_t>(uniform(0, 2))];
      const std::string kind = pick(kKinds);
      const std::string name = kind == "kernel" ? pick(kKernelNames) : pick(kSpanNames);
      std::int64_t start = base + uniform(-kMs, 100 * kMs);
      const std::int64_t step = (start - base) / (10 * kMs);
      switch (uniform(0, 9)) {
        case 0:  // an instant
          out.push_back({rank, stream, kind, name, start, start, step});
          break;
        case 1:  // long: crosses the edges of most ranges
          out.push_back({rank, stream, kind, name, start, start + uniform(kMs, 60 * kMs), step});
          break;
        case 2: {  // a parent and a child on one stream, sometimes starting together
          const std::int64_t end = start + uniform(50 * kUs, 500 * kUs);
          const std::int64_t child = uniform(0, 1) == 0 ? start : start + uniform(1, 20 * kUs);
          out.push_back({rank, stream, kind, name, start, end, step});
          out.push_back({rank, stream, pick(kKinds), pick(kSpanNames), child, child + uniform(1, 20 * kUs), step});
          break;
        }
        case 3:  // on a 100 us grid: equal starts across ranks and streams
          start = base + uniform(0, 1000) * 100 * kUs;
          out.push_back({rank, stream, kind, name, start, start + uniform(1, 2 * kUs), step});
          break;
        default:
          out.push_back({rank, stream, kind, name, start, start + uniform(1, 100 * kUs), step});
      }
    }
  }
  return out;
}

// Seeded collectives rows over six steps: all-to-alls of the two sharding
// groups without a sequence number, send/recv calls with one nested in them,
// world all-reduces with one (rank 3 misses one; rank 1 records another in
// no step), all-reduces without a process group, and one-rank all-to-alls.
std::vector<RowText> generateRows(std::uint64_t seed, std::int64_t base) {
  std::mt19937_64 rng(seed * 31);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::vector<RowText> out;
  std::int64_t p2p_seq = 0, world_seq = 100;
  for (std::int64_t step = 0; step < 6; ++step) {
    const std::int64_t t = base + step * 10 * kMs;
    for (int k = 0; k < 3; ++k) {
      const std::int64_t at = t + k * 3 * kMs;
      for (int rank = 0; rank < kRanks; ++rank) {
        const std::int64_t start = at + uniform(0, 400 * kUs);
        out.push_back({rank, step, "all_to_all", rank % 2 == 0 ? "0,2" : "1,3", "sharding", start,
                       at + 501 * kUs + uniform(0, 20 * kUs), -1, uniform(1, 1 << 20)});
        if (k == 0 && rank % 2 == 0)  // inside this rank's all-to-all row
          out.push_back({rank, step, "send_recv", "0,2", "p2p", start + kUs, start + 51 * kUs, p2p_seq, 4096});
      }
      ++p2p_seq;
    }
    for (int rank = 0; rank < kRanks; ++rank) {
      if (step == 2 && rank == 3) continue;
      std::int64_t start = t + 8 * kMs + uniform(0, 500 * kUs);
      if (step == 0 && (rank == 1 || rank == 2)) start = t + 8 * kMs + 500 * kUs;  // last two arrive together
      if (step == 4 && rank == 1) start = t + 8 * kMs - kUs;  // first, and in no step: the call's step is -1
      out.push_back({rank, step == 4 && rank == 1 ? -1 : step, "all_reduce", "0,1,2,3", "world", start,
                     t + 8 * kMs + 600 * kUs + uniform(0, 10 * kUs), world_seq, 8 << 20});
      const std::int64_t legacy = t + 9 * kMs + uniform(0, 100 * kUs);
      out.push_back({rank, step, "all_reduce", "0,1,2,3", "", legacy, legacy + 50 * kUs, -1, 1024});
    }
    ++world_seq;
    out.push_back({1, step, "all_to_all", "1", "sharding", t + 9500 * kUs, t + 9600 * kUs, -1, 64});
  }
  return out;
}

Generated generate(const std::filesystem::path& dir, std::uint64_t seed, std::int64_t base, int perRank = 1200) {
  return writeRun(dir / ("gen" + std::to_string(seed) + ".db"), generateSpans(seed, base, perRank),
                  generateRows(seed, base));
}

std::filesystem::path dirOf(const QTemporaryDir& d) { return std::filesystem::path(d.path().toStdString()); }

st::TraceStore open(const Generated& g) {
  auto s = st::openStore(g.path);
  if (!s) qFatal("%s", s.error().message.c_str());
  return std::move(*s);
}

st::StringTable strings(const st::TraceStore& store) {
  auto s = store.strings();
  if (!s) qFatal("%s", s.error().message.c_str());
  return std::move(*s);
}

// --- references ------------------------------------------------------------

// A call as the reference pairs it: arrivals by rank as (start, end), plus what every member agrees on.
struct RefCall {
  std::string op, process_group;
  std::int64_t step = -1, seq = -1, bytes = 0;
  std::map<int, std::pair<std::int64_t, std::int64_t>> arrivals;
  std::pair<std::int64_t, int> first{INT64_MAX, 0};  // (start, rank) of the first arrival
};

// Pairs rows by counting, for every row, the earlier rows of its rank (in
// the store's order: start, then writing order) that share its process
// group, group, op and sequence number (or, without one, its step).
std::map<std::vector<std::tuple<int, std::int64_t, std::int64_t>>, RefCall> referenceCalls(const Generated& g) {
  std::vector<std::size_t> order(g.rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(g.rows[a].rank, g.rows[a].start_ns) < std::pair(g.rows[b].rank, g.rows[b].start_ns);
  });
  auto sameCall = [](const st::Collective& a, const st::Collective& b) {
    if (a.process_group != b.process_group || a.group != b.group || a.op != b.op || (a.seq >= 0) != (b.seq >= 0))
      return false;
    return a.seq >= 0 ? a.seq == b.seq : a.step == b.step;
  };
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>, RefCall> calls;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const st::Collective& c = g.rows[order[k]];
    int nth = 0;
    for (std::size_t j = 0; j < k; ++j) {
      const st::Collective& e = g.rows[order[j]];
      if (e.rank == c.rank && sameCall(e, c)) ++nth;
    }
    RefCall& call = calls[{static_cast<std::int64_t>(c.process_group), static_cast<std::int64_t>(c.group),
                           static_cast<std::int64_t>(c.op), c.seq >= 0 ? c.seq : -1, c.seq >= 0 ? -2 : c.step, nth}];
    call.op = std::string(g.at(c.op));
    call.process_group = std::string(g.at(c.process_group));
    call.seq = c.seq;
    call.bytes = std::max(call.bytes, c.bytes);
    call.arrivals[c.rank] = {c.start_ns, c.end_ns};
    if (std::pair(c.start_ns, c.rank) < call.first) {
      call.first = {c.start_ns, c.rank};
      call.step = c.step;
    }
  }
  std::map<std::vector<std::tuple<int, std::int64_t, std::int64_t>>, RefCall> out;
  for (auto& [key, call] : calls) {
    std::vector<std::tuple<int, std::int64_t, std::int64_t>> members;
    for (const auto& [rank, t] : call.arrivals) members.emplace_back(rank, t.first, t.second);
    out[members] = call;
  }
  return out;
}

// The last rank (lowest on a tie) and its lead over the others' median arrival.
std::pair<int, std::int64_t> lastOf(const RefCall& c) {
  int last = -1;
  std::int64_t latest = INT64_MIN;
  for (const auto& [rank, t] : c.arrivals) {
    if (t.first > latest) {
      latest = t.first;
      last = rank;
    }
  }
  std::vector<std::int64_t> others;
  for (const auto& [rank, t] : c.arrivals)
    if (rank != last) others.push_back(t.first);
  if (others.empty()) return {last, 0};
  std::sort(others.begin(), others.end());
  const std::size_t n = others.size();
  const std::int64_t median = n % 2 == 1 ? others[n / 2] : others[n / 2 - 1] + (others[n / 2] - others[n / 2 - 1]) / 2;
  return {last, latest - median};
}

// "" when the loaded calls are the reference's, else what differs first.
std::string compareCalls(const Generated& g, const profiler::CollectiveCalls& got) {
  const auto want = referenceCalls(g);
  if (got.calls().size() != want.size())
    return std::to_string(got.calls().size()) + " calls, want " + std::to_string(want.size());
  std::int64_t previous_first = INT64_MIN;
  for (std::size_t i = 0; i < got.calls().size(); ++i) {
    const profiler::CollectiveCall& c = got.calls()[i];
    const std::string where = "call " + std::to_string(i) + " (" + c.op + "): ";
    std::vector<std::tuple<int, std::int64_t, std::int64_t>> members;
    for (const auto& a : c.arrivals) members.emplace_back(a.rank, a.start_ns, a.end_ns);
    const auto it = want.find(members);
    if (it == want.end()) return where + "its members are no reference call's";
    const RefCall& r = it->second;
    if (c.op != r.op || c.process_group != r.process_group || c.step != r.step || c.seq != r.seq || c.bytes != r.bytes)
      return where + "op, process group, step, seq or bytes differ";
    const auto [last, by] = lastOf(r);
    if (c.last_rank != last || c.last_by_ns != by)
      return where + "last rank " + std::to_string(c.last_rank) + " by " + std::to_string(c.last_by_ns) + ", want " +
             std::to_string(last) + " by " + std::to_string(by);
    for (const auto& a : c.arrivals) {
      if (a.wait_ns != r.arrivals.at(last).first - a.start_ns) return where + "wait of rank " + std::to_string(a.rank);
    }
    if (r.first.first < previous_first) return where + "not ordered by first arrival";
    previous_first = r.first.first;
  }
  return {};
}

// callAt by brute force over every call's rows on the rank.
std::optional<std::size_t> referenceCallAt(const profiler::CollectiveCalls& calls, int rank, std::int64_t t) {
  std::optional<std::pair<std::int64_t, std::size_t>> best;  // (duration, call)
  for (std::size_t i = 0; i < calls.calls().size(); ++i) {
    for (const auto& a : calls.calls()[i].arrivals) {
      if (a.rank != rank || a.start_ns > t || t > a.end_ns) continue;
      const std::pair<std::int64_t, std::size_t> here{a.end_ns - a.start_ns, i};
      if (!best || here < *best) best = here;
    }
  }
  if (!best) return std::nullopt;
  return best->second;
}

std::vector<profiler::StepStart> referenceSteps(const Generated& g) {
  std::map<std::pair<int, std::int64_t>, std::pair<std::int64_t, std::int64_t>> steps;
  for (const st::Span& s : g.spans) {
    if (g.at(s.kind) != "step") continue;
    auto [it, fresh] = steps.try_emplace({s.rank, s.step}, s.start_ns, s.end_ns);
    it->second.first = std::min(it->second.first, s.start_ns);
    it->second.second = std::max(it->second.second, s.end_ns);
  }
  std::vector<profiler::StepStart> out;
  for (const auto& [key, t] : steps) out.push_back({key.first, key.second, t.first, t.second});
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

auto searchOrder(const st::Span& s) {
  return std::tuple{
      s.rank, s.stream,      s.end_ns, static_cast<std::int64_t>(s.kind), static_cast<std::int64_t>(s.name),
      s.step, s.correlation, s.bytes};
}

std::optional<st::Span> referenceFind(const Generated& g, const std::vector<int>& ranks, std::string_view needle,
                                      std::int64_t from, profiler::SearchDirection direction) {
  const bool forward = direction == profiler::SearchDirection::Forward;
  std::optional<st::Span> best;
  for (const st::Span& s : g.spans) {
    if (!ranks.empty() && std::find(ranks.begin(), ranks.end(), s.rank) == ranks.end()) continue;
    if (forward ? s.start_ns <= from : s.start_ns >= from) continue;
    if (lower(g.at(s.name)).find(lower(needle)) == std::string::npos) continue;
    const bool nearer = !best || (s.start_ns != best->start_ns ? (forward == (s.start_ns < best->start_ns))
                                                               : searchOrder(s) < searchOrder(*best));
    if (nearer) best = s;
  }
  return best;
}

std::vector<profiler::RangeTotals> referenceTotals(const Generated& g, const std::vector<int>& ranks, std::int64_t t0,
                                                   std::int64_t t1, const std::vector<std::int64_t>& offsets) {
  std::vector<profiler::RangeTotals> out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    profiler::RangeTotals r;
    r.rank = ranks[i];
    const std::int64_t a = t0 + (offsets.empty() ? 0 : offsets[i]), b = t1 + (offsets.empty() ? 0 : offsets[i]);
    for (const st::Span& s : g.spans) {
      if (s.rank != r.rank || s.start_ns >= b || !(s.end_ns > a || (s.end_ns == s.start_ns && s.start_ns >= a)))
        continue;
      ++r.spans;
      const auto cls = static_cast<std::size_t>(profiler::spanClassOf(g.at(s.kind), g.at(s.name)));
      r.ns[cls] += std::max<std::int64_t>(0, std::min(s.end_ns, b) - std::max(s.start_ns, a));
    }
    out.push_back(r);
  }
  return out;
}

std::string describe(const std::optional<st::Span>& s) {
  if (!s) return "none";
  return "rank " + std::to_string(s->rank) + " stream " + std::to_string(s->stream) + " at " +
         std::to_string(s->start_ns) + ".." + std::to_string(s->end_ns);
}

}  // namespace

class TestTimelineInspect : public QObject {
  Q_OBJECT

 private slots:
  void collectiveCallsPairRowsAsTheReferenceDoes() {
    QTemporaryDir dir;
    for (const auto& [seed, base] : {std::pair<std::uint64_t, std::int64_t>{1, 0}, {2, 5 * kMs}, {3, kEpoch}}) {
      const Generated g = generate(dirOf(dir), seed, base, 50);
      const auto store = open(g);
      auto calls = profiler::CollectiveCalls::load(store, g.run);
      QVERIFY2(calls.ok(), calls.ok() ? "" : calls.error().message.c_str());
      const std::string diff = compareCalls(g, *calls);
      QVERIFY2(diff.empty(), ("seed " + std::to_string(seed) + ": " + diff).c_str());
      // The generator's shapes are all there: a one-rank call, a call rank 3 missed, a tie for last.
      const auto& list = calls->calls();
      QVERIFY(std::any_of(list.begin(), list.end(), [](const auto& c) { return c.arrivals.size() == 1; }));
      QVERIFY(std::any_of(list.begin(), list.end(), [](const auto& c) { return c.arrivals.size() == 3; }));
      QVERIFY(std::any_of(list.begin(), list.end(), [](const auto& c) { return c.seq >= 0 && c.step == -1; }));
    }
  }

  void callAtFindsTheShortestRowContainingTheTime() {
    QTemporaryDir dir;
    for (const auto& [seed, base] : {std::pair<std::uint64_t, std::int64_t>{4, 0}, {5, kEpoch}}) {
      const Generated g = generate(dirOf(dir), seed, base, 10);
      const auto store = open(g);
      auto calls = profiler::CollectiveCalls::load(store, g.run);
      QVERIFY(calls.ok());
      std::vector<std::int64_t> times;
      for (const st::Collective& c : g.rows) {
        for (const std::int64_t t : {c.start_ns, c.end_ns}) times.insert(times.end(), {t - 1, t, t + 1});
      }
      std::mt19937_64 rng(seed);
      for (int i = 0; i < 500; ++i)
        times.push_back(base + std::uniform_int_distribution<std::int64_t>(-kMs, 62 * kMs)(rng));
      int nested = 0;
      for (int rank = 0; rank <= kRanks + 1; ++rank) {
        for (const std::int64_t t : times) {
          const auto got = calls->callAt(rank, t);
          const auto want = referenceCallAt(*calls, rank, t);
          QVERIFY2(got == want,
                   ("rank " + std::to_string(rank) + " at " + std::to_string(t - base) + ": got " +
                    (got ? std::to_string(*got) : "none") + ", want " + (want ? std::to_string(*want) : "none"))
                       .c_str());
          if (got && calls->calls()[*got].op == "send_recv") ++nested;
        }
      }
      QVERIFY(nested > 0);  // the nested send/recv rows win inside the all-to-alls around them
    }
  }

  void stragglerMarksAreTheAllToAllCallsByStart() {
    QTemporaryDir dir;
    const Generated g = generate(dirOf(dir), 6, 0, 10);
    const auto store = open(g);
    auto calls = profiler::CollectiveCalls::load(store, g.run);
    QVERIFY(calls.ok());
    const auto marks = profiler::stragglerMarks(*calls);
    const auto want = referenceCalls(g);
    const auto all_to_all = std::count_if(want.begin(), want.end(), [](const auto& kv) {
      return kv.second.op == "all_to_all" || kv.second.op == "send_recv";
    });
    QCOMPARE(static_cast<std::int64_t>(marks.size()), static_cast<std::int64_t>(all_to_all));
    for (std::size_t i = 0; i < marks.size(); ++i) {
      const auto& m = marks[i];
      const auto& call = calls->calls().at(m.call);
      QVERIFY(call.op == "all_to_all" || call.op == "send_recv");
      std::vector<std::tuple<int, std::int64_t, std::int64_t>> members;
      for (const auto& a : call.arrivals) members.emplace_back(a.rank, a.start_ns, a.end_ns);
      const RefCall& r = want.at(members);
      QCOMPARE(m.step, r.step);
      QCOMPARE(m.start_ns, r.first.first);
      QCOMPARE(std::pair(m.last_rank, m.last_by_ns), lastOf(r));
      if (i > 0) QVERIFY(marks[i - 1].start_ns <= m.start_ns);
    }
  }

  void stepStartsAreEveryRanksStepSpansInAnyWindowSize() {
    QTemporaryDir dir;
    const Generated g = generate(dirOf(dir), 7, kEpoch, 400);
    const auto store = open(g);
    const auto table = strings(store);
    const auto want = referenceSteps(g);
    QCOMPARE(want.size(), std::size_t{4 * 10});  // rank 2's second span of step 3 widens that step
    for (const std::int64_t window : {std::int64_t{3}, std::int64_t{50}, profiler::kInspectSpansPerWindow}) {
      auto got = profiler::stepStarts(store, table, g.run, window);
      QVERIFY2(got.ok(), got.ok() ? "" : got.error().message.c_str());
      QCOMPARE(got->size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        const auto& a = (*got)[i];
        const auto& b = want[i];
        QVERIFY2(std::tuple(a.rank, a.step, a.start_ns, a.end_ns) == std::tuple(b.rank, b.step, b.start_ns, b.end_ns),
                 ("window " + std::to_string(window) + ": entry " + std::to_string(i)).c_str());
      }
    }
  }

  void findSpanMatchesBruteForceSearch() {
    QTemporaryDir dir;
    for (const auto& [seed, base] : {std::pair<std::uint64_t, std::int64_t>{8, 0}, {9, kEpoch}}) {
      const Generated g = generate(dirOf(dir), seed, base, 1000);
      const auto store = open(g);
      const auto table = strings(store);
      const std::vector<std::string> needles = {"ALLTOALL", "table_", "Gemm", "nccl", "profilerstep#7", "e", "Ids"};
      const std::vector<std::vector<int>> rank_sets = {{}, {2}, {3, 1}, {4}, {4, 0}};
      std::mt19937_64 rng(seed);
      auto uniform = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
      };
      for (int i = 0; i < 120; ++i) {
        const auto& needle = needles[static_cast<std::size_t>(uniform(0, 6))];
        const auto& ranks = rank_sets[static_cast<std::size_t>(uniform(0, 4))];
        // A span's own start (strictly after / before it), anywhere, or past either end of the run.
        const auto& any = g.spans[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(g.spans.size()) - 1))];
        const std::int64_t from = std::array{any.start_ns, base + uniform(-2 * kMs, 170 * kMs), base - 10 * kMs,
                                             base + 500 * kMs}[static_cast<std::size_t>(uniform(0, 3))];
        const auto direction =
            uniform(0, 1) == 0 ? profiler::SearchDirection::Forward : profiler::SearchDirection::Backward;
        const std::int64_t window = i % 3 == 0 ? profiler::kInspectSpansPerWindow : 16;
        auto got = profiler::findSpan(store, table, g.run, ranks, needle, from, direction, nullptr, window);
        QVERIFY2(got.ok(), got.ok() ? "" : got.error().message.c_str());
        const std::optional<st::Span> found = *got ? std::optional<st::Span>((*got)->span) : std::nullopt;
        const auto want = referenceFind(g, ranks, needle, from, direction);
        QVERIFY2(found == want,
                 ("seed " + std::to_string(seed) + " query " + std::to_string(i) + " \"" + needle + "\" from " +
                  std::to_string(from - base) + ": got " + describe(found) + ", want " + describe(want))
                     .c_str());
      }
    }
  }

  void findSpanBreaksTiesByRankThenStream() {
    QTemporaryDir dir;
    const std::int64_t t = 5 * kMs;
    const Generated g = writeRun(dirOf(dir) / "ties.db",
                                 {{2, 0, "dense", "gemm", t, t + kUs},
                                  {1, 7, "dense", "gemm", t, t + kUs},
                                  {1, 3, "dense", "gemm", t, t + 2 * kUs},
                                  {0, 1, "dense", "other", t, t + kUs},
                                  {0, 0, "dense", "gemm", t - kMs, t - kMs + kUs},
                                  {3, 0, "dense", "GEMM", t + kMs, t + kMs}},
                                 {});
    const auto store = open(g);
    const auto table = strings(store);
    using profiler::SearchDirection;
    auto next = profiler::findSpan(store, table, g.run, {}, "gemm", 0, SearchDirection::Forward);
    QVERIFY(next.ok() && *next);
    QCOMPARE((*next)->span.start_ns, t - kMs);
    next = profiler::findSpan(store, table, g.run, {}, "gemm", t - kMs, SearchDirection::Forward);
    QVERIFY(next.ok() && *next);
    QCOMPARE(std::pair((*next)->span.rank, (*next)->span.stream), std::pair(1, 3));
    auto previous = profiler::findSpan(store, table, g.run, {}, "gemm", t + kMs, SearchDirection::Backward);
    QVERIFY(previous.ok() && *previous);
    QCOMPARE(std::pair((*previous)->span.rank, (*previous)->span.stream), std::pair(1, 3));
    // Strictly after: the instant at t + 1 ms is found from t, nothing after it.
    next = profiler::findSpan(store, table, g.run, {}, "gemm", t, SearchDirection::Forward);
    QVERIFY(next.ok() && *next);
    QCOMPARE((*next)->span.rank, 3);
    next = profiler::findSpan(store, table, g.run, {}, "gemm", t + kMs, SearchDirection::Forward);
    QVERIFY(next.ok() && !*next);
  }

  void findSpanWithoutMatchingStringsReadsNoSpans() {
    QTemporaryDir dir;
    const Generated g = generate(dirOf(dir), 10, 0, 100);
    const auto store = open(g);
    const auto table = strings(store);
    // Already cancelled: a search that reads a window fails, one that needs none answers.
    const std::atomic<bool> cancel{true};
    auto none =
        profiler::findSpan(store, table, g.run, {}, "no such span", 0, profiler::SearchDirection::Forward, &cancel);
    QVERIFY(none.ok());
    QVERIFY(!*none);
    auto some = profiler::findSpan(store, table, g.run, {}, "gemm", 0, profiler::SearchDirection::Forward, &cancel);
    QVERIFY(!some.ok());
    QVERIFY(some.error().kind == core::ErrorKind::Cancelled);
  }

  void rangeTotalsMatchBruteForceClipping() {
    QTemporaryDir dir;
    for (const auto& [seed, base] : {std::pair<std::uint64_t, std::int64_t>{11, 0}, {12, kEpoch}}) {
      const Generated g = generate(dirOf(dir), seed, base, 1000);
      const auto store = open(g);
      const auto table = strings(store);
      std::mt19937_64 rng(seed);
      auto uniform = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
      };
      const std::vector<std::vector<int>> rank_sets = {{}, {4, 0, 0, 2}, {3}, {1, 2, 3, 0}};
      for (int i = 0; i < 40; ++i) {
        const auto& asked = rank_sets[static_cast<std::size_t>(i % 4)];
        const std::vector<int> ranks = asked.empty() ? std::vector<int>{0, 1, 2, 3, 4} : asked;
        const std::int64_t t0 = base + uniform(-3 * kMs, 110 * kMs);
        const std::int64_t t1 = t0 + (i % 5 == 0 ? 1 : uniform(1, 30 * kMs));
        std::vector<std::int64_t> offsets;
        if (i % 2 == 1)
          for (std::size_t r = 0; r < ranks.size(); ++r) offsets.push_back(uniform(-2 * kMs, 2 * kMs));
        const std::int64_t window = std::array<std::int64_t, 3>{2, 37, profiler::kInspectSpansPerWindow}[i % 3];
        auto got = profiler::rangeTotals(store, table, g.run, asked, t0, t1, offsets, nullptr, window);
        QVERIFY2(got.ok(), got.ok() ? "" : got.error().message.c_str());
        const auto want = referenceTotals(g, ranks, t0, t1, offsets);
        QCOMPARE(got->size(), want.size());
        for (std::size_t r = 0; r < want.size(); ++r) {
          const auto& a = (*got)[r];
          const auto& b = want[r];
          QVERIFY2(a.rank == b.rank && a.ns == b.ns && a.spans == b.spans,
                   ("seed " + std::to_string(seed) + " range " + std::to_string(i) + " entry " + std::to_string(r) +
                    ": " + std::to_string(a.spans) + " spans, want " + std::to_string(b.spans))
                       .c_str());
        }
      }
    }
  }

  void rangeTotalsCountEdgesAsTheWindowQueryDoes() {
    QTemporaryDir dir;
    // [10, 20) us: a span ending at 10 and one starting at 20 stay out; an instant at 10 is in, one at 20 is not.
    const Generated g = writeRun(dirOf(dir) / "edges.db",
                                 {{0, 0, "dense", "a", 5 * kUs, 10 * kUs},
                                  {0, 0, "dense", "b", 20 * kUs, 25 * kUs},
                                  {0, 0, "dense", "c", 10 * kUs, 10 * kUs},
                                  {0, 0, "dense", "d", 20 * kUs, 20 * kUs},
                                  {0, 1, "emb_fwd", "e", 0, 100 * kUs},
                                  {0, 2, "step", "ProfilerStep#0", 12 * kUs, 15 * kUs, 0}},
                                 {});
    const auto store = open(g);
    auto got = profiler::rangeTotals(store, strings(store), g.run, {0, 4}, 10 * kUs, 20 * kUs);
    QVERIFY(got.ok());
    QCOMPARE(got->size(), std::size_t{2});
    QCOMPARE((*got)[0].spans, std::int64_t{3});
    QCOMPARE((*got)[0].ns[static_cast<std::size_t>(profiler::SpanClass::EmbeddingForward)], 10 * kUs);
    QCOMPARE((*got)[0].ns[static_cast<std::size_t>(profiler::SpanClass::Step)], 3 * kUs);
    QCOMPARE((*got)[0].ns[static_cast<std::size_t>(profiler::SpanClass::Dense)], std::int64_t{0});
    QCOMPARE((*got)[1].rank, 4);  // listed, no spans
    QCOMPARE((*got)[1].spans, std::int64_t{0});
  }

  void malformedRequestsAreErrors() {
    QTemporaryDir dir;
    const Generated g = generate(dirOf(dir), 13, 0, 20);
    const auto store = open(g);
    const auto table = strings(store);
    const st::RunId unknown{9999};
    using profiler::SearchDirection;
    QVERIFY(!profiler::CollectiveCalls::load(store, unknown).ok());
    QVERIFY(!profiler::stepStarts(store, table, unknown).ok());
    QVERIFY(!profiler::findSpan(store, table, unknown, {}, "gemm", 0, SearchDirection::Forward).ok());
    QVERIFY(!profiler::rangeTotals(store, table, unknown, {}, 0, kMs).ok());
    auto empty = profiler::findSpan(store, table, g.run, {}, "", 0, SearchDirection::Backward);
    QVERIFY(!empty.ok());
    QVERIFY(empty.error().kind == core::ErrorKind::Usage);
    for (const std::int64_t t1 : {kMs, 0 * kMs}) {
      auto backwards = profiler::rangeTotals(store, table, g.run, {0}, kMs, t1);
      QVERIFY(!backwards.ok());
      QVERIFY(backwards.error().kind == core::ErrorKind::Usage);
    }
    auto mismatch = profiler::rangeTotals(store, table, g.run, {0, 1}, 0, kMs, {5});
    QVERIFY(!mismatch.ok());
    QVERIFY(mismatch.error().kind == core::ErrorKind::Usage);
    auto all_mismatch = profiler::rangeTotals(store, table, g.run, {}, 0, kMs, {1, 2});  // the run has 5 ranks
    QVERIFY(!all_mismatch.ok());
    QVERIFY(all_mismatch.error().kind == core::ErrorKind::Usage);
    auto overflow = profiler::rangeTotals(store, table, g.run, {0}, 0, kMs, {INT64_MAX});
    QVERIFY(!overflow.ok());
    QVERIFY(overflow.error().kind == core::ErrorKind::Usage);
    const std::atomic<bool> cancel{true};
    auto cancelled = profiler::rangeTotals(store, table, g.run, {0}, 0, 100 * kMs, {}, &cancel);
    QVERIFY(!cancelled.ok());
    QVERIFY(cancelled.error().kind == core::ErrorKind::Cancelled);
    // Searching from the ends of time does not overflow.
    QVERIFY(profiler::findSpan(store, table, g.run, {}, "e", INT64_MAX, SearchDirection::Forward).ok());
    auto last = profiler::findSpan(store, table, g.run, {}, "e", INT64_MAX, SearchDirection::Backward);
    QVERIFY(last.ok() && *last);
    auto first = profiler::findSpan(store, table, g.run, {}, "e", INT64_MIN, SearchDirection::Forward);
    QVERIFY(first.ok() && *first);
  }

  void aRunWithoutRowsOrSpansHasNoCallsStepsOrHits() {
    QTemporaryDir dir;
    const Generated g = writeRun(dirOf(dir) / "empty.db", {}, {});
    const auto store = open(g);
    const auto table = strings(store);
    auto calls = profiler::CollectiveCalls::load(store, g.run);
    QVERIFY(calls.ok());
    QVERIFY(calls->calls().empty());
    QVERIFY(!calls->callAt(0, 0));
    QVERIFY(profiler::stragglerMarks(*calls).empty());
    auto steps = profiler::stepStarts(store, table, g.run);
    QVERIFY(steps.ok() && steps->empty());
    auto totals = profiler::rangeTotals(store, table, g.run, {}, 0, kMs);
    QVERIFY(totals.ok());
    QCOMPARE(totals->size(), std::size_t{kRanks + 1});  // the ranks table's ranks, all zero
    for (const auto& t : *totals) QCOMPARE(t.spans, std::int64_t{0});
  }
};

QTEST_GUILESS_MAIN(TestTimelineInspect)
#include "test_timeline_inspect.moc"
