// Opening trace stores: what is accepted, what is refused, and how the
// refusal reads. Every refusal names the file.
#include <QtTest>

#include "store_test_support.h"

using namespace storetest;

class TestStoreOpen : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  static void expectError(const std::filesystem::path& path, const std::string& error,
                          std::initializer_list<const char*> fragments) {
    QVERIFY2(contains(error, path.string()), error.c_str());
    for (const char* f : fragments) {
      QVERIFY2(contains(error, f), (error + "  [expected: " + f + "]").c_str());
    }
  }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void createModeMakesANewEmptyStore() {
    const auto path = pathIn(dir_, "new.db");
    auto store = st::openStore(path, st::OpenMode::Create);
    QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
    QCOMPARE(store->schemaVersion(), st::kSchemaVersion);
    QVERIFY(store->listRuns()->empty());
  }

  void newStoreRecordsApplicationIdAndSchemaVersion() {
    const auto path = pathIn(dir_, "ids.db");
    QVERIFY(st::openStore(path, st::OpenMode::Create).ok());
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    auto queryInt = [db](const char* sql) {
      sqlite3_stmt* s = nullptr;
      sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
      sqlite3_step(s);
      const auto v = sqlite3_column_int64(s, 0);
      sqlite3_finalize(s);
      return v;
    };
    QCOMPARE(queryInt("PRAGMA application_id"), std::int64_t{st::kApplicationId});
    QCOMPARE(queryInt("PRAGMA user_version"), std::int64_t{st::kSchemaVersion});
    QCOMPARE(queryInt("SELECT value FROM meta WHERE key = 'schema_version'"), std::int64_t{st::kSchemaVersion});
    sqlite3_close(db);
  }

  // A schema-1 store (before runs.config_json) reads as is read-only and is
  // migrated in place when opened for writing; its runs survive.
  void schemaOneStoreIsReadAndMigratedOnWrite() {
    const auto path = pathIn(dir_, "v1.db");
    const auto sample = writeSampleRun(path, 2, 5);
    rawExec(path,
            "ALTER TABLE runs DROP COLUMN config_json; DROP TABLE table_access; "
            "ALTER TABLE collectives DROP COLUMN process_group; ALTER TABLE collectives DROP COLUMN seq; "
            "PRAGMA user_version = 1; UPDATE meta SET value = '1' WHERE key = 'schema_version';");
    {
      auto ro = st::openStore(path, st::OpenMode::ReadOnly);
      QVERIFY2(ro.ok(), ro.ok() ? "" : ro.error().message.c_str());
      QCOMPARE(ro->schemaVersion(), 1);
      auto runs = ro->listRuns();
      QVERIFY(runs.ok());
      QCOMPARE(runs->size(), std::size_t{1});
      QVERIFY(runs->front().config_json.empty());
      QCOMPARE(*ro->spanCount(sample.run), std::int64_t{10});
      QVERIFY(ro->tableAccess(sample.run)->empty());  // no table_access table before schema 3
    }
    st::RunHeader header;
    header.config_json = "{\"x\":1}";
    auto writer = st::RunWriter::begin(path, header);
    QVERIFY2(writer.ok(), writer.ok() ? "" : writer.error().message.c_str());
    QVERIFY(writer->setTableAccess("t", "{\"name\":\"t\"}").ok());
    QVERIFY(writer->setTableAccess("t", "{\"name\":\"t\",\"rows\":2}").ok());  // replaces
    QVERIFY(writer->finish().ok());
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QCOMPARE(store->schemaVersion(), st::kSchemaVersion);
    QCOMPARE(store->listRuns()->size(), std::size_t{2});
    QCOMPARE(store->run(writer->run())->config_json, std::string("{\"x\":1}"));
    const auto access = store->tableAccess(writer->run());
    QVERIFY(access.ok());
    QCOMPARE(access->size(), std::size_t{1});
    QCOMPARE(access->front().second, std::string("{\"name\":\"t\",\"rows\":2}"));
    QVERIFY(store->run(sample.run)->isComplete());
    QCOMPARE(*store->spanCount(sample.run), std::int64_t{10});
  }

  // A schema-3 store (before collectives.process_group and seq) reads its
  // collectives as without either; migrated on write, its rows stay as they
  // were (seq -1) and new rows keep both.
  void schemaThreeStoreKeepsItsCollectivesWhenMigrated() {
    const auto path = pathIn(dir_, "v3.db");
    std::vector<st::Collective> old;
    st::RunId oldRun{};
    {
      auto writer = st::RunWriter::begin(path, {});
      QVERIFY2(writer.ok(), writer.ok() ? "" : writer.error().message.c_str());
      const auto op = *writer->intern("all_reduce");
      const auto group = *writer->intern("0,1");
      const auto algo = *writer->intern("ring");
      old = {{0, 3, op, group, algo, 4096, 1, 100, 900}, {1, 3, op, group, st::kNoString, 4096, 1, 120, 880}};
      for (const auto& c : old) QVERIFY(writer->addCollective(c).ok());
      QVERIFY(writer->finish().ok());
      oldRun = writer->run();
    }
    rawExec(path,
            "ALTER TABLE collectives DROP COLUMN process_group; ALTER TABLE collectives DROP COLUMN seq; "
            "PRAGMA user_version = 3; UPDATE meta SET value = '3' WHERE key = 'schema_version';");
    {
      auto ro = st::openStore(path, st::OpenMode::ReadOnly);
      QVERIFY2(ro.ok(), ro.ok() ? "" : ro.error().message.c_str());
      QCOMPARE(ro->schemaVersion(), 3);
      QCOMPARE(*ro->collectives(oldRun), old);
    }
    st::Collective fresh;
    {
      auto writer = st::RunWriter::begin(path, {});
      QVERIFY2(writer.ok(), writer.ok() ? "" : writer.error().message.c_str());
      fresh = old.front();
      fresh.process_group = *writer->intern("pg 0");
      fresh.seq = 42;
      QVERIFY(writer->addCollective(fresh).ok());
      QVERIFY(writer->finish().ok());
      auto store = st::openStore(path, st::OpenMode::ReadOnly);
      QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
      QCOMPARE(store->schemaVersion(), st::kSchemaVersion);
      QCOMPARE(*store->collectives(oldRun), old);
      QCOMPARE(*store->collectives(writer->run()), std::vector<st::Collective>{fresh});
    }
  }

  void missingFileIsAnErrorUnlessCreating() {
    const auto path = pathIn(dir_, "missing.db");
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"does not exist"});
    QVERIFY(!st::openStore(path, st::OpenMode::ReadWrite).ok());
    QVERIFY(!std::filesystem::exists(path));
  }

  void emptyFileIsNotAStoreAndIsLeftUntouched() {
    const auto path = pathIn(dir_, "empty.db");
    writeAll(path, {});
    for (auto mode : {st::OpenMode::ReadOnly, st::OpenMode::ReadWrite, st::OpenMode::Create}) {
      auto store = st::openStore(path, mode);
      QVERIFY(!store.ok());
      expectError(path, store.error().message, {"empty", "not a ShardScope trace store"});
    }
    QVERIFY(!st::RunWriter::begin(path, {}).ok());
    QCOMPARE(std::filesystem::file_size(path), std::uintmax_t{0});
  }

  void textFileIsNotAStore() {
    const auto path = pathIn(dir_, "notes.txt");
    writeAll(path, QByteArray("model: dlrm\nthis is a plain text file, long enough to hold a header.\n").repeated(4));
    auto store = st::openStore(path, st::OpenMode::ReadWrite);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"not a ShardScope trace store", "not an SQLite"});
  }

  void foreignSqliteFileIsRefused() {
    const auto path = pathIn(dir_, "foreign.db");
    rawExec(path, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES ('soup');");
    auto store = st::openStore(path, st::OpenMode::ReadWrite);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"not a ShardScope trace store", "application_id"});
    QVERIFY(!st::RunWriter::begin(path, {}).ok());
  }

  void newerSchemaIsRefusedNamingBothVersions() {
    const auto path = pathIn(dir_, "newer.db");
    writeSampleRun(path, 1, 10);
    rawExec(path, "PRAGMA user_version = 99; UPDATE meta SET value = '99' WHERE key = 'schema_version';");
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(!store.ok());
    expectError(path, store.error().message,
                {"newer ShardScope", "schema 99",
                 ("this build reads schema <= " + std::to_string(st::kSchemaVersion)).c_str()});
    QVERIFY(!st::inspectStore(path).ok());
  }

  void schemaZeroWithOurApplicationIdIsRefused() {
    const auto path = pathIn(dir_, "zero.db");
    const std::string sql =
        "PRAGMA application_id = " + std::to_string(st::kApplicationId) + "; CREATE TABLE meta(key TEXT, value TEXT);";
    rawExec(path, sql.c_str());
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"schema version 0"});
  }

  void metaDisagreeingWithHeaderIsCorrupt() {
    const auto path = pathIn(dir_, "meta.db");
    writeSampleRun(path, 1, 10);
    rawExec(path, "UPDATE meta SET value = '7' WHERE key = 'schema_version';");
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"corrupt", "meta"});
  }

  void truncatedStoreIsReportedCorrupt() {
    const auto path = pathIn(dir_, "truncated.db");
    writeSampleRun(path, 4, 5000);
    const QByteArray bytes = readAll(path);
    QVERIFY(bytes.size() > 64 * 1024);
    writeAll(path, bytes.left(bytes.size() / 2));
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"corrupt", "truncated"});
    QCOMPARE(kindOf(store.error()), kindName(shardscope::core::ErrorKind::InvalidInput));
  }

  void overwrittenHeaderIsNotAStore() {
    const auto path = pathIn(dir_, "header.db");
    writeSampleRun(path, 1, 100);
    QByteArray bytes = readAll(path);
    bytes.replace(0, 16, QByteArray(16, 'x'));
    writeAll(path, bytes);
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"not a ShardScope trace store"});
  }

  void overwrittenPagesFailVerificationAndQueriesReturnErrors() {
    const auto path = pathIn(dir_, "garbled.db");
    const auto sample = writeSampleRun(path, 4, 5000);
    QVERIFY(st::verifyStore(path).ok());
    QByteArray bytes = readAll(path);
    const auto quarter = bytes.size() / 4;
    bytes.replace(quarter, 2 * quarter, QByteArray(2 * quarter, '\x5a'));
    writeAll(path, bytes);

    const auto verified = st::verifyStore(path);
    QVERIFY(!verified.ok());
    expectError(path, verified.error().message, {"corrupt"});

    // Opening reads only the header and meta; the damage shows at the query.
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    if (!store.ok()) {
      expectError(path, store.error().message, {"corrupt"});
      return;
    }
    auto spans = store->spansInWindow(sample.run, {}, 0, 1'000'000'000);
    QVERIFY(!spans.ok());
    expectError(path, spans.error().message, {"corrupt"});
  }

  void unwritablePathFailsNamingIt() {
    const auto blocker = pathIn(dir_, "plainfile");
    writeAll(blocker, "x");
    const auto path = blocker / "sub" / "store.db";  // parent is a file
    auto store = st::openStore(path, st::OpenMode::Create);
    QVERIFY(!store.ok());
    expectError(path, store.error().message, {"cannot be created"});
    auto writer = st::RunWriter::begin(path, {});
    QVERIFY(!writer.ok());
    expectError(path, writer.error().message, {"cannot be created"});
  }

  void directoryIsNotAStore() {
    auto store = st::openStore(dir_.path().toStdString(), st::OpenMode::ReadOnly);
    QVERIFY(!store.ok());
    QVERIFY(contains(store.error().message, "directory"));
  }

  void openingNeverRewritesAValidStore() {
    const auto path = pathIn(dir_, "untouched.db");
    writeSampleRun(path, 2, 1000);
    const QByteArray before = readAll(path);
    for (auto mode : {st::OpenMode::ReadOnly, st::OpenMode::ReadWrite, st::OpenMode::Create}) {
      auto store = st::openStore(path, mode);
      QVERIFY(store.ok());
      QCOMPARE(store->listRuns()->size(), std::size_t{1});
    }
    QVERIFY(st::inspectStore(path).ok());
    QVERIFY(st::verifyStore(path).ok());
    QCOMPARE(readAll(path), before);
  }
};

QTEST_GUILESS_MAIN(TestStoreOpen)
#include "test_store_open.moc"
