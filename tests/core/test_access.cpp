// shardscope.access/1: a valid file round-trips; every malformed input is an
// error naming the file and the JSON path; applied to a model, measured
// histograms replace the assumed access of the tables they match.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "shardscope/core/access.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"

using namespace shardscope;
using nlohmann::json;

namespace {

json validDoc() {
  return json::parse(R"({
    "schema": "shardscope.access/1", "source": "test", "batches": 10,
    "tables": [
      {"name": "a", "rows": 100, "lookups": 10, "hot": [[3, 4], [50, 2]], "buckets": [6, 1, 3, 0]},
      {"name": "b", "rows": 7, "lookups": 0, "buckets": [0]}
    ]})");
}

std::string errorOf(const json& j) {
  auto r = core::accessFromJson(j, "acc.json");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

}  // namespace

class TestAccess : public QObject {
  Q_OBJECT

 private slots:
  void readsAndRoundTrips() {
    auto a = core::accessFromJson(validDoc(), "acc.json");
    QVERIFY2(a.ok(), a.ok() ? "" : a.error().message.c_str());
    QCOMPARE(a->tables.size(), std::size_t{2});
    QCOMPARE(a->tables[0].hot.front(), (std::pair<std::uint64_t, std::uint64_t>{3, 4}));
    QCOMPARE(a->tables[0].buckets.size(), std::size_t{4});
    auto again = core::accessFromJson(json::parse(core::toJson(*a).dump()), "again");
    QVERIFY(again.ok());
    QVERIFY(*again == *a);
    QTemporaryDir dir;
    const std::string path = dir.filePath("a.json").toStdString();
    QVERIFY(core::writeJsonFile(path, core::toJson(*a)).ok());
    auto loaded = core::loadAccessFile(path);
    QVERIFY(loaded.ok());
    QVERIFY(*loaded == *a);
  }

  void bucketsSplitTheRowsEvenly() {
    QCOMPARE(core::accessBucketOf(0, 100, 4), std::size_t{0});
    QCOMPARE(core::accessBucketOf(24, 100, 4), std::size_t{0});
    QCOMPARE(core::accessBucketOf(25, 100, 4), std::size_t{1});
    QCOMPARE(core::accessBucketOf(99, 100, 4), std::size_t{3});
    QCOMPARE(core::accessBucketOf((std::uint64_t{1} << 47) - 1, std::uint64_t{1} << 48, 65536), std::size_t{32767});
    QCOMPARE(core::accessBucketOf(std::uint64_t{1} << 47, std::uint64_t{1} << 48, 65536), std::size_t{32768});
  }

  void malformedInputsNameTheFileAndPath_data() {
    QTest::addColumn<QString>("pointer");  // JSON pointer to replace ("" = the whole document)
    QTest::addColumn<QString>("value");    // JSON text
    QTest::addColumn<QString>("expected");
    QTest::newRow("schema") << "/schema"
                            << R"("shardscope.model/1")"
                            << "acc.json: /schema";
    QTest::newRow("tables missing") << "/tables"
                                    << "null"
                                    << "acc.json: /tables";
    QTest::newRow("tables not array") << "/tables"
                                      << "{}"
                                      << "acc.json: /tables: expected an array";
    QTest::newRow("table not object") << "/tables/0"
                                      << "3"
                                      << "acc.json: /tables/0: expected an object";
    QTest::newRow("rows zero") << "/tables/0/rows"
                               << "0"
                               << "acc.json: /tables/0/rows";
    QTest::newRow("rows huge") << "/tables/0/rows"
                               << "1e400"
                               << "(/tables/0/rows): number overflow parsing '1e400' (numbers must fit a double";
    QTest::newRow("rows string") << "/tables/0/rows"
                                 << R"("100")"
                                 << "acc.json: /tables/0/rows";
    QTest::newRow("lookups negative") << "/tables/0/lookups"
                                      << "-1"
                                      << "acc.json: /tables/0/lookups";
    QTest::newRow("lookups not the sum") << "/tables/0/lookups"
                                         << "11"
                                         << "acc.json: /tables/0/lookups: expected the sum of the bucket counts (10)";
    QTest::newRow("buckets empty") << "/tables/0/buckets"
                                   << "[]"
                                   << "acc.json: /tables/0/buckets: expected 1 to";
    QTest::newRow("more buckets than rows") << "/tables/1/buckets"
                                            << "[0,0,0,0,0,0,0,0]"
                                            << "acc.json: /tables/1/buckets: expected 1 to 7 counts";
    QTest::newRow("bucket fraction") << "/tables/0/buckets/1"
                                     << "1.5"
                                     << "acc.json: /tables/0/buckets/1";
    QTest::newRow("bucket overflow") << "/tables/0/buckets"
                                     << "[18446744073709551615, 1, 0, 0]"
                                     << "acc.json: /tables/0/buckets: expected counts whose sum fits 64 bits";
    QTest::newRow("hot not pair") << "/tables/0/hot/0"
                                  << "[3]"
                                  << "acc.json: /tables/0/hot/0: expected [id, count]";
    QTest::newRow("hot id past rows") << "/tables/0/hot/0"
                                      << "[100, 4]"
                                      << "acc.json: /tables/0/hot/0/0";
    QTest::newRow("hot count zero") << "/tables/0/hot/1"
                                    << "[50, 0]"
                                    << "acc.json: /tables/0/hot/1/1";
    QTest::newRow("hot not hottest first") << "/tables/0/hot/1"
                                           << "[50, 5]"
                                           << "acc.json: /tables/0/hot/1/1: expected the hottest ids first";
    QTest::newRow("hot repeated") << "/tables/0/hot/1"
                                  << "[3, 2]"
                                  << "acc.json: /tables/0/hot/1/0: expected each id once";
    QTest::newRow("hot over its bucket") << "/tables/0/hot/1"
                                         << "[50, 4]"
                                         << "acc.json: /tables/0/hot: expected id 50's count (4) within its bucket's";
    QTest::newRow("duplicate name") << "/tables/1/name"
                                    << R"("a")"
                                    << "acc.json: /tables/1/name: expected a unique table name";
    QTest::newRow("batches negative") << "/batches"
                                      << "-3"
                                      << "acc.json: /batches";
  }
  void malformedInputsNameTheFileAndPath() {
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, expected);
    json doc = validDoc();
    std::string message;
    const json v = json::parse(value.toStdString(), nullptr, false);
    if (v.is_discarded()) {  // a number no double holds (1e400): spliced into the file's text
      std::string text = doc.dump();
      text.replace(text.find("\"rows\":100"), 10, "\"rows\":" + value.toStdString());
      QTemporaryDir dir;
      const std::string path = dir.filePath("acc.json").toStdString();
      std::ofstream(path) << text;
      auto r = core::loadAccessFile(path);
      QVERIFY(!r.ok());
      QVERIFY(r.error().kind == core::ErrorKind::InvalidInput);
      message = r.error().message;
    } else {
      if (v.is_null())
        doc.erase(pointer.mid(1).toStdString());
      else
        doc[json::json_pointer(pointer.toStdString())] = v;
      message = errorOf(doc);
    }
    QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());
  }

  void filesThatAreNotAccessFiles() {
    QTemporaryDir dir;
    const std::string empty = dir.filePath("empty.json").toStdString();
    std::ofstream(empty).close();
    auto e = core::loadAccessFile(empty);
    QVERIFY(!e.ok());
    QVERIFY2(e.error().message.find("empty.json") != std::string::npos, e.error().message.c_str());
    const std::string broken = dir.filePath("broken.json").toStdString();
    std::ofstream(broken) << R"({"schema": "shardscope.access/1", "tables": [)";
    auto b = core::loadAccessFile(broken);
    QVERIFY(!b.ok());
    QVERIFY2(b.error().message.find("broken.json: not valid JSON") != std::string::npos, b.error().message.c_str());
    QVERIFY(!core::loadAccessFile(dir.filePath("missing.json").toStdString()).ok());
    QVERIFY(!core::accessFromJson(json::array(), "x").ok());
  }

  void appliedMeasuredHistogramsReplaceAssumedAccess() {
    core::ModelSpec model = core::defaultProject().model;
    core::AccessFile file;
    file.source = "test";
    const auto& t0 = model.tables[0];
    file.tables.push_back({t0.name, t0.rows, 12, {{0, 3}}, {3, 9}});
    file.tables.push_back({model.tables[1].name, model.tables[1].rows + 1, 4, {}, {4}});
    file.tables.push_back({"nope", 10, 1, {}, {1}});
    file.tables.push_back({model.tables[2].name, model.tables[2].rows, 0, {}, {0}});
    const auto applied = core::applyAccess(model, file);
    QCOMPARE(applied.measured, std::vector<std::string>{t0.name});
    QCOMPARE(applied.model.tables[0].access.kind, core::AccessKind::Histogram);
    QCOMPARE(applied.model.tables[0].access.histogram, (std::vector<double>{0.25, 0.75}));
    QVERIFY(applied.model.tables[1].access == model.tables[1].access);  // rows differ
    QVERIFY(applied.model.tables[2].access == model.tables[2].access);  // nothing observed
    QCOMPARE(applied.problems.size(), std::size_t{3});
  }
};

QTEST_APPLESS_MAIN(TestAccess)
#include "test_access.moc"
