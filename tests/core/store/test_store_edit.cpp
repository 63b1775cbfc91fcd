// Renaming and deleting runs: the run's own rows go, nothing else does.
#include <QtTest>

#include "store_test_support.h"

using namespace storetest;

namespace {

// Writes a run with a rank, spans, a step summary, a table stat and a collective.
st::RunId writeFullRun(const std::filesystem::path& path, const std::string& label) {
  st::RunHeader header;
  header.kind = st::RunKind::Emulate;
  header.label = label;
  auto writer = st::RunWriter::begin(path, header);
  if (!writer) qFatal("%s", writer.error().message.c_str());
  const st::StringId op = *writer->intern("all_to_all");
  const st::StringId table = *writer->intern("t0");
  if (!writer->addRank({0, "h", -1, 0, 0}).ok()) qFatal("addRank");
  for (int i = 0; i < 10; ++i) {
    if (!writer->addSpan(span(0, 0, op, i * 100, i * 100 + 50)).ok()) qFatal("addSpan");
  }
  st::StepSummary s;
  s.step = 0;
  s.total_ns = 1'000'000;
  if (!writer->addStepSummary(s).ok()) qFatal("addStepSummary");
  st::TableStat t;
  t.table = table;
  t.lookups = 5;
  if (!writer->addTableStat(t).ok()) qFatal("addTableStat");
  st::Collective c;
  c.op = op;
  c.bytes = 64;
  c.start_ns = 0;
  c.end_ns = 10;
  if (!writer->addCollective(c).ok()) qFatal("addCollective");
  const st::RunId id = writer->run();
  if (!writer->finish().ok()) qFatal("finish");
  return id;
}

}  // namespace

class TestStoreEdit : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  int counter_ = 0;
  std::filesystem::path freshPath() { return numberedPath(dir_, "e", ++counter_); }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void renameChangesOnlyTheLabel() {
    const auto path = freshPath();
    const st::RunId a = writeFullRun(path, "before");
    auto store = st::openStore(path, st::OpenMode::ReadWrite);
    QVERIFY(store.ok());
    const auto spans_before = store->spanCount(a);
    QVERIFY(store->renameRun(a, "after, with a comma").ok());
    auto run = store->run(a);
    QVERIFY(run.ok());
    QCOMPARE(run->label, std::string("after, with a comma"));
    QCOMPARE(run->status, st::RunStatus::Complete);
    QCOMPARE(*store->spanCount(a), *spans_before);
  }

  void deleteRemovesTheRunAndKeepsTheOthers() {
    const auto path = freshPath();
    const st::RunId a = writeFullRun(path, "a");
    const st::RunId b = writeFullRun(path, "b");
    {
      auto store = st::openStore(path, st::OpenMode::ReadWrite);
      QVERIFY(store.ok());
      QVERIFY(store->addBookmark(a, 5, "mark").ok());
      QVERIFY(store->addNote(a, "note").ok());
      QVERIFY(store->addNote(b, "kept").ok());
      const auto d = store->deleteRun(a);
      QVERIFY2(d.ok(), d.ok() ? "" : d.error().message.c_str());
    }
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(store.ok());
    auto runs = store->listRuns();
    QCOMPARE(runs->size(), std::size_t{1});
    QCOMPARE(runs->front().id, b);
    QVERIFY(!store->run(a).ok());
    QCOMPARE(*store->spanCount(b), std::int64_t{10});
    QCOMPARE(store->stepSummaries(b)->size(), std::size_t{1});
    QCOMPARE(store->tableStats(b)->size(), std::size_t{1});
    QCOMPARE(store->collectives(b)->size(), std::size_t{1});
    QCOMPARE(store->notes(b)->size(), std::size_t{1});
    // Nothing of run a is left behind in any table.
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    for (const char* table : {"spans", "span_blocks", "span_extent", "collectives", "step_summaries", "table_stats",
                              "ranks", "bookmarks", "notes"}) {
      sqlite3_stmt* stmt = nullptr;
      const std::string sql =
          std::string("SELECT count(*) FROM ") + table + " WHERE run = " + std::to_string(static_cast<std::int64_t>(a));
      QCOMPARE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
      QCOMPARE(sqlite3_step(stmt), SQLITE_ROW);
      QVERIFY2(sqlite3_column_int64(stmt, 0) == 0, table);
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
  }

  void deleteRefusesARunStillBeingWritten() {
    const auto path = freshPath();
    st::RunHeader header;
    header.kind = st::RunKind::Emulate;
    auto writer = st::RunWriter::begin(path, header);
    QVERIFY(writer.ok());
    auto store = st::openStore(path, st::OpenMode::ReadWrite);
    QVERIFY(store.ok());
    const auto d = store->deleteRun(writer->run());
    QVERIFY(!d.ok());
    QVERIFY(contains(d.error().message, "still being written"));
    QVERIFY(store->run(writer->run()).ok());
  }

  void readOnlyStoreRefusesEdits() {
    const auto path = freshPath();
    const st::RunId a = writeFullRun(path, "a");
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(store.ok());
    QVERIFY(!store->renameRun(a, "x").ok());
    QVERIFY(!store->deleteRun(a).ok());
    QCOMPARE(store->run(a)->label, std::string("a"));
  }

  void unknownRunIsAnError() {
    const auto path = freshPath();
    writeFullRun(path, "a");
    auto store = st::openStore(path, st::OpenMode::ReadWrite);
    QVERIFY(!store->renameRun(st::RunId{99}, "x").ok());
    QVERIFY(!store->deleteRun(st::RunId{99}).ok());
    QCOMPARE(store->listRuns()->size(), std::size_t{1});
  }
};

QTEST_GUILESS_MAIN(TestStoreEdit)
#include "test_store_edit.moc"
