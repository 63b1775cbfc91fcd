// The inputs of planning and analysis jobs without the CLI: a project from
// its sources, plan files (shardscope and TorchRec) and the cluster they run
// on, the trainer's plan of an imported trace with the kind of each error,
// a plan priced next to the optimized one, and analyses and fits of runs
// already in a store.
#include <QTemporaryDir>
#include <QtTest>

#include <string>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/workflow/profile_run.h"
#include "shardscope/profiler/workflow/project_inputs.h"
#include "shardscope/profiler/workflow/stored_runs.h"
#include "shardscope/profiler/workflow/trainer_plan.h"
#include "test_workflow_support.h"

using namespace shardscope;
namespace st = core::store;

namespace {
const std::string kData = SHARDSCOPE_TEST_DATA_DIR;
const std::string kTorchRecPlan = kData + "/torchrec/from_strided_8x4.json";
const std::string kTorchRecModel = kData + "/models/strided_8x4_model.json";
const std::string kPlan = kData + "/plans/strided_8x4.json";

// A store with one complete emulate run of the tiny model on all 4 ranks.
std::string storeWithOneRun(const QTemporaryDir& dir) {
  profiler::ProfileRequest r = test::tinyProfileRequest(dir);
  r.all_groups = true;
  r.plan = profiler::plannedProfilePlan(r, 4u).value();
  return profiler::runProfile(r, {}, nullptr).ok() ? r.store : std::string();
}
}  // namespace

class TestWorkflowPlans : public QObject {
  Q_OBJECT

 private slots:
  void sourcesReplaceTheDefaultProjectPartByPart() {
    auto p = profiler::resolveProject({});
    QVERIFY(p.ok());
    QVERIFY(*p == core::defaultProject());
    profiler::ProjectSources s;
    s.cluster = "h100x8";
    p = profiler::resolveProject(s);
    QVERIFY(p.ok());
    QCOMPARE(p->cluster.worldSize(), 8u);
    QCOMPARE(p->model.name, core::defaultProject().model.name);
    s.model = "no_such_preset";
    p = profiler::resolveProject(s);
    QVERIFY(!p);
    QVERIFY(p.error().kind == core::ErrorKind::InvalidInput);
  }

  void aClusterOfAnotherWorldSizeIsResizedUnlessChosen() {
    const core::ShardPlan plan = core::loadPlan(kPlan).value();
    const core::ClusterSpec h100x64 = core::clusterPreset("h100x64").value();
    auto resized = profiler::clusterForPlan(h100x64, plan, false);
    QVERIFY(resized.ok());
    QCOMPARE(resized->worldSize(), 32u);
    QCOMPARE(resized->name, h100x64.gpu.name + " x 32 (resized to the plan)");
    auto refused = profiler::clusterForPlan(h100x64, plan, true);
    QVERIFY(!refused);
    QVERIFY(refused.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(refused.error().message, std::string("the plan is for 32 GPUs but cluster h100x64 has 64"));
    const core::ClusterSpec same = core::resizedCluster(h100x64, 32, 8);
    QCOMPARE(profiler::clusterForPlan(same, plan, true)->name, same.name);
  }

  void aTorchRecPlanIsPlacedByItsWorldSizeAndLayout() {
    const core::ModelSpec model = core::loadModel(kTorchRecModel).value();
    auto loaded = profiler::loadPlanFile(kTorchRecPlan, model, 8, {std::string("32"), std::string("contiguous"), 0});
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    QVERIFY(loaded->from_torchrec);
    QCOMPARE(loaded->plan.world_size, 32u);
    QCOMPARE(loaded->plan.replicas, 4u);
    QVERIFY(loaded->plan.layout == core::RankLayout::Contiguous);
    auto one_group = profiler::loadPlanFile(kTorchRecPlan, model, 8, {});
    QVERIFY(one_group.ok());
    QCOMPARE(one_group->plan.replicas, 1u);
  }

  void aMalformedPlacementIsAUsageError() {
    const core::ModelSpec model = core::loadModel(kTorchRecModel).value();
    auto bad = profiler::loadPlanFile(kTorchRecPlan, model, 8, {std::string("abc"), std::nullopt, 0});
    QVERIFY(!bad);
    QVERIFY(bad.error().kind == core::ErrorKind::Usage);
    QCOMPARE(bad.error().message, std::string("--world-size must be a positive integer, got abc"));
    bad = profiler::loadPlanFile(kTorchRecPlan, model, 8, {std::nullopt, std::string("diagonal"), 0});
    QVERIFY(!bad);
    QVERIFY(bad.error().kind == core::ErrorKind::Usage);
    auto ours = profiler::loadPlanFile(kPlan, core::modelPreset("dcnv2").value(), 8, {std::string("32"), {}, 0});
    QVERIFY(!ours);
    QVERIFY(ours.error().kind == core::ErrorKind::Usage);
    QCOMPARE(ours.error().message, std::string("--world-size/--layout apply to TorchRec plans only"));
    auto missing = profiler::loadPlanFile(kData + "/plans/missing.json", model, 8, {});
    QVERIFY(!missing);
    QVERIFY(missing.error().kind == core::ErrorKind::InvalidInput);
  }

  void theTrainerPlanNeedsPlanAndModel() {
    profiler::TrainerPlanSpec spec;
    QVERIFY(!spec.any());
    spec.cluster = "h100x8";
    auto in = profiler::loadTrainerPlan(spec, 4);
    QVERIFY(!in);
    QVERIFY(in.error().kind == core::ErrorKind::Usage);
    spec.plan = kPlan;
    in = profiler::loadTrainerPlan(spec, 4);
    QVERIFY(!in);
    QVERIFY(in.error().kind == core::ErrorKind::Usage);
    spec.model = "dcnv2";
    in = profiler::loadTrainerPlan(spec, 4);  // 32-GPU plan, 8-GPU cluster
    QVERIFY(!in);
    QVERIFY(in.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(in.error().message, kPlan + ": the plan is for 32 GPUs but cluster h100x8 has 8");
    spec.cluster.reset();
    in = profiler::loadTrainerPlan(spec, 4);
    QVERIFY2(in.ok(), in.ok() ? "" : in.error().message.c_str());
    QCOMPARE(in->cluster->worldSize(), 32u);
    QCOMPARE(in->plan->world_size, 32u);
  }

  void aTorchRecTrainerPlanDefaultsToTheTracesRanks() {
    profiler::TrainerPlanSpec spec;
    spec.plan = kTorchRecPlan;
    spec.model = kTorchRecModel;
    auto in = profiler::loadTrainerPlan(spec, 16);
    QVERIFY2(in.ok(), in.ok() ? "" : in.error().message.c_str());
    QCOMPARE(in->plan->world_size, 16u);
    QCOMPARE(in->cluster->worldSize(), 16u);
  }

  void aGivenPlanIsPricedNextToTheOptimizedOne() {
    core::Project project = core::defaultProject();
    const core::ShardPlan plan = core::loadPlan(kPlan).value();
    const core::ClusterSpec cluster = profiler::clusterForPlan(project.cluster, plan, false).value();
    const auto compared = profiler::evaluatePlan(project, cluster, plan, false);
    QCOMPARE(compared.given.grid.group_size, plan.sharding_group_size);
    QCOMPARE(compared.optimized.grid.group_size, plan.sharding_group_size);
    QVERIFY(compared.given.step.step_ms > 0);
    QCOMPARE(compared.given.unpriced_tables.size(), project.model.tables.size() - plan.tables.size());
    std::uint64_t most = 0;
    for (const auto& r : compared.given.ranks) most = std::max(most, r.memory_bytes);
    QCOMPARE(compared.given.peakMemoryBytes(), most);
  }

  void aStoredRunIsAnalysedByIdOrAsTheLatest() {
    QTemporaryDir dir;
    const std::string store = storeWithOneRun(dir);
    QVERIFY(!store.empty());
    profiler::StoredRunAnalysisRequest request;
    request.store = store;
    auto latest = profiler::analyzeStoredRun(request);
    QVERIFY2(latest.ok(), latest.ok() ? "" : latest.error().message.c_str());
    QCOMPARE(latest->ranks.size(), std::size_t{4});
    request.run = st::RunId{1};
    QVERIFY(profiler::analyzeStoredRun(request).ok());
    request.run = st::RunId{9};
    auto missing = profiler::analyzeStoredRun(request);
    QVERIFY(!missing);
    QVERIFY(missing.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(missing.error().message, store + ": no run 9 in this store (runs: 1)");
    request.store = dir.filePath("none.sqlite").toStdString();
    QVERIFY(!profiler::analyzeStoredRun(request));
  }

  void storedRunsAreFitted() {
    QTemporaryDir dir;
    const std::string store = storeWithOneRun(dir);
    QVERIFY(!store.empty());
    const std::vector<st::RunId> fit{st::RunId{1}};
    auto report = profiler::calibrateStoredRuns(store, fit, {}, {});
    QVERIFY2(report.ok(), report.ok() ? "" : report.error().message.c_str());
    QVERIFY(!report->calibration.coefficients.empty());
    profiler::TrainerPlanSpec incomplete;
    incomplete.model = "dcnv2";
    auto usage = profiler::calibrateStoredRuns(store, fit, {}, incomplete);
    QVERIFY(!usage);
    QVERIFY(usage.error().kind == core::ErrorKind::Usage);
  }
};

QTEST_GUILESS_MAIN(TestWorkflowPlans)
#include "test_workflow_plans.moc"
