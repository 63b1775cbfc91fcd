// shardscope.model/1: what loads, what is rejected, and how rejections read.
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
json validModel() {
  return json::parse(R"({
    "schema": "shardscope.model/1", "name": "tiny", "batch_size_per_gpu": 512, "optimizer": "rowwise_adagrad",
    "dense": {"parameters": 1000, "flops_per_sample": 6000},
    "tables": [
      {"name": "a", "rows": 1000, "dim": 64, "dtype": "fp16", "pooling": {"kind": "fixed", "mean": 3},
       "access": {"kind": "zipf", "alpha": 1.1}},
      {"name": "b", "rows": 10, "dim": 128},
      {"name": "c", "rows": 50000, "dim": 32, "pooling": {"kind": "uniform", "mean": 10, "spread": 4},
       "access": {"kind": "hot_set", "hot_fraction": 0.01, "hot_probability": 0.9}},
      {"name": "d", "rows": 400, "dim": 16, "pooling": 2.5, "access": {"kind": "histogram", "histogram": [3, 1]}}
    ]})");
}

QString errorOf(const json& j) {
  auto r = modelFromJson(j, "model.json");
  if (r) return {};
  return QString::fromStdString(r.error().message);
}
}  // namespace

class TestJsonModel : public QObject {
  Q_OBJECT
 private slots:
  void loadsEveryField() {
    auto r = modelFromJson(validModel(), "model.json");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->tables.size(), 4u);
    QCOMPARE(r->tables[0].dtype, DType::FP16);
    QCOMPARE(r->tables[0].access.kind, AccessKind::Zipf);
    QCOMPARE(r->tables[0].access.alpha, 1.1);
    QCOMPARE(r->tables[1].pooling.mean, 1.0);  // default: one id per sample
    QCOMPARE(r->tables[1].access.kind, AccessKind::Uniform);
    QCOMPARE(r->tables[2].pooling.kind, PoolingKind::Uniform);
    QCOMPARE(r->tables[2].pooling.spread, 4.0);
    QCOMPARE(r->tables[3].pooling.mean, 2.5);
    QCOMPARE(r->tables[3].access.histogram, (std::vector<double>{0.75, 0.25}));  // normalised
    QCOMPARE(r->dense.parameters, 1000u);
  }

  void roundTripsThroughJson() {
    auto first = modelFromJson(validModel(), "model.json");
    QVERIFY(first.ok());
    auto second = modelFromJson(json::parse(toJson(*first).dump()), "again.json");
    QVERIFY(second.ok());
    QVERIFY(*first == *second);
  }

  void acceptsIntegralFloatsForCounts() {
    json j = validModel();
    j["tables"][0]["rows"] = 4e7;
    auto r = modelFromJson(j, "model.json");
    QVERIFY(r.ok());
    QCOMPARE(r->tables[0].rows, 40000000u);
  }

  void rejectsDimNotMultipleOfFour() {
    json j = validModel();
    j["tables"][3]["dim"] = 130;
    const QString e = errorOf(j);
    QVERIFY2(e.contains("model.json: /tables/3/dim: expected a positive multiple of 4, got 130"), qPrintable(e));
  }

  void rejectsMissingField() {
    json j = validModel();
    j["tables"][1].erase("rows");
    const QString e = errorOf(j);
    QVERIFY2(e.contains("model.json: /tables/1/rows: missing required field"), qPrintable(e));
  }

  void rejectsWrongType() {
    json j = validModel();
    j["tables"][0]["rows"] = "many";
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/tables/0/rows: expected an integer in [1, 281474976710656], got string \"many\""),
             qPrintable(e));
  }

  void rejectsZeroAndNegativeSizes() {
    json j = validModel();
    j["tables"][0]["rows"] = 0;
    j["tables"][1]["dim"] = -8;
    j["batch_size_per_gpu"] = 0;
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/tables/0/rows: expected an integer in [1, 281474976710656], got 0"), qPrintable(e));
    QVERIFY2(e.contains("/tables/1/dim"), qPrintable(e));
    QVERIFY2(e.contains("/batch_size_per_gpu"), qPrintable(e));
  }

  void rejectsFractionalRows() {
    json j = validModel();
    j["tables"][0]["rows"] = 10.5;
    QVERIFY(errorOf(j).contains(
        "/tables/0/rows: expected an integer in [1, 281474976710656], got 10.5 (not a whole number)"));
  }

  void rejectsDuplicateTableNames() {
    json j = validModel();
    j["tables"][2]["name"] = "a";
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/tables/2/name: expected a unique table name, \"a\" is also at /tables/0"), qPrintable(e));
  }

  void rejectsUnknownEnumValues() {
    json j = validModel();
    j["tables"][0]["dtype"] = "fp64";
    j["optimizer"] = "lamb";
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/tables/0/dtype: expected one of \"fp32\", \"fp16\", \"bf16\", \"int8\", got string \"fp64\""),
             qPrintable(e));
    QVERIFY2(e.contains("/optimizer: expected one of"), qPrintable(e));
  }

  void rejectsBadAccessParameters() {
    json j = validModel();
    j["tables"][0]["access"] = {{"kind", "zipf"}};
    j["tables"][2]["access"]["hot_fraction"] = 1.5;
    j["tables"][3]["access"]["histogram"] = json::array({0, 0});
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/tables/0/access/alpha: missing required field"), qPrintable(e));
    QVERIFY2(e.contains("/tables/2/access/hot_fraction: expected a number in (0, 1], got 1.5"), qPrintable(e));
    QVERIFY2(e.contains("/tables/3/access/histogram: expected shares that sum to more than 0"), qPrintable(e));
  }

  void rejectsSpreadLargerThanMean() {
    json j = validModel();
    j["tables"][2]["pooling"]["spread"] = 20;
    QVERIFY(errorOf(j).contains("/tables/2/pooling/spread: expected spread <= mean"));
  }

  void reportsEveryProblemAtOnce() {
    json j = validModel();
    j["tables"][0]["dim"] = 3;
    j["tables"][1]["rows"] = -1;
    j["tables"][2]["name"] = "";
    QCOMPARE(errorOf(j).count('\n'), 2);  // three lines
  }

  void rejectsEmptyTableList() {
    json j = validModel();
    j["tables"] = json::array();
    QVERIFY(errorOf(j).contains("/tables: expected at least one table"));
  }

  void rejectsNonObjectRoot() {
    QVERIFY(errorOf(json::array({1, 2})).contains("model.json: /: expected an object, got an array"));
  }

  void rejectsMissingSchema() {
    json j = validModel();
    j.erase("schema");
    QVERIFY(errorOf(j).contains("model.json: /schema: missing required field"));
  }

  void rejectsNewerSchemaVersion() {
    json j = validModel();
    j["schema"] = "shardscope.model/2";
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/schema: version \"shardscope.model/2\" is not supported by this build, which reads "
                        "\"shardscope.model/1\""),
             qPrintable(e));
  }

  void rejectsAnotherFormat() {
    json j = validModel();
    j["schema"] = "shardscope.plan/1";
    QVERIFY(errorOf(j).contains("a different ShardScope format"));
  }

  void namesLineAndColumnOfSyntaxErrors() {
    auto r = parseJsonText("{\n  \"schema\": \"shardscope.model/1\",\n  \"name\": oops\n}", "broken.json");
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("broken.json: not valid JSON at line 3, column 11"),
             r.error().message.c_str());
  }

  void rejectsTruncatedFile() {
    const std::string text = toJson(modelPreset("dcnv2").value()).dump();
    auto r = parseJsonText(text.substr(0, text.size() / 2), "cut.json");
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).startsWith("cut.json: not valid JSON at line 1"));
  }

  void reportsMissingAndEmptyFiles() {
    auto missing = loadModel("/nonexistent/dir/model.json");
    QVERIFY(!missing.ok());
    QVERIFY(QString::fromStdString(missing.error().message).startsWith("/nonexistent/dir/model.json: cannot open"));
    QTemporaryDir dir;
    const QString empty = dir.filePath("empty.json");
    QFile f(empty);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    auto r = loadModel(empty.toStdString());
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).contains("the file is empty"));
  }
};

QTEST_APPLESS_MAIN(TestJsonModel)
#include "test_json_model.moc"
