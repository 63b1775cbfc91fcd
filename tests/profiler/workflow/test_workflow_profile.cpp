// The profile workflow without the CLI: choosing the plan, an emulate run
// stored and analysed with its progress stages, a cancelled run, the
// calibration protocol at three batch sizes, and the engine launcher
// (command line, following a process's output, cancelling its group).
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/workflow/engine_launch.h"
#include "shardscope/profiler/workflow/profile_run.h"
#include "test_workflow_support.h"

using namespace shardscope;
namespace st = core::store;
using profiler::ProfileProgress;

namespace {
const std::string kData = SHARDSCOPE_TEST_DATA_DIR;

// A request that runs the tiny model's plan for sharding group size 2 through `launcher`.
profiler::ProfileRequest mpiRequest(const QTemporaryDir& dir, const std::string& launcher) {
  profiler::ProfileRequest r = test::tinyProfileRequest(dir);
  r.plan = profiler::plannedProfilePlan(r, 2u).value();
  r.mode = profiler::ProfileMode::Mpi;
  r.launcher = launcher;
  return r;
}
}  // namespace

class TestWorkflowProfile : public QObject {
  Q_OBJECT

 private slots:
  void batchAndSyncIntervalOverrideTheProject() {
    QTemporaryDir dir;
    profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    r.project.sync_interval = 0;
    QCOMPARE(profiler::profileModel(r).batch_size_per_gpu, 128u);
    QCOMPARE(profiler::profileSyncInterval(r), 1u);
    r.project.sync_interval = 3;
    QCOMPARE(profiler::profileSyncInterval(r), 3u);
    r.batch = 32;
    r.sync_interval = 5;
    QCOMPARE(profiler::profileModel(r).batch_size_per_gpu, 32u);
    QCOMPARE(profiler::profileSyncInterval(r), 5u);
  }

  void plannedPlanHasTheAskedGroupSize() {
    QTemporaryDir dir;
    const profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    auto two = profiler::plannedProfilePlan(r, 2u);
    QVERIFY(two.ok());
    QCOMPARE(two->sharding_group_size, 2u);
    QCOMPARE(two->world_size, 4u);
    auto best = profiler::plannedProfilePlan(r, std::nullopt);
    QVERIFY(best.ok());
    QCOMPARE(best->world_size, 4u);
  }

  void aPlanFileForAnotherWorldSizeIsInvalidInput() {
    QTemporaryDir dir;
    const profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    const std::string path = kData + "/plans/strided_8x4.json";
    auto plan = profiler::profilePlanFromFile(r, path);
    QVERIFY(!plan);
    QVERIFY(plan.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(plan.error().file, path);
    QCOMPARE(plan.error().json_path, std::string("/world_size"));
    QVERIFY2(plan.error().message.find("the plan is for 32 GPUs but the cluster has 4") != std::string::npos,
             plan.error().message.c_str());
  }

  void anEmulateRunIsStoredAnalysedAndShowsItsStage() {
    QTemporaryDir dir;
    profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    r.plan = profiler::plannedProfilePlan(r, 2u).value();
    std::vector<ProfileProgress> events;
    auto outcome = profiler::runProfile(
        r, [&](const ProfileProgress& p) { events.push_back(p); }, nullptr);
    QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().message.c_str());
    QCOMPARE(outcome->analysis.ranks.size(), std::size_t{2});  // sharding group 0 of M = 2
    const auto runs = test::storedRuns(r.store);
    QCOMPARE(runs.size(), std::size_t{1});
    QVERIFY(runs.front().isComplete());
    QVERIFY(runs.front().id == outcome->run);
    QCOMPARE(runs.front().label, std::string("emulate tiny engine fixture M=2 R=2"));
    QVERIFY(events.size() >= 3);
    QVERIFY(events.front().kind == ProfileProgress::Kind::Begin);
    QCOMPARE(events.front().stage, std::string("emulate"));
    QVERIFY(events.back().kind == ProfileProgress::Kind::End);
    const ProfileProgress& last_step = events[events.size() - 2];
    QVERIFY(last_step.kind == ProfileProgress::Kind::Step);
    QCOMPARE(last_step.done, last_step.total);
  }

  void aCancelledRunIsMarkedFailed() {
    QTemporaryDir dir;
    profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    r.plan = profiler::plannedProfilePlan(r, 2u).value();
    r.label = "to cancel";
    const std::atomic<bool> cancel{true};
    auto outcome = profiler::runProfile(r, {}, &cancel);
    QVERIFY(!outcome);
    QVERIFY(outcome.error().kind == core::ErrorKind::Cancelled);
    QVERIFY2(outcome.error().message.starts_with("cancelled; run 1 in "), outcome.error().message.c_str());
    const auto runs = test::storedRuns(r.store);
    QCOMPARE(runs.size(), std::size_t{1});
    QVERIFY(runs.front().status == st::RunStatus::Failed);
    QCOMPARE(runs.front().label, std::string("to cancel"));
  }

  void calibrationFitsOnQuarterAndFullBatchAndHoldsOutHalf() {
    QTemporaryDir dir;
    profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    r.plan = profiler::plannedProfilePlan(r, 4u).value();
    auto outcome = profiler::runProfile(r, {}, nullptr);
    QVERIFY(outcome.ok());
    std::vector<std::string> stages;
    auto cal = profiler::calibrateProfile(
        r, outcome->run, std::nullopt,
        [&](const ProfileProgress& p) {
          if (p.kind == ProfileProgress::Kind::Begin) stages.push_back(p.stage);
        },
        nullptr);
    QVERIFY2(cal.ok(), cal.ok() ? "" : cal.error().message.c_str());
    QCOMPARE(stages, (std::vector<std::string>{"calibrate B=32", "calibrate B=64"}));
    QCOMPARE(cal->path, r.store + ".calibration.json");
    QCOMPARE(cal->report.fit_runs.size(), std::size_t{2});
    QCOMPARE(cal->report.holdout_runs.size(), std::size_t{1});
    QVERIFY(cal->report.fit_runs.front() == outcome->run);
    auto written = core::loadCalibration(cal->path);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
    QCOMPARE(test::storedRuns(r.store).size(), std::size_t{3});
  }

  void anEmptyLauncherIsAUsageError() {
    QTemporaryDir dir;
    auto outcome = profiler::runProfile(mpiRequest(dir, "  "), {}, nullptr);
    QVERIFY(!outcome);
    QVERIFY(outcome.error().kind == core::ErrorKind::Usage);
    QCOMPARE(outcome.error().message, std::string("--launcher is empty"));
  }

  void aFailingLauncherIsAnIoErrorWithoutARun() {
    QTemporaryDir dir;
    auto outcome = profiler::runProfile(mpiRequest(dir, "false"), {}, nullptr);
    QVERIFY(!outcome);
    QVERIFY(outcome.error().kind == core::ErrorKind::Io);
    QCOMPARE(outcome.error().message, std::string("the launcher exited with status 1 before the engine created a run"));
    outcome = profiler::runProfile(mpiRequest(dir, "/nonexistent/launcher -n {N}"), {}, nullptr);
    QVERIFY(!outcome);
    QVERIFY(outcome.error().kind == core::ErrorKind::Io);
    QVERIFY2(outcome.error().message.find("/nonexistent/launcher") != std::string::npos,
             outcome.error().message.c_str());
  }

  void launcherCommandReplacesTheWorldSize() {
    QCOMPARE(profiler::launcherCommand(std::string("srun -n {N} --label={N}x"), 8),
             (std::vector<std::string>{"srun", "-n", "8", "--label=8x"}));
    QVERIFY(profiler::launcherCommand(std::string(" \t"), 8).empty());
    const auto fits = profiler::launcherCommand(std::nullopt, 1, false);
    QCOMPARE(fits, (std::vector<std::string>{"mpirun", "-np", "1"}));
    const unsigned many = std::max(1u, std::thread::hardware_concurrency()) + 1;
    const auto over = profiler::launcherCommand(std::nullopt, many, false);
    QCOMPARE(over.back(), std::string("--oversubscribe"));
    // As root, the default mpirun is told that it may run as root (OpenMPI refuses otherwise).
    QCOMPARE(profiler::launcherCommand(std::nullopt, 1, true),
             (std::vector<std::string>{"mpirun", "-np", "1", "--allow-run-as-root"}));
    // A launcher the user gives is taken as it is.
    QCOMPARE(profiler::launcherCommand(std::string("mpirun -np {N}"), many, true).size(), std::size_t{3});
  }

  void aLaunchersRootRefusalNamesTheExactFix() {
    QTemporaryDir dir;
    // What OpenMPI's mpirun prints as root without --allow-run-as-root, and its exit status.
    const QString fake = dir.filePath("fake-mpirun");
    QFile f(fake);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "#!/bin/sh\n"
        "echo '--------------------------------------------------------------------------' >&2\n"
        "echo 'mpirun has detected an attempt to run as root.' >&2\n"
        "echo 'You can override this protection by adding the --allow-run-as-root option' >&2\n"
        "exit 1\n");
    f.close();
    QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    auto outcome = profiler::runProfile(mpiRequest(dir, (fake + " -np {N}").toStdString()), {}, nullptr);
    QVERIFY(!outcome);
    QVERIFY(outcome.error().kind == core::ErrorKind::Io);
    QCOMPARE(outcome.error().message,
             std::string("the launcher exited with status 1 before the engine created a run: OpenMPI refuses to run "
                         "as root: add --allow-run-as-root to your launcher (e.g. --launcher \"mpirun "
                         "--allow-run-as-root -np {N}\") or set OMPI_ALLOW_RUN_AS_ROOT=1 "
                         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"));
    QVERIFY(profiler::launcherFailureHint({"some other failure"}).empty());
  }

  void launchKeepsTheStderrTail() {
    std::vector<std::string> errors;
    profiler::EngineLaunchCallbacks callbacks;
    callbacks.error_output = [&](const std::string& line) { errors.push_back(line); };
    auto outcome = profiler::launchEngine(
        {"/bin/sh", "-c", "i=0; while [ $i -lt 45 ]; do echo e$i >&2; i=$((i+1)); done; echo run 4; printf x >&2"},
        callbacks, nullptr);
    QVERIFY(outcome.ok());
    QVERIFY(outcome->run == st::RunId{4});
    QCOMPARE(errors.size(), std::size_t{46});
    QCOMPARE(outcome->stderr_tail.size(), std::size_t{40});
    QCOMPARE(outcome->stderr_tail.front(), std::string("e6"));
    QCOMPARE(outcome->stderr_tail.back(), std::string("x"));
  }

  void theEngineGivenOrFromTheEnvironmentIsUsed() {
    QCOMPARE(profiler::findEngine(std::string("/opt/engine")), std::string("/opt/engine"));
    qputenv("SHARDSCOPE_ENGINE", "/from/env/engine");
    QCOMPARE(profiler::findEngine(std::nullopt), std::string("/from/env/engine"));
    qunsetenv("SHARDSCOPE_ENGINE");
  }

  void launchFollowsTheRunIdProgressAndOtherLines() {
    std::vector<std::string> progress, output;
    profiler::EngineLaunchCallbacks callbacks;
    callbacks.progress = [&](std::uint64_t done, std::uint64_t total, std::string_view what) {
      progress.push_back(std::to_string(done) + "/" + std::to_string(total) + " " + std::string(what));
    };
    callbacks.output = [&](const std::string& line) { output.push_back(line); };
    std::vector<std::pair<std::int64_t, std::vector<double>>> steps;
    callbacks.step = [&](std::int64_t step, const std::vector<double>& ms) { steps.emplace_back(step, ms); };
    auto outcome =
        profiler::launchEngine({"/bin/sh", "-c",
                                "echo run 7; echo progress 1 2 warm-up; echo step 0 1.5 2.25; "
                                "echo step x; echo step 1 3 oops; echo progress 2 2; echo hello; printf tail"},
                               callbacks, nullptr);
    QVERIFY(outcome.ok());
    QCOMPARE(outcome->exit_code, 0);
    QVERIFY(!outcome->cancelled);
    QVERIFY(outcome->run == st::RunId{7});
    QCOMPARE(progress, (std::vector<std::string>{"1/2 warm-up", "2/2 step 2 of 2"}));
    // Each rank's step time; a malformed step line is passed on as output.
    QCOMPARE(steps.size(), std::size_t{1});
    QCOMPARE(steps.front().first, std::int64_t{0});
    QCOMPARE(steps.front().second, (std::vector<double>{1.5, 2.25}));
    QCOMPARE(output, (std::vector<std::string>{"step x", "step 1 3 oops", "hello", "tail"}));
  }

  void cancelSendsTheProcessGroupSigusr1() {
    std::atomic<bool> cancel{false};
    profiler::EngineLaunchCallbacks callbacks;
    callbacks.progress = [&](std::uint64_t, std::uint64_t, std::string_view) { cancel.store(true); };
    auto outcome = profiler::launchEngine(
        {"/bin/sh", "-c", "trap 'exit 5' USR1; echo run 3; echo progress 1 9; while :; do sleep 0.05; done"}, callbacks,
        &cancel);
    QVERIFY(outcome.ok());
    QVERIFY(outcome->cancelled);
    QCOMPARE(outcome->exit_code, 5);
    QVERIFY(outcome->run == st::RunId{3});
  }

  void aLauncherThatCannotStartIsAnIoError() {
    auto outcome = profiler::launchEngine({"/nonexistent/launcher"}, {}, nullptr);
    QVERIFY(!outcome);
    QVERIFY(outcome.error().kind == core::ErrorKind::Io);
    QVERIFY(!profiler::launchEngine({}, {}, nullptr));
  }
};

QTEST_GUILESS_MAIN(TestWorkflowProfile)
#include "test_workflow_profile.moc"
