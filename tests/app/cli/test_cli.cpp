// shardscope-cli as a user runs it: exit codes and messages.
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/store/run_writer.h"

#include "cli_run.h"

namespace {
using cli_test::Run;
using cli_test::writeFile;

Run cli(const QStringList& args) { return cli_test::runCli(args); }
}  // namespace

class TestCli : public QObject {
  Q_OBJECT
 private slots:
  void helpAndVersionExitZero() {
    const Run h = cli({"--help"});
    QCOMPARE(h.code, 0);
    QVERIFY(h.out.contains("usage: shardscope-cli"));
    QVERIFY(h.out.contains("exit codes"));
    const Run v = cli({"--version"});
    QCOMPARE(v.code, 0);
    QVERIFY(v.out.startsWith("shardscope-cli 0.1.0"));
  }

  void unknownCommandIsAUsageError() {
    const Run r = cli({"frobnicate"});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("unknown command 'frobnicate'"));
    QCOMPARE(cli({}).code, 2);
  }

  void validateAcceptsEveryFormat() {
    QTemporaryDir dir;
    using namespace shardscope::core;
    const Project p = defaultProject();
    const QString model = writeFile(dir, "m.json", QByteArray::fromStdString(toJson(p.model).dump()));
    const QString cluster = writeFile(dir, "c.json", QByteArray::fromStdString(toJson(p.cluster).dump()));
    const QString project = writeFile(dir, "p.shardscope", QByteArray::fromStdString(toJson(p).dump()));
    Calibration c;
    c.source = "test";
    c.coefficients["dense_efficiency"] = {0.5, 0};
    const QString cal = writeFile(dir, "cal.json", QByteArray::fromStdString(toJson(c).dump()));
    const QString plan = QString(SHARDSCOPE_TEST_DATA_DIR) + "/plans/strided_8x4.json";
    const Run r = cli({"validate", model, cluster, project, cal, plan});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("ok: model \"DLRM-DCNv2 (MLPerf, Criteo 1TB)\": 26 tables"));
    QVERIFY(r.out.contains("ok: cluster \"h100x64\": 8 x 8 = 64 GPUs"));
    QVERIFY(r.out.contains("ok: plan for"));
    QVERIFY(r.out.contains("ok: calibration"));
    QVERIFY(r.out.contains("ok: project"));
  }

  void validateReportsFileAndJsonPathAndExitsOne() {
    QTemporaryDir dir;
    auto j = shardscope::core::toJson(shardscope::core::defaultProject().model);
    j["tables"][3]["dim"] = 130;
    const QString bad = writeFile(dir, "bad.json", QByteArray::fromStdString(j.dump()));
    const Run r = cli({"validate", bad});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(bad + ": /tables/3/dim: expected a positive multiple of 4, got 130"), qPrintable(r.err));
  }

  void validateRejectsNonJsonAndUnknownSchema() {
    QTemporaryDir dir;
    const QString text = writeFile(dir, "notes.txt", "hello\n");
    const QString other = writeFile(dir, "other.json", R"({"schema": "acme/1"})");
    const Run r = cli({"validate", text, other});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(text + ": not valid JSON at line 1, column 1"), qPrintable(r.err));
    QVERIFY2(r.err.contains(other + ": /schema: expected one of shardscope.model/1"), qPrintable(r.err));
  }

  void validateWithoutFilesIsAUsageError() { QCOMPARE(cli({"validate"}).code, 2); }

  void summaryPrintsTheDefaultProject() {
    const Run r = cli({"summary"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("Model: DLRM-DCNv2 (MLPerf, Criteo 1TB)"));
    QVERIFY(r.out.contains("8 nodes x 8 GPUs = 64 GPUs"));
  }

  void summaryLoadsPresetsByName() {
    const Run r = cli({"summary", "--model", "criteo_kaggle", "--cluster", "b200x512"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("Model: DLRM (Criteo Kaggle)"));
    QVERIFY(r.out.contains("64 nodes x 8 GPUs = 512 GPUs"));
  }

  void summaryRejectsUnknownPreset() {
    const Run r = cli({"summary", "--cluster", "h100x63"});
    QCOMPARE(r.code, 1);
    QVERIFY(r.err.contains("unknown cluster preset \"h100x63\""));
    QCOMPARE(cli({"summary", "--model"}).code, 2);
    QCOMPARE(cli({"summary", "--bogus"}).code, 2);
  }

  void storeInfoListsRunsWithTheirStatus() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("t.sqlite").toStdString();
    namespace st = shardscope::core::store;
    {
      auto w = st::RunWriter::begin(path, st::RunHeader{st::RunKind::Emulate, "done", "", "", "", ""});
      QVERIFY(w.ok());
      QVERIFY(w.value().addRank({0, "host", 0, 0, 0}).ok());
      QVERIFY(w.value().finish().ok());
    }
    {
      auto w = st::RunWriter::begin(path, st::RunHeader{st::RunKind::Mpi, "broken", "", "", "", ""});
      QVERIFY(w.ok());
      QVERIFY(w.value().fail("rank 3 died").ok());
    }
    const Run r = cli({"store", "info", QString::fromStdString(path), "--check"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("ShardScope trace store, schema 5"), qPrintable(r.out));
    QVERIFY(r.out.contains("2 run(s), integrity check ok"));
    QVERIFY(r.out.contains("emulate  complete  1 ranks"));
    QVERIFY(r.out.contains("mpi  failed"));
    QVERIFY(r.out.contains("error: rank 3 died"));
    const Run j = cli({"store", "info", QString::fromStdString(path), "--json"});
    QCOMPARE(j.code, 0);
    QVERIFY(j.out.contains("\"status\": \"complete\""));
  }

  void storeInfoRejectsNonStores() {
    QTemporaryDir dir;
    const QString text = writeFile(dir, "notes.sqlite", "just text, not SQLite\n");
    const Run r = cli({"store", "info", text});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(text), qPrintable(r.err));
    QCOMPARE(cli({"store", "info"}).code, 2);
    QCOMPARE(cli({"store", "frob", text}).code, 2);
    QCOMPARE(cli({"store", "info", dir.filePath("missing.sqlite")}).code, 1);
  }

  void planPrintsRankedGridsAndWritesThePlan() {
    QTemporaryDir dir;
    const QString out = dir.filePath("plan.json");
    const Run r = cli({"plan", "--cluster", "h100x64", "--out", out});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("step ms"));
    QVERIFY(r.out.contains("Grid M = "));
    QVERIFY(r.out.contains("<- slowest"));
    QVERIFY(r.out.contains("plan written to " + out));
    const Run v = cli({"validate", out});
    QVERIFY2(v.code == 0, qPrintable(v.err));
  }

  void planJsonListsEveryGrid() {
    const Run r = cli({"plan", "--cluster", "a100x8", "--json"});
    QCOMPARE(r.code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["grids"].size(), 8u);  // 4 divisors of 8 x 2 layouts
    QVERIFY(j["grids"][0].contains("plan"));
    QVERIFY(j["grids"][0]["step"]["step_ms"].get<double>() > 0);
  }

  void planRejectsBadArguments() {
    QCOMPARE(cli({"plan", "--grid", "7"}).code, 2);  // 7 does not divide 64
    QCOMPARE(cli({"plan", "--layout", "diagonal"}).code, 2);
    QCOMPARE(cli({"plan", "--algorithm", "genetic"}).code, 2);
    QCOMPARE(cli({"plan", "--sync-interval", "0"}).code, 2);
    const Run r = cli({"plan", "--model", "/nonexistent/m.json"});
    QCOMPARE(r.code, 1);
    QVERIFY(r.err.contains("/nonexistent/m.json: cannot open"));
  }

  void planWithABaselineAndConstraints() {
    QTemporaryDir dir;
    const QString cons = writeFile(dir, "c.json", R"({"schema": "shardscope.constraints/1",
      "tables": [{"table": "cat_1", "pin_ranks": [99]}]})");
    const Run r = cli({"plan", "--cluster", "h100x8", "--grid", "8", "--layout", "strided", "--algorithm",
                       "size_greedy", "--constraints", cons});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("size_greedy"));
    QVERIFY(r.out.contains("table cat_1: pin to group rank 99 cannot be met"));
  }

  void evaluateComparesAGivenPlanWithTheOptimizedOne() {
    const QString plan = QString(SHARDSCOPE_TEST_DATA_DIR) + "/plans/strided_8x4.json";
    const Run r = cli(
        {"evaluate", "--plan", plan, "--model", QString(SHARDSCOPE_TEST_DATA_DIR) + "/models/strided_8x4_model.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("given plan"));
    QVERIFY(r.out.contains("Optimized plan for the same grid"));
    QVERIFY(r.out.contains("against model \"fixture for strided_8x4\""));
    QCOMPARE(cli({"evaluate"}).code, 2);
  }

  void evaluateNeedsTheModelAndChecksItsTables() {
    const QString plan = QString(SHARDSCOPE_TEST_DATA_DIR) + "/plans/strided_8x4.json";
    const Run none = cli({"evaluate", "--plan", plan});
    QCOMPARE(none.code, 2);
    QVERIFY2(none.err.contains("evaluate needs the model the plan is for"), qPrintable(none.err));
    // DCNv2's cat_2 has 17,295 rows; the fixture's has 10.
    const Run other = cli({"evaluate", "--plan", plan, "--model", "dcnv2"});
    QCOMPARE(other.code, 1);
    QVERIFY2(
        other.err.contains("/tables/2: expected table \"cat_2\" as model \"DLRM-DCNv2 (MLPerf, Criteo 1TB)\" has it "
                           "(17295 rows x dim 128), the plan has 10 rows x dim 128"),
        qPrintable(other.err));
  }

  void evaluateReadsTorchRecPlans() {
    const Run r =
        cli({"evaluate", "--plan", QString(SHARDSCOPE_TEST_DATA_DIR) + "/torchrec/from_strided_8x4.json",
             "--world-size", "32", "--model", QString(SHARDSCOPE_TEST_DATA_DIR) + "/models/strided_8x4_model.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("Grid M = 8, R = 4"));
  }

  void genModelIsSeededAndValid() {
    QTemporaryDir dir;
    const QString a = dir.filePath("a.json"), b = dir.filePath("b.json");
    QCOMPARE(cli({"gen-model", "--tables", "50", "--seed", "3", "--out", a}).code, 0);
    QCOMPARE(cli({"gen-model", "--tables", "50", "--seed", "3", "--out", b}).code, 0);
    QFile fa(a), fb(b);
    QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
    QCOMPARE(fa.readAll(), fb.readAll());
    QCOMPARE(cli({"validate", a}).code, 0);
    QCOMPARE(cli({"gen-model", "--tables", "0"}).code, 2);
    QCOMPARE(cli({"gen-model"}).code, 2);
  }

  void presetsListsModelsAndClusters() {
    const Run r = cli({"presets"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("dcnv2"));
    QVERIFY(r.out.contains("h200x4096"));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
