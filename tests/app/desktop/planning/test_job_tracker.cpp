// The desktop's job tracker: a job's result reaches the GUI thread only while
// it is the current job, cancelling leaves the result to the work, errors
// (exceptions, core::Result errors) arrive as failed(), progress arrives on
// the GUI thread, and destroying the tracker stops and waits for its jobs.
#include <QSignalSpy>
#include <QThread>
#include <QThreadPool>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include "job_tracker.h"

using shardscope::app::JobContext;
using shardscope::app::JobTracker;
namespace core = shardscope::core;

namespace {

constexpr int kTimeoutMs = 10000;

// Spins until `open` is set or the job is cancelled.
void waitFor(const std::atomic<bool>& open, const JobContext& job) {
  while (!open.load() && !job.isCancelled()) QThread::msleep(1);
}

}  // namespace

class TestJobTracker : public QObject {
  Q_OBJECT

 private:
  QThreadPool pool_;

 private slots:
  void initTestCase() { pool_.setMaxThreadCount(4); }

  void aResultArrivesOnTheGuiThread() {
    JobTracker tracker(&pool_);
    int result = 0;
    QThread* delivered_on = nullptr;
    const quint64 id = tracker.start([](JobContext&) { return 42; },
                                     [&](int value) {
                                       result = value;
                                       delivered_on = QThread::currentThread();
                                     });
    QCOMPARE(id, tracker.currentId());
    QVERIFY(tracker.isRunning());
    QTRY_COMPARE_WITH_TIMEOUT(result, 42, kTimeoutMs);
    QCOMPARE(delivered_on, QThread::currentThread());
    QVERIFY(!tracker.isRunning());
  }

  // Waits until job `id` has settled; returns whether its outcome was handed over.
  static bool settledOf(QSignalSpy& settled, quint64 id) {
    int handed_over = -1;
    const auto look = [&] {
      for (qsizetype i = 0; i < settled.size(); ++i)
        if (settled.at(i).value(0).toULongLong() == id) handed_over = settled.at(i).value(1).toBool() ? 1 : 0;
      return handed_over >= 0;
    };
    if (!QTest::qWaitFor(look, kTimeoutMs)) qFatal("job %llu never settled", id);
    return handed_over == 1;
  }

  void aStaleResultIsDropped() {
    JobTracker tracker(&pool_);
    QSignalSpy settled(&tracker, &JobTracker::settled);
    std::atomic<bool> open{false};
    auto first_saw_cancel = std::make_shared<std::atomic<bool>>(false);
    QStringList delivered;
    const quint64 first = tracker.start(
        [&open, first_saw_cancel](JobContext& job) {
          waitFor(open, job);
          first_saw_cancel->store(job.isCancelled());
          return QStringLiteral("first");
        },
        [&](const QString& v) { delivered << v; });
    const quint64 second =
        tracker.start([](JobContext&) { return QStringLiteral("second"); }, [&](const QString& v) { delivered << v; });
    QVERIFY(second > first);
    QTRY_COMPARE_WITH_TIMEOUT(delivered, QStringList{"second"}, kTimeoutMs);
    open.store(true);
    QTRY_VERIFY_WITH_TIMEOUT(first_saw_cancel->load(), kTimeoutMs);  // starting the second cancelled the first
    QVERIFY(!settledOf(settled, first));                             // the first result came back and was dropped
    QCOMPARE(delivered, QStringList{"second"});
  }

  void supersedingDropsTheResultWithoutStartingWork() {
    JobTracker tracker(&pool_);
    QSignalSpy settled(&tracker, &JobTracker::settled);
    std::atomic<bool> open{false};
    bool delivered = false;
    const quint64 id = tracker.start(
        [&open](JobContext& job) {
          waitFor(open, job);
          return 1;
        },
        [&](int) { delivered = true; });
    const quint64 next = tracker.supersede();
    QCOMPARE(next, id + 1);
    QCOMPARE(tracker.currentId(), next);
    QVERIFY(!tracker.isRunning());
    open.store(true);
    QVERIFY(!settledOf(settled, id));
    QVERIFY(!delivered);
  }

  void aCancelledJobStillDeliversWhatItDid() {
    JobTracker tracker(&pool_);
    std::atomic<bool> started{false};
    int steps = -1;
    tracker.start(
        [&started](JobContext& job) {
          int done = 0;
          started.store(true);
          while (!job.isCancelled()) {
            ++done;
            QThread::msleep(1);
          }
          return done;
        },
        [&](int value) { steps = value; });
    QTRY_VERIFY_WITH_TIMEOUT(started.load(), kTimeoutMs);
    tracker.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(steps >= 0, kTimeoutMs);
    QVERIFY(!tracker.isRunning());
  }

  void exceptionsAndResultErrorsArriveAsFailed() {
    JobTracker tracker(&pool_);
    QSignalSpy failed(&tracker, &JobTracker::failed);
    bool delivered = false;
    const quint64 thrown =
        tracker.start([](JobContext&) -> int { throw std::runtime_error("no GPUs"); }, [&](int) { delivered = true; });
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeoutMs);
    QCOMPARE(failed.at(0).at(0).value<quint64>(), thrown);
    QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("no GPUs"));

    const quint64 refused =
        tracker.start([](JobContext&) { return core::Result<int>(core::Error{"plan.json: expected an object"}); },
                      [&](int) { delivered = true; });
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, kTimeoutMs);
    QCOMPARE(failed.at(1).at(0).value<quint64>(), refused);
    QCOMPARE(failed.at(1).at(1).toString(), QStringLiteral("plan.json: expected an object"));

    tracker.start([](JobContext&) -> int { throw 7; }, [&](int) { delivered = true; });
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 3, kTimeoutMs);
    QVERIFY(failed.at(2).at(1).toString().isEmpty());
    QVERIFY(!delivered);
    QVERIFY(!tracker.isRunning());

    int value = 0;
    tracker.start([](JobContext&) { return core::Result<int>(5); }, [&](int v) { value = v; });
    QTRY_COMPARE_WITH_TIMEOUT(value, 5, kTimeoutMs);
    QCOMPARE(failed.count(), 3);
  }

  void aStaleErrorIsDropped() {
    JobTracker tracker(&pool_);
    QSignalSpy failed(&tracker, &JobTracker::failed);
    QSignalSpy settled(&tracker, &JobTracker::settled);
    std::atomic<bool> open{false};
    const quint64 first = tracker.start(
        [&open](JobContext& job) -> int {
          waitFor(open, job);
          throw std::runtime_error("late");
        },
        [](int) {});
    bool second = false;
    tracker.start([](JobContext&) { return 2; }, [&](int) { second = true; });
    open.store(true);
    QTRY_VERIFY_WITH_TIMEOUT(second, kTimeoutMs);
    QVERIFY(!settledOf(settled, first));  // its error came back and was dropped
    QCOMPARE(failed.count(), 0);
  }

  void progressArrivesOnTheGuiThreadInOrder() {
    JobTracker tracker(&pool_);
    QList<int> seen;
    bool on_gui_thread = true;
    connect(&tracker, &JobTracker::progress, this, [&](quint64, int done, int total) {
      on_gui_thread = on_gui_thread && QThread::currentThread() == thread();
      QCOMPARE(total, 1000);
      seen << done;
    });
    bool finished = false;
    tracker.start(
        [](JobContext& job) {
          for (int i = 1; i <= 1000; ++i) job.reportProgress(i, 1000);
          return true;
        },
        [&](bool) {
          finished = true;
          // Every report made before the result was delivered before it.
          QVERIFY(!seen.isEmpty());
          QCOMPARE(seen.back(), 1000);
        });
    QTRY_VERIFY_WITH_TIMEOUT(finished, kTimeoutMs);
    QVERIFY(on_gui_thread);
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QVERIFY2(seen.size() <= 1000, qPrintable(QString::number(seen.size())));  // merged while the GUI was busy
  }

  void progressOfAStaleJobIsDropped() {
    JobTracker tracker(&pool_);
    QSignalSpy progress(&tracker, &JobTracker::progress);
    QSignalSpy settled(&tracker, &JobTracker::settled);
    std::atomic<bool> open{false};
    std::atomic<bool> reported{false};
    const quint64 id = tracker.start(
        [&](JobContext& job) {
          waitFor(open, job);
          job.reportProgress(1, 2);
          reported.store(true);
          return 0;
        },
        [](int) {});
    tracker.supersede();
    open.store(true);
    QTRY_VERIFY_WITH_TIMEOUT(reported.load(), kTimeoutMs);
    QVERIFY(!settledOf(settled, id));  // its report came before this
    QCOMPARE(progress.count(), 0);
  }

  void destroyingTheTrackerCancelsAndWaits() {
    auto stopped = std::make_shared<std::atomic<bool>>(false);
    bool delivered = false;
    {
      JobTracker tracker(&pool_);
      std::atomic<bool> started{false};
      tracker.start(
          [&started, stopped](JobContext& job) {
            started.store(true);
            while (!job.isCancelled()) QThread::msleep(1);
            stopped->store(true);
            return 0;
          },
          [&](int) { delivered = true; });
      QTRY_VERIFY_WITH_TIMEOUT(started.load(), kTimeoutMs);
    }
    QVERIFY(stopped->load());              // the destructor returned only after the job did
    QCoreApplication::sendPostedEvents();  // whatever the job posted is handled (and dropped) now
    QCoreApplication::processEvents();
    QVERIFY(!delivered);
  }
};

QTEST_MAIN(TestJobTracker)
#include "test_job_tracker.moc"
