// Copying runs between stores (TraceStore::importRunFrom) and store
// snapshots (writeStoreSnapshot): a run with every kind of row, copied into a
// store whose ids all differ, answers every query as the source does (string
// ids compared by their text); failed runs keep their error; running runs,
// missing or foreign files and missing runs are refused with the file named;
// a failure at any step leaves the target as it was; a snapshot holds what
// the write-ahead log held and never replaces a file.
#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "shardscope/core/store/span_summaries.h"
#include "store_test_support.h"

using namespace storetest;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr int kStepClass = 5;
const char* const kTag = "copy/1";

// Classes from the strings' text, so that one classifier serves any store.
st::SpanSummaryOptions summaryOptions(const st::StringTable& strings) {
  st::SpanSummaryOptions o;
  o.classify = [&strings](st::StringId kind, st::StringId name) {
    const auto k = strings.at(kind);
    return k == "step" ? kStepClass : static_cast<int>((k.size() + 3 * strings.at(name).size()) % kStepClass);
  };
  o.tag = kTag;
  o.step_class = kStepClass;
  return o;
}

template <class T>
T orDie(shardscope::core::Result<T> r) {
  if (!r) qFatal("%s", r.error().message.c_str());
  return std::move(r).value();
}

// Helpers that return a value cannot QVERIFY: a failed step ends the test.
template <class T>
void must(const shardscope::core::Result<T>& s) {
  if (!s) qFatal("%s", s.error().message.c_str());
}

void buildSummaries(const std::filesystem::path& path, st::RunId run) {
  auto store = openOrDie(path, st::OpenMode::ReadWrite);
  const auto strings = orDie(store.strings());
  must(store.buildSpanSummaries(run, summaryOptions(strings)));
}

// A run with every kind of row: 3 ranks with steps and spans of many lengths
// on 3 streams (some touching tables), collectives with and without process
// groups, steps, table stats and access, a late config, bookmarks, notes and
// span summaries. `pad` strings are interned first, so ids differ per store.
st::RunId writeRichRun(const std::filesystem::path& path, std::uint64_t seed, int perRank,
                       const std::vector<std::string>& pad, const char* failWith = nullptr) {
  st::RunHeader h{st::RunKind::Mpi, "agent job 7", R"({"model":1})", R"({"cluster":2})", R"({"plan":3})", "{}"};
  st::WriterOptions wo;
  wo.rows_per_commit = 1500;  // many batches: blocks of a rank overlap in time
  auto w = orDie(st::RunWriter::begin(path, h, wo));
  const auto intern = [&w](const std::string& s) { return orDie(w.intern(s)); };
  for (const auto& p : pad) intern(p);
  std::vector<st::StringId> kinds, names, tables;
  for (const char* k : {"step", "kernel", "memcpy", "nccl"}) kinds.push_back(intern(k));
  for (const char* n : {"gemm", "lookup", "a2a", "copy_h2d"}) names.push_back(intern(n));
  for (const char* t : {"t_user", "t_item"}) tables.push_back(intern(t));
  std::mt19937_64 rng(seed);
  const auto u = [&rng](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const auto pick = [&u](const std::vector<st::StringId>& v) {
    return v[static_cast<std::size_t>(u(0, 3)) % v.size()];
  };
  std::vector<st::Span> spans;
  for (int rank = 0; rank < 3; ++rank) {
    must(w.addRank({rank, "host" + std::to_string(rank / 2), rank % 2, rank, 0}));
    for (std::int64_t step = 0; step < 50; ++step) {
      spans.push_back({rank, 0, kinds[0], names[0], step * 10 * kMs, step * 10 * kMs + 9 * kMs, step});
    }
    for (int i = 0; i < perRank; ++i) {
      const std::int64_t start = u(0, 500 * kMs);
      const auto p = u(0, 19);
      const std::int64_t dur = p == 0 ? 0 : p < 8 ? u(1, 5000) : p < 18 ? u(10'000, 2 * kMs) : u(10 * kMs, 80 * kMs);
      const st::StringId table = u(0, 2) == 0 ? pick(tables) : st::kNoString;
      spans.push_back({rank, std::array{0, 1, 3}[static_cast<std::size_t>(u(0, 2))],
                       kinds[static_cast<std::size_t>(u(1, 3))], pick(names), start, start + dur, start / (10 * kMs),
                       u(0, 99), u(0, 4096), table});
    }
  }
  must(w.addSpans(spans));
  const std::vector<st::StringId> ops = {intern("all_to_all"), intern("all_reduce")};
  const std::vector<st::StringId> groups = {intern("0,1,2"), intern("0,1")};
  const st::StringId ring = intern("ring");
  const std::vector<st::StringId> pgs = {intern("pg:emb"), intern("pg:dense")};
  for (int rank = 0; rank < 3; ++rank) {
    for (std::int64_t i = 0; i < 20; ++i) {
      const bool named = i % 3 != 0;
      must(w.addCollective({rank, i / 4, ops[static_cast<std::size_t>(i % 2)],
                            named ? groups[static_cast<std::size_t>(i % 2)] : st::kNoString,
                            i % 4 == 1 ? ring : st::kNoString, 1024 * i, 3, i * kMs, i * kMs + 500,
                            named ? pgs[static_cast<std::size_t>(i % 2)] : st::kNoString, named ? i / 2 : -1}));
    }
    for (std::int64_t step = 0; step < 5; ++step) {
      must(w.addStepSummary({step, rank, 1 + step, 2, 3, 4, 5 + rank, 20}));
    }
    for (const st::StringId t : tables) must(w.addTableStat({rank, t, 100 + rank, 50, 7 * kMs}));
  }
  must(w.setTableAccess("t_user", R"({"hot":[1,2,3]})"));
  must(w.setTableAccess("t_item", R"({"hot":[9]})"));
  must(w.setConfig(R"({"engine":"late"})"));
  const st::RunId run = w.run();
  must(failWith != nullptr ? w.fail(failWith) : w.finish());
  {
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    must(store.addBookmark(run, 40 * kMs, "slow step"));
    must(store.addBookmark(run, 5 * kMs, "warm-up"));
    must(store.addNote(run, "imbalance on rank 2"));
    must(store.addNote(run, "rerun with more hosts"));
  }
  buildSummaries(path, run);
  return run;
}

// A span with its strings as text.
using TextSpan = std::tuple<int, int, std::string, std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                            std::int64_t, std::string>;
TextSpan text(const st::StringTable& s, const st::Span& x) {
  return {x.rank,        x.stream, std::string(s.at(x.kind)), std::string(s.at(x.name)), x.start_ns, x.end_ns, x.step,
          x.correlation, x.bytes,  std::string(s.at(x.table))};
}
std::vector<TextSpan> texts(const st::StringTable& s, const std::vector<st::Span>& v) {
  std::vector<TextSpan> out;
  for (const auto& x : v) out.push_back(text(s, x));
  return out;
}

// Everything a summary window hands over, strings as text.
class TextCollector final : public st::SummaryVisitor {
 public:
  explicit TextCollector(const st::StringTable& s) : s_(s) {}
  void buckets(std::size_t w, int level, int stream, std::span<const st::SummaryBucket> bs,
               std::span<const st::SummaryClassWeight> classes) override {
    for (const auto& b : bs) {
      out.push_back("b " + std::to_string(w) + " " + std::to_string(level) + " " + std::to_string(stream) + " " +
                    std::to_string(b.index) + " " + std::to_string(b.min_start_ns) + " " +
                    std::to_string(b.max_end_ns) + " " + std::to_string(b.last_ns) + " " + std::to_string(b.count) +
                    " " + std::to_string(b.busy_ns));
      for (std::uint32_t c = b.first_class; c < b.first_class + b.class_count; ++c) {
        out.push_back(" c " + std::to_string(classes[c].cls) + " " + std::to_string(classes[c].count) + " " +
                      std::to_string(classes[c].busy_ns));
      }
    }
  }
  void spans(std::size_t w, std::span<const st::SummarySpan> s) override { whole("s", w, s); }
  void steps(std::size_t w, std::span<const st::SummarySpan> s) override { whole("t", w, s); }
  void edgeSpans(std::size_t w, std::span<const st::Span> s) override {
    for (const auto& x : s) out.push_back("e " + std::to_string(w) + line(x));
  }
  std::vector<std::string> out;

 private:
  void whole(const char* tag, std::size_t w, std::span<const st::SummarySpan> s) {
    for (const auto& x : s) {
      std::string l(tag);
      l.append(" ").append(std::to_string(w)).append(line(x.span)).append(" ").append(std::to_string(x.cls));
      out.push_back(std::move(l));
    }
  }
  std::string line(const st::Span& x) const {
    const auto t = text(s_, x);
    return " " + std::to_string(std::get<0>(t)) + " " + std::to_string(std::get<1>(t)) + " " + std::get<2>(t) + " " +
           std::get<3>(t) + " " + std::to_string(std::get<4>(t)) + " " + std::to_string(std::get<5>(t)) + " " +
           std::to_string(std::get<6>(t)) + " " + std::to_string(std::get<7>(t)) + " " +
           std::to_string(std::get<8>(t)) + " " + std::get<9>(t);
  }
  const st::StringTable& s_;
};

// One store's view of one run, for comparing.
struct View {
  st::TraceStore store;
  st::StringTable strings;
  st::RunId run;
};
View view(const std::filesystem::path& path, st::RunId run) {
  auto store = openOrDie(path);
  auto strings = orDie(store.strings());
  return View{std::move(store), std::move(strings), run};
}

// "" when every query of `a` and `b` answers the same, else what differs.
std::string compareRuns(const View& a, const View& b) {
  auto ra = orDie(a.store.run(a.run)), rb = orDie(b.store.run(b.run));
  if (std::tie(ra.kind_text, ra.status, ra.label, ra.model_json, ra.cluster_json, ra.plan_json, ra.config_json,
               ra.created_at, ra.finished_at, ra.error) != std::tie(rb.kind_text, rb.status, rb.label, rb.model_json,
                                                                    rb.cluster_json, rb.plan_json, rb.config_json,
                                                                    rb.created_at, rb.finished_at, rb.error))
    return "run rows differ";
  if (orDie(a.store.ranks(a.run)) != orDie(b.store.ranks(b.run))) return "ranks differ";
  const auto ea = orDie(a.store.spanExtents(a.run)), eb = orDie(b.store.spanExtents(b.run));
  if (ea.size() != eb.size()) return "extents differ";
  for (std::size_t i = 0; i < ea.size(); ++i) {
    if (std::tie(ea[i].rank, ea[i].span_count, ea[i].min_start_ns, ea[i].max_end_ns, ea[i].max_duration_ns) !=
        std::tie(eb[i].rank, eb[i].span_count, eb[i].min_start_ns, eb[i].max_end_ns, eb[i].max_duration_ns))
      return "extent of rank " + std::to_string(ea[i].rank) + " differs";
  }
  constexpr std::int64_t kAll = std::int64_t{1} << 62;
  const auto all = orDie(a.store.spansInWindow(a.run, {}, -kAll, kAll));
  if (static_cast<std::int64_t>(all.size()) != orDie(a.store.spanCount(a.run)) ||
      texts(a.strings, all) != texts(b.strings, orDie(b.store.spansInWindow(b.run, {}, -kAll, kAll))))
    return "the whole run's spans differ";
  std::mt19937_64 rng(3);
  for (int i = 0; i < 40; ++i) {
    const std::int64_t t0 = std::uniform_int_distribution<std::int64_t>(-10 * kMs, 600 * kMs)(rng);
    const std::int64_t t1 = t0 + (i < 4 ? 1000 * kMs : std::uniform_int_distribution<std::int64_t>(1, 20 * kMs)(rng));
    const std::vector<int> ranks = i % 3 == 0 ? std::vector<int>{} : std::vector<int>{2, i % 2};
    if (texts(a.strings, orDie(a.store.spansInWindow(a.run, ranks, t0, t1))) !=
        texts(b.strings, orDie(b.store.spansInWindow(b.run, ranks, t0, t1))))
      return "window " + std::to_string(i) + " differs";
    const std::vector<st::RankWindow> rw = {{1, t0, t1}, {0, t0 / 2, t1}};
    if (texts(a.strings, orDie(a.store.spansInRankWindows(a.run, rw))) !=
        texts(b.strings, orDie(b.store.spansInRankWindows(b.run, rw))))
      return "rank windows " + std::to_string(i) + " differ";
  }
  const auto coll = [](const View& v) {
    std::vector<std::tuple<int, std::int64_t, std::string, std::string, std::string, std::int64_t, int, std::int64_t,
                           std::int64_t, std::string, std::int64_t>>
        out;
    for (const auto& c : orDie(v.store.collectives(v.run)))
      out.emplace_back(c.rank, c.step, v.strings.at(c.op), v.strings.at(c.group), v.strings.at(c.algorithm), c.bytes,
                       c.peers, c.start_ns, c.end_ns, v.strings.at(c.process_group), c.seq);
    return out;
  };
  if (coll(a) != coll(b)) return "collectives differ";
  if (orDie(a.store.stepSummaries(a.run)) != orDie(b.store.stepSummaries(b.run))) return "steps differ";
  const auto stats = [](const View& v) {
    std::vector<std::tuple<int, std::string, std::int64_t, std::int64_t, std::int64_t>> out;
    for (const auto& t : orDie(v.store.tableStats(v.run)))
      out.emplace_back(t.rank, v.strings.at(t.table), t.lookups, t.unique_rows, t.time_ns);
    std::sort(out.begin(), out.end());
    return out;
  };
  if (stats(a) != stats(b)) return "table stats differ";
  if (orDie(a.store.tableAccess(a.run)) != orDie(b.store.tableAccess(b.run))) return "table access differs";
  const auto marks = [](const View& v) {
    std::vector<std::tuple<std::int64_t, std::string, std::string>> out;
    for (const auto& m : orDie(v.store.bookmarks(v.run))) out.emplace_back(m.ts_ns, m.label, m.created_at);
    for (const auto& n : orDie(v.store.notes(v.run))) out.emplace_back(-1, n.text, n.created_at);
    return out;
  };
  if (marks(a) != marks(b)) return "bookmarks or notes differ";
  return {};
}

// "" when the span summaries of both answer the same, else what differs.
std::string compareSummaries(const View& a, const View& b) {
  const auto ia = orDie(a.store.currentSpanSummaries(a.run, kTag));
  const auto ib = orDie(b.store.currentSpanSummaries(b.run, kTag));
  if (!ia || !ib) return "summaries not current";
  if (std::tie(ia->format, ia->tag, ia->levels, ia->step_class, ia->span_count, ia->created_at) !=
      std::tie(ib->format, ib->tag, ib->levels, ib->step_class, ib->span_count, ib->created_at))
    return "summary info differs";
  if (ia->levels.size() < 2) return "too few levels to test";
  std::mt19937_64 rng(5);
  for (const int level : ia->levels) {
    for (int i = 0; i < 10; ++i) {
      st::SummaryWindowRequest r{a.run, kTag, level, {}};
      for (int rank = 0; rank < 3; ++rank) {
        const std::int64_t t0 = std::uniform_int_distribution<std::int64_t>(-10 * kMs, 550 * kMs)(rng);
        r.windows.push_back({rank, t0, t0 + std::uniform_int_distribution<std::int64_t>(1, 300 * kMs)(rng)});
      }
      TextCollector ca(a.strings), cb(b.strings);
      if (auto s = a.store.summaryWindow(r, ca); !s) return s.error().message;
      r.run = b.run;
      if (auto s = b.store.summaryWindow(r, cb); !s) return s.error().message;
      if (ca.out != cb.out) return "summary window " + std::to_string(i) + " of level " + std::to_string(level);
    }
  }
  const auto steps = [](const View& v) {
    std::vector<std::pair<TextSpan, int>> out;
    for (const auto& s : orDie(v.store.summarySteps(v.run, kTag))) out.emplace_back(text(v.strings, s.span), s.cls);
    return out;
  };
  if (steps(a) != steps(b) || steps(a).size() != 150) return "summary steps differ";
  return {};
}

// Every row of every table, for "nothing changed".
std::string dump(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string out;
  std::vector<std::string> tables;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  for (const auto& t : tables) {
    out += "[" + t + "]\n";
    sqlite3_prepare_v2(db, ("SELECT * FROM " + t).c_str(), -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(st, c));
        out.append(p == nullptr ? "<null>" : std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(st, c))));
        out += '|';
      }
      out += '\n';
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

// A target with two runs of its own, other strings interned first, and
// summaries, so that run ids, span ids, string ids and summary keys differ.
std::filesystem::path makeTarget(const QTemporaryDir& dir, const char* name) {
  const auto path = pathIn(dir, name);
  writeSampleRun(path, 2, 300, true, "local");
  writeRichRun(path, 99, 500, {"zz", "kernel", "yy", "a2a", "t_item", "pg:dense"});
  return path;
}

std::string message(const shardscope::core::Status& s) { return s ? std::string() : s.error().message; }

}  // namespace

class TestRunCopy : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void copyAnswersEveryQueryAsTheSource() {
    const auto source = pathIn(dir_, "agent.db");
    writeSampleRun(source, 1, 50, true, "other job");  // the run is not the source's first
    const st::RunId run = writeRichRun(source, 1, 4000, {"pad1", "pad2", "pad3"});
    const auto target = makeTarget(dir_, "local.db");
    const auto before = view(target, st::RunId{2});
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    const auto first = store.importRunFrom(source, run);
    QVERIFY2(first.ok(), first.ok() ? "" : first.error().message.c_str());
    const auto second = store.importRunFrom(source.string(), run);  // a plain string path works too
    QVERIFY2(second.ok(), second.ok() ? "" : second.error().message.c_str());
    QCOMPARE(*first, st::RunId{3});
    QCOMPARE(*second, st::RunId{4});
    const View src = view(source, run);
    QCOMPARE(orDie(src.store.collectives(run)).size(), std::size_t{60});
    for (const st::RunId copy : {*first, *second}) {
      const View dst = view(target, copy);
      const std::string runs = compareRuns(src, dst);
      QVERIFY2(runs.empty(), runs.c_str());
      const std::string summaries = compareSummaries(src, dst);
      QVERIFY2(summaries.empty(), summaries.c_str());
    }
    // The ids were remapped, not kept: the same span has other string ids here.
    const auto rawSource = orDie(src.store.spansInWindow(run, {}, 0, kMs));
    const auto rawCopy = orDie(openOrDie(target).spansInWindow(*first, {}, 0, kMs));
    QVERIFY(!rawSource.empty() && rawSource.size() == rawCopy.size());
    QVERIFY(rawSource.front().kind != rawCopy.front().kind && rawSource.front().name != rawCopy.front().name);
    // The target's own runs and summaries are as they were.
    const View after = view(target, st::RunId{2});
    QVERIFY2(compareRuns(before, after).empty(), compareRuns(before, after).c_str());
    QVERIFY2(compareSummaries(before, after).empty(), compareSummaries(before, after).c_str());
    QVERIFY2(st::verifyStore(target).ok(), message(st::verifyStore(target)).c_str());
    // A store is a source for itself too: the run is duplicated.
    const auto again = store.importRunFrom(target, *first);
    QVERIFY2(again.ok(), again.ok() ? "" : again.error().message.c_str());
    const std::string same = compareRuns(view(target, *first), view(target, *again));
    QVERIFY2(same.empty(), same.c_str());
    const std::string sameSummaries = compareSummaries(view(target, *first), view(target, *again));
    QVERIFY2(sameSummaries.empty(), sameSummaries.c_str());
  }

  void failedRunKeepsItsError() {
    const auto source = pathIn(dir_, "failed.db");
    const st::RunId run = writeRichRun(source, 2, 300, {}, "rank 3: CUDA out of memory");
    const auto target = makeTarget(dir_, "failed-target.db");
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    const auto copy = store.importRunFrom(source, run);
    QVERIFY2(copy.ok(), copy.ok() ? "" : copy.error().message.c_str());
    const auto record = orDie(store.run(*copy));
    QCOMPARE(record.status, st::RunStatus::Failed);
    QCOMPARE(record.error, std::string("rank 3: CUDA out of memory"));
    QVERIFY(!record.finished_at.empty());
    const std::string diff = compareRuns(view(source, run), view(target, *copy));
    QVERIFY2(diff.empty(), diff.c_str());
    // A run that failed before its first span.
    auto w = orDie(st::RunWriter::begin(source, {}));
    QVERIFY(w.fail("launch failed: no GPU").ok());
    const auto empty = store.importRunFrom(source, w.run());
    QVERIFY2(empty.ok(), empty.ok() ? "" : empty.error().message.c_str());
    QCOMPARE(orDie(store.run(*empty)).error, std::string("launch failed: no GPU"));
    QCOMPARE(orDie(store.spanCount(*empty)), std::int64_t{0});
    QVERIFY(!orDie(store.spanSummaryInfo(*empty)).has_value());
  }

  void runningRunIsRefused() {
    const auto source = pathIn(dir_, "running.db");
    auto w = orDie(st::RunWriter::begin(source, {}));
    QVERIFY(w.addSpan(span(0, 0, orDie(w.intern("k")), 0, 10)).ok());
    QVERIFY(w.commit().ok());
    const auto target = makeTarget(dir_, "running-target.db");
    const std::string was = dump(target);
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    const auto copy = store.importRunFrom(source, w.run());
    QVERIFY(!copy.ok());
    const std::string& m = copy.error().message;
    QVERIFY2(contains(m, source.string()) && contains(m, "run 1") && contains(m, "running"), m.c_str());
    QCOMPARE(kindOf(copy.error()), kindName(shardscope::core::ErrorKind::InvalidInput));
    QCOMPARE(copy.error().file, source.string());
    QVERIFY(dump(target) == was);
    QVERIFY(w.finish().ok());
    QVERIFY(store.importRunFrom(source, w.run()).ok());  // once complete, it is copied
  }

  void badSourcesAreClearErrors() {
    const auto target = makeTarget(dir_, "bad-target.db");
    const std::string was = dump(target);
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    const auto text = pathIn(dir_, "notes.txt");
    writeAll(text, QByteArray("these are not the spans you are looking for\n").repeated(10));
    const auto foreign = pathIn(dir_, "foreign.db");
    rawExec(foreign, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
    const auto newer = pathIn(dir_, "newer.db");
    const st::RunId run = writeSampleRun(newer, 1, 5).run;
    const auto ok = pathIn(dir_, "ok.db");
    writeSampleRun(ok, 1, 5);
    rawExec(newer, "PRAGMA user_version = 99; UPDATE meta SET value = '99' WHERE key = 'schema_version';");
    const struct {
      std::filesystem::path path;
      st::RunId run;
      const char* says;
    } cases[] = {{pathIn(dir_, "missing.db"), run, "does not exist"},
                 {text, run, "not a ShardScope trace store"},
                 {foreign, run, "not a ShardScope trace store"},
                 {newer, run, "newer ShardScope"},
                 {ok, st::RunId{7}, "has no run 7"}};
    for (const auto& c : cases) {
      const auto copy = store.importRunFrom(c.path, c.run);
      QVERIFY(!copy.ok());
      const std::string& m = copy.error().message;
      QVERIFY2(contains(m, c.path.string()) && contains(m, c.says), m.c_str());
      QCOMPARE(copy.error().file, c.path.string());
    }
    QVERIFY(dump(target) == was);
  }

  void olderSchemaSourceIsCopied() {
    const auto source = pathIn(dir_, "v1.db");
    const st::RunId run = writeRichRun(source, 4, 200, {});
    rawExec(source,
            "DROP TABLE span_summary_runs; DROP TABLE span_summary_lists; DROP TABLE span_summary_chunks; "
            "ALTER TABLE runs DROP COLUMN config_json; DROP TABLE table_access; "
            "ALTER TABLE collectives DROP COLUMN process_group; ALTER TABLE collectives DROP COLUMN seq; "
            "PRAGMA user_version = 1; UPDATE meta SET value = '1' WHERE key = 'schema_version';");
    const auto target = makeTarget(dir_, "v1-target.db");
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    const auto copy = store.importRunFrom(source, run);
    QVERIFY2(copy.ok(), copy.ok() ? "" : copy.error().message.c_str());
    QVERIFY(orDie(store.run(*copy)).config_json.empty());
    QVERIFY(orDie(store.tableAccess(*copy)).empty());
    QVERIFY(!orDie(store.spanSummaryInfo(*copy)).has_value());
    for (const auto& c : orDie(store.collectives(*copy))) {
      QCOMPARE(c.process_group, st::kNoString);
      QCOMPARE(c.seq, std::int64_t{-1});
    }
    QCOMPARE(openOrDie(source).schemaVersion(), 1);  // read only: not migrated
    const std::string diff = compareRuns(view(source, run), view(target, *copy));
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void readOnlyTargetIsRefused() {
    const auto source = pathIn(dir_, "ro-source.db");
    const st::RunId run = writeSampleRun(source, 1, 10).run;
    const auto target = makeTarget(dir_, "ro-target.db");
    const std::string was = dump(target);
    auto store = openOrDie(target, st::OpenMode::ReadOnly);
    const auto copy = store.importRunFrom(source, run);
    QVERIFY(!copy.ok());
    QVERIFY2(contains(copy.error().message, "read-only") && contains(copy.error().message, target.string()),
             copy.error().message.c_str());
    QCOMPARE(kindOf(copy.error()), kindName(shardscope::core::ErrorKind::Usage));
    QVERIFY(dump(target) == was);
  }

  // Damage met at the first, a middle and the last step of the copy: the
  // transaction is rolled back whole.
  void damagedSourceLeavesTargetUntouched() {
    const auto source = pathIn(dir_, "whole.db");
    const st::RunId run = writeRichRun(source, 6, 400, {"p"});
    const struct {
      const char* name;
      const char* sql;
      const char* says;
    } damages[] = {
        {"nostring.db", "DELETE FROM strings WHERE value = 'lookup'", "strings table lacks"},
        {"nosteps.db", "DROP TABLE step_summaries", "step_summaries"},
        {"noblock.db", "DELETE FROM span_blocks WHERE last_id = (SELECT max(last_id) FROM span_blocks)",
         "spans by its extents"},
        {"badchunk.db",
         "UPDATE span_summary_chunks SET data = x'0203ff' WHERE id >> 32 IN (SELECT key FROM span_summary_lists "
         "WHERE kind = 2)",
         "does not decode"},
    };
    const auto target = makeTarget(dir_, "damage-target.db");
    const std::string was = dump(target);
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    for (const auto& d : damages) {
      const auto copy = pathIn(dir_, d.name);
      QVERIFY(st::writeStoreSnapshot(source, copy).ok());
      rawExec(copy, d.sql);
      const auto imported = store.importRunFrom(copy, run);
      QVERIFY2(!imported.ok(), d.name);
      const std::string& m = imported.error().message;
      QVERIFY2(contains(m, copy.string()) && contains(m, d.says) && contains(m, "nothing was imported"), m.c_str());
      QVERIFY2(dump(target) == was, d.name);
    }
    QVERIFY(store.importRunFrom(source, run).ok());  // the store is still usable
    QVERIFY(dump(target) != was);
  }

  void snapshotHoldsWhatTheLogHolds() {
    const auto path = pathIn(dir_, "live.db");
    auto w = orDie(st::RunWriter::begin(path, {}));
    const st::StringId k = orDie(w.intern("kernel"));
    for (int i = 0; i < 2000; ++i) QVERIFY(w.addSpan(span(i % 4, 0, k, i * 10, i * 10 + 5)).ok());
    QVERIFY(w.finish().ok());  // the writer's connection stays open: its pages are in the -wal
    QVERIFY(std::filesystem::file_size(path.string() + "-wal") > 32);
    const auto snap = pathIn(dir_, "snap shot #1?%20.db");  // URI characters, escaped when attached
    QVERIFY2(st::writeStoreSnapshot(path, snap).ok(), message(st::writeStoreSnapshot(path, snap)).c_str());
    QVERIFY(!std::filesystem::exists(snap.string() + "-wal"));
    QCOMPARE(readAll(snap).at(18), char{1});  // rollback journal: one self-contained file
    {
      auto store = openOrDie(snap);
      QCOMPARE(store.schemaVersion(), st::kSchemaVersion);
      QCOMPARE(orDie(store.run(w.run())).status, st::RunStatus::Complete);
      QCOMPARE(orDie(store.spanCount(w.run())), std::int64_t{2000});
    }
    QVERIFY(!std::filesystem::exists(snap.string() + "-wal"));  // reading it made no sidecar
    QVERIFY(st::verifyStore(snap).ok());
    // The agent's path: a snapshot, fetched, imported.
    const auto target = makeTarget(dir_, "snap-target.db");
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    const auto copy = store.importRunFrom(snap, w.run());
    QVERIFY2(copy.ok(), copy.ok() ? "" : copy.error().message.c_str());
    QCOMPARE(orDie(store.spanCount(*copy)), std::int64_t{2000});
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path().toStdString())) {
      if (contains(e.path().filename().string(), ".partial-")) left.push_back(e.path().string());
    }
    QVERIFY(left.empty());
  }

  void snapshotNeverReplacesAFile() {
    const auto path = pathIn(dir_, "snapsrc.db");
    writeSampleRun(path, 1, 10);
    const auto out = pathIn(dir_, "taken.db");
    writeAll(out, QByteArray("keep me"));
    const auto s = st::writeStoreSnapshot(path, out);
    QVERIFY(!s.ok());
    QVERIFY2(contains(s.error().message, out.string()) && contains(s.error().message, "exists"),
             s.error().message.c_str());
    QCOMPARE(readAll(out), QByteArray("keep me"));
    const auto empty = pathIn(dir_, "empty.db");
    writeAll(empty, QByteArray());
    QVERIFY(!st::writeStoreSnapshot(path, empty).ok());  // even an empty one
    const auto missing = st::writeStoreSnapshot(pathIn(dir_, "nosuch.db"), pathIn(dir_, "never.db"));
    QVERIFY(!missing.ok());
    QVERIFY2(contains(missing.error().message, "does not exist"), missing.error().message.c_str());
    QVERIFY(!std::filesystem::exists(pathIn(dir_, "never.db")));
    QVERIFY(!st::writeStoreSnapshot(path, pathIn(dir_, "no/such/folder.db")).ok());
  }

  // The copy's speed. SHARDSCOPE_COPY_SPANS sets the size (default 200,000;
  // the figure in docs/formats/store.md is for 2,000,000). No bar: printed.
  void copyTiming() {
    const char* env = std::getenv("SHARDSCOPE_COPY_SPANS");
    const std::int64_t n = env != nullptr ? std::atoll(env) : 200'000;
    const auto source = pathIn(dir_, "big.db");
    st::RunId run{};
    {
      auto w = orDie(st::RunWriter::begin(source, {}));
      std::vector<st::StringId> names;
      for (int i = 0; i < 64; ++i) names.push_back(orDie(w.intern("kernel_" + std::to_string(i))));
      for (std::int64_t i = 0; i < n; ++i) {
        const auto name = names[static_cast<std::size_t>(i % 64)];
        st::Span s = span(static_cast<int>(i % 16), static_cast<int>(i % 3), name, i / 16 * 1000, i / 16 * 1000 + 700);
        if (i % 5 == 0) s.table = names[0];
        QVERIFY(w.addSpan(s).ok());
      }
      QVERIFY(w.finish().ok());
      run = w.run();
    }
    const auto target = makeTarget(dir_, "big-target.db");
    auto store = openOrDie(target, st::OpenMode::ReadWrite);
    QElapsedTimer timer;
    timer.start();
    const auto copy = store.importRunFrom(source, run);
    const auto ms = timer.elapsed();
    QVERIFY2(copy.ok(), copy.ok() ? "" : copy.error().message.c_str());
    qInfo("importRunFrom: %lld spans in %lld ms", static_cast<long long>(n), static_cast<long long>(ms));
    QCOMPARE(orDie(store.spanCount(*copy)), n);
    const View a = view(source, run), b = view(target, *copy);
    QVERIFY(orDie(a.store.ranks(run)) == orDie(b.store.ranks(*copy)));
    const std::vector<int> ranks = {3, 11};
    const auto window = [&ranks, n](const View& v) {
      return texts(v.strings, orDie(v.store.spansInWindow(v.run, ranks, 0, n * 10)));
    };
    QVERIFY(window(a) == window(b));
  }

 private:
  QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestRunCopy)
#include "test_run_copy.moc"
