// A job's record (job.json): what the agent writes reads back the same, and
// every malformed record is an error naming the file and the JSON path
// (recovery then skips it and says why), never an exception.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/profiler/agent/job_record.h"

using namespace shardscope;
namespace proto = core::protocol;
using nlohmann::json;

namespace {

const std::string kPath = "/srv/agent/jobs/j7/job.json";

profiler::JobRecord record() {
  profiler::JobRecord r;
  r.info.job = "j7";
  r.info.label = "record test";
  r.info.model = "tiny engine fixture";
  r.info.state = proto::JobState::Complete;
  r.info.mode = "emulate";
  r.info.launcher = "in-process";
  r.info.world_size = 4;
  r.info.group_size = 2;
  r.info.created = "2026-12-07T15:04:05Z";
  r.info.run = 3;
  r.spec.label = "record test";
  r.spec.project.name = "record test";
  r.spec.project.model = core::loadModel(SHARDSCOPE_TEST_DATA_DIR "/engine/tiny_model.json").value();
  r.spec.project.cluster = core::loadCluster(SHARDSCOPE_TEST_DATA_DIR "/engine/cpu4.json").value();
  r.spec.grid = 2;
  r.run_file = {"/srv/agent/jobs/j7/run.sqlite", 4096, std::string(64, 'a'), 3};
  r.owner = "client 192.0.2.1:5000";
  return r;
}

json recordJson() { return json::parse(profiler::jobRecordText(record())); }

}  // namespace

class TestJobRecord : public QObject {
  Q_OBJECT

 private slots:
  void whatIsWrittenReadsBack() {
    const std::string text = profiler::jobRecordText(record());
    auto back = profiler::parseJobRecord(text, kPath);
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    QCOMPARE(back->info, record().info);
    QCOMPARE(back->spec, record().spec);
    QCOMPARE(back->run_file, record().run_file);  // its path: run.sqlite beside the record
    QCOMPARE(back->owner, record().owner);
    QCOMPARE(json::parse(text).value("schema", ""), std::string(profiler::kAgentJobSchema));
  }

  void aJobWithoutARunFileHasNone() {
    profiler::JobRecord r = record();
    r.run_file = {};
    const json j = json::parse(profiler::jobRecordText(r));
    QVERIFY(!j.contains("run_file"));
    auto back = profiler::parseJobRecord(j.dump(), kPath);
    QVERIFY(back);
    QVERIFY(back->run_file.sha256.empty());
    json no_owner = j;
    no_owner.erase("owner");
    QCOMPARE(profiler::parseJobRecord(no_owner.dump(), kPath)->owner, std::string("a client"));
  }

  void malformedRecordsNameTheirPath_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("path");
    const auto patched = [](const json& patch) {
      json j = recordJson();
      j.merge_patch(patch);
      return QString::fromStdString(j.dump());
    };
    QTest::newRow("not json") << "{\"info\": "
                              << "";
    QTest::newRow("a key twice") << R"({"info": {}, "info": {}})"
                                 << "/info";
    QTest::newRow("not an object") << "[1, 2]"
                                   << "/";
    QTest::newRow("no spec") << patched({{"spec", nullptr}}) << "/";
    QTest::newRow("bad info") << patched({{"info", {{"state", "sleeping"}}}}) << "/info/state";
    QTest::newRow("bad spec") << patched({{"spec", {{"steps", 0}}}}) << "/spec/steps";
    QTest::newRow("owner") << patched({{"owner", 5}}) << "/owner";
    QTest::newRow("run file") << patched({{"run_file", "run.sqlite"}}) << "/run_file";
    QTest::newRow("run file size") << patched({{"run_file", {{"size", -1}}}}) << "/run_file/size";
    QTest::newRow("run file digest") << patched({{"run_file", {{"sha256", 7}}}}) << "/run_file/sha256";
    QTest::newRow("another job") << patched({{"info", {{"job", "j8"}}}}) << "/info/job";
  }
  void malformedRecordsNameTheirPath() {
    QFETCH(QString, text);
    QFETCH(QString, path);
    auto r = profiler::parseJobRecord(text.toStdString(), kPath);
    QVERIFY(!r);
    QVERIFY(r.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(r.error().file, kPath);
    if (!path.isEmpty()) QCOMPARE(QString::fromStdString(r.error().json_path), path);
    QVERIFY2(r.error().message.starts_with(kPath + ": "), r.error().message.c_str());
  }

  void aFileThatIsMissingOrEmptyIsAnError() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/j1/job.json").toStdString();
    auto r = profiler::loadJobRecord(path);
    QVERIFY(!r);
    QVERIFY(r.error().message.starts_with(path));
    QVERIFY(QDir(dir.path()).mkpath("j1"));
    std::ofstream(path).flush();
    r = profiler::loadJobRecord(path);
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("empty") != std::string::npos, r.error().message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestJobRecord)
#include "test_job_record.moc"
