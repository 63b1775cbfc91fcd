// A write that fails for lack of space: the writer reports an I/O error that
// says so, the store still opens for every use, earlier runs are whole, and
// the cut-off run is never reported complete. The disk is simulated by an
// SQLite VFS (full_disk_vfs.h) that refuses to grow files once a budget is
// spent, which reproduces what ENOSPC does to a WAL store: the last
// connection's checkpoint on close rewrites the main file's header page (in
// place), then fails to append the pages the header now counts.
#include <QtTest>

#include "full_disk_vfs.h"
#include "store_test_support.h"

using namespace storetest;
namespace fd = storetest::fulldisk;
using shardscope::core::ErrorKind;

Q_DECLARE_METATYPE(storetest::fulldisk::Failure)

class TestStoreFullDisk : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  int counter_ = 0;

  // Writes spans in small batches until a write fails; returns that error.
  static shardscope::core::Error writeUntilFull(st::RunWriter& writer) {
    const auto name = writer.intern("filler");
    if (!name) {
      return name.error();
    }
    for (std::int64_t i = 0; i < 2'000'000; ++i) {
      if (auto s = writer.addSpan(span(static_cast<int>(i % 8), 0, *name, i * 10, i * 10 + 5)); !s) {
        return s.error();
      }
    }
    qFatal("the simulated disk never filled up");
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    fd::install();
  }
  void cleanup() { fd::makeRoom(); }

  void storeOpensAfterAWriteRanOutOfSpace_data() {
    QTest::addColumn<fd::Failure>("failure");
    QTest::addColumn<qint64>("budget");
    QTest::newRow("disk full, small budget") << fd::Failure::Full << qint64{64 * 1024};
    QTest::newRow("disk full, large budget") << fd::Failure::Full << qint64{3 * 1024 * 1024};
    QTest::newRow("write error") << fd::Failure::IoWrite << qint64{256 * 1024};
  }
  void storeOpensAfterAWriteRanOutOfSpace() {
    QFETCH(fd::Failure, failure);
    QFETCH(qint64, budget);
    const auto path = numberedPath(dir_, "full", ++counter_);
    const auto before = writeSampleRun(path, 4, 3000, true, "written while there was room");

    const int failedBefore = fd::failedWrites();
    fd::fillAfter(budget, failure);
    st::RunId cutOff{};
    {
      st::WriterOptions options;
      options.rows_per_commit = 4096;
      auto writer = st::RunWriter::begin(path, st::RunHeader{st::RunKind::Mpi, "cut off", "", "", "", ""}, options);
      QVERIFY2(writer.ok(), writer.ok() ? "" : writer.error().message.c_str());
      cutOff = writer->run();
      const auto error = writeUntilFull(*writer);
      QCOMPARE(kindOf(error), kindName(ErrorKind::Io));
      QVERIFY2(contains(error.message, path.string()), error.message.c_str());
      QVERIFY2(!contains(error.message, "corrupt"), error.message.c_str());
      if (failure == fd::Failure::Full) {
        QVERIFY2(contains(error.message, "disk is full"), error.message.c_str());
      }
      const auto finished = writer->finish();
      QVERIFY(!finished.ok());
      QCOMPARE(kindOf(finished.error()), kindName(ErrorKind::Io));
    }  // the writer closes; its checkpoint on close runs out of space too
    QVERIFY(fd::failedWrites() > failedBefore);

    // Still full: every read opens, and nothing is called corrupt.
    for (auto mode : {st::OpenMode::ReadOnly, st::OpenMode::ReadWrite, st::OpenMode::Create}) {
      auto store = st::openStore(path, mode);
      QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
      QVERIFY(store->run(before.run)->isComplete());
      QCOMPARE(*store->spanCount(before.run), static_cast<std::int64_t>(before.spans.size()));
      auto run = store->run(cutOff);
      QVERIFY(run.ok());
      QVERIFY(!run->isComplete());
    }
    auto info = st::inspectStore(path);
    QVERIFY2(info.ok(), info.ok() ? "" : info.error().message.c_str());
    QCOMPARE(info->runs.size(), std::size_t{2});
    QVERIFY(!info->runs.back().run.isComplete());
    const auto verified = st::verifyStore(path);
    QVERIFY2(verified.ok(), verified.ok() ? "" : verified.error().message.c_str());

    // Room again: the cut-off run can be closed as failed and new runs written.
    fd::makeRoom();
    {
      auto store = openOrDie(path, st::OpenMode::ReadWrite);
      auto status = store.failStaleRun(cutOff, "the disk was full");
      QVERIFY2(status.ok(), status.ok() ? "" : status.error().message.c_str());
      QCOMPARE(*status, st::RunStatus::Failed);
    }
    const auto after = writeSampleRun(path, 2, 100, true, "written after room was made");
    auto store = openOrDie(path);
    QVERIFY(store.run(after.run)->isComplete());
    QVERIFY(store.run(before.run)->isComplete());
    QCOMPARE(store.run(cutOff)->status, st::RunStatus::Failed);
    QVERIFY(st::verifyStore(path).ok());
  }

  // With the run's rows committed, no room is left for the status update at
  // finish(): the run must not read as complete, then or later, and the
  // store opens while the disk is still full.
  void finishThatCannotWriteLeavesTheRunNotComplete() {
    const auto path = numberedPath(dir_, "finish", ++counter_);
    st::RunId run{};
    {
      auto writer = st::RunWriter::begin(path, {});
      QVERIFY(writer.ok());
      run = writer->run();
      const auto name = writer->intern("x");
      QVERIFY(writer->addSpan(span(0, 0, *name, 0, 10)).ok());
      QVERIFY(writer->commit().ok());
      fd::fillAfter(0);
      const auto finished = writer->finish();
      QVERIFY(!finished.ok());
      QCOMPARE(kindOf(finished.error()), kindName(ErrorKind::Io));
      QVERIFY2(contains(finished.error().message, "disk is full"), finished.error().message.c_str());
    }  // dropping it cannot mark the run failed either
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
    QCOMPARE(store->run(run)->status, st::RunStatus::Running);
    QCOMPARE(*store->spanCount(run), std::int64_t{1});
  }
};

QTEST_GUILESS_MAIN(TestStoreFullDisk)
#include "test_store_full_disk.moc"
