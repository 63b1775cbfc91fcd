// Crash safety: a writer killed with SIGKILL mid-run leaves a readable store
// in which earlier runs are intact and the half run is not complete.
#include <QProcess>
#include <QtTest>

#include "store_test_support.h"

using namespace storetest;

class TestStoreCrash : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path path_;
  SampleRun complete_;
  std::int64_t lastCommitted_ = 0;
  st::RunId killedRun_{};

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    path_ = pathIn(dir_, "crash.db");
    complete_ = writeSampleRun(path_, 4, 2000, true, "finished before the crash");

    QProcess child;
    child.setProgram(QStringLiteral(SHARDSCOPE_STORE_CRASH_WRITER));
    child.setArguments({QString::fromStdString(path_.string())});
    child.setProcessChannelMode(QProcess::SeparateChannels);
    child.start();
    QVERIFY2(child.waitForStarted(5000), qPrintable(child.errorString()));

    // Wait for "ready" and a few more commits, so the kill lands mid-write.
    QByteArray out;
    int commits = 0;
    while (commits < 5) {
      QVERIFY2(child.waitForReadyRead(10'000), child.readAllStandardError().constData());
      out += child.readAllStandardOutput();
      commits = static_cast<int>(out.count("committed"));
    }
    QVERIFY(out.contains("ready"));
    child.kill();  // SIGKILL on Unix
    QVERIFY(child.waitForFinished(5000));
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);
    out += child.readAllStandardOutput();
    const auto lines = out.split('\n');
    for (const auto& line : lines) {
      if (line.startsWith("committed ")) {
        lastCommitted_ = line.mid(10).toLongLong();
      }
    }
    QVERIFY(lastCommitted_ >= 2500);
    killedRun_ = st::RunId{static_cast<std::int64_t>(complete_.run) + 1};
  }

  void storeOpensAfterTheWriterWasKilled() {
    auto store = st::openStore(path_, st::OpenMode::ReadOnly);
    QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
    QCOMPARE(store->listRuns()->size(), std::size_t{2});
  }

  void earlierCompleteRunIsStillCompleteWithAllItsSpans() {
    auto store = openOrDie(path_);
    auto run = store.run(complete_.run);
    QVERIFY(run->isComplete());
    auto spans = store.spansInWindow(complete_.run, {}, 0, 1'000'000'000);
    QCOMPARE(spans->size(), complete_.spans.size());
  }

  void killedRunIsStillMarkedRunningNotComplete() {
    auto store = openOrDie(path_);
    auto run = store.run(killedRun_);
    QVERIFY(run.ok());
    QCOMPARE(run->status, st::RunStatus::Running);
    QVERIFY(!run->isComplete());
    QVERIFY(run->finished_at.empty());
    auto info = st::inspectStore(path_);
    QVERIFY(info.ok());
    QCOMPARE(info->runs.back().run.status, st::RunStatus::Running);
  }

  void spansCommittedBeforeTheKillAreReadable() {
    auto store = openOrDie(path_);
    const auto count = *store.spanCount(killedRun_);
    QVERIFY(count >= lastCommitted_);
    QCOMPARE(count % 500, std::int64_t{0});  // whole batches only
    auto spans = store.spansInWindow(killedRun_, {}, 0, std::numeric_limits<std::int64_t>::max());
    QVERIFY(spans.ok());
    QCOMPARE(static_cast<std::int64_t>(spans->size()), count);
  }

  void storePassesTheIntegrityCheckAndTakesANewRun() {
    QVERIFY(st::verifyStore(path_).ok());
    const auto next = writeSampleRun(path_, 1, 10, true, "after the crash");
    auto store = openOrDie(path_);
    QVERIFY(store.run(next.run)->isComplete());
    QCOMPARE(store.run(killedRun_)->status, st::RunStatus::Running);
  }
};

QTEST_GUILESS_MAIN(TestStoreCrash)
#include "test_store_crash.moc"
