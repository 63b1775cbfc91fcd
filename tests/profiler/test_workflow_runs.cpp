// The run catalogue (listRunRows, runRow): what the Runs page lists, from
// real emulate runs and from a run whose JSON another build wrote.
#include <QTemporaryDir>
#include <QtTest>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/workflow/run_catalog.h"
#include "shardscope/profiler/workflow/run_comparison.h"
#include "test_workflow_support.h"

using namespace shardscope;
namespace st = core::store;

class TestWorkflowRuns : public QObject {
  Q_OBJECT

 private slots:
  void listsEngineRunsNewestFirstWithTheirGridAndSteps() {
    QTemporaryDir dir;
    profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    for (const std::uint32_t m : {2u, 4u}) {
      r.plan = profiler::plannedProfilePlan(r, m).value();
      auto outcome = profiler::runProfile(r, {}, nullptr);
      QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().message.c_str());
    }
    auto store = st::openStore(r.store);
    QVERIFY(store.ok());
    auto rows = profiler::listRunRows(*store);
    QVERIFY2(rows.ok(), rows.ok() ? "" : rows.error().message.c_str());
    QCOMPARE(rows->size(), std::size_t{2});
    const profiler::RunRow& newest = rows->front();
    QVERIFY(static_cast<std::int64_t>(newest.id) > static_cast<std::int64_t>(rows->back().id));
    QCOMPARE(newest.sharding_group_size, 4u);
    QCOMPARE(newest.replicas, 1u);
    QCOMPARE(rows->back().sharding_group_size, 2u);
    QCOMPARE(rows->back().replicas, 2u);
    QCOMPARE(newest.kind, std::string("emulate"));
    QCOMPARE(newest.mode, std::string("emulate"));
    QCOMPARE(newest.model, r.project.model.name);
    QCOMPARE(newest.status, st::RunStatus::Complete);
    QCOMPARE(newest.steps, std::int64_t{2});
    QVERIFY(newest.median_step_ms.has_value() && *newest.median_step_ms > 0);
    QVERIFY(!newest.created_at.empty());

    // The median is over every (rank, step) total of the run.
    auto summaries = store->stepSummaries(newest.id);
    std::vector<double> totals;
    for (const auto& s : *summaries) totals.push_back(static_cast<double>(s.total_ns) / 1e6);
    std::sort(totals.begin(), totals.end());
    const std::size_t n = totals.size();
    const double median = n % 2 ? totals[n / 2] : 0.5 * (totals[n / 2 - 1] + totals[n / 2]);
    QCOMPARE(*newest.median_step_ms, median);

    // Side by side: the phases and every rank, A, B and B - A, as the analysis gives them.
    const st::RunId a = rows->back().id, b = newest.id;
    auto c = profiler::compareRuns(*store, a, b);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QCOMPARE(c->phases.size(), std::size_t{5});
    QCOMPARE(c->ranks.size(), std::size_t{4});
    auto analysis_b = profiler::analyzeRun(*store, b, {});
    double step_b = 0;
    for (const auto& rank : analysis_b->ranks) step_b += rank.step_ms;
    step_b /= static_cast<double>(analysis_b->ranks.size());
    QCOMPARE(c->phases.back().name, std::string("step"));
    QCOMPARE(*c->phases.back().b_ms, step_b);
    // Emulate measures one sharding group: of M=2 x R=2 ranks 0 and 2, of M=4 all four.
    int both = 0;
    for (const auto& rank : c->ranks) {
      QVERIFY(rank.b_ms.has_value());
      if (!rank.a_ms) {
        QVERIFY(!rank.differenceMs());
        continue;
      }
      ++both;
      QCOMPARE(*rank.differenceMs(), *rank.b_ms - *rank.a_ms);
    }
    QCOMPARE(both, 2);
    QCOMPARE(*c->ranks.front().b_ms, analysis_b->ranks.front().compute_ms);
    QVERIFY(!profiler::compareRuns(*store, a, st::RunId{999}).ok());
  }

  void aRunWithForeignJsonStillLists() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    st::RunHeader header;
    header.kind = st::RunKind::ImportKineto;
    header.label = "trainer";
    header.model_json = "[1, 2]";                                      // not an object
    header.config_json = R"({"grid": {"sharding_group_size": "8"}})";  // a string, not a number
    header.plan_json = "{not json";
    auto writer = st::RunWriter::begin(path, header);
    QVERIFY(writer.ok());
    QVERIFY(writer->fail("parse error").ok());
    auto store = st::openStore(path);
    auto rows = profiler::listRunRows(*store);
    QVERIFY(rows.ok());
    QCOMPARE(rows->size(), std::size_t{1});
    const profiler::RunRow& row = rows->front();
    QCOMPARE(row.kind, std::string("import-kineto"));
    QCOMPARE(row.mode, std::string("import-kineto"));
    QCOMPARE(row.label, std::string("trainer"));
    QCOMPARE(row.model, std::string());
    QCOMPARE(row.sharding_group_size, 0u);
    QCOMPARE(row.status, st::RunStatus::Failed);
    QCOMPARE(row.error, std::string("parse error"));
    QCOMPARE(row.steps, std::int64_t{0});
    QVERIFY(!row.median_step_ms);
    auto one = profiler::runRow(*store, row.id);
    QVERIFY(one.ok());
    QCOMPARE(one->label, row.label);
    QVERIFY(!profiler::runRow(*store, st::RunId{42}).ok());
  }
};

QTEST_GUILESS_MAIN(TestWorkflowRuns)
#include "test_workflow_runs.moc"
