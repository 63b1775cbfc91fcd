// A run's step time (docs/analysis.md#step-time): per measured step the
// slowest rank's step, the median over steps.
#include <QTemporaryDir>
#include <QtTest>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/step_time.h"

using namespace shardscope;
namespace st = core::store;

namespace {

constexpr std::int64_t kMs = 1'000'000;

st::StepSummary summary(std::int64_t step, int rank, std::int64_t total_ms) {
  st::StepSummary s;
  s.step = step;
  s.rank = rank;
  s.total_ns = total_ms * kMs;
  return s;
}

}  // namespace

class TestStepTime : public QObject {
  Q_OBJECT

 private slots:
  void aStepLastsAsLongAsItsSlowestRank() {
    // Rank 1 is the slowest in step 0, rank 0 in step 1: 5 ms and 4 ms, median 4.5.
    const std::vector<st::StepSummary> s = {summary(0, 0, 2), summary(0, 1, 5), summary(0, 2, 3),
                                            summary(1, 0, 4), summary(1, 1, 1), summary(1, 2, 1)};
    QCOMPARE(profiler::stepTimeMs(s).value(), 4.5);
  }

  void oneSlowStepDoesNotMoveIt() {
    // The median of 5, 4 and 100 ms: the preempted step is left out, where a mean would be 36.3 ms.
    const std::vector<st::StepSummary> s = {summary(0, 0, 5), summary(1, 0, 4), summary(2, 0, 100),
                                            summary(0, 1, 1), summary(1, 1, 1), summary(2, 1, 1)};
    QCOMPARE(profiler::stepTimeMs(s).value(), 5.0);
  }

  void aStepSomeRanksDidNotRecordTakesTheSlowestOfThoseThatDid() {
    const std::vector<st::StepSummary> s = {summary(0, 0, 3), summary(0, 1, 7), summary(1, 0, 6)};
    QCOMPARE(profiler::stepTimeMs(s).value(), 6.5);
  }

  void aRunWithoutSummariesHasNone() { QVERIFY(!profiler::stepTimeMs(std::vector<st::StepSummary>{})); }

  void theStoreGivesTheSameAsItsSummaries() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    auto writer = st::RunWriter::begin(path, st::RunHeader{});
    QVERIFY(writer.ok());
    for (const auto& s : {summary(0, 0, 2), summary(0, 1, 9), summary(1, 0, 8), summary(1, 1, 3), summary(2, 0, 4)})
      QVERIFY(writer->addStepSummary(s).ok());
    const st::RunId run = writer->run();
    QVERIFY(writer->finish().ok());
    auto store = st::openStore(path);
    QVERIFY(store.ok());
    auto ms = profiler::stepTimeMs(*store, run);
    QVERIFY2(ms.ok(), ms.ok() ? "" : ms.error().message.c_str());
    QCOMPARE(ms->value(), 8.0);  // steps of 9, 8 and 4 ms
    QCOMPARE(*ms, profiler::stepTimeMs(*store->stepSummaries(run)));
  }

  void aRunTheStoreDoesNotHoldIsAnError() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    auto store = st::openStore(path, st::OpenMode::Create);
    QVERIFY(store.ok());
    auto ms = profiler::stepTimeMs(*store, st::RunId{7});
    QVERIFY(!ms.ok());
    QVERIFY2(ms.error().message.find("no run 7") != std::string::npos, ms.error().message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestStepTime)
#include "test_step_time.moc"
