// The engine's tracer: strings interned once, the byte form round-trips and
// refuses truncated or garbage input, merge re-indexes strings, shift moves
// every timestamp, and flush writes every row kind into a run.
#include <QtTest>

#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/trace/trace_recorder.h"

using namespace shardscope;
using profiler::TraceRecorder;
namespace store = core::store;

namespace {

// Two ranks, two steps: spans of several kinds, a collective, step
// summaries, table totals and rank infos.
TraceRecorder sampleRecorder(int first_rank = 0, std::int64_t t0 = 1'000'000) {
  TraceRecorder rec;
  const std::uint32_t step = rec.name(profiler::span_kind::kStep), fwd = rec.name(profiler::span_kind::kEmbFwd),
                      a2a = rec.name(profiler::span_kind::kA2aPooled), all_to_all = rec.name("all_to_all");
  const std::uint32_t cat0 = rec.name("cat_0"), cat1 = rec.name("cat_1");
  for (int r = first_rank; r < first_rank + 2; ++r) {
    rec.rankInfo({r, "host-" + std::to_string(r), -1, 0, r});
    const std::uint32_t group = rec.name("0,1");
    for (std::int64_t s = 0; s < 2; ++s) {
      const std::int64_t base = t0 + s * 1000 + r * 10;
      rec.span({r, profiler::kComputeStream, step, step, 0, base, base + 900, s, 0});
      rec.span({r, profiler::kComputeStream, fwd, cat0, cat0, base + 10, base + 100, s, 64});
      rec.span({r, profiler::kComputeStream, fwd, cat1, cat1, base + 100, base + 150, s, 32});
      TraceRecorder::SpanRec kernel{
          r, 2, rec.name("send_recv"), rec.name("ncclDevKernel_SendRecv"), 0, base + 160, base + 390, s, 0};
      kernel.correlation = 1000 + s;  // a GPU record's CUPTI correlation id
      rec.span(kernel);
      rec.span({r, profiler::kCommStream, a2a, all_to_all, 0, base + 150, base + 400, s, 4096});
      TraceRecorder::CollectiveRec call{r, s, all_to_all, group, 4096, 2, base + 150, base + 400};
      call.process_group = rec.name("sharding");
      call.algorithm = rec.name("RING/LL");
      call.seq = s;
      rec.collective(call);
      core::store::StepSummary sum;
      sum.step = s;
      sum.rank = r;
      sum.emb_fwd_ns = 140;
      sum.comm_ns = 250;
      sum.total_ns = 900;
      rec.stepSummary(sum);
      rec.tableStat(r, cat0, 64, 60, 90);
      rec.tableStat(r, cat1, 32, 30, 50);
    }
  }
  return rec;
}

std::vector<std::byte> bytesOf(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

struct Flushed {
  std::vector<store::Span> spans;
  std::vector<store::Collective> collectives;
  std::vector<store::StepSummary> steps;
  std::vector<store::TableStat> tables;
  std::vector<store::RankInfo> ranks;
  std::map<std::int64_t, std::string> names;  // every string id the rows use
  [[nodiscard]] std::string_view str(store::StringId id) const {
    const auto it = names.find(static_cast<std::int64_t>(id));
    return it == names.end() ? std::string_view() : std::string_view(it->second);
  }
};

// Flushes `rec` into a fresh store and reads every row back.
Flushed flushAndRead(const TraceRecorder& rec, const QString& dir) {
  const std::filesystem::path path = (dir + "/trace.sqlite").toStdString();
  auto writer = store::RunWriter::begin(path, store::RunHeader{});
  if (!writer) qFatal("begin: %s", writer.error().message.c_str());
  auto st = rec.flush(*writer);
  if (!st) qFatal("flush: %s", st.error().message.c_str());
  if (auto f = writer->finish(); !f) qFatal("finish: %s", f.error().message.c_str());
  auto db = store::openStore(path);
  if (!db) qFatal("open: %s", db.error().message.c_str());
  const store::RunId run = writer->run();
  Flushed out;
  out.spans = db->spansInWindow(run, {}, std::numeric_limits<std::int64_t>::min() / 2,
                                std::numeric_limits<std::int64_t>::max() / 2)
                  .value();
  out.collectives = db->collectives(run).value();
  out.steps = db->stepSummaries(run).value();
  out.tables = db->tableStats(run).value();
  out.ranks = db->ranks(run).value();
  const auto strings = db->strings();
  const auto keep = [&](store::StringId id) {
    out.names[static_cast<std::int64_t>(id)] = std::string(strings->at(id));
  };
  for (const auto& sp : out.spans) keep(sp.kind), keep(sp.name), keep(sp.table);
  for (const auto& c : out.collectives) keep(c.op), keep(c.group), keep(c.process_group), keep(c.algorithm);
  for (const auto& t : out.tables) keep(t.table);
  return out;
}

}  // namespace

class TestEngineTrace : public QObject {
  Q_OBJECT
 private slots:
  void namesAreInternedOnceAndEmptyIsZero() {
    TraceRecorder rec;
    QCOMPARE(rec.name(""), 0u);
    const std::uint32_t a = rec.name("cat_0");
    QVERIFY(a != 0u);
    QCOMPARE(rec.name("cat_0"), a);
    QVERIFY(rec.name("cat_1") != a);
  }

  void disabledRecorderKeepsOnlySummariesAndTableStats() {
    TraceRecorder rec(false);
    const std::uint32_t k = rec.name("step");
    rec.span({0, 0, k, k, 0, 1, 2, 0, 0});
    rec.collective({0, 0, k, k, 8, 1, 1, 2});
    core::store::StepSummary s;
    s.total_ns = 5;
    rec.stepSummary(s);
    rec.tableStat(0, k, 1, 1, 1);
    QCOMPARE(rec.spanCount(), std::size_t{0});
    QCOMPARE(rec.stepSummaries().size(), std::size_t{1});
    QTemporaryDir dir;
    const Flushed f = flushAndRead(rec, dir.path());
    QVERIFY(f.spans.empty());
    QVERIFY(f.collectives.empty());
    QCOMPARE(f.steps.size(), std::size_t{1});
    QCOMPARE(f.tables.size(), std::size_t{1});
  }

  void tableStatAddsUpPerRankAndTable() {
    TraceRecorder rec;
    const std::uint32_t t = rec.name("cat_0");
    rec.tableStat(3, t, 10, 4, 100);
    rec.tableStat(2, t, 1, 1, 1);
    rec.tableStat(3, t, 5, 2, 50);
    QTemporaryDir dir;
    const Flushed f = flushAndRead(rec, dir.path());
    QCOMPARE(f.tables.size(), std::size_t{2});
    for (const auto& row : f.tables) {
      QCOMPARE(std::string(f.str(row.table)), std::string("cat_0"));
      if (row.rank == 3) {
        QCOMPARE(row.lookups, std::int64_t{15});
        QCOMPARE(row.unique_rows, std::int64_t{6});
        QCOMPARE(row.time_ns, std::int64_t{150});
      }
    }
  }

  void flushWritesEveryRowKindWithItsStrings() {
    const TraceRecorder rec = sampleRecorder();
    QTemporaryDir dir;
    const Flushed f = flushAndRead(rec, dir.path());
    QCOMPARE(f.spans.size(), std::size_t{20});
    QCOMPARE(f.collectives.size(), std::size_t{4});
    QCOMPARE(f.steps.size(), std::size_t{4});
    QCOMPARE(f.tables.size(), std::size_t{4});
    QCOMPARE(f.ranks.size(), std::size_t{2});
    QCOMPARE(f.ranks[1].host, std::string("host-1"));
    int fwd = 0;
    for (const auto& s : f.spans) {
      if (f.str(s.kind) != "emb_fwd") continue;
      ++fwd;
      QCOMPARE(f.str(s.name), f.str(s.table));
      QVERIFY(f.str(s.table) == "cat_0" || f.str(s.table) == "cat_1");
      QCOMPARE(s.bytes, f.str(s.table) == "cat_0" ? std::int64_t{64} : std::int64_t{32});
    }
    QCOMPARE(fwd, 8);
    for (const auto& s : f.spans)
      if (f.str(s.kind) == "step") QVERIFY(s.table == store::kNoString);
    for (const auto& c : f.collectives) {
      QCOMPARE(f.str(c.op), std::string_view("all_to_all"));
      QCOMPARE(f.str(c.group), std::string_view("0,1"));
      QCOMPARE(c.end_ns - c.start_ns, std::int64_t{250});
      QCOMPARE(f.str(c.process_group), std::string_view("sharding"));
      QCOMPARE(f.str(c.algorithm), std::string_view("RING/LL"));
      QVERIFY(c.seq == 0 || c.seq == 1);
    }
    int correlated = 0;
    for (const auto& s : f.spans) correlated += s.correlation != 0 ? 1 : 0;
    QCOMPARE(correlated, 4);
    for (const auto& t : f.tables) QCOMPARE(t.lookups, std::int64_t{f.str(t.table) == "cat_0" ? 128 : 64});
  }

  void byteFormRoundTripsExactly() {
    const TraceRecorder rec = sampleRecorder();
    const std::vector<std::byte> bytes = rec.serialize();
    auto back = TraceRecorder::deserialize(bytes);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QCOMPARE(back->spanCount(), rec.spanCount());
    QVERIFY(back->stepSummaries() == rec.stepSummaries());
    QVERIFY(back->serialize() == bytes);
    // And the store sees the same rows from either.
    QTemporaryDir d1, d2;
    const Flushed a = flushAndRead(rec, d1.path()), b = flushAndRead(*back, d2.path());
    QCOMPARE(a.spans.size(), b.spans.size());
    for (std::size_t i = 0; i < a.spans.size(); ++i) {
      QCOMPARE(a.spans[i].start_ns, b.spans[i].start_ns);
      QCOMPARE(a.spans[i].correlation, b.spans[i].correlation);
      QCOMPARE(a.str(a.spans[i].name), b.str(b.spans[i].name));
    }
    QCOMPARE(a.collectives.size(), b.collectives.size());
    for (std::size_t i = 0; i < a.collectives.size(); ++i) {
      QCOMPARE(a.str(a.collectives[i].process_group), b.str(b.collectives[i].process_group));
      QCOMPARE(a.str(a.collectives[i].algorithm), b.str(b.collectives[i].algorithm));
      QCOMPARE(a.collectives[i].seq, b.collectives[i].seq);
    }
    QVERIFY(a.steps == b.steps);
    QVERIFY(a.ranks == b.ranks);
  }

  void emptyRecorderRoundTrips() {
    const TraceRecorder rec(false);
    auto back = TraceRecorder::deserialize(rec.serialize());
    QVERIFY(back.ok());
    QVERIFY(!back->spansEnabled());
    QCOMPARE(back->spanCount(), std::size_t{0});
  }

  void everyTruncationIsRefusedWithItsOffset() {
    const std::vector<std::byte> bytes = sampleRecorder().serialize();
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      auto r = TraceRecorder::deserialize(std::span<const std::byte>(bytes.data(), n));
      QVERIFY2(!r.ok(), qPrintable(QString("prefix of %1 bytes accepted").arg(n)));
      QVERIFY2(QString::fromStdString(r.error().message).startsWith("engine trace bytes: offset "),
               r.error().message.c_str());
    }
  }

  void trailingBytesAreRefused() {
    std::vector<std::byte> bytes = sampleRecorder().serialize();
    bytes.push_back(std::byte{0});
    auto r = TraceRecorder::deserialize(bytes);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("unexpected bytes"), r.error().message.c_str());
  }

  void wrongMagicAndVersionAreNamed() {
    auto r = TraceRecorder::deserialize(bytesOf({'N', 'O', 'P', 'E', 1, 0, 0, 0}));
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("not an engine trace"), r.error().message.c_str());
    std::vector<std::byte> bytes = TraceRecorder().serialize();
    bytes[4] = std::byte{9};
    r = TraceRecorder::deserialize(bytes);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("version 9"), r.error().message.c_str());
  }

  void outOfRangeStringIndexIsRefused() {
    TraceRecorder rec;
    const std::uint32_t k = rec.name("step");
    rec.span({0, 0, k, k, 0, 10, 20, 0, 0});
    std::vector<std::byte> bytes = rec.serialize();
    // Header (4 + 4 + 1), string count (4), "" (4), "step" (4 + 4), span count (8),
    // then the span: rank, stream, kind.
    const std::size_t kind_at = 4 + 4 + 1 + 4 + 4 + 8 + 8 + 4 + 4;
    QCOMPARE(static_cast<int>(bytes[kind_at]), static_cast<int>(k));
    bytes[kind_at] = std::byte{7};
    auto r = TraceRecorder::deserialize(bytes);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("kind of row 0 is string 7"),
             r.error().message.c_str());
  }

  void hugeCountIsRefusedWithoutAllocating() {
    std::vector<std::byte> bytes = TraceRecorder().serialize();
    // The span count follows the header and the one empty string.
    const std::size_t count_at = 4 + 4 + 1 + 4 + 4;
    for (std::size_t i = 0; i < 8; ++i) bytes[count_at + i] = std::byte{0xFF};
    auto r = TraceRecorder::deserialize(bytes);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("span count"), r.error().message.c_str());
  }

  void randomBytesAndMutationsNeverCrash() {
    std::mt19937_64 rng(42);
    for (int i = 0; i < 2000; ++i) {
      std::vector<std::byte> junk(rng() % 600);
      for (auto& b : junk) b = static_cast<std::byte>(rng() & 0xFF);
      if (i % 2 == 0 && junk.size() >= 4) {  // get past the magic half the time
        junk[0] = std::byte{'S'}, junk[1] = std::byte{'S'}, junk[2] = std::byte{'T'}, junk[3] = std::byte{'R'};
      }
      auto r = TraceRecorder::deserialize(junk);
      QVERIFY(!r.ok());
    }
    const std::vector<std::byte> good = sampleRecorder().serialize();
    for (int i = 0; i < 2000; ++i) {
      std::vector<std::byte> bytes = good;
      for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips)
        bytes[rng() % bytes.size()] = static_cast<std::byte>(rng() & 0xFF);
      auto r = TraceRecorder::deserialize(bytes);                  // may be valid (a changed time); must not crash
      if (r.ok()) QVERIFY(r->serialize().size() <= bytes.size());  // equal table totals may merge
    }
  }

  void mergeReindexesTheOtherRecordersStrings() {
    TraceRecorder a;
    const std::uint32_t a_fwd = a.name("emb_fwd"), a_cat = a.name("cat_9");
    a.span({5, 0, a_fwd, a_cat, a_cat, 1, 2, 0, 1});
    a.tableStat(0, a_cat, 1, 1, 1);
    const TraceRecorder b = sampleRecorder();  // indexes its strings in another order
    a.merge(b);
    a.merge(b);  // twice: table totals add up, rows append
    QCOMPARE(a.spanCount(), 1 + 2 * b.spanCount());
    QTemporaryDir dir;
    const Flushed f = flushAndRead(a, dir.path());
    QCOMPARE(f.spans.size(), std::size_t{41});
    for (const auto& s : f.spans) {
      const std::string_view kind = f.str(s.kind);
      QVERIFY(kind == "step" || kind == "emb_fwd" || kind == "a2a_pooled" || kind == "send_recv");
      if (kind == "emb_fwd") QCOMPARE(f.str(s.name), f.str(s.table));
    }
    QCOMPARE(f.collectives.size(), std::size_t{8});
    for (const auto& c : f.collectives) QCOMPARE(f.str(c.process_group), std::string_view("sharding"));
    QCOMPARE(f.ranks.size(), std::size_t{2});  // the same ranks 0 and 1 twice: one row each
    for (const auto& t : f.tables) {
      if (f.str(t.table) == "cat_0") QCOMPARE(t.lookups, std::int64_t{256});
      if (f.str(t.table) == "cat_9") QCOMPARE(t.lookups, std::int64_t{1});
    }
  }

  void shiftMovesSpansAndCollectivesOnly() {
    TraceRecorder rec = sampleRecorder(0, 1'000'000);
    rec.shift(-400'000);
    QTemporaryDir dir;
    const Flushed f = flushAndRead(rec, dir.path());
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    for (const auto& s : f.spans) first = std::min(first, s.start_ns);
    QCOMPARE(first, std::int64_t{600'000});
    for (const auto& c : f.collectives) QVERIFY(c.start_ns >= 600'150 && c.start_ns < 602'000);
    for (const auto& s : f.steps) QCOMPARE(s.total_ns, std::int64_t{900});
  }
};

QTEST_GUILESS_MAIN(TestEngineTrace)
#include "test_engine_trace.moc"
