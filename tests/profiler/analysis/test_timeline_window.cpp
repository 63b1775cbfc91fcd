// The timeline's window query (timeline_window.h): span classes for every
// kind the engine and the importers write, and windows of generated runs
// compared item by item and block by block with a brute-force reference that
// filters every span of the run by overlap and merges sub-pixel spans by
// marking the pixel columns they occupy; windows read from span summaries
// compared with the same reference (same items, spans and busy time per row,
// block edges to a bucket); per-rank offsets of the aligned view.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/timeline_window.h"
#include "shardscope/profiler/trace/trace_recorder.h"

using namespace shardscope;
using profiler::SpanClass;
namespace st = core::store;
namespace sk = profiler::span_kind;

namespace {

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kMs = 1'000'000;

// A run as generated: the spans written and the text of every interned id.
struct GeneratedRun {
  std::filesystem::path path;
  st::RunId run{};
  std::vector<st::Span> spans;
  std::map<std::int64_t, std::string> text;
};

// Writes `spans` (ids from `names`, in that order) as one run.
GeneratedRun writeRun(const std::filesystem::path& path, const std::vector<std::string>& names,
                      std::vector<st::Span> spans, std::size_t rowsPerCommit = 64 * 1024) {
  st::RunHeader h;
  h.kind = st::RunKind::Emulate;
  h.label = "timeline";
  st::WriterOptions options;
  options.rows_per_commit = rowsPerCommit;
  auto w = st::RunWriter::begin(path, h, options);
  if (!w) qFatal("%s", w.error().message.c_str());
  GeneratedRun g{path, w->run(), {}, {}};
  std::vector<st::StringId> ids;
  for (const auto& n : names) {
    ids.push_back(w->intern(n).value());
    g.text[static_cast<std::int64_t>(ids.back())] = n;
  }
  // Spans name strings by their index in `names`, shifted by one (0 stays "none").
  for (st::Span& s : spans) {
    s.kind = ids.at(static_cast<std::size_t>(s.kind) - 1);
    s.name = ids.at(static_cast<std::size_t>(s.name) - 1);
  }
  if (auto s = w->addSpans(spans); !s) qFatal("%s", s.error().message.c_str());
  if (auto s = w->finish(); !s) qFatal("%s", s.error().message.c_str());
  g.spans = std::move(spans);
  return g;
}

// A span naming strings by (index in the names list + 1), as writeRun expects.
st::Span span(int rank, int stream, std::size_t kind, std::size_t name, std::int64_t start, std::int64_t end,
              std::int64_t step = -1) {
  st::Span s;
  s.rank = rank;
  s.stream = stream;
  s.kind = st::StringId{static_cast<std::int64_t>(kind + 1)};
  s.name = st::StringId{static_cast<std::int64_t>(name + 1)};
  s.start_ns = start;
  s.end_ns = end;
  s.step = step;
  s.correlation = start % 997;
  s.bytes = end - start;
  return s;
}

// Classes compared by name: QCOMPARE on the enum would find
// profiler::toString by ADL, which returns a string_view, not Qt's char*.
QString name(SpanClass c) { return QString::fromUtf8(profiler::toString(c)); }

// --- the brute-force reference -------------------------------------------

int refColumn(std::int64_t t, const profiler::TimelineRequest& r) {
  const std::int64_t c = (std::clamp(t, r.t0_ns, r.t1_ns - 1) - r.t0_ns) * r.pixels / (r.t1_ns - r.t0_ns);
  return static_cast<int>(c);
}

auto itemOrder(const profiler::TimelineItem& i) {
  return std::tuple{
      i.start_ns, i.end_ns,     static_cast<std::int64_t>(i.kind), static_cast<std::int64_t>(i.name), i.step,
      i.bytes,    i.correlation};
}

std::vector<profiler::TimelineRow> reference(const GeneratedRun& g, const profiler::TimelineRequest& r) {
  struct Pending {
    std::vector<profiler::TimelineItem> items;
    std::vector<std::pair<const st::Span*, SpanClass>> narrow;
  };
  std::map<std::tuple<int, int, int>, Pending> rows;  // (rank, 0 = steps / 1 = streams, stream)
  for (const st::Span& s : g.spans) {
    if (!r.ranks.empty() && std::find(r.ranks.begin(), r.ranks.end(), s.rank) == r.ranks.end()) continue;
    if (!(s.start_ns < r.t1_ns && (s.end_ns > r.t0_ns || s.start_ns >= r.t0_ns))) continue;
    const SpanClass cls = profiler::spanClassOf(g.text.at(static_cast<std::int64_t>(s.kind)),
                                                g.text.at(static_cast<std::int64_t>(s.name)));
    const bool step = cls == SpanClass::Step;
    Pending& p = rows[{s.rank, step ? 0 : 1, step ? profiler::kStepRowStream : s.stream}];
    if ((s.end_ns - s.start_ns) * r.pixels >= r.t1_ns - r.t0_ns) {
      p.items.push_back({s.start_ns, s.end_ns, cls, s.kind, s.name, s.step, s.bytes, s.correlation});
    } else {
      p.narrow.emplace_back(&s, cls);
    }
  }
  std::vector<profiler::TimelineRow> out;
  for (auto& [key, p] : rows) {
    profiler::TimelineRow row{std::get<0>(key), std::get<2>(key), std::move(p.items), {}};
    std::sort(row.items.begin(), row.items.end(),
              [](const auto& a, const auto& b) { return itemOrder(a) < itemOrder(b); });
    // Mark occupied columns; each maximal run of marked columns is a block.
    std::vector<int> runOf(static_cast<std::size_t>(r.pixels), -1);
    for (const auto& [s, cls] : p.narrow) {
      const int last = s->end_ns > s->start_ns ? refColumn(s->end_ns - 1, r) : refColumn(s->start_ns, r);
      for (int c = refColumn(s->start_ns, r); c <= last; ++c) runOf[static_cast<std::size_t>(c)] = 0;
    }
    // Per block and class: (busy ns, spans).
    std::vector<std::array<std::pair<std::int64_t, std::int64_t>, profiler::kSpanClassCount>> busy;
    for (int c = 0, n = -1; c < r.pixels; ++c) {
      if (runOf[static_cast<std::size_t>(c)] < 0) continue;
      if (c == 0 || runOf[static_cast<std::size_t>(c) - 1] < 0) {
        ++n;
        row.blocks.push_back({c, c, INT64_MAX, INT64_MIN, 0, 0, SpanClass::Other});
        busy.push_back({});
      }
      runOf[static_cast<std::size_t>(c)] = n;
      row.blocks.back().last_pixel = c;
    }
    for (const auto& [s, cls] : p.narrow) {
      const auto n = static_cast<std::size_t>(runOf[static_cast<std::size_t>(refColumn(s->start_ns, r))]);
      auto& b = row.blocks[n];
      b.start_ns = std::min(b.start_ns, s->start_ns);
      b.end_ns = std::max(b.end_ns, s->end_ns);
      b.count += 1;
      b.busy_ns += s->end_ns - s->start_ns;
      busy[n][static_cast<std::size_t>(cls)].first += s->end_ns - s->start_ns;
      busy[n][static_cast<std::size_t>(cls)].second += 1;
    }
    for (std::size_t n = 0; n < busy.size(); ++n) {
      std::size_t top = 0;  // most busy, then most spans, then first listed
      for (std::size_t c = 1; c < busy[n].size(); ++c) top = busy[n][c] > busy[n][top] ? c : top;
      row.blocks[n].dominant = static_cast<SpanClass>(top);
    }
    out.push_back(std::move(row));
  }
  return out;
}

// Compares one window with the reference; returns "" or what differs first.
std::string compare(const GeneratedRun& g, const profiler::TimelineRequest& r) {
  auto store = st::openStore(g.path);
  if (!store) return store.error().message;
  auto got = profiler::timelineWindow(*store, r);
  if (!got) return got.error().message;
  const auto want = reference(g, r);
  const std::string where = "window [" + std::to_string(r.t0_ns) + ", " + std::to_string(r.t1_ns) + ") at " +
                            std::to_string(r.pixels) + " px: ";
  if (got->rows.size() != want.size()) {
    return where + std::to_string(got->rows.size()) + " rows, want " + std::to_string(want.size());
  }
  std::int64_t spans = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& a = got->rows[i];
    const auto& b = want[i];
    const std::string row = where + "row (" + std::to_string(b.rank) + ", " + std::to_string(b.stream) + "): ";
    if (a.rank != b.rank || a.stream != b.stream)
      return row + "got row (" + std::to_string(a.rank) + ", " + std::to_string(a.stream) + ")";
    if (a.items != b.items)
      return row + std::to_string(a.items.size()) + " items, want " + std::to_string(b.items.size()) +
             " (or they differ)";
    if (a.blocks != b.blocks)
      return row + std::to_string(a.blocks.size()) + " blocks, want " + std::to_string(b.blocks.size()) +
             " (or they differ)";
    spans += static_cast<std::int64_t>(b.items.size());
    for (const auto& bl : b.blocks) spans += bl.count;
  }
  if (got->span_count != spans)
    return where + "span_count " + std::to_string(got->span_count) + ", want " + std::to_string(spans);
  return {};
}

// Kinds and names the generator draws from; "step" is index 0.
const std::vector<std::string> kGenNames = {
    "step",
    "emb_fwd",
    "emb_bwd",
    "a2a_ids",
    "a2a_pooled",
    "dense",
    "dense_allreduce",
    "replica_sync",
    "input",
    "kernel",
    "memcpy",
    "table_a",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    "gemm_128x64",
};

// Seeded random spans on 4 ranks and 3 streams over [0, 100 ms): steps of
// 10 ms, long spans crossing many windows, instants, and many short ones
// (some of exactly 1 us, one pixel at 100 px per 100 us).
std::vector<st::Span> generate(std::uint64_t seed, int perRank) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::vector<st::Span> out;
  for (int rank = 0; rank < 4; ++rank) {
    for (std::int64_t step = 0; step < 10; ++step) {
      out.push_back(span(rank, 0, 0, 0, step * 10 * kMs, (step + 1) * 10 * kMs - uniform(0, kMs), step));
    }
    for (int i = 0; i < perRank; ++i) {
      const std::int64_t start = uniform(0, 100 * kMs);
      const auto pick = uniform(0, 9);
      const std::int64_t dur = pick == 0   ? 0
                               : pick == 1 ? uniform(kMs, 60 * kMs)
                               : pick == 2 ? kUs
                               : pick == 3 ? uniform(kUs, 100 * kUs)
                                           : uniform(1, 2 * kUs);
      const int stream = std::array{0, 1, 100000}[static_cast<std::size_t>(uniform(0, 2))];
      const auto kind = static_cast<std::size_t>(uniform(1, 10));
      const std::size_t name = kind == 9 ? static_cast<std::size_t>(uniform(12, 13)) : 11;
      out.push_back(span(rank, stream, kind, name, start, start + dur, start / (10 * kMs)));
    }
  }
  return out;
}

// The reference of a request with per-rank offsets: each rank alone in its
// shifted window, rows in rank order.
std::vector<profiler::TimelineRow> shiftedReference(const GeneratedRun& g, const profiler::TimelineRequest& r) {
  std::vector<std::pair<int, std::int64_t>> ranks;
  for (std::size_t i = 0; i < r.ranks.size(); ++i)
    ranks.emplace_back(r.ranks[i], r.offsets_ns.empty() ? 0 : r.offsets_ns[i]);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<profiler::TimelineRow> out;
  for (const auto& [rank, off] : ranks) {
    for (auto& row : reference(g, {r.run, {rank}, r.t0_ns + off, r.t1_ns + off, r.pixels}))
      out.push_back(std::move(row));
  }
  return out;
}

// The columns a row's blocks cover.
std::vector<bool> covered(const profiler::TimelineRow& row, int pixels) {
  std::vector<bool> out(static_cast<std::size_t>(pixels), false);
  for (const auto& b : row.blocks) {
    for (int c = b.first_pixel; c <= b.last_pixel; ++c) out[static_cast<std::size_t>(c)] = true;
  }
  return out;
}

// Compares a window read from summaries with the exact reference: the same
// rows, items and span count; per row the same spans merged (count, busy,
// earliest start, latest end); blocks cover every column the exact blocks
// cover and others only next to one (a bucket's spans are merged over the
// columns between them, at most a bucket and a half, 3 columns); a block
// over the same columns as an exact one is that block. "" or what differs.
std::string compareApprox(const profiler::TimelineWindow& got, const std::vector<profiler::TimelineRow>& want,
                          int pixels) {
  if (got.rows.size() != want.size()) {
    return std::to_string(got.rows.size()) + " rows, want " + std::to_string(want.size());
  }
  std::int64_t spans = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& a = got.rows[i];
    const auto& b = want[i];
    const std::string row = "row (" + std::to_string(b.rank) + ", " + std::to_string(b.stream) + "): ";
    if (a.rank != b.rank || a.stream != b.stream) return row + "got another row";
    if (a.items != b.items)
      return row + std::to_string(a.items.size()) + " items, want " + std::to_string(b.items.size());
    std::int64_t ca = 0, cb = 0, ba = 0, bb = 0, sa = INT64_MAX, sb = INT64_MAX, ea = INT64_MIN, eb = INT64_MIN;
    for (const auto& x : a.blocks)
      ca += x.count, ba += x.busy_ns, sa = std::min(sa, x.start_ns), ea = std::max(ea, x.end_ns);
    for (const auto& x : b.blocks)
      cb += x.count, bb += x.busy_ns, sb = std::min(sb, x.start_ns), eb = std::max(eb, x.end_ns);
    if (ca != cb || ba != bb || sa != sb || ea != eb) {
      return row + "blocks merge " + std::to_string(ca) + " spans, " + std::to_string(ba) + " ns; want " +
             std::to_string(cb) + ", " + std::to_string(bb);
    }
    const auto have = covered(a, pixels);
    const auto exact = covered(b, pixels);
    for (int c = 0; c < pixels; ++c) {
      const auto at = [](const std::vector<bool>& v, int k) {
        return k >= 0 && k < static_cast<int>(v.size()) && v[static_cast<std::size_t>(k)];
      };
      if (exact[static_cast<std::size_t>(c)] && !have[static_cast<std::size_t>(c)])
        return row + "column " + std::to_string(c) + " not covered";
      if (have[static_cast<std::size_t>(c)] && !at(exact, c) && !at(exact, c - 1) && !at(exact, c + 1))
        return row + "column " + std::to_string(c) + " covered far from any span";
    }
    for (const auto& x : a.blocks) {
      for (const auto& y : b.blocks) {
        if (x.first_pixel == y.first_pixel && x.last_pixel == y.last_pixel && !(x == y))
          return row + "block at columns " + std::to_string(x.first_pixel) + ".." + std::to_string(x.last_pixel) +
                 " differs";
      }
    }
    spans += static_cast<std::int64_t>(b.items.size()) + cb;
  }
  if (got.span_count != spans)
    return "span_count " + std::to_string(got.span_count) + ", want " + std::to_string(spans);
  return {};
}

// A run large enough for summaries (about 80k spans on 4 ranks), with them built.
GeneratedRun summarisedRun(const std::filesystem::path& path, std::uint64_t seed) {
  GeneratedRun g = writeRun(path, kGenNames, generate(seed, 20000), 5000);
  auto store = st::openStore(path, st::OpenMode::ReadWrite);
  if (!store) qFatal("%s", store.error().message.c_str());
  if (auto s = profiler::buildTimelineSummaries(*store, g.run); !s) qFatal("%s", s.error().message.c_str());
  return g;
}
}  // namespace

class TestTimelineWindow : public QObject {
  Q_OBJECT

 private slots:
  void everyEngineKindHasItsClass() {
    const std::vector<std::pair<std::string_view, SpanClass>> expected = {
        {sk::kStep, SpanClass::Step},
        {sk::kInput, SpanClass::Input},
        {sk::kEmbFwd, SpanClass::EmbeddingForward},
        {sk::kEmbBwd, SpanClass::EmbeddingBackward},
        {sk::kA2aIds, SpanClass::AllToAll},
        {sk::kA2aPooled, SpanClass::AllToAll},
        {sk::kA2aGrads, SpanClass::AllToAll},
        {sk::kDense, SpanClass::Dense},
        {sk::kReplicaSync, SpanClass::ReplicaSync},
        {sk::kDenseAllreduce, SpanClass::AllReduce},
        {sk::kDpAllreduce, SpanClass::AllReduce},
        {sk::kReduceScatter, SpanClass::AllReduce},
        {sk::kAllGather, SpanClass::AllReduce},
        {sk::kSendRecv, SpanClass::AllToAll},
        {sk::kBroadcast, SpanClass::AllReduce},
        {sk::kReduce, SpanClass::AllReduce},
        {"all_to_all", SpanClass::AllToAll},
        {"all_reduce", SpanClass::AllReduce},
        {"memcpy", SpanClass::Memcpy},
        {"memset", SpanClass::Memcpy},
        {"memory", SpanClass::Memcpy},
        {"cpu_op", SpanClass::Other},
        {"a kind from a newer build", SpanClass::Other},
    };
    for (const auto& [kind, cls] : expected) {
      QCOMPARE(profiler::toString(profiler::spanClassOf(kind, "ncclDevKernel_AllReduce")), profiler::toString(cls));
    }
  }

  void importedKernelsAreClassedByName() {
    QCOMPARE(name(profiler::spanClassOf("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
             name(SpanClass::AllReduce));
    QCOMPARE(name(profiler::spanClassOf("kernel", "ncclDevKernel_ReduceScatter_Sum_bf16")), name(SpanClass::AllReduce));
    QCOMPARE(name(profiler::spanClassOf("kernel", "ncclKernel_AllGather_RING_LL_Sum_int8_t")),
             name(SpanClass::AllReduce));
    QCOMPARE(name(profiler::spanClassOf("kernel", "ncclDevKernel_SendRecv")), name(SpanClass::AllToAll));
    QCOMPARE(name(profiler::spanClassOf("kernel", "Memcpy DtoH (Device -> Pinned)")), name(SpanClass::Memcpy));
    QCOMPARE(name(profiler::spanClassOf("kernel", "void at::native::vectorized_elementwise_kernel")),
             name(SpanClass::Other));
    // Only kernels: a CPU-side runtime call is not a copy on the device.
    QCOMPARE(name(profiler::spanClassOf("cuda_runtime", "cudaMemcpyAsync")), name(SpanClass::Other));
  }

  void classNamesAreDistinct() {
    std::vector<std::string_view> names;
    for (std::size_t c = 0; c < profiler::kSpanClassCount; ++c)
      names.push_back(profiler::toString(static_cast<SpanClass>(c)));
    std::sort(names.begin(), names.end());
    QVERIFY(std::adjacent_find(names.begin(), names.end()) == names.end());
    QCOMPARE(profiler::toString(SpanClass::Other), std::string_view("other"));
  }

  void windowsOfGeneratedRunsMatchBruteForce() {
    QTemporaryDir dir;
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      // Small commits: blocks of several batches overlap in time.
      const auto g = writeRun(std::filesystem::path(dir.path().toStdString()) / ("gen" + std::to_string(seed) + ".db"),
                              kGenNames, generate(seed, 3000), seed == 2 ? 700 : 64 * 1024);
      std::mt19937_64 rng(seed * 77);
      auto uniform = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
      };
      std::vector<profiler::TimelineRequest> windows = {
          {g.run, {}, 0, 100 * kMs, 1000},                   // the whole run
          {g.run, {}, -5 * kMs, 200 * kMs, 1},               // one pixel, past both ends
          {g.run, {}, 50 * kMs, 50 * kMs + 100 * kUs, 100},  // 1 us per pixel: 1 us spans are items
          {g.run, {3, 1, 1}, 20 * kMs, 30 * kMs, 800},       // two ranks, one asked twice
      };
      for (int i = 0; i < 40; ++i) {
        const std::int64_t t0 = uniform(-kMs, 100 * kMs);
        windows.push_back({g.run, {}, t0, t0 + uniform(1, 20 * kMs), static_cast<int>(uniform(1, 3000))});
      }
      for (auto& w : windows) {
        std::sort(w.ranks.begin(), w.ranks.end());
        const std::string diff = compare(g, w);
        QVERIFY2(diff.empty(), ("seed " + std::to_string(seed) + ": " + diff).c_str());
      }
    }
  }

  void spansStartingLongBeforeTheWindowAreFound() {
    QTemporaryDir dir;
    std::vector<st::Span> spans = {span(0, 0, 1, 2, 0, 10'000 * kMs)};  // 10 s, one span
    // Thousands of later spans: the long one sits in an earlier block than the window's.
    for (int i = 0; i < 5000; ++i) spans.push_back(span(0, 0, 3, 2, 20 * kMs + i * kUs, 20 * kMs + i * kUs + 10));
    const auto g = writeRun(std::filesystem::path(dir.path().toStdString()) / "long.db", kGenNames, spans);
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    auto w = profiler::timelineWindow(*store, {g.run, {}, 5000 * kMs, 5000 * kMs + kMs, 500});
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().message.c_str());
    QCOMPARE(w->rows.size(), std::size_t{1});
    QCOMPARE(w->rows[0].items.size(), std::size_t{1});
    // Values are the span's, not clipped to the window.
    QCOMPARE(w->rows[0].items[0].start_ns, std::int64_t{0});
    QCOMPARE(w->rows[0].items[0].end_ns, 10'000 * kMs);
    QCOMPARE(name(w->rows[0].items[0].cls), name(SpanClass::EmbeddingForward));
    QVERIFY(compare(g, {g.run, {}, 20 * kMs + 2500 * kUs, 20 * kMs + 2600 * kUs, 50}).empty());
  }

  void aSpanOnePixelWideIsAnItemAndNarrowerOnesAreBlocks() {
    QTemporaryDir dir;
    // 1000 ns per pixel over [0, 1 ms).
    const auto g = writeRun(std::filesystem::path(dir.path().toStdString()) / "px.db", kGenNames,
                            {span(0, 0, 1, 11, 100'000, 101'000), span(0, 0, 1, 11, 200'000, 200'999),
                             span(0, 0, 5, 11, 300'500, 300'500)});
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    auto w = profiler::timelineWindow(*store, {g.run, {}, 0, kMs, 1000});
    QVERIFY(w.ok());
    QCOMPARE(w->rows.size(), std::size_t{1});
    const auto& row = w->rows[0];
    QCOMPARE(row.items.size(), std::size_t{1});
    QCOMPARE(row.items[0].start_ns, std::int64_t{100'000});
    QCOMPARE(row.blocks.size(), std::size_t{2});
    // 200 000 .. 200 999 is column 200 exactly; the instant (dense) is column 300 with no busy time.
    QCOMPARE(row.blocks[0], (profiler::DensityBlock{200, 200, 200'000, 200'999, 1, 999, SpanClass::EmbeddingForward}));
    QCOMPARE(row.blocks[1], (profiler::DensityBlock{300, 300, 300'500, 300'500, 1, 0, SpanClass::Dense}));
  }

  void aZoomedOutWindowIsFewItemsAndBlocksThatCountEverySpan() {
    QTemporaryDir dir;
    std::vector<st::Span> spans;
    for (int i = 0; i < 20000; ++i) spans.push_back(span(i % 2, 0, i % 3 == 0 ? 2 : 3, 11, i * kUs, i * kUs + 300));
    spans.push_back(span(0, 0, 5, 11, 0, 20 * kMs));  // one dense span as wide as the run
    const auto g = writeRun(std::filesystem::path(dir.path().toStdString()) / "far.db", kGenNames, spans);
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    auto w = profiler::timelineWindow(*store, {g.run, {}, 0, 20 * kMs, 200});
    QVERIFY(w.ok());
    QCOMPARE(w->span_count, std::int64_t{20001});
    std::int64_t items = 0, merged = 0;
    for (const auto& row : w->rows) {
      items += static_cast<std::int64_t>(row.items.size());
      QVERIFY(row.blocks.size() <= 200);
      for (const auto& b : row.blocks) merged += b.count;
    }
    QCOMPARE(items, std::int64_t{1});
    QCOMPARE(merged, std::int64_t{20000});
    // Every column of both rows is occupied: one block per row; a2a_ids (2 of 3 spans) dominates.
    QCOMPARE(w->rows.size(), std::size_t{2});
    QCOMPARE(w->rows[1].blocks.size(), std::size_t{1});
    QCOMPARE(name(w->rows[1].blocks[0].dominant), name(SpanClass::AllToAll));
    QVERIFY(compare(g, {g.run, {}, 0, 20 * kMs, 200}).empty());
  }

  void aBlockIsTheClassWithMostBusyTimeThenMostSpans() {
    QTemporaryDir dir;
    // 1000 ns per pixel. Column 10: emb_bwd 300 ns against a2a_ids 2 x 200 ns.
    // Column 20: instants, two dense and one emb_fwd. Column 30: one ns each, a tie.
    const auto g = writeRun(
        std::filesystem::path(dir.path().toStdString()) / "dominant.db", kGenNames,
        {span(0, 0, 2, 11, 10'000, 10'300), span(0, 0, 3, 11, 10'400, 10'600), span(0, 0, 3, 11, 10'700, 10'900),
         span(0, 0, 5, 11, 20'100, 20'100), span(0, 0, 5, 11, 20'200, 20'200), span(0, 0, 1, 11, 20'300, 20'300),
         span(0, 0, 5, 11, 30'000, 30'001), span(0, 0, 3, 11, 30'002, 30'003)});
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    auto w = profiler::timelineWindow(*store, {g.run, {}, 0, kMs, 1000});
    QVERIFY(w.ok());
    QCOMPARE(w->rows.size(), std::size_t{1});
    const auto& blocks = w->rows[0].blocks;
    QCOMPARE(blocks.size(), std::size_t{3});
    QCOMPARE(name(blocks[0].dominant), name(SpanClass::AllToAll));
    QCOMPARE(blocks[0].busy_ns, std::int64_t{700});
    QCOMPARE(name(blocks[1].dominant), name(SpanClass::Dense));
    QCOMPARE(name(blocks[2].dominant), name(SpanClass::AllToAll));  // listed before dense
  }

  void stepSpansHaveTheirOwnRowPerRank() {
    QTemporaryDir dir;
    const auto g = writeRun(std::filesystem::path(dir.path().toStdString()) / "steps.db", kGenNames,
                            {span(1, 0, 0, 0, 0, kMs, 0), span(1, 0, 1, 11, 10 * kUs, 500 * kUs, 0),
                             span(0, 0, 5, 11, 10 * kUs, 500 * kUs, 0)});
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    auto w = profiler::timelineWindow(*store, {g.run, {}, 0, kMs, 100});
    QVERIFY(w.ok());
    QCOMPARE(w->rows.size(), std::size_t{3});
    QCOMPARE(std::pair(w->rows[0].rank, w->rows[0].stream), std::pair(0, 0));
    QCOMPARE(std::pair(w->rows[1].rank, w->rows[1].stream), std::pair(1, profiler::kStepRowStream));
    QCOMPARE(name(w->rows[1].items.at(0).cls), name(SpanClass::Step));
    QCOMPARE(std::pair(w->rows[2].rank, w->rows[2].stream), std::pair(1, 0));
    QCOMPARE(name(w->rows[2].items.at(0).cls), name(SpanClass::EmbeddingForward));
  }

  void malformedRequestsAreErrors() {
    QTemporaryDir dir;
    const auto g =
        writeRun(std::filesystem::path(dir.path().toStdString()) / "bad.db", kGenNames, {span(0, 0, 1, 11, 0, kUs)});
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    auto noPixels = profiler::timelineWindow(*store, {g.run, {}, 0, kMs, 0});
    QVERIFY(!noPixels.ok());
    QVERIFY(noPixels.error().kind == core::ErrorKind::Usage);
    auto backwards = profiler::timelineWindow(*store, {g.run, {}, kMs, kMs, 10});
    QVERIFY(!backwards.ok());
    QVERIFY(backwards.error().kind == core::ErrorKind::Usage);
    QVERIFY(!profiler::timelineWindow(*store, {st::RunId{9999}, {}, 0, kMs, 10}).ok());
  }

  void farWindowsReadFromSummariesMatchBruteForce() {
    QTemporaryDir dir;
    for (const std::uint64_t seed : {4u, 5u}) {
      const auto g =
          summarisedRun(std::filesystem::path(dir.path().toStdString()) / ("far" + std::to_string(seed) + ".db"), seed);
      auto store = st::openStore(g.path);
      QVERIFY(store.ok());
      QVERIFY(*profiler::hasTimelineSummaries(*store, g.run));
      std::mt19937_64 rng(seed);
      auto uniform = [&](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
      };
      std::vector<profiler::TimelineRequest> windows = {{g.run, {}, 0, 100 * kMs, 1280},
                                                        {g.run, {}, -kMs, 101 * kMs, 300}};
      for (int i = 0; i < 30; ++i) {
        const std::int64_t t0 = uniform(-5 * kMs, 60 * kMs);
        windows.push_back({g.run, {}, t0, t0 + uniform(40 * kMs, 100 * kMs), static_cast<int>(uniform(50, 2000))});
      }
      windows.push_back({g.run, {1, 3}, 3 * kMs, 97 * kMs, 700});
      int fromSummaries = 0;
      for (const auto& r : windows) {
        auto got = profiler::timelineWindow(*store, r);
        QVERIFY2(got.ok(), got.ok() ? "" : got.error().message.c_str());
        fromSummaries += got->summary_level >= 0 ? 1 : 0;
        QVERIFY(got->summary_level < 0 || got->summary_bucket_ns == st::summaryLevelWidth(got->summary_level));
        const std::string diff = compareApprox(*got, reference(g, r), r.pixels);
        QVERIFY2(diff.empty(), ("seed " + std::to_string(seed) + ", window [" + std::to_string(r.t0_ns) + ", " +
                                std::to_string(r.t1_ns) + ") at " + std::to_string(r.pixels) + " px, level " +
                                std::to_string(got->summary_level) + ": " + diff)
                                   .c_str());
      }
      QVERIFY2(fromSummaries >= 25, std::to_string(fromSummaries).c_str());
    }
  }

  void exactRequestsReadEverySpan() {
    QTemporaryDir dir;
    const auto g = summarisedRun(std::filesystem::path(dir.path().toStdString()) / "exact.db", 6);
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    profiler::TimelineRequest r{g.run, {}, 0, 100 * kMs, 1000};
    QVERIFY(profiler::timelineWindow(*store, r)->summary_level >= 0);
    r.exact = true;
    auto w = profiler::timelineWindow(*store, r);
    QVERIFY(w.ok());
    QCOMPARE(w->summary_level, -1);
    QVERIFY(compare(g, r).empty());
  }

  void aWindowWithFewSpansIsReadFromTheSpans() {
    QTemporaryDir dir;
    const auto g = summarisedRun(std::filesystem::path(dir.path().toStdString()) / "near.db", 7);
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    const profiler::TimelineRequest r{g.run, {}, 40 * kMs, 40 * kMs + 500 * kUs, 1000};
    QCOMPARE(profiler::timelineWindow(*store, r)->summary_level, -1);
    QVERIFY(compare(g, r).empty());
  }

  void summariesOfAnotherClassVersionAreNotUsed() {
    QTemporaryDir dir;
    const auto g = writeRun(std::filesystem::path(dir.path().toStdString()) / "old.db", kGenNames, generate(8, 20000));
    auto store = st::openStore(g.path, st::OpenMode::ReadWrite);
    QVERIFY(store.ok());
    QVERIFY(!*profiler::hasTimelineSummaries(*store, g.run));
    QVERIFY(!profiler::timelineStepSpans(*store, g.run).ok());
    st::SpanSummaryOptions o;
    o.classify = [](st::StringId, st::StringId) { return 0; };
    o.tag = "shardscope.span-class/0";
    QVERIFY(store->buildSpanSummaries(g.run, o).ok());
    QVERIFY(!*profiler::hasTimelineSummaries(*store, g.run));
    const profiler::TimelineRequest r{g.run, {}, 0, 100 * kMs, 800};
    QCOMPARE(profiler::timelineWindow(*store, r)->summary_level, -1);
    QVERIFY(compare(g, r).empty());
  }

  void stepSpansComeFromTheSummaries() {
    QTemporaryDir dir;
    const auto g = summarisedRun(std::filesystem::path(dir.path().toStdString()) / "steps.db", 9);
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    auto steps = profiler::timelineStepSpans(*store, g.run);
    QVERIFY2(steps.ok(), steps.ok() ? "" : steps.error().message.c_str());
    std::vector<st::Span> want;
    for (const st::Span& s : g.spans) {
      if (g.text.at(static_cast<std::int64_t>(s.kind)) == "step") want.push_back(s);
    }
    std::stable_sort(want.begin(), want.end(), [](const st::Span& a, const st::Span& b) {
      return std::pair{a.rank, a.start_ns} < std::pair{b.rank, b.start_ns};
    });
    QCOMPARE(steps->size(), std::size_t{40});
    QVERIFY(*steps == want);
  }

  void onlyLargeRunsGetSummariesAfterTheyFinish() {
    QTemporaryDir dir;
    const std::filesystem::path root(dir.path().toStdString());
    std::vector<st::Span> spans;
    for (int i = 0; i <= profiler::kTimelineSummaryMinSpans; ++i)
      spans.push_back(span(i % 4, 0, 1, 11, i * kUs, i * kUs + 500));
    const auto large = writeRun(root / "large.db", kGenNames, spans);
    spans.resize(1000);
    const auto small = writeRun(root / "small.db", kGenNames, spans);
    std::vector<std::pair<int, int>> progress;
    auto built = profiler::buildTimelineSummariesIfLarge(
        large.path, large.run, nullptr, [&](int done, int total) { progress.emplace_back(done, total); });
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().message.c_str());
    QVERIFY(*built);
    QCOMPARE(progress.back(), (std::pair{4, 4}));
    QVERIFY(!*profiler::buildTimelineSummariesIfLarge(small.path, small.run));
    QVERIFY(*profiler::hasTimelineSummaries(*st::openStore(large.path), large.run));
    QVERIFY(!*profiler::hasTimelineSummaries(*st::openStore(small.path), small.run));
    QVERIFY(!profiler::buildTimelineSummariesIfLarge(root / "missing.db", large.run).ok());
  }

  void offsetsShiftEachRanksWindow() {
    QTemporaryDir dir;
    const std::filesystem::path root(dir.path().toStdString());
    const auto small = writeRun(root / "aligned.db", kGenNames, generate(10, 2000));
    const auto large = summarisedRun(root / "aligned-far.db", 11);
    for (const auto* g : {&small, &large}) {
      auto store = st::openStore(g->path);
      QVERIFY(store.ok());
      const std::vector<profiler::TimelineRequest> requests = {
          {g->run, {0, 1, 2, 3}, 10 * kMs, 20 * kMs, 500, {0, 3 * kMs, -2 * kMs, 55 * kMs}},
          {g->run, {3, 1}, 0, 60 * kMs, 1280, {-20 * kMs, 30 * kMs}},
          {g->run, {0, 2, 2}, 5 * kMs, 95 * kMs, 900, {kMs, 7 * kMs, 7 * kMs}},  // a rank twice, same offset
      };
      for (const auto& r : requests) {
        auto got = profiler::timelineWindow(*store, r);
        QVERIFY2(got.ok(), got.ok() ? "" : got.error().message.c_str());
        const auto want = shiftedReference(*g, r);
        const std::string diff = compareApprox(*got, want, r.pixels);
        QVERIFY2(diff.empty(), diff.c_str());
        if (got->summary_level < 0) {  // read from the spans: exactly the reference
          QCOMPARE(got->rows.size(), want.size());
          for (std::size_t i = 0; i < want.size(); ++i) QVERIFY(got->rows[i].blocks == want[i].blocks);
        }
      }
    }
  }

  void offsetsMustBeParallelToRanks() {
    QTemporaryDir dir;
    const auto g = writeRun(std::filesystem::path(dir.path().toStdString()) / "offsets.db", kGenNames,
                            {span(0, 0, 1, 11, 0, kUs)});
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    for (const profiler::TimelineRequest& r : std::vector<profiler::TimelineRequest>{
             {g.run, {}, 0, kMs, 10, {5}},                // offsets without ranks
             {g.run, {0, 1}, 0, kMs, 10, {5}},            // fewer offsets than ranks
             {g.run, {0, 0}, 0, kMs, 10, {5, 6}},         // one rank, two offsets
             {g.run, {0}, 0, kMs, 10, {INT64_MAX - 10}},  // past the end of time
         }) {
      auto w = profiler::timelineWindow(*store, r);
      QVERIFY(!w.ok());
      QVERIFY(w.error().kind == core::ErrorKind::Usage);
    }
  }

  void pixelColumnsAreExactAtEpochScale() {
    // Epoch-scale times over a day at 4000 px: products overflow 64 bits.
    const std::int64_t t0 = 1'700'000'000'000'000'000;
    const std::int64_t day = 86'400'000'000'000;
    QCOMPARE(profiler::pixelColumn(t0, t0, t0 + day, 4000), 0);
    QCOMPARE(profiler::pixelColumn(t0 + day / 4000 - 1, t0, t0 + day, 4000), 0);
    QCOMPARE(profiler::pixelColumn(t0 + day / 4000, t0, t0 + day, 4000), 1);
    QCOMPARE(profiler::pixelColumn(t0 + day - 1, t0, t0 + day, 4000), 3999);
    QCOMPARE(profiler::pixelColumn(t0 + 2 * day, t0, t0 + day, 4000), 3999);
    QCOMPARE(profiler::pixelColumn(t0 - day, t0, t0 + day, 4000), 0);
  }
};

QTEST_GUILESS_MAIN(TestTimelineWindow)
#include "test_timeline_window.moc"
