// Analysis jobs without the CLI: analyses and fits of runs already in a
// store, and the plan a run is predicted from in place of its own (the
// trainer's, a plan the caller holds, a plan file with the project's model and
// cluster). Plan files themselves are core's (tests/core/test_plan_file.cpp).
#include <QTemporaryDir>
#include <QtTest>

#include <string>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/workflow/profile_run.h"
#include "shardscope/profiler/workflow/stored_runs.h"
#include "shardscope/profiler/workflow/trainer_plan.h"
#include "test_workflow_support.h"

using namespace shardscope;
namespace st = core::store;

namespace {
// A store with one complete emulate run of the tiny model on all 4 ranks.
std::string storeWithOneRun(const QTemporaryDir& dir) {
  profiler::ProfileRequest r = test::tinyProfileRequest(dir);
  r.all_groups = true;
  r.plan = profiler::plannedProfilePlan(r, 4u).value();
  return profiler::runProfile(r, {}, nullptr).ok() ? r.store : std::string();
}

// The plan run 1 of `store` ran.
core::ShardPlan planOfFirstRun(const std::string& store) {
  auto opened = st::openStore(store, st::OpenMode::ReadOnly);
  return core::planFromJson(nlohmann::json::parse(opened->run(st::RunId{1})->plan_json), "run 1").value();
}
}  // namespace

class TestWorkflowPlans : public QObject {
  Q_OBJECT

 private slots:
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
    core::TrainerPlanSpec incomplete;
    incomplete.model = "dcnv2";
    auto usage = profiler::calibrateStoredRuns(store, fit, {}, incomplete);
    QVERIFY(!usage);
    QVERIFY(usage.error().kind == core::ErrorKind::Usage);
  }

  void theTrainerPlanOfARunIsPlacedOnItsRanks() {
    QTemporaryDir dir;
    const std::string store = storeWithOneRun(dir);
    QVERIFY(!store.empty());
    auto opened = st::openStore(store, st::OpenMode::ReadOnly);
    QVERIFY(opened.ok());
    auto none = profiler::trainerPlanForRun({}, *opened, st::RunId{1});
    QVERIFY(none.ok());
    QVERIFY(!*none);
    core::TrainerPlanSpec spec;
    spec.plan = std::string(SHARDSCOPE_TEST_DATA_DIR) + "/plans/strided_8x4.json";
    spec.model = "dcnv2";
    auto in = profiler::trainerPlanForRun(spec, *opened, st::RunId{1});
    QVERIFY2(in.ok(), in.ok() ? "" : in.error().message.c_str());
    QVERIFY(*in && (*in)->model && (*in)->cluster && (*in)->plan);
    QCOMPARE((*in)->cluster->worldSize(), 32u);
  }

  // The Measured page's plan file: read with the project's model, the
  // project's cluster resized to the plan, priced and compared with the run.
  void aSuppliedPlanFileIsReadResizedAndCompared() {
    QTemporaryDir dir;
    const std::string store = storeWithOneRun(dir);
    QVERIFY(!store.empty());
    const core::ShardPlan ran = planOfFirstRun(store);
    const std::string file = dir.filePath("ran.json").toStdString();
    QVERIFY(core::writeJsonFile(file, core::toJson(ran)).ok());
    const core::Project project = test::tinyProfileRequest(dir).project;
    profiler::SuppliedPlan supplied;
    supplied.file = file;
    supplied.model = project.model;
    supplied.cluster = core::resizedCluster(project.cluster, 8, project.cluster.gpus_per_node);
    auto opened = st::openStore(store, st::OpenMode::ReadOnly);
    QVERIFY(opened.ok());
    auto in = profiler::suppliedPlanInputs(supplied, *opened, st::RunId{1});
    QVERIFY2(in.ok(), in.ok() ? "" : in.error().message.c_str());
    QCOMPARE(in->plan->world_size, 4u);
    QCOMPARE(in->cluster->worldSize(), 4u);
    QVERIFY(in->cluster->name.find("(resized to the plan)") != std::string::npos);
    QCOMPARE(in->model->name, project.model.name);

    auto compared = profiler::runVsSuppliedPlan(store, st::RunId{1}, nullptr, &supplied);
    QVERIFY2(compared.ok(), compared.ok() ? "" : compared.error().message.c_str());
    QVERIFY2(compared->prediction.has_value(), compared->no_prediction.c_str());
    QCOMPARE(compared->inputs.cluster->name, in->cluster->name);
    QCOMPARE(compared->prediction->ranks.size(), std::size_t{4});

    // A plan the caller holds is taken as is, with the project's model and cluster.
    profiler::SuppliedPlan held;
    held.plan = ran;
    held.model = project.model;
    held.cluster = project.cluster;
    auto same = profiler::suppliedPlanInputs(held, *opened, st::RunId{1});
    QVERIFY(same.ok());
    QVERIFY(*same->plan == ran);
    QCOMPARE(same->cluster->name, project.cluster.name);

    // Without a supplied plan: the plan the run ran.
    auto own = profiler::runVsSuppliedPlan(store, st::RunId{1}, nullptr, nullptr);
    QVERIFY(own.ok());
    QVERIFY(own->prediction.has_value());

    supplied.file = dir.filePath("missing.json").toStdString();
    auto missing = profiler::runVsSuppliedPlan(store, st::RunId{1}, nullptr, &supplied);
    QVERIFY(!missing);
    QVERIFY(missing.error().kind == core::ErrorKind::InvalidInput);
    auto no_store =
        profiler::runVsSuppliedPlan(dir.filePath("none.sqlite").toStdString(), st::RunId{1}, nullptr, &held);
    QVERIFY(!no_store);
  }
};

QTEST_GUILESS_MAIN(TestWorkflowPlans)
#include "test_workflow_plans.moc"
