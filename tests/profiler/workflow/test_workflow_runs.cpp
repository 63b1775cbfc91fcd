// The run catalogue (listRunRows, runRow): what the Runs page lists, from
// real emulate runs and from a run whose JSON another build wrote; and two
// runs compared like with like (compareRuns): ranks paired by their role,
// shares instead of milliseconds across kinds of device.
#include <QTemporaryDir>
#include <QtTest>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/analysis/step_time.h"
#include "shardscope/profiler/workflow/run_catalog.h"
#include "shardscope/profiler/workflow/run_comparison.h"
#include "test_workflow_support.h"

using namespace shardscope;
namespace st = core::store;

namespace {

constexpr char kCpuConfig[] =
    R"({"schema": "shardscope.engine-run/1", "mode": "emulate", "cpu": "Intel Xeon Gold 6230", "threads": 2})";
constexpr char kH100Config[] =
    R"json({"schema": "shardscope.engine-run/1", "mode": "cuda", "device": "cuda",
        "gpus": ["NVIDIA H100 80GB HBM3 (GPU 0)", "NVIDIA H100 80GB HBM3 (GPU 1)"]})json";

// One rank's embedding forward, backward and whole step, ms, the same in each of three steps.
struct RankTimes {
  int rank = 0;
  double fwd_ms = 0, bwd_ms = 0, step_ms = 0;
};

st::RunId writeRun(const std::string& path, const std::string& config, const std::string& plan,
                   const std::vector<RankTimes>& ranks) {
  st::RunHeader header;
  header.config_json = config;
  header.plan_json = plan;
  auto writer = st::RunWriter::begin(path, header);
  if (!writer) qFatal("%s", writer.error().message.c_str());
  for (std::int64_t step = 0; step < 3; ++step)
    for (const RankTimes& t : ranks) {
      st::StepSummary s;
      s.step = step;
      s.rank = t.rank;
      s.emb_fwd_ns = static_cast<std::int64_t>(t.fwd_ms * 1e6);
      s.emb_bwd_ns = static_cast<std::int64_t>(t.bwd_ms * 1e6);
      s.total_ns = static_cast<std::int64_t>(t.step_ms * 1e6);
      if (!writer->addStepSummary(s).ok()) qFatal("step summary");
    }
  const st::RunId id = writer->run();
  if (!writer->finish().ok()) qFatal("finish");
  return id;
}

// Two emulate runs of the tiny model on the 4-rank CPU cluster: M=2 x R=2, then M=4 x R=1 (both strided).
std::string profileTwoGrids(const QTemporaryDir& dir) {
  profiler::ProfileRequest r = test::tinyProfileRequest(dir);
  for (const std::uint32_t m : {2u, 4u}) {
    r.plan = profiler::plannedProfilePlan(r, m).value();
    auto outcome = profiler::runProfile(r, {}, nullptr);
    if (!outcome) qFatal("%s", outcome.error().message.c_str());
  }
  return r.store;
}

const profiler::ComparedValue* named(const std::vector<profiler::ComparedValue>& values, const std::string& name) {
  for (const auto& v : values)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

class TestWorkflowRuns : public QObject {
  Q_OBJECT

 private slots:
  void listsEngineRunsNewestFirstWithTheirGridLayoutBatchDeviceAndRanks() {
    QTemporaryDir dir;
    const std::string path = profileTwoGrids(dir);
    auto store = st::openStore(path);
    QVERIFY(store.ok());
    auto rows = profiler::listRunRows(*store);
    QVERIFY2(rows.ok(), rows.ok() ? "" : rows.error().message.c_str());
    QCOMPARE(rows->size(), std::size_t{2});
    const profiler::RunRow& newest = rows->front();
    const profiler::RunRow& oldest = rows->back();
    QVERIFY(static_cast<std::int64_t>(newest.id) > static_cast<std::int64_t>(oldest.id));
    QCOMPARE(newest.sharding_group_size, 4u);
    QCOMPARE(newest.replicas, 1u);
    QCOMPARE(oldest.sharding_group_size, 2u);
    QCOMPARE(oldest.replicas, 2u);
    QCOMPARE(newest.layout, std::string("strided"));
    QCOMPARE(newest.kind, std::string("emulate"));
    QCOMPARE(newest.model, test::tinyProfileRequest(dir).project.model.name);
    QCOMPARE(newest.batch_size_per_gpu, test::tinyProfileRequest(dir).project.model.batch_size_per_gpu);
    QVERIFY(newest.device.kind == core::DeviceClass::Cpu);
    QCOMPARE(newest.status, st::RunStatus::Complete);
    QCOMPARE(newest.steps, std::int64_t{2});
    QVERIFY(!newest.created_at.empty());
    // Emulate measures one sharding group of the world: both of M=2's, all four of M=4's.
    QCOMPARE(oldest.world_size, 4u);
    QCOMPARE(oldest.measured_ranks, 2u);
    QCOMPARE(newest.world_size, 4u);
    QCOMPARE(newest.measured_ranks, 4u);
  }

  void theListedStepTimeIsTheRunsStepTime() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    // Rank 1 is the slowest rank of every step: 9 ms, where the median over (rank, step) is 5 ms.
    writeRun(path, kCpuConfig, "", {{0, 1, 1, 1}, {1, 1, 1, 9}, {2, 1, 1, 5}, {3, 1, 1, 5}});
    auto store = st::openStore(path);
    auto rows = profiler::listRunRows(*store);
    QVERIFY(rows.ok());
    QCOMPARE(rows->front().step_ms.value(), 9.0);
    QCOMPARE(rows->front().step_ms, profiler::stepTimeMs(*store->stepSummaries(rows->front().id)));
    // The analysis behind the Measured page and report states the same number.
    auto analysis = profiler::analyzeRun(*store, rows->front().id, {});
    QVERIFY(analysis.ok());
    QCOMPARE(analysis->step_time_ms, 9.0);
    QCOMPARE(profiler::reportJson(*analysis)["step_time_ms"].get<double>(), 9.0);
  }

  void ranksWithPlansArePairedBySharingGroupAndGroupRank() {
    QTemporaryDir dir;
    const std::string path = profileTwoGrids(dir);
    auto store = st::openStore(path);
    auto rows = profiler::listRunRows(*store);
    const st::RunId a = rows->back().id, b = rows->front().id;  // M=2 x R=2, M=4 x R=1
    auto c = profiler::compareRuns(*store, a, b);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QVERIFY(c->matching == profiler::RankMatching::GroupAndGroupRank);
    QVERIFY2(c->matching_note.find("sharding group and group rank") != std::string::npos, c->matching_note.c_str());
    // Strided M=2: group 0 is global ranks 0 and 2. Its group rank 1 (rank 2) pairs with M=4's group rank 1
    // (rank 1), not with M=4's rank 2 (group rank 2, which A has no counterpart of).
    QCOMPARE(c->ranks.size(), std::size_t{4});
    const profiler::ComparedValue* second = named(c->ranks, "group 0, group rank 1");
    QVERIFY(second != nullptr);
    QCOMPARE(second->a_rank, 2);
    QCOMPARE(second->b_rank, 1);
    auto analysis_a = profiler::analyzeRun(*store, a, {});
    auto analysis_b = profiler::analyzeRun(*store, b, {});
    QCOMPARE(*second->a, analysis_a->ranks.back().compute_ms);
    QCOMPARE(*second->b, analysis_b->ranks[1].compute_ms);
    QCOMPARE(*second->difference(), *second->b - *second->a);
    const profiler::ComparedValue* fourth = named(c->ranks, "group 0, group rank 3");
    QVERIFY(fourth != nullptr && !fourth->a && fourth->b && !fourth->difference());
    QVERIFY(!profiler::compareRuns(*store, a, st::RunId{999}).ok());
  }

  void runsOnTheSameKindOfDeviceCompareMillisecondsAndTheirStepTimes() {
    QTemporaryDir dir;
    const std::string path = profileTwoGrids(dir);
    auto store = st::openStore(path);
    auto rows = profiler::listRunRows(*store);
    const st::RunId a = rows->back().id, b = rows->front().id;
    auto c = profiler::compareRuns(*store, a, b);
    QVERIFY(c.ok());
    QVERIFY(!c->shares);
    QVERIFY(c->basis_note.empty());
    QCOMPARE(c->phases.size(), std::size_t{6});  // five phases, then the step
    QCOMPARE(c->phases.front().name, std::string("embedding fwd"));
    QCOMPARE(c->phases.back().name, std::string("step"));
    QCOMPARE(c->phases.back().a, *profiler::stepTimeMs(*store, a));
    QCOMPARE(c->phases.back().b, *profiler::stepTimeMs(*store, b));
    for (const auto& v : c->phases) QVERIFY(v.unit == profiler::ComparedUnit::Milliseconds);
    auto analysis_b = profiler::analyzeRun(*store, b, {});
    double fwd = 0;
    for (const auto& rank : analysis_b->ranks) fwd += rank.emb_fwd_ms;
    QCOMPARE(*c->phases.front().b, fwd / static_cast<double>(analysis_b->ranks.size()));
    QCOMPARE(c->imbalance.front().b.value(), analysis_b->overall.max_over_mean);
  }

  void ranksWithoutAPlanArePairedByGlobalRankAndTheRunIsNamed() {
    QTemporaryDir dir;
    const std::string path = profileTwoGrids(dir);
    const st::RunId planless = writeRun(path, kCpuConfig, "", {{0, 1, 1, 3}, {1, 2, 1, 3}});
    auto store = st::openStore(path);
    auto c = profiler::compareRuns(*store, st::RunId{1}, planless);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QVERIFY(c->matching == profiler::RankMatching::GlobalRank);
    QVERIFY2(c->matching_note.find("run 3 has no plan") != std::string::npos, c->matching_note.c_str());
    const profiler::ComparedValue* rank2 = named(c->ranks, "rank 2");  // run 1's group rank 1, absent in run 3
    QVERIFY(rank2 != nullptr && rank2->a && !rank2->b);
  }

  void runsThatMeasuredDifferentGroupsArePairedByGroupRank() {
    QTemporaryDir dir;
    const std::string path = profileTwoGrids(dir);
    auto store = st::openStore(path);
    const std::string plan = store->run(st::RunId{1})->plan_json;  // M=2 x R=2: group 1 is ranks 1 and 3
    // On this machine's CPU, as run 1: milliseconds are compared.
    const std::string config = store->run(st::RunId{1})->config_json;
    const st::RunId other = writeRun(path, config, plan, {{1, 1, 1, 3}, {3, 2, 2, 5}});
    auto c = profiler::compareRuns(*store, st::RunId{1}, other);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QVERIFY(c->matching == profiler::RankMatching::GroupRank);
    QCOMPARE(c->ranks.size(), std::size_t{2});
    QCOMPARE(c->ranks[1].name, std::string("group rank 1"));
    QCOMPARE(c->ranks[1].a_rank, 2);
    QCOMPARE(c->ranks[1].b_rank, 3);
    QCOMPARE(c->ranks[1].b.value(), 4.0);
  }

  void runsOnDifferentDevicesCompareSharesAndSayWhy() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.sqlite").toStdString();
    const st::RunId cpu = writeRun(path, kCpuConfig, "", {{0, 2, 1, 10}, {1, 0.5, 0.5, 10}});
    const st::RunId gpu = writeRun(path, kH100Config, "", {{0, 0.1, 0.1, 1}, {1, 0.1, 0.1, 1}});
    auto store = st::openStore(path);
    auto c = profiler::compareRuns(*store, cpu, gpu);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QVERIFY(c->shares);
    QVERIFY2(c->basis_note.starts_with("run 1 ran on CPU (Intel Xeon Gold 6230, 2 threads), run 2 on H100 ("),
             c->basis_note.c_str());
    QVERIFY2(c->basis_note.find("shares of the group's embedding work") != std::string::npos, c->basis_note.c_str());
    // Rank 0 did 3 of the CPU group's 4 ms; each H100 rank half of its group's.
    QCOMPARE(c->ranks.size(), std::size_t{2});
    QVERIFY(c->ranks[0].unit == profiler::ComparedUnit::Share);
    QCOMPARE(c->ranks[0].a.value(), 0.75);
    QCOMPARE(c->ranks[0].b.value(), 0.5);
    QCOMPARE(c->ranks[1].a.value(), 0.25);
    // No milliseconds cross devices: the phases are parts of each run's measured phases, without the step.
    QVERIFY(named(c->phases, "step") == nullptr);
    double a_sum = 0, b_sum = 0;
    for (const auto& v : c->phases) {
      QVERIFY(v.unit == profiler::ComparedUnit::Share);
      a_sum += v.a.value_or(0);
      b_sum += v.b.value_or(0);
    }
    QCOMPARE(a_sum, 1.0);
    QCOMPARE(b_sum, 1.0);
    // max / mean is the same figure on any device: 3 / 2 ms on the CPU, 1 on the H100.
    QVERIFY(c->imbalance.front().unit == profiler::ComparedUnit::Ratio);
    QCOMPARE(c->imbalance.front().a.value(), 1.5);
    QCOMPARE(c->imbalance.front().b.value(), 1.0);
    QCOMPARE(c->a_step_ms.value(), 10.0);
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
    QCOMPARE(row.label, std::string("trainer"));
    QCOMPARE(row.model, std::string());
    QCOMPARE(row.sharding_group_size, 0u);
    QCOMPARE(row.status, st::RunStatus::Failed);
    QCOMPARE(row.error, std::string("parse error"));
    QCOMPARE(row.steps, std::int64_t{0});
    QVERIFY(!row.step_ms);
    QVERIFY(row.device.kind == core::DeviceClass::Unknown);
    QCOMPARE(row.batch_size_per_gpu, 0u);
    QCOMPARE(row.world_size, 0u);
    auto one = profiler::runRow(*store, row.id);
    QVERIFY(one.ok());
    QCOMPARE(one->label, row.label);
    QVERIFY(!profiler::runRow(*store, st::RunId{42}).ok());
  }
};

QTEST_GUILESS_MAIN(TestWorkflowRuns)
#include "test_workflow_runs.moc"
