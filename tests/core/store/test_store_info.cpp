// inspectStore (behind `store info`) and user data: bookmarks and notes.
#include <QtTest>

#include "store_test_support.h"

using namespace storetest;

class TestStoreInfo : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  int counter_ = 0;
  std::filesystem::path freshPath() { return numberedPath(dir_, "i", ++counter_); }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void inspectReportsSchemaSizeAndEachRun() {
    const auto path = freshPath();
    const auto a = writeSampleRun(path, 4, 100, true, "emulated");
    {
      auto writer = st::RunWriter::begin(path, {st::RunKind::ImportNsys, "half", {}, {}, {}, {}});
      QVERIFY(writer->addRank({0, "h", 0, 0, 0}).ok());
      QVERIFY(writer->addRank({1, "h", 1, 0, 1}).ok());
      QVERIFY(writer->fail("parse error").ok());
    }
    auto info = st::inspectStore(path);
    QVERIFY2(info.ok(), info.ok() ? "" : info.error().message.c_str());
    QCOMPARE(info->schema_version, st::kSchemaVersion);
    QCOMPARE(info->path, path);
    QVERIFY(info->file_size_bytes > 0);
    QCOMPARE(info->runs.size(), std::size_t{2});
    const auto& r0 = info->runs[0];
    QCOMPARE(r0.run.id, a.run);
    QCOMPARE(r0.run.kind, st::RunKind::Emulate);
    QCOMPARE(r0.run.status, st::RunStatus::Complete);
    QCOMPARE(r0.run.label, std::string("emulated"));
    QVERIFY(!r0.run.created_at.empty());
    QCOMPARE(r0.rank_count, 4);
    QCOMPARE(r0.span_count, std::int64_t{400});
    const auto& r1 = info->runs[1];
    QCOMPARE(r1.run.kind, st::RunKind::ImportNsys);
    QCOMPARE(r1.run.status, st::RunStatus::Failed);
    QCOMPARE(r1.run.error, std::string("parse error"));
    QCOMPARE(r1.rank_count, 2);
    QCOMPARE(r1.span_count, std::int64_t{0});
  }

  void inspectOfANonStoreFailsNamingTheFile() {
    const auto path = freshPath();
    writeAll(path, QByteArray(4096, 'a'));
    auto info = st::inspectStore(path);
    QVERIFY(!info.ok());
    QVERIFY(contains(info.error().message, path.string()));
  }

  void unknownRunIdIsAnError() {
    const auto path = freshPath();
    writeSampleRun(path, 1, 1);
    auto store = openOrDie(path);
    auto run = store.run(st::RunId{42});
    QVERIFY(!run.ok());
    QVERIFY(contains(run.error().message, "no run 42"));
  }

  void bookmarksAreListedInTimeOrder() {
    const auto path = freshPath();
    const auto sample = writeSampleRun(path, 1, 10);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    const auto late = store.addBookmark(sample.run, 900, "stall");
    const auto early = store.addBookmark(sample.run, 100, "warm-up done");
    QVERIFY(late.ok() && early.ok());
    auto marks = *store.bookmarks(sample.run);
    QCOMPARE(marks.size(), std::size_t{2});
    QCOMPARE(marks[0].id, *early);
    QCOMPARE(marks[0].ts_ns, std::int64_t{100});
    QCOMPARE(marks[0].label, std::string("warm-up done"));
    QCOMPARE(marks[1].label, std::string("stall"));
    QVERIFY(!marks[1].created_at.empty());
  }

  void notesAreListedInTheOrderAdded() {
    const auto path = freshPath();
    const auto sample = writeSampleRun(path, 1, 10);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    QVERIFY(store.addNote(sample.run, "second rank group is slow").ok());
    QVERIFY(store.addNote(sample.run, "rerun with 2x batch").ok());
    auto notes = *store.notes(sample.run);
    QCOMPARE(notes.size(), std::size_t{2});
    QCOMPARE(notes[0].text, std::string("second rank group is slow"));
    QCOMPARE(notes[1].text, std::string("rerun with 2x batch"));
    QCOMPARE(notes[1].run, sample.run);
  }

  void userDataOnAMissingRunIsRefused() {
    const auto path = freshPath();
    writeSampleRun(path, 1, 10);
    auto store = openOrDie(path, st::OpenMode::ReadWrite);
    QVERIFY(!store.addBookmark(st::RunId{77}, 0, "x").ok());
    QVERIFY(!store.addNote(st::RunId{77}, "x").ok());
  }

  void userDataNeedsAWritableOpen() {
    const auto path = freshPath();
    const auto sample = writeSampleRun(path, 1, 10);
    auto store = openOrDie(path, st::OpenMode::ReadOnly);
    auto added = store.addNote(sample.run, "x");
    QVERIFY(!added.ok());
    QVERIFY(contains(added.error().message, "read-only"));
  }
};

QTEST_GUILESS_MAIN(TestStoreInfo)
#include "test_store_info.moc"
