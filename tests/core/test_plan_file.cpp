// Plan files and what they are priced with: a project from its sources, plan
// files (shardscope and TorchRec) and the cluster they run on, the trainer's
// plan of an imported trace with the kind of each error.
#include <QtTest>

#include <string>

#include "shardscope/core/json_io.h"
#include "shardscope/core/plan_file.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/project_inputs.h"

using namespace shardscope;

namespace {
const std::string kData = SHARDSCOPE_TEST_DATA_DIR;
const std::string kTorchRecPlan = kData + "/torchrec/from_strided_8x4.json";
const std::string kTorchRecModel = kData + "/models/strided_8x4_model.json";
const std::string kPlan = kData + "/plans/strided_8x4.json";
}  // namespace

class TestPlanFile : public QObject {
  Q_OBJECT

 private slots:
  void sourcesReplaceTheDefaultProjectPartByPart() {
    auto p = core::resolveProject({});
    QVERIFY(p.ok());
    QVERIFY(*p == core::defaultProject());
    core::ProjectSources s;
    s.cluster = "h100x8";
    p = core::resolveProject(s);
    QVERIFY(p.ok());
    QCOMPARE(p->cluster.worldSize(), 8u);
    QCOMPARE(p->model.name, core::defaultProject().model.name);
    s.model = "no_such_preset";
    p = core::resolveProject(s);
    QVERIFY(!p);
    QVERIFY(p.error().kind == core::ErrorKind::InvalidInput);
  }

  void aClusterOfAnotherWorldSizeIsResizedUnlessChosen() {
    const core::ShardPlan plan = core::loadPlan(kPlan).value();
    const core::ClusterSpec h100x64 = core::clusterPreset("h100x64").value();
    auto resized = core::clusterForPlan(h100x64, plan, false);
    QVERIFY(resized.ok());
    QCOMPARE(resized->worldSize(), 32u);
    QCOMPARE(resized->name, h100x64.gpu.name + " x 32 (resized to the plan)");
    auto refused = core::clusterForPlan(h100x64, plan, true);
    QVERIFY(!refused);
    QVERIFY(refused.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(refused.error().message, std::string("the plan is for 32 GPUs but cluster h100x64 has 64"));
    const core::ClusterSpec same = core::resizedCluster(h100x64, 32, 8);
    QCOMPARE(core::clusterForPlan(same, plan, true)->name, same.name);
  }

  void aTorchRecPlanIsPlacedByItsWorldSizeAndLayout() {
    const core::ModelSpec model = core::loadModel(kTorchRecModel).value();
    auto loaded = core::loadPlanFile(kTorchRecPlan, model, 8, {std::string("32"), std::string("contiguous"), 0});
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    QVERIFY(loaded->from_torchrec);
    QCOMPARE(loaded->plan.world_size, 32u);
    QCOMPARE(loaded->plan.replicas, 4u);
    QVERIFY(loaded->plan.layout == core::RankLayout::Contiguous);
    auto one_group = core::loadPlanFile(kTorchRecPlan, model, 8, {});
    QVERIFY(one_group.ok());
    QCOMPARE(one_group->plan.replicas, 1u);
  }

  void aMalformedPlacementIsAUsageError() {
    const core::ModelSpec model = core::loadModel(kTorchRecModel).value();
    auto bad = core::loadPlanFile(kTorchRecPlan, model, 8, {std::string("abc"), std::nullopt, 0});
    QVERIFY(!bad);
    QVERIFY(bad.error().kind == core::ErrorKind::Usage);
    QCOMPARE(bad.error().message, std::string("--world-size must be a positive integer, got abc"));
    bad = core::loadPlanFile(kTorchRecPlan, model, 8, {std::nullopt, std::string("diagonal"), 0});
    QVERIFY(!bad);
    QVERIFY(bad.error().kind == core::ErrorKind::Usage);
    auto ours = core::loadPlanFile(kPlan, core::modelPreset("dcnv2").value(), 8, {std::string("32"), {}, 0});
    QVERIFY(!ours);
    QVERIFY(ours.error().kind == core::ErrorKind::Usage);
    QCOMPARE(ours.error().message, std::string("--world-size/--layout apply to TorchRec plans only"));
    auto missing = core::loadPlanFile(kData + "/plans/missing.json", model, 8, {});
    QVERIFY(!missing);
    QVERIFY(missing.error().kind == core::ErrorKind::InvalidInput);
  }

  void theTrainerPlanNeedsPlanAndModel() {
    core::TrainerPlanSpec spec;
    QVERIFY(!spec.any());
    spec.cluster = "h100x8";
    auto in = core::loadTrainerPlan(spec, 4);
    QVERIFY(!in);
    QVERIFY(in.error().kind == core::ErrorKind::Usage);
    spec.plan = kPlan;
    in = core::loadTrainerPlan(spec, 4);
    QVERIFY(!in);
    QVERIFY(in.error().kind == core::ErrorKind::Usage);
    spec.model = "dcnv2";
    in = core::loadTrainerPlan(spec, 4);  // 32-GPU plan, 8-GPU cluster
    QVERIFY(!in);
    QVERIFY(in.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(in.error().message, kPlan + ": the plan is for 32 GPUs but cluster h100x8 has 8");
    spec.cluster.reset();
    in = core::loadTrainerPlan(spec, 4);
    QVERIFY2(in.ok(), in.ok() ? "" : in.error().message.c_str());
    QCOMPARE(in->cluster.worldSize(), 32u);
    QCOMPARE(in->plan.world_size, 32u);
  }

  void aTorchRecTrainerPlanDefaultsToTheTracesRanks() {
    core::TrainerPlanSpec spec;
    spec.plan = kTorchRecPlan;
    spec.model = kTorchRecModel;
    auto in = core::loadTrainerPlan(spec, 16);
    QVERIFY2(in.ok(), in.ok() ? "" : in.error().message.c_str());
    QCOMPARE(in->plan.world_size, 16u);
    QCOMPARE(in->cluster.worldSize(), 16u);
  }
};

QTEST_APPLESS_MAIN(TestPlanFile)
#include "test_plan_file.moc"
