// shardscope-cli on trace stores whose file system refuses writes: an import
// that runs out of space exits 3 (I/O) and leaves a store that `store info`
// and `report` still read; a store in a folder the user cannot write is read
// by `store info` and `report` without creating anything there. The limits
// are real, set on the CLI process: RLIMIT_FSIZE (writes past it fail as on a
// full disk) and, when the tests run as root (whom permission bits do not
// stop), the CLI running as user nobody.
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <grp.h>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {
namespace fs = std::filesystem;

const QString kData = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/import/");
constexpr uid_t kNobody = 65534;
constexpr rlim_t kFileSizeLimit = 256 * 1024;

using cli_test::Run;

enum class Limit { None, FileSize, Nobody };

Run cli(const QStringList& args, Limit limit = Limit::None) {
  cli_test::RunOptions o;
  if (limit == Limit::FileSize) {
    o.child_setup = [] {
      const rlimit lim{kFileSizeLimit, kFileSizeLimit};
      if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(77);
      std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing
    };
  } else if (limit == Limit::Nobody) {
    o.child_setup = [] {
      if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0)) _exit(77);
    };
  }
  return cli_test::runCli(args, o);
}

// One rank's Kineto trace with `kernels` embedding kernels: far more spans
// than fit under kFileSizeLimit.
void writeLargeTrace(const QString& path, int kernels) {
  nlohmann::json events = nlohmann::json::array();
  for (int i = 0; i < kernels; ++i) {
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", "void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float>()"},
                      {"pid", 0},
                      {"tid", 7},
                      {"ts", 1000.0 + 10.0 * i},
                      {"dur", 5},
                      {"args", {{"device", 0}, {"stream", 7}}}});
  }
  nlohmann::json trace = {{"schemaVersion", 1},
                          {"distributedInfo", {{"backend", "nccl"}, {"rank", 0}, {"world_size", 1}}},
                          {"traceEvents", events}};
  std::ofstream(path.toStdString(), std::ios::binary) << trace.dump();
}

std::vector<std::string> listFolder(const QString& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.toStdString())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void setWritable(const QString& dir, bool writable) {
  fs::permissions(dir.toStdString(), writable ? fs::perms(0755) : fs::perms(0555), fs::perm_options::replace);
}
}  // namespace

class TestCliStore : public QObject {
  Q_OBJECT

 private slots:
  void importThatRunsOutOfSpaceExitsThreeAndTheStoreStillReads() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    auto first = cli({"import", "kineto", kData + "rank0.json", kData + "rank1.json.gz", "--store", store, "--quiet"});
    QVERIFY2(first.code == 0, qPrintable(first.err));
    QVERIFY(fs::file_size(store.toStdString()) < kFileSizeLimit);
    const QString large = dir.filePath("large.json");
    writeLargeTrace(large, 40000);

    auto full = cli({"import", "kineto", large, "--store", store, "--quiet"}, Limit::FileSize);
    QVERIFY2(full.code != 77, "could not limit the file size");
    QVERIFY2(full.code == 3, qPrintable(QString::number(full.code) + ": " + full.err));
    QVERIFY2(full.err.contains("disk is full") || full.err.contains("reading or writing the file failed"),
             qPrintable(full.err));
    QVERIFY2(!full.err.contains("corrupt"), qPrintable(full.err));

    // Still limited: reading needs no new bytes.
    auto info = cli({"store", "info", store, "--json"}, Limit::FileSize);
    QVERIFY2(info.code == 0, qPrintable(info.err));
    const auto j = nlohmann::json::parse(info.out.toStdString());
    QCOMPARE(j["runs"].size(), std::size_t{2});
    QCOMPARE(j["runs"][0]["status"].get<std::string>(), std::string("complete"));
    QVERIFY(j["runs"][1]["status"].get<std::string>() != "complete");
    auto report = cli({"report", "--store", store, "--run", "1"}, Limit::FileSize);
    QVERIFY2(report.code == 0, qPrintable(report.err));

    auto check = cli({"store", "info", store, "--check"});
    QVERIFY2(check.code == 0, qPrintable(check.err));
    QVERIFY(check.out.contains("integrity check ok"));
    auto again = cli({"import", "kineto", kData + "rank0.json", "--store", store, "--quiet"});
    QVERIFY2(again.code == 0, qPrintable(again.err));
  }

  void storeInAReadOnlyFolderIsReadByStoreInfoAndReport() {
    QTemporaryDir root;
    fs::permissions(root.path().toStdString(), fs::perms(0755), fs::perm_options::replace);
    QVERIFY(QDir(root.path()).mkdir("ro"));
    const QString dir = root.filePath("ro");
    const QString store = dir + "/s.sqlite";
    auto imported =
        cli({"import", "kineto", kData + "rank0.json", kData + "rank1.json.gz", "--store", store, "--quiet"});
    QVERIFY2(imported.code == 0, qPrintable(imported.err));
    QCOMPARE(listFolder(dir), std::vector<std::string>{"s.sqlite"});
    setWritable(dir, false);

    auto probe =
        cli({"import", "kineto", kData + "rank0.json", "--store", dir + "/new.sqlite", "--quiet"}, Limit::Nobody);
    QVERIFY2(probe.code != 77, "could not run the CLI as user nobody");
    QVERIFY2(probe.code == 3, qPrintable(probe.err));  // the folder really refuses new files

    auto info = cli({"store", "info", store}, Limit::Nobody);
    QVERIFY2(info.code == 0, qPrintable(info.err));
    QVERIFY2(info.out.contains("1 run(s)"), qPrintable(info.out));
    auto check = cli({"store", "info", store, "--check"}, Limit::Nobody);
    QVERIFY2(check.code == 0, qPrintable(check.err));
    auto report = cli({"report", "--store", store}, Limit::Nobody);
    QVERIFY2(report.code == 0, qPrintable(report.err));
    QVERIFY2(report.out.contains("import-kineto"), qPrintable(report.out));
    QCOMPARE(listFolder(dir), std::vector<std::string>{"s.sqlite"});
    setWritable(dir, true);
  }

  // export-trace: an imported run as Chrome trace JSON (a process per rank), a rank and window
  // selected, and bad options refused with exit 2 before anything is written.
  void exportTraceWritesChromeJson() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite"), out = dir.filePath("t.json");
    auto imported =
        cli({"import", "kineto", kData + "rank0.json", kData + "rank1.json.gz", "--store", store, "--quiet"});
    QVERIFY2(imported.code == 0, qPrintable(imported.err));
    auto all = cli({"export-trace", "--store", store, "--out", out});
    QVERIFY2(all.code == 0, qPrintable(all.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto doc = QJsonDocument::fromJson(f.readAll());
    QVERIFY(doc.isObject());
    QSet<int> pids;
    int events = 0;
    for (const auto& v : doc.object().value("traceEvents").toArray()) {
      const QJsonObject e = v.toObject();
      pids.insert(e.value("pid").toInt());
      if (e.value("ph").toString() == "X") ++events;
    }
    QCOMPARE(pids, (QSet<int>{0, 1}));
    QVERIFY(events > 0);
    QVERIFY2(all.out.contains(" spans and "), qPrintable(all.out));
    auto one = cli({"export-trace", "--store", store, "--ranks", "1", "--from-ms", "0", "--out", out});
    QVERIFY2(one.code == 0, qPrintable(one.err));
    QFile g(out);
    QVERIFY(g.open(QIODevice::ReadOnly));
    for (const auto& v : QJsonDocument::fromJson(g.readAll()).object().value("traceEvents").toArray())
      QCOMPARE(v.toObject().value("pid").toInt(), 1);
    QCOMPARE(cli({"export-trace", "--store", store, "--ranks", "one", "--out", out}).code, 2);
    QCOMPARE(cli({"export-trace", "--store", store, "--from-ms", "5", "--to-ms", "1", "--out", out}).code, 2);
    QCOMPARE(cli({"export-trace", "--store", store}).code, 2);
    QCOMPARE(cli({"export-trace", "--store", dir.filePath("none.sqlite"), "--out", dir.filePath("x.json")}).code, 1);
  }

  // export-trace --per-rank-dir: one file per rank that `import kineto DIR` reads back into the
  // same spans (kinds per rank) and collectives; the folder is not written twice, and --out and
  // --per-rank-dir exclude each other.
  void exportTracePerRankDirImportsBack() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite"), again = dir.filePath("again.sqlite"), out = dir.filePath("ranks");
    auto first = cli({"import", "kineto", kData + "rank0.json", kData + "rank1.json.gz", "--store", store, "--json"});
    QVERIFY2(first.code == 0, qPrintable(first.err));
    auto exported = cli({"export-trace", "--store", store, "--per-rank-dir", out});
    QVERIFY2(exported.code == 0, qPrintable(exported.err));
    QVERIFY2(exported.out.contains("written to 2 file(s) in "), qPrintable(exported.out));
    QCOMPARE(QDir(out).entryList(QDir::Files), (QStringList{"rank0.json", "rank1.json"}));
    auto second = cli({"import", "kineto", out, "--store", again, "--json"});
    QVERIFY2(second.code == 0, qPrintable(second.err));
    const auto a = nlohmann::json::parse(first.out.toStdString()), b = nlohmann::json::parse(second.out.toStdString());
    QCOMPARE(b["spans_by_kind"].dump(), a["spans_by_kind"].dump());
    QCOMPARE(b["ranks"].size(), std::size_t{2});
    for (std::size_t i = 0; i < 2; ++i) {
      QCOMPARE(b["ranks"][i]["rank"], a["ranks"][i]["rank"]);
      QCOMPARE(b["ranks"][i]["spans_by_kind"].dump(), a["ranks"][i]["spans_by_kind"].dump());
      QCOMPARE(b["ranks"][i]["collectives"], a["ranks"][i]["collectives"]);
    }
    QCOMPARE(cli({"export-trace", "--store", store, "--per-rank-dir", out}).code, 2);  // holds rank files
    QCOMPARE(cli({"export-trace", "--store", store, "--per-rank-dir", out, "--out", dir.filePath("t.json")}).code, 2);
  }
};

QTEST_GUILESS_MAIN(TestCliStore)
#include "test_cli_store.moc"
