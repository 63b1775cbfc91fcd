// Span summaries (span_summaries.h): windows of every built level of
// generated runs compared with a brute force over every span (each span of a
// window is in exactly one of buckets, whole spans, steps and edge spans;
// each bucket's counts, busy time and extremes are those of its spans), the
// steps list, and what keeps a reader from misreading: tags, formats, stale
// summaries, damaged chunks. Building is one transaction: a cancel or an error
// leaves the store as it was.
#include <QtTest>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "shardscope/core/store/span_summaries.h"
#include "store_test_support.h"

using namespace storetest;

namespace {

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kMs = 1'000'000;
constexpr int kStepClass = 5;

// A generated run: its spans and a classifier over its string ids.
struct Generated {
  st::RunId run{};
  std::vector<st::Span> spans;
  std::map<std::pair<int, int>, std::vector<st::Span>> byRow;  // (rank, stream) -> spans by start
  std::map<std::int64_t, int> classOfKind;                     // kind id -> class (names shift it)
  std::map<std::int64_t, int> nameShift;
};

int classOf(const Generated& g, const st::Span& s) {
  const int k = g.classOfKind.at(static_cast<std::int64_t>(s.kind));
  return k == kStepClass ? k : (k + g.nameShift.at(static_cast<std::int64_t>(s.name))) % kStepClass;
}

st::SpanSummaryOptions options(const Generated& g, std::string tag = "test/1") {
  st::SpanSummaryOptions o;
  o.classify = [&g](st::StringId kind, st::StringId name) {
    st::Span s;
    s.kind = kind;
    s.name = name;
    return classOf(g, s);
  };
  o.tag = std::move(tag);
  o.step_class = kStepClass;
  return o;
}

// Spans of 3 ranks and 3 streams over [t0, t0 + 1 s): 10 ms steps, and
// durations from instants through nanoseconds to 100 ms, in small commits
// (blocks of several batches overlap).
Generated generate(const std::filesystem::path& path, std::uint64_t seed, std::int64_t t0, int perRank) {
  st::WriterOptions wo;
  wo.rows_per_commit = 3000;
  auto w = st::RunWriter::begin(path, {}, wo);
  if (!w) qFatal("%s", w.error().message.c_str());
  Generated g;
  g.run = w->run();
  std::vector<st::StringId> kinds, names;
  for (const char* k : {"step", "k1", "k2", "k3", "k4"}) kinds.push_back(*w->intern(k));
  for (const char* n : {"n0", "n1", "n2"}) names.push_back(*w->intern(n));
  for (std::size_t i = 0; i < kinds.size(); ++i)
    g.classOfKind[static_cast<std::int64_t>(kinds[i])] = i == 0 ? kStepClass : static_cast<int>(i);
  for (std::size_t i = 0; i < names.size(); ++i) g.nameShift[static_cast<std::int64_t>(names[i])] = static_cast<int>(i);
  std::mt19937_64 rng(seed);
  const auto u = [&rng](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int rank = 0; rank < 3; ++rank) {
    for (std::int64_t step = 0; step < 100; ++step) {
      g.spans.push_back({rank, 0, kinds[0], names[0], t0 + step * 10 * kMs, t0 + step * 10 * kMs + 9 * kMs, step});
    }
    for (int i = 0; i < perRank; ++i) {
      const std::int64_t start = t0 + u(0, 1000 * kMs);
      const auto pick = u(0, 19);
      const std::int64_t dur = pick == 0   ? 0
                               : pick < 4  ? u(1, 500)
                               : pick < 12 ? u(kUs, 50 * kUs)
                               : pick < 18 ? u(100 * kUs, 5 * kMs)
                                           : u(10 * kMs, 100 * kMs);
      const auto kind = kinds[static_cast<std::size_t>(u(1, 4))];
      g.spans.push_back({rank, std::array{0, 1, 3}[static_cast<std::size_t>(u(0, 2))], kind,
                         names[static_cast<std::size_t>(u(0, 2))], start, start + dur, start / (10 * kMs), u(0, 99),
                         u(0, 4096)});
    }
  }
  // A few spans of the step kind that are short: they go to the steps list too.
  g.spans.push_back({1, 1, kinds[0], names[1], t0 + 500 * kMs, t0 + 500 * kMs + 300, 50});
  if (auto s = w->addSpans(g.spans); !s) qFatal("%s", s.error().message.c_str());
  if (auto s = w->finish(); !s) qFatal("%s", s.error().message.c_str());
  for (const st::Span& s : g.spans) g.byRow[{s.rank, s.stream}].push_back(s);
  for (auto& [row, spans] : g.byRow) {
    std::stable_sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  }
  return g;
}

// A span as a sortable tuple, for multisets.
using Key = std::tuple<int, int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                       std::int64_t, std::int64_t>;
Key key(const st::Span& s) {
  return {s.rank,
          s.stream,
          s.start_ns,
          s.end_ns,
          static_cast<std::int64_t>(s.kind),
          static_cast<std::int64_t>(s.name),
          s.step,
          s.correlation,
          s.bytes,
          static_cast<std::int64_t>(s.table)};
}

bool overlaps(const st::Span& s, std::int64_t t0, std::int64_t t1) {
  return s.start_ns < t1 && (s.end_ns > t0 || s.start_ns >= t0);
}

// What a window handed over, per window.
struct Collected {
  struct Bucket {
    int level = 0;
    int stream = 0;
    st::SummaryBucket bucket;
    std::vector<st::SummaryClassWeight> classes;
  };
  std::vector<Bucket> buckets;
  std::vector<st::SummarySpan> spans;
  std::vector<st::SummarySpan> steps;
  std::vector<st::Span> edges;
};

class Collector final : public st::SummaryVisitor {
 public:
  explicit Collector(std::size_t count) : windows(count) {}
  void buckets(std::size_t w, int level, int stream, std::span<const st::SummaryBucket> bs,
               std::span<const st::SummaryClassWeight> classes) override {
    for (const auto& b : bs) {
      windows.at(w).buckets.push_back(
          {level, stream, b, {classes.begin() + b.first_class, classes.begin() + b.first_class + b.class_count}});
    }
  }
  void spans(std::size_t w, std::span<const st::SummarySpan> s) override {
    windows.at(w).spans.insert(windows.at(w).spans.end(), s.begin(), s.end());
  }
  void steps(std::size_t w, std::span<const st::SummarySpan> s) override {
    windows.at(w).steps.insert(windows.at(w).steps.end(), s.begin(), s.end());
  }
  void edgeSpans(std::size_t w, std::span<const st::Span> s) override {
    windows.at(w).edges.insert(windows.at(w).edges.end(), s.begin(), s.end());
  }
  std::vector<Collected> windows;
};

// Checks one window of one rank at one level against every span; "" or what differs.
std::string check(const Generated& g, int level, const st::RankWindow& w, const Collected& got) {
  const std::int64_t width = st::summaryLevelWidth(level);
  const std::string where = "level " + std::to_string(level) + ", rank " + std::to_string(w.rank) + ", [" +
                            std::to_string(w.t0_ns) + ", " + std::to_string(w.t1_ns) + "): ";
  std::vector<Key> want, have, wantSteps, haveSteps;
  for (const st::Span& s : g.spans) {
    if (s.rank != w.rank || !overlaps(s, w.t0_ns, w.t1_ns)) continue;
    (classOf(g, s) == kStepClass ? wantSteps : want).push_back(key(s));
  }
  for (const auto& s : got.steps) {
    if (s.cls != kStepClass) return where + "a step of class " + std::to_string(s.cls);
    haveSteps.push_back(key(s.span));
  }
  std::map<Key, int> wholeAtLevel;  // every span this long must come whole
  for (const st::Span& s : g.spans) {
    if (s.rank == w.rank && overlaps(s, w.t0_ns, w.t1_ns) && classOf(g, s) != kStepClass &&
        s.end_ns - s.start_ns >= width / 2)
      ++wholeAtLevel[key(s)];
  }
  for (const auto& s : got.spans) {
    if (s.cls != classOf(g, s.span)) return where + "a whole span with class " + std::to_string(s.cls);
    have.push_back(key(s.span));
    if (auto it = wholeAtLevel.find(key(s.span)); it != wholeAtLevel.end() && --it->second == 0) wholeAtLevel.erase(it);
  }
  if (!wholeAtLevel.empty()) return where + std::to_string(wholeAtLevel.size()) + " long spans not kept whole";
  for (const st::Span& s : got.edges) {
    if (classOf(g, s) != kStepClass) have.push_back(key(s));
  }
  for (const auto& b : got.buckets) {
    const std::int64_t bw = st::summaryLevelWidth(b.level);
    std::vector<std::pair<std::int64_t, std::int64_t>> perClass(st::kSpanSummaryClasses);
    std::int64_t count = 0, busy = 0, minStart = INT64_MAX, maxEnd = INT64_MIN, last = INT64_MIN;
    const auto row = g.byRow.find({w.rank, b.stream});
    if (row == g.byRow.end()) return where + "a bucket of a stream without spans";
    const std::int64_t from = b.bucket.index * bw;
    auto it = std::lower_bound(row->second.begin(), row->second.end(), from,
                               [](const st::Span& s, std::int64_t t) { return s.start_ns < t; });
    for (; it != row->second.end() && it->start_ns < from + bw; ++it) {
      const st::Span& s = *it;
      if (classOf(g, s) == kStepClass || s.end_ns - s.start_ns >= bw / 2) continue;
      if (!overlaps(s, w.t0_ns, w.t1_ns)) return where + "a bucket holds a span outside the window";
      have.push_back(key(s));
      ++count;
      busy += s.end_ns - s.start_ns;
      perClass[static_cast<std::size_t>(classOf(g, s))].first += 1;
      perClass[static_cast<std::size_t>(classOf(g, s))].second += s.end_ns - s.start_ns;
      minStart = std::min(minStart, s.start_ns);
      maxEnd = std::max(maxEnd, s.end_ns);
      last = std::max(last, s.end_ns > s.start_ns ? s.end_ns - 1 : s.start_ns);
    }
    const st::SummaryBucket& x = b.bucket;
    if (x.count != count || x.busy_ns != busy || x.min_start_ns != minStart || x.max_end_ns != maxEnd ||
        x.last_ns != last)
      return where + "bucket " + std::to_string(x.index) + " of stream " + std::to_string(b.stream) +
             " does not sum its spans";
    for (const auto& c : b.classes) {
      if (perClass[static_cast<std::size_t>(c.cls)] != std::pair{c.count, c.busy_ns})
        return where + "bucket " + std::to_string(x.index) + ": class " + std::to_string(c.cls) + " differs";
      perClass[static_cast<std::size_t>(c.cls)] = {0, 0};
    }
    for (const auto& c : perClass) {
      if (c.first != 0) return where + "bucket " + std::to_string(x.index) + " lacks a class";
    }
  }
  for (auto* v : {&want, &have, &wantSteps, &haveSteps}) std::sort(v->begin(), v->end());
  if (wantSteps != haveSteps)
    return where + std::to_string(haveSteps.size()) + " steps, want " + std::to_string(wantSteps.size());
  if (want != have)
    return where + std::to_string(have.size()) + " spans from the summaries, want " + std::to_string(want.size());
  return {};
}

// Every built level over many windows of every rank (each rank its own window).
std::string checkWindows(const std::filesystem::path& path, const Generated& g, std::int64_t t0, std::uint64_t seed) {
  auto store = st::openStore(path);
  if (!store) return store.error().message;
  auto info = store->currentSpanSummaries(g.run, "test/1");
  if (!info || !*info) return "no current summaries";
  std::mt19937_64 rng(seed);
  const auto u = [&rng](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (const int level : (*info)->levels) {
    for (int i = 0; i < 12; ++i) {
      st::SummaryWindowRequest r{g.run, "test/1", level, {}};
      for (int rank = 0; rank < 3; ++rank) {
        const std::int64_t a = t0 + u(-50 * kMs, 1050 * kMs);
        r.windows.push_back({rank, a, a + u(1, i < 3 ? 1200 * kMs : 80 * kMs)});
      }
      Collector c(r.windows.size());
      if (auto s = store->summaryWindow(r, c); !s) return s.error().message;
      for (std::size_t w = 0; w < r.windows.size(); ++w) {
        if (auto d = check(g, level, r.windows[w], c.windows[w]); !d.empty()) return d;
      }
    }
  }
  return {};
}

}  // namespace

class TestSpanSummaries : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void windowsOfEveryLevelHoldEverySpanOnce() {
    int n = 0;
    for (const std::int64_t t0 : {std::int64_t{0}, -400 * kMs, std::int64_t{1'700'000'000'000'000'000}}) {
      const auto path = numberedPath(dir_, "gen", ++n);
      const Generated g = generate(path, static_cast<std::uint64_t>(n), t0, 20000);
      {
        auto store = openOrDie(path, st::OpenMode::ReadWrite);
        const auto built = store.buildSpanSummaries(g.run, options(g));
        QVERIFY2(built.ok(), built.ok() ? "" : built.error().message.c_str());
        const auto info = store.spanSummaryInfo(g.run);
        QVERIFY(info.ok() && info->has_value());
        QVERIFY2((*info)->levels.size() >= 2, "a run a second long with 60k spans has several levels");
      }
      const std::string diff = checkWindows(path, g, t0, 11);
      QVERIFY2(diff.empty(), ("t0 " + std::to_string(t0) + ": " + diff).c_str());
    }
  }

  void stepsAreEveryRanksStepSpans() {
    const auto path = pathIn(dir_, "steps.db");
    const Generated g = generate(path, 5, 0, 3000);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    QVERIFY(!store.summarySteps(g.run, "test/1").ok());  // none yet
    QVERIFY(store.buildSpanSummaries(g.run, options(g)).ok());
    auto steps = store.summarySteps(g.run, "test/1");
    QVERIFY2(steps.ok(), steps.ok() ? "" : steps.error().message.c_str());
    std::vector<Key> want, have;
    for (const st::Span& s : g.spans) {
      if (classOf(g, s) == kStepClass) want.push_back(key(s));
    }
    for (std::size_t i = 0; i < steps->size(); ++i) {
      have.push_back(key((*steps)[i].span));
      if (i > 0) {
        const auto& a = (*steps)[i - 1].span;
        const auto& b = (*steps)[i].span;
        QVERIFY((std::pair{a.rank, a.start_ns} <= std::pair{b.rank, b.start_ns}));
      }
    }
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    QCOMPARE(have.size(), std::size_t{301});
    QVERIFY(have == want);
  }

  void anotherTagOrFormatReadsAsNoSummaries() {
    const auto path = pathIn(dir_, "tag.db");
    const Generated g = generate(path, 6, 0, 2000);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    QVERIFY(store.buildSpanSummaries(g.run, options(g)).ok());
    QVERIFY(store.currentSpanSummaries(g.run, "test/1")->has_value());
    QVERIFY(!store.currentSpanSummaries(g.run, "test/2")->has_value());
    const int level = (*store.spanSummaryInfo(g.run))->levels.front();
    Collector c(1);
    const auto other = store.summaryWindow({g.run, "test/2", level, {{0, 0, kMs}}}, c);
    QVERIFY(!other.ok());
    QVERIFY(contains(other.error().message, "test/2"));
    rawExec(path, "UPDATE span_summary_runs SET format = 99");
    QVERIFY(!store.currentSpanSummaries(g.run, "test/1")->has_value());
    QCOMPARE((*store.spanSummaryInfo(g.run))->format, 99);  // still there, as stored
    QVERIFY(!store.summaryWindow({g.run, "test/1", level, {{0, 0, kMs}}}, c).ok());
  }

  void summariesOfARunThatGrewAreStale() {
    const auto path = pathIn(dir_, "stale.db");
    auto w = st::RunWriter::begin(path, {});
    QVERIFY(w.ok());
    const auto kind = *w->intern("k1");
    for (int i = 0; i < 100; ++i) QVERIFY(w->addSpan(span(0, 0, kind, i * kUs, i * kUs + 500)).ok());
    QVERIFY(w->commit().ok());
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    st::SpanSummaryOptions o;
    o.classify = [](st::StringId, st::StringId) { return 0; };
    o.tag = "t";
    QVERIFY(store.buildSpanSummaries(w->run(), o).ok());
    QVERIFY(store.currentSpanSummaries(w->run(), "t")->has_value());
    QVERIFY(w->addSpan(span(0, 0, kind, 200 * kUs, 201 * kUs)).ok());
    QVERIFY(w->finish().ok());
    QVERIFY(!store.currentSpanSummaries(w->run(), "t")->has_value());
    QVERIFY(store.spanSummaryInfo(w->run())->has_value());
  }

  void aCancelledOrFailedBuildLeavesTheStoreAsItWas() {
    const auto path = pathIn(dir_, "cancel.db");
    const Generated g = generate(path, 7, 0, 5000);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    std::vector<std::pair<int, int>> progress;
    auto first = options(g);
    first.progress = [&progress](int done, int total) { progress.emplace_back(done, total); };
    QVERIFY(store.buildSpanSummaries(g.run, first).ok());
    QVERIFY((progress == std::vector<std::pair<int, int>>{{1, 3}, {2, 3}, {3, 3}}));
    const auto before = *store.spanSummaryInfo(g.run);

    std::atomic<bool> cancel{true};
    auto cancelled = options(g, "test/2");
    cancelled.cancel = &cancel;
    const auto c = store.buildSpanSummaries(g.run, cancelled);
    QVERIFY(!c.ok());
    QCOMPARE(kindOf(c.error()), kindName(shardscope::core::ErrorKind::Cancelled));

    auto failing = options(g, "test/3");
    failing.classify = [](st::StringId, st::StringId) { return st::kSpanSummaryClasses; };  // out of range
    const auto f = store.buildSpanSummaries(g.run, failing);
    QVERIFY(!f.ok());
    QVERIFY(contains(f.error().message, "class 16"));

    const auto after = *store.spanSummaryInfo(g.run);
    QCOMPARE(after->tag, before->tag);
    QCOMPARE(after->created_at, before->created_at);
    QCOMPARE(after->bytes, before->bytes);
    QVERIFY(store.currentSpanSummaries(g.run, "test/1")->has_value());
    const std::string diff = checkWindows(path, g, 0, 3);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void aRebuildReplacesTheSummaries() {
    const auto path = pathIn(dir_, "rebuild.db");
    const Generated g = generate(path, 8, 0, 3000);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    QVERIFY(store.buildSpanSummaries(g.run, options(g, "old")).ok());
    const std::int64_t chunks = chunkRows(path);
    QVERIFY(store.buildSpanSummaries(g.run, options(g)).ok());
    QCOMPARE(chunkRows(path), chunks);  // the old rows are gone
    QVERIFY(!store.currentSpanSummaries(g.run, "old")->has_value());
    const std::string diff = checkWindows(path, g, 0, 5);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void buildingNeedsAWritableStore() {
    const auto path = pathIn(dir_, "ro.db");
    const Generated g = generate(path, 9, 0, 100);
    auto store = openOrDie(path);
    const auto s = store.buildSpanSummaries(g.run, options(g));
    QVERIFY(!s.ok());
    QCOMPARE(kindOf(s.error()), kindName(shardscope::core::ErrorKind::Usage));
    QVERIFY(contains(s.error().message, "read-only"));
    auto writable = openOrDie(path, st::OpenMode::ReadWrite);
    auto noTag = options(g, "");
    QCOMPARE(kindOf(writable.buildSpanSummaries(g.run, noTag).error()), kindName(shardscope::core::ErrorKind::Usage));
    QVERIFY(!writable.buildSpanSummaries(st::RunId{999}, options(g)).ok());
  }

  void deletingARunDeletesItsSummaries() {
    const auto path = pathIn(dir_, "delete.db");
    const Generated a = generate(path, 10, 0, 2000);
    const Generated b = generate(path, 11, 0, 2000);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    QVERIFY(store.buildSpanSummaries(a.run, options(a)).ok());
    const std::int64_t ofA = chunkRows(path);
    QVERIFY(store.buildSpanSummaries(b.run, options(b)).ok());
    const std::int64_t ofBoth = chunkRows(path);
    QVERIFY(ofBoth > ofA && ofA > 0);
    QVERIFY(store.deleteRun(a.run).ok());
    QVERIFY(!store.spanSummaryInfo(a.run)->has_value());
    QCOMPARE(chunkRows(path), ofBoth - ofA);
    QCOMPARE(countWhere(path, "span_summary_lists", a.run), std::int64_t{0});
    const std::string diff = checkWindows(path, b, 0, 7);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void aDamagedChunkIsAnErrorNotAMisreading() {
    const auto path = pathIn(dir_, "damaged.db");
    const Generated g = generate(path, 12, 0, 3000);
    {
      auto store = openOrDie(path, st::OpenMode::ReadWrite);
      QVERIFY(store.buildSpanSummaries(g.run, options(g)).ok());
    }
    rawExec(path, "UPDATE span_summary_chunks SET data = x'ffffffff'");
    auto store = openOrDie(path);
    const int level = (*store.spanSummaryInfo(g.run))->levels.back();
    Collector c(1);
    const auto s = store.summaryWindow({g.run, "test/1", level, {{0, 0, 2000 * kMs}}}, c);
    QVERIFY(!s.ok());
    QVERIFY(contains(s.error().message, "corrupt"));
  }

  void aSchemaFourStoreGetsTheTablesWhenMigrated() {
    const auto path = pathIn(dir_, "v4.db");
    const Generated g = generate(path, 13, 0, 1000);
    rawExec(path,
            "DROP TABLE span_summary_runs; DROP TABLE span_summary_lists; DROP TABLE span_summary_chunks; "
            "PRAGMA user_version = 4; UPDATE meta SET value = '4' WHERE key = 'schema_version';");
    {
      auto ro = openOrDie(path);
      QCOMPARE(ro.schemaVersion(), 4);
      QVERIFY(!ro.spanSummaryInfo(g.run)->has_value());  // read as none, no table needed
      QVERIFY(!ro.buildSpanSummaries(g.run, options(g)).ok());
    }
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    QCOMPARE(store.schemaVersion(), st::kSchemaVersion);
    QVERIFY(store.buildSpanSummaries(g.run, options(g)).ok());
    const std::string diff = checkWindows(path, g, 0, 9);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void rankWindowsAreEachRanksOwn() {
    const auto path = pathIn(dir_, "rankwindows.db");
    const Generated g = generate(path, 14, 0, 4000);
    auto store = openOrDie(path);
    std::mt19937_64 rng(4);
    for (int i = 0; i < 20; ++i) {
      std::vector<st::RankWindow> windows;
      for (const int rank : {2, 0, 7}) {  // rank 7 has no spans
        const auto a = static_cast<std::int64_t>(rng() % (1000 * kMs));
        windows.push_back({rank, a, a + static_cast<std::int64_t>(rng() % (100 * kMs)) + 1});
      }
      auto got = store.spansInRankWindows(g.run, windows);
      QVERIFY(got.ok());
      std::vector<Key> want;
      for (const auto& w : windows) {
        std::vector<const st::Span*> rank;
        for (const st::Span& s : g.spans) {
          if (s.rank == w.rank && overlaps(s, w.t0_ns, w.t1_ns)) rank.push_back(&s);
        }
        std::stable_sort(rank.begin(), rank.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
        for (const auto* s : rank) want.push_back(key(*s));
      }
      std::vector<Key> have;
      for (const auto& s : *got) have.push_back(key(s));
      // Same spans, window by window, each by start (ties in any order).
      QCOMPARE(have.size(), want.size());
      for (std::size_t k = 1; k < have.size(); ++k) {
        if (std::get<0>(have[k]) == std::get<0>(have[k - 1])) QVERIFY(std::get<2>(have[k - 1]) <= std::get<2>(have[k]));
      }
      std::sort(have.begin(), have.end());
      std::sort(want.begin(), want.end());
      QVERIFY(have == want);
    }
  }

 private:
  static std::int64_t chunkRows(const std::filesystem::path& path) {
    return countWhere(path, "span_summary_chunks", std::nullopt);
  }
  static std::int64_t countWhere(const std::filesystem::path& path, const char* table, std::optional<st::RunId> run) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    std::string sql = std::string("SELECT count(*) FROM ") + table;
    if (run) sql += " WHERE run = " + std::to_string(static_cast<std::int64_t>(*run));
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
    const std::int64_t n = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
  }

  QTemporaryDir dir_;
};

QTEST_APPLESS_MAIN(TestSpanSummaries)
#include "test_span_summaries.moc"
