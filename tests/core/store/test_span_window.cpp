// spansInWindow: which spans overlap a time window, for which ranks, in what
// order — including long spans that start far before the window.
#include <QtTest>

#include <algorithm>
#include <random>

#include "store_test_support.h"

using namespace storetest;

class TestSpanWindow : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path path_;
  st::RunId run_{};
  st::StringId name_{};

  // Spans on rank 0 for the edge cases; `bounds` lists (start, end).
  st::TraceStore storeWith(const std::vector<std::pair<std::int64_t, std::int64_t>>& bounds) {
    static int n = 0;
    path_ = numberedPath(dir_, "win", ++n);
    auto writer = st::RunWriter::begin(path_, {});
    run_ = writer->run();
    name_ = *writer->intern("s");
    for (auto [s, e] : bounds) {
      if (!writer->addSpan(span(0, 0, name_, s, e))) {
        qFatal("addSpan");
      }
    }
    if (!writer->finish()) {
      qFatal("finish");
    }
    return openOrDie(path_);
  }

  static std::vector<std::pair<std::int64_t, std::int64_t>> bounds(const std::vector<st::Span>& spans) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const auto& s : spans) {
      out.emplace_back(s.start_ns, s.end_ns);
    }
    return out;
  }
  using Bounds = std::vector<std::pair<std::int64_t, std::int64_t>>;

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void spanStartingBeforeTheWindowAndEndingInsideIsIncluded() {
    auto store = storeWith({{50, 150}});
    QCOMPARE(bounds(*store.spansInWindow(run_, {}, 100, 200)), (Bounds{{50, 150}}));
  }

  void spanCoveringTheWholeWindowIsIncluded() {
    auto store = storeWith({{0, 1000}});
    QCOMPARE(bounds(*store.spansInWindow(run_, {}, 400, 500)), (Bounds{{0, 1000}}));
  }

  void longSpanFarBeforeTheWindowIsFoundAmongManyShortOnes() {
    Bounds b{{0, 1'000'000}};
    for (std::int64_t t = 10; t < 900'000; t += 100) {
      b.emplace_back(t, t + 10);
    }
    auto store = storeWith(b);
    QCOMPARE(bounds(*store.spansInWindow(run_, {}, 950'000, 960'000)), (Bounds{{0, 1'000'000}}));
  }

  void spanEndingExactlyAtTheWindowStartIsExcluded() {
    auto store = storeWith({{50, 100}});
    QVERIFY(store.spansInWindow(run_, {}, 100, 200)->empty());
  }

  void spanStartingExactlyAtTheWindowEndIsExcluded() {
    auto store = storeWith({{200, 300}});
    QVERIFY(store.spansInWindow(run_, {}, 100, 200)->empty());
  }

  void instantSpansCountWhenTheyFallInsideTheHalfOpenWindow() {
    auto store = storeWith({{100, 100}, {150, 150}, {200, 200}, {99, 99}});
    QCOMPARE(bounds(*store.spansInWindow(run_, {}, 100, 200)), (Bounds{{100, 100}, {150, 150}}));
  }

  void emptyOrInvertedWindowReturnsNothing() {
    auto store = storeWith({{0, 1000}});
    QVERIFY(store.spansInWindow(run_, {}, 500, 500)->empty());
    QVERIFY(store.spansInWindow(run_, {}, 600, 500)->empty());
  }

  void onlyRequestedRanksAreReturnedInRequestedOrderThenByStart() {
    path_ = pathIn(dir_, "ranks.db");
    auto writer = st::RunWriter::begin(path_, {});
    const auto n = *writer->intern("n");
    for (int r = 0; r < 8; ++r) {
      for (int i = 3; i >= 0; --i) {
        QVERIFY(writer->addSpan(span(r, i % 2, n, i * 100, i * 100 + 50)).ok());
      }
    }
    QVERIFY(writer->finish().ok());
    auto store = openOrDie(path_);
    const std::vector<int> wanted{6, 2, 42};
    auto spans = *store.spansInWindow(writer->run(), wanted, 0, 1000);
    QCOMPARE(spans.size(), std::size_t{8});
    for (std::size_t i = 0; i < spans.size(); ++i) {
      QCOMPARE(spans[i].rank, i < 4 ? 6 : 2);
      QCOMPARE(spans[i].start_ns, std::int64_t(i % 4) * 100);
    }
    QCOMPARE(store.spansInWindow(writer->run(), {}, 0, 1000)->size(), std::size_t{32});
  }

  void unknownRunHasNoSpans() {
    auto store = storeWith({{0, 10}});
    auto spans = store.spansInWindow(st::RunId{999}, {}, 0, 100);
    QVERIFY(spans.ok());
    QVERIFY(spans->empty());
  }

  void matchesABruteForceOverlapFilterOnRandomSpans() {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<std::int64_t> start(0, 1'000'000);
    std::geometric_distribution<std::int64_t> duration(0.001);
    std::vector<st::Span> all;
    path_ = pathIn(dir_, "random.db");
    st::WriterOptions options;
    options.rows_per_commit = 777;  // several batches, each sorted on its own
    auto writer = st::RunWriter::begin(path_, {}, options);
    const auto n = *writer->intern("n");
    for (int i = 0; i < 20'000; ++i) {
      const std::int64_t s = start(rng);
      const std::int64_t d = (i % 1000 == 0) ? 200'000 : duration(rng) * (i % 7 == 0 ? 0 : 1);
      all.push_back(span(i % 5, i % 3, n, s, s + d));
      QVERIFY(writer->addSpan(all.back()).ok());
    }
    QVERIFY(writer->finish().ok());
    auto store = openOrDie(path_);
    const std::vector<int> ranks{4, 1, 3};
    for (int q = 0; q < 40; ++q) {
      const std::int64_t t0 = start(rng);
      const std::int64_t t1 = t0 + 1 + start(rng) / 50;
      std::vector<st::Span> expected;
      for (int r : ranks) {
        std::vector<st::Span> mine;
        for (const auto& s : all) {
          if (s.rank == r && s.start_ns < t1 && (s.end_ns > t0 || s.start_ns >= t0)) {
            mine.push_back(s);
          }
        }
        std::stable_sort(mine.begin(), mine.end(),
                         [](const st::Span& a, const st::Span& b) { return a.start_ns < b.start_ns; });
        expected.insert(expected.end(), mine.begin(), mine.end());
      }
      auto got = *store.spansInWindow(writer->run(), ranks, t0, t1);
      QCOMPARE(got.size(), expected.size());
      auto key = [](const st::Span& s) { return std::tuple(s.rank, s.start_ns, s.stream, s.end_ns); };
      auto sortedKeys = [&](std::vector<st::Span> v) {
        std::vector<decltype(key(v[0]))> k;
        for (const auto& s : v) {
          k.push_back(key(s));
        }
        std::sort(k.begin(), k.end());
        return k;
      };
      QVERIFY(sortedKeys(got) == sortedKeys(expected));
      for (std::size_t i = 1; i < got.size(); ++i) {
        QVERIFY(got[i - 1].rank != got[i].rank || got[i - 1].start_ns <= got[i].start_ns);
      }
    }
  }

  void readerSeesCommittedSpansOfARunStillBeingWritten() {
    path_ = pathIn(dir_, "live.db");
    st::WriterOptions options;
    options.rows_per_commit = 10;
    auto writer = st::RunWriter::begin(path_, {}, options);
    const auto n = *writer->intern("n");
    auto store = openOrDie(path_);
    for (int i = 0; i < 25; ++i) {
      QVERIFY(writer->addSpan(span(0, 0, n, i * 10, i * 10 + 10)).ok());
    }
    QCOMPARE(store.spansInWindow(writer->run(), {}, 0, 1000)->size(), std::size_t{20});
    QCOMPARE(store.run(writer->run())->status, st::RunStatus::Running);
    QVERIFY(writer->finish().ok());
    QCOMPARE(store.spansInWindow(writer->run(), {}, 0, 1000)->size(), std::size_t{25});
  }
};

QTEST_GUILESS_MAIN(TestSpanWindow)
#include "test_span_window.moc"
