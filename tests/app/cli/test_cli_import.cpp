// `shardscope-cli import` end to end through QProcess: Kineto files and a
// folder into a store, the summary (text and JSON), `report` on the run, and
// the exit codes of bad input, bad rules, duplicate ranks and usage errors.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {
const QString kCli = QStringLiteral(SHARDSCOPE_CLI);
const QString kData = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/import/");

struct Run {
  int code = -1;
  QString out, err;
};

Run cli(const QStringList& args) {
  QProcess p;
  p.start(kCli, args);
  Run r;
  if (!p.waitForFinished(60000)) {
    p.kill();
    p.waitForFinished();
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}
}  // namespace

class TestCliImport : public QObject {
  Q_OBJECT

 private slots:
  void importsKinetoAndReports() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    auto r = cli({"import", "kineto", kData + "rank0.json", kData + "rank1.json.gz", "--store", store});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("imported run 1 (import-kineto)"), qPrintable(r.out));
    QVERIFY2(r.out.contains("-5000.123 ms"), qPrintable(r.out));  // rank 1's clock offset
    QVERIFY(r.out.contains("ProfilerStep#5 start"));
    QVERIFY(r.out.contains("unknown category \"python_function\""));
    QVERIFY(r.out.contains("shardscope-cli report --store"));
    auto rep = cli({"report", "--store", store, "--json"});
    QVERIFY2(rep.code == 0, qPrintable(rep.err));
    const auto j = nlohmann::json::parse(rep.out.toStdString(), nullptr, false);
    QVERIFY(!j.is_discarded());
    const std::string text = j.dump();
    QVERIFY2(text.find("import-kineto") != std::string::npos, text.c_str());
    QVERIFY2(text.find("a2a_ids") != std::string::npos, text.c_str());
    auto txt = cli({"report", "--store", store});
    QVERIFY(txt.code == 0);
    QVERIFY2(txt.out.contains("overall 1.375"), qPrintable(txt.out));
  }

  void folderAndJson() {
    QTemporaryDir dir;
    namespace fs = std::filesystem;
    const fs::path traces = fs::path(dir.path().toStdString()) / "traces";
    fs::create_directories(traces);
    fs::copy_file(kData.toStdString() + "rank0.json", traces / "rank0.json");
    fs::copy_file(kData.toStdString() + "rank1.json.gz", traces / "rank1.json.gz");
    const QString store = dir.filePath("s.sqlite");
    auto r = cli({"import", "kineto", QString::fromStdString(traces.string()), "--store", store, "--json",
                  "--label", "job 7"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto j = nlohmann::json::parse(r.out.toStdString(), nullptr, false);
    if (j.is_discarded()) QFAIL("import --json did not print JSON");
    QCOMPARE(j["ranks"].size(), std::size_t{2});
    QCOMPARE(j["ranks"][1]["clock_offset_ns"].get<std::int64_t>(), std::int64_t{-5'000'123'500});
    QCOMPARE(j["spans_by_kind"]["emb_fwd"].get<int>(), 4);
    QCOMPARE(j["events"].get<int>(), 76);
  }

  void errorsAndExitCodes() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    auto trunc = cli({"import", "kineto", kData + "truncated.json", "--store", store});
    QCOMPARE(trunc.code, 1);
    QVERIFY2(trunc.err.contains("truncated.json: byte "), qPrintable(trunc.err));
    QVERIFY(trunc.err.contains("marked failed"));
    auto dup = cli({"import", "kineto", kData + "rank0.json", kData + "rank0.json", "--store", store});
    QCOMPARE(dup.code, 1);
    QVERIFY2(dup.err.contains("rank 0 was already imported"), qPrintable(dup.err));
    auto rules = cli({"import", "kineto", kData + "rank0.json", "--store", store, "--rules", kData + "bad_rules.json"});
    QCOMPARE(rules.code, 1);
    QVERIFY2(rules.err.contains("/rules/1/pattern: invalid regular expression"), qPrintable(rules.err));
    QCOMPARE(cli({"import", "kineto", kData + "rank0.json"}).code, 2);             // no --store
    QCOMPARE(cli({"import", "perfetto", kData + "rank0.json", "--store", store}).code, 2);
    QCOMPARE(cli({"import", "kineto", "--store", store}).code, 2);                 // no file
    QCOMPARE(cli({"import", "kineto", kData + "rank0.json", "--store", store, "--bogus"}).code, 2);
    auto missing = cli({"import", "kineto", kData + "nope.json", "--store", store});
    QCOMPARE(missing.code, 1);
    QVERIFY(missing.err.contains("nope.json"));
    auto help = cli({"import", "--help"});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains("import kineto"));
  }

  void importsNsysExport() {
    // The nsys importer's fixture (SQL text of a small export) made into a database.
    std::ifstream in(kData.toStdString() + "nsys_small.sql");
    if (!in) QSKIP("tests/data/import/nsys_small.sql not present");
    std::stringstream sql;
    sql << in.rdbuf();
    QTemporaryDir dir;
    const std::string db = dir.filePath("rank0.sqlite").toStdString();
    sqlite3* h = nullptr;
    QVERIFY(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql.str().c_str(), nullptr, nullptr, &err);
    const std::string msg = err != nullptr ? err : "";
    sqlite3_free(err);
    sqlite3_close(h);
    QVERIFY2(rc == SQLITE_OK, msg.c_str());
    const QString store = dir.filePath("s.sqlite");
    auto r = cli({"import", "nsys", QString::fromStdString(db), "--store", store});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("(import-nsys)"), qPrintable(r.out));
    auto rep = cli({"report", "--store", store});
    QVERIFY2(rep.code == 0, qPrintable(rep.err));
  }

  void nsysIsWired() {
    QTemporaryDir dir;
    auto r = cli({"import", "nsys", kData + "rank0.json", "--store", dir.filePath("s.sqlite")});
    QCOMPARE(r.code, 1);  // not an SQLite export: the nsys importer says so, naming the file
    QVERIFY2(r.err.contains("rank0.json"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestCliImport)
#include "test_cli_import.moc"
