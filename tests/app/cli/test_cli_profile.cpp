// shardscope-cli profile: argument errors, an emulate run end to end (store,
// report, calibration file), cancellation with Ctrl-C (run failed, other runs
// untouched), launcher failures, and (with MPI) a run through mpirun.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"

namespace st = shardscope::core::store;

#include "cli_run.h"

namespace {

using cli_test::Run;

const QString kModel = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/engine/tiny_model.json");
const QString kCluster = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/engine/cpu4.json");

QProcessEnvironment mpiEnvironment() {
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
  env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  env.insert("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
  return env;
}

Run cli(const QStringList& args, int timeout_ms = 120000) {
  return cli_test::runCli(args, {.timeout_ms = timeout_ms, .env = mpiEnvironment()});
}

QStringList base(const QString& store) {
  return {"profile", "--model", kModel, "--cluster", kCluster, "--store", store, "--threads", "1"};
}

}  // namespace

class TestCliProfile : public QObject {
  Q_OBJECT

 private slots:
  void badArgumentsAreUsageErrors() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    Run r = cli({"profile", "--model", kModel, "--cluster", kCluster});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--store F is required"), qPrintable(r.err));
    r = cli(base(store) << "--mode"
                        << "gpu");
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("--mode must be emulate or mpi"));
    r = cli(base(store) << "--grid"
                        << "3");
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("--grid must be a divisor of N = 4"));
    r = cli(base(store) << "--memory-budget"
                        << "lots");
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("--memory-budget must be a size"));
    r = cli(base(store) << "--steps"
                        << "0");
    QCOMPARE(r.code, 2);
    r = cli(base(store) << "--plan"
                        << "p.json"
                        << "--grid"
                        << "2");
    QCOMPARE(r.code, 2);
    r = cli(base(store) << "--bogus");
    QCOMPARE(r.code, 2);
    QVERIFY(!QFile::exists(store));
  }

  void badInputFilesNameTheFile() {
    QTemporaryDir dir;
    const QString plan = dir.filePath("plan.json");
    QFile f(plan);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"schema\": \"shardscope.plan/1\", \"world_size\": \"four\"}");
    f.close();
    const Run r = cli(base(dir.filePath("s.sqlite")) << "--plan" << plan);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(plan), qPrintable(r.err));
  }

  void emulateRunIsStoredAndReported() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    const Run r = cli(base(store) << "--grid"
                                  << "2"
                                  << "--steps"
                                  << "2"
                                  << "--label"
                                  << "first");
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    auto opened = st::openStore(store.toStdString());
    QVERIFY(opened.ok());
    auto runs = opened->listRuns();
    QCOMPARE(runs->size(), std::size_t{1});
    const auto& run = runs->front();
    QVERIFY(run.isComplete());
    QVERIFY(run.kind == st::RunKind::Emulate);
    QCOMPARE(run.label, std::string("first"));
    QVERIFY(run.config_json.find("shardscope.engine-run/1") != std::string::npos);
    auto plan = shardscope::core::planFromJson(nlohmann::json::parse(run.plan_json), "plan");
    QVERIFY(plan.ok());
    QCOMPARE(plan->sharding_group_size, 2u);
    QCOMPARE(opened->ranks(run.id)->size(), std::size_t{2});  // one sharding group measured
    QVERIFY2(!r.out.isEmpty(), "the report is printed");
    // Non-TTY stderr: progress lines per 10%, ending at 100%.
    QVERIFY2(r.err.contains("100%"), qPrintable(r.err));
  }

  void jsonOutputAndCalibrationFile() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    const QString cal = dir.filePath("cal.json");
    const Run r = cli(base(store) << "--grid"
                                  << "4"
                                  << "--steps"
                                  << "2"
                                  << "--json"
                                  << "--quiet"
                                  << "--calibrate"
                                  << "--calibration-out" << cal,
                      300000);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));  // --quiet: no progress
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(j.contains("run"));
    QVERIFY(j.contains("report"));
    QVERIFY(j.contains("calibration"));
    auto loaded = shardscope::core::loadCalibration(cal.toStdString());
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    QVERIFY(!loaded->coefficients.empty());
    QVERIFY(loaded->fit.holdout_mape >= 0);
    auto opened = st::openStore(store.toStdString());
    QCOMPARE(opened->listRuns()->size(), std::size_t{3});  // the run + two calibration runs
    // The planner takes it.
    const Run p = cli({"plan", "--model", kModel, "--cluster", kCluster, "--calibration", cal});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    QVERIFY(p.out.contains("calibrated"));
  }

  void ctrlCMarksTheRunFailedAndKeepsOtherRuns() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    QCOMPARE(cli(base(store) << "--grid"
                             << "2"
                             << "--steps"
                             << "1"
                             << "--quiet")
                 .code,
             0);
    QProcess p;
    p.start(SHARDSCOPE_CLI, base(store) << "--grid"
                                        << "2"
                                        << "--steps"
                                        << "100000"
                                        << "--batch"
                                        << "1024");
    QVERIFY(p.waitForStarted());
    // Wait for the first progress line, then Ctrl-C.
    QElapsedTimer t;
    t.start();
    QByteArray err;
    while (!err.contains("%") && t.elapsed() < 60000 && p.state() != QProcess::NotRunning) {
      p.waitForReadyRead(200);
      err += p.readAllStandardError();
    }
    QVERIFY2(err.contains("%"), err.constData());
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(60000));
    err += p.readAllStandardError();
    QCOMPARE(p.exitCode(), 130);
    QVERIFY2(err.contains("cancelled"), err.constData());
    auto opened = st::openStore(store.toStdString());
    auto runs = opened->listRuns();
    QCOMPARE(runs->size(), std::size_t{2});
    QVERIFY(runs->at(0).isComplete());
    QVERIFY(runs->at(1).status == st::RunStatus::Failed);
    QVERIFY2(runs->at(1).error.find("cancel") != std::string::npos, runs->at(1).error.c_str());
  }

  void launcherThatCannotStartOrFailsIsARuntimeError() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    Run r = cli(base(store) << "--mode"
                            << "mpi"
                            << "--launcher"
                            << "/nonexistent/launcher -n {N}");
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains("/nonexistent/launcher"), qPrintable(r.err));
    r = cli(base(store) << "--mode"
                        << "mpi"
                        << "--launcher"
                        << "false");
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains("exited with status 1"), qPrintable(r.err));
  }

#ifdef SHARDSCOPE_ENGINE
  void mpiRunThroughMpirun() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    const Run r = cli(base(store) << "--mode"
                                  << "mpi"
                                  << "--grid"
                                  << "2"
                                  << "--steps"
                                  << "2"
                                  << "--engine" << SHARDSCOPE_ENGINE << "--launcher"
                                  << "mpirun -np {N} --oversubscribe",
                      240000);
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    auto opened = st::openStore(store.toStdString());
    auto runs = opened->listRuns();
    QCOMPARE(runs->size(), std::size_t{1});
    QVERIFY(runs->front().isComplete());
    QVERIFY(runs->front().kind == st::RunKind::Mpi);
    QCOMPARE(opened->ranks(runs->front().id)->size(), std::size_t{4});
  }

  void ctrlCStopsAnMpiRunAndMarksItFailed() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    QProcess p;
    p.setProcessEnvironment(mpiEnvironment());
    p.start(SHARDSCOPE_CLI, base(store) << "--mode"
                                        << "mpi"
                                        << "--grid"
                                        << "2"
                                        << "--steps"
                                        << "100000"
                                        << "--engine" << SHARDSCOPE_ENGINE << "--launcher"
                                        << "mpirun -np {N} --oversubscribe");
    QVERIFY(p.waitForStarted());
    QElapsedTimer t;
    t.start();
    QByteArray err;
    while (!err.contains("%") && t.elapsed() < 120000 && p.state() != QProcess::NotRunning) {
      p.waitForReadyRead(200);
      err += p.readAllStandardError();
    }
    QVERIFY2(err.contains("%"), err.constData());
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(120000));
    err += p.readAllStandardError();
    QCOMPARE(p.exitCode(), 130);
    auto opened = st::openStore(store.toStdString());
    auto runs = opened->listRuns();
    QCOMPARE(runs->size(), std::size_t{1});
    QVERIFY(runs->front().status == st::RunStatus::Failed);
    QVERIFY2(runs->front().error.find("cancel") != std::string::npos, runs->front().error.c_str());
  }
#endif
};

QTEST_GUILESS_MAIN(TestCliProfile)
#include "test_cli_profile.moc"
