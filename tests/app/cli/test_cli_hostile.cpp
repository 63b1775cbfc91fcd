// shardscope-cli against hostile and extreme input: clear errors with exit 1
// (never "internal error", exit 3), every file checked, Ctrl-C honoured in
// every long command, and no plan written that its own validate refuses.
#include <QtTest>

#include <csignal>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"

#include "cli_run.h"

namespace {
using cli_test::Run;
using cli_test::writeFile;

Run cli(const QStringList& args, int timeout_ms = 60000) { return cli_test::runCli(args, {.timeout_ms = timeout_ms}); }

QByteArray modelText() {
  return QByteArray::fromStdString(shardscope::core::toJson(shardscope::core::modelPreset("dcnv2").value()).dump(1));
}
}  // namespace

class TestCliHostile : public QObject {
  Q_OBJECT
 private slots:
  void validateChecksEveryFileAndNamesPathAndLimit() {
    QTemporaryDir dir;
    QByteArray huge = modelText();
    huge.replace("\"parameters\":", "\"parameters\": 1e400, \"was\":");
    QByteArray dup = modelText();
    dup.replace("\"name\": \"cat_0\"", "\"name\": \"cat_0\", \"name\": \"cat_00\"");
    const QString a = writeFile(dir, "huge.json", huge);
    const QString b = writeFile(dir, "dup.json", dup);
    const QString c = writeFile(dir, "good.json", modelText());
    const Run r = cli({"validate", a, b, c});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(a + ": not valid JSON at line ") &&
                 r.err.contains("(/dense/parameters): number overflow parsing '1e400' (numbers must fit a double, "
                                "|x| < 1.8e308)"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains(b + ": /tables/0/name: duplicate key \"name\""), qPrintable(r.err));
    QVERIFY2(r.out.contains(c + ": ok: model"), qPrintable(r.out));  // checked after two failures
    QVERIFY(!r.err.contains("internal"));
  }

  void hugeSizesAreRefusedBeforeAllocating() {
    QTemporaryDir dir;
    auto j = shardscope::core::toJson(shardscope::core::modelPreset("dcnv2").value());
    j["tables"][0]["rows"] = UINT64_MAX;
    const QString m = writeFile(dir, "rows.json", QByteArray::fromStdString(j.dump()));
    Run r = cli({"plan", "--model", m, "--cluster", "h100x8"}, 20000);  // looped forever on rows + 1 == 0
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(m + ": /tables/0/rows: expected an integer in [1, 281474976710656], got "
                                "18446744073709551615"),
             qPrintable(r.err));
    // A TorchRec plan naming rank 16777215 once built a 16-million-rank plan (gigabytes).
    const QString tr = writeFile(dir, "tr.json", R"({"plan": {"ebc": {"cat_0": {"sharding_type": "table_wise",
      "compute_kernel": "fused", "ranks": [16777215], "shards": [{"shard_offsets": [0, 0],
      "shard_sizes": [40000000, 128], "placement": "rank:16777215/cuda:0"}]}}}})");
    r = cli({"evaluate", "--plan", tr, "--model", "dcnv2"}, 20000);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("/plan/ebc/cat_0/ranks/0: expected an integer in [0, 131071], got 16777215"),
             qPrintable(r.err));
  }

  void ctrlCStopsASingleGridPlan() {
    QTemporaryDir dir;
    const QString model = dir.filePath("big.json");
    QCOMPARE(cli({"gen-model", "--tables", "20000", "--seed", "3", "--out", model}).code, 0);
    const QString out = dir.filePath("plan.json");
    QProcess p;
    p.start(SHARDSCOPE_CLI, {"plan", "--model", model, "--cluster", "h100x4096", "--grid", "4096", "--out", out});
    QVERIFY(p.waitForStarted());
    QTest::qWait(700);  // planning this one grid takes several seconds
    QCOMPARE(p.state(), QProcess::Running);
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY2(p.waitForFinished(20000), "Ctrl-C did not stop the plan");
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 130);
    QVERIFY(!QFile::exists(out));
  }

  void aPlanThatCannotBePricedIsNotWritten() {
    QTemporaryDir dir;
    const QString cal = writeFile(dir, "cal.json", R"({"schema": "shardscope.calibration/1", "source": "extreme",
      "coefficients": {"embedding_bandwidth_gbps": 1e-310}})");
    const QString out = dir.filePath("plan.json");
    const Run r =
        cli({"plan", "--model", "dcnv2", "--cluster", "h100x8", "--grid", "8", "--calibration", cal, "--out", out});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("cannot be priced (embedding compute inf") && r.err.contains(out + " not written"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
  }
};

QTEST_GUILESS_MAIN(TestCliHostile)
#include "test_cli_hostile.moc"
