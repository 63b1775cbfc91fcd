// The agent's configuration and how it fills its launcher: every error names
// the file and JSON path (core's checked reader: every problem at once, no
// key twice), placeholders take only the agent's own values, and an sbatch
// launch writes a batch script whose words are quoted.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sstream>
#include <thread>

#include "shardscope/profiler/agent/agent_config.h"
#include "shardscope/profiler/agent/agent_launch.h"

using namespace shardscope;
using nlohmann::json;

class TestAgentConfig : public QObject {
  Q_OBJECT

  static json minimal() {
    return {{"schema", "shardscope.agent-config/1"}, {"token_file", "token"}, {"store_dir", "store"}};
  }

 private slots:
  void readsEveryMember() {
    json j = minimal();
    j["listen"] = {{"address", "0.0.0.0"}, {"port", 7443}};
    j["engine"] = "/opt/shardscope/bin/shardscope-engine";
    j["cluster"] = "h100x64";
    j["launcher"] = {{"kind", "sbatch"},
                     {"argv", {"sbatch", "--partition=gpu", "-N", "{nodes}"}},
                     {"step_argv", {"srun", "--ntasks={ranks}"}}};
    j["limits"] = {{"max_ranks", 512}, {"max_jobs", 8}, {"max_running", 2}, {"max_connections", 64}};
    auto c = profiler::agentConfigFromJson(j, "agent.json", "/etc/shardscope");
    QVERIFY2(c, c ? "" : c.error().message.c_str());
    QCOMPARE(c->listen_address, std::string("0.0.0.0"));
    QCOMPARE(c->port, std::uint16_t{7443});
    QCOMPARE(c->token_file, std::string("/etc/shardscope/token"));  // relative to the config's folder
    QCOMPARE(c->store_dir, std::string("/etc/shardscope/store"));
    QCOMPARE(c->launcher, profiler::LauncherKind::Sbatch);
    QCOMPARE(c->step_argv.size(), std::size_t{2});
    QVERIFY(c->cluster && c->cluster->worldSize() == 64);
    QCOMPARE(c->limits.max_ranks, 512u);
    QCOMPARE(c->limits.max_running, 2u);
    QCOMPARE(c->limits.max_steps, profiler::AgentLimits{}.max_steps);  // defaults where absent
  }

  void errorsNameTheirPath_data() {
    QTest::addColumn<QString>("patch");
    QTest::addColumn<QString>("path");
    QTest::newRow("schema") << R"({"schema": "shardscope.agent-config/2"})"
                            << "/schema";
    QTest::newRow("no token") << R"({"token_file": null})"
                              << "/token_file";
    QTest::newRow("empty store") << R"({"store_dir": ""})"
                                 << "/store_dir";
    QTest::newRow("port") << R"({"listen": {"port": 70000}})"
                          << "/listen/port";
    QTest::newRow("kind") << R"({"launcher": {"kind": "qsub", "argv": ["qsub"]}})"
                          << "/launcher/kind";
    QTest::newRow("placeholder") << R"({"launcher": {"kind": "mpirun", "argv": ["mpirun", "-np", "{N}"]}})"
                                 << "/launcher/argv/2";
    QTest::newRow("inside a word") << R"({"launcher": {"kind": "srun", "argv": ["srun", "--x={ranks}{cmd}"]}})"
                                   << "/launcher/argv/1";
    QTest::newRow("empty word") << R"({"launcher": {"kind": "srun", "argv": ["srun", ""]}})"
                                << "/launcher/argv/1";
    QTest::newRow("no argv") << R"({"launcher": {"kind": "srun"}})"
                             << "/launcher/argv";
    QTest::newRow("step on srun") << R"({"launcher": {"kind": "srun", "argv": ["srun"], "step_argv": ["x"]}})"
                                  << "/launcher/step_argv";
    QTest::newRow("limit") << R"({"limits": {"max_running": 0}})"
                           << "/limits/max_running";
    QTest::newRow("limit kind") << R"({"limits": {"max_jobs": "8"}})"
                                << "/limits/max_jobs";
    QTest::newRow("cluster") << R"({"cluster": "no-such-cluster-file.json"})"
                             << "/cluster";
  }
  void errorsNameTheirPath() {
    QFETCH(QString, patch);
    QFETCH(QString, path);
    json j = minimal();
    j.merge_patch(json::parse(patch.toStdString()));
    auto c = profiler::agentConfigFromJson(j, "agent.json", "/tmp");
    QVERIFY(!c);
    QCOMPARE(QString::fromStdString(c.error().json_path), path);
    QVERIFY2(c.error().message.rfind("agent.json: " + path.toStdString(), 0) == 0, c.error().message.c_str());
  }

  // Keys the agent does not know, at every level, and the job limits' ranges.
  void unknownKeysAndJobLimitsNameTheirPath_data() {
    QTest::addColumn<QString>("patch");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("says");
    QTest::newRow("top")
        << R"({"tokenfile": "t"})"
        << "/tokenfile"
        << "unknown key; expected one of cluster, engine, launcher, limits, listen, schema, store_dir, "
           "token_file";
    QTest::newRow("listen") << R"({"listen": {"adress": "0.0.0.0"}})"
                            << "/listen/adress"
                            << "unknown key; expected one of address, port";
    QTest::newRow("launcher") << R"({"launcher": {"kind": "none", "agrv": []}})"
                              << "/launcher/agrv"
                              << "unknown key; expected one of argv, kind, step_argv";
    QTest::newRow("limits") << R"({"limits": {"max_conections": 5}})"
                            << "/limits/max_conections"
                            << "unknown key; expected one of handshake_seconds, job_memory_bytes";
    QTest::newRow("job memory") << R"({"limits": {"job_memory_bytes": 1024}})"
                                << "/limits/job_memory_bytes"
                                << "expected an integer in [16777216, ";
    QTest::newRow("job over total")
        << R"({"limits": {"job_memory_bytes": 2147483648, "total_memory_bytes": 1073741824}})"
        << "/limits/job_memory_bytes"
        << "expected at most total_memory_bytes (1073741824)";
    QTest::newRow("job threads") << R"({"limits": {"job_threads": 0}})"
                                 << "/limits/job_threads"
                                 << "expected an integer in [1, 4096]";
    QTest::newRow("job seconds") << R"({"limits": {"job_seconds": 2678401}})"
                                 << "/limits/job_seconds"
                                 << "expected an integer in [1, 2678400]";
  }
  void unknownKeysAndJobLimitsNameTheirPath() {
    QFETCH(QString, patch);
    QFETCH(QString, path);
    QFETCH(QString, says);
    json j = minimal();
    j.merge_patch(json::parse(patch.toStdString()));
    auto c = profiler::agentConfigFromJson(j, "agent.json", "/tmp");
    QVERIFY(!c);
    QCOMPARE(QString::fromStdString(c.error().json_path), path);
    QVERIFY2(c.error().message.rfind("agent.json: " + path.toStdString() + ": " + says.toStdString(), 0) == 0,
             c.error().message.c_str());
  }

  // Every problem of a config at once, the first one's path in the error.
  void everyProblemIsSaid() {
    json j = minimal();
    j.merge_patch(
        json::parse(R"({"store_dir": null, "listen": {"port": -1}, "limits": {"max_jobs": 0, "max_job": 1}})"));
    auto c = profiler::agentConfigFromJson(j, "agent.json", "/tmp");
    QVERIFY(!c);
    for (const char* path : {"/store_dir", "/listen/port", "/limits/max_jobs", "/limits/max_job"})
      QVERIFY2(c.error().message.find(std::string("agent.json: ") + path + ": ") != std::string::npos, path);
    QCOMPARE(c.error().json_path, std::string("/listen/port"));  // the first read
  }

  // The file itself: not JSON, a key twice, not an object, missing.
  void aMalformedFileNamesItsProblem_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("says");
    QTest::newRow("not json") << R"({"schema": "shardscope.agent-config/1",)"
                              << "not valid JSON at line 1";
    QTest::newRow("a key twice") << R"({"schema": "shardscope.agent-config/1", "port": 1, "port": 2})"
                                 << "/port: duplicate key";
    QTest::newRow("not an object") << "[]"
                                   << "/: expected an object";
    QTest::newRow("no schema") << R"({"token_file": "t", "store_dir": "s"})"
                               << "/schema: missing required field";
  }
  void aMalformedFileNamesItsProblem() {
    QFETCH(QString, text);
    QFETCH(QString, says);
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/agent.json").toStdString();
    std::ofstream(path) << text.toStdString();
    auto c = profiler::loadAgentConfig(path);
    QVERIFY(!c);
    QVERIFY(c.error().kind == core::ErrorKind::InvalidInput);
    QVERIFY2(
        c.error().message.starts_with(path + ": ") && c.error().message.find(says.toStdString()) != std::string::npos,
        c.error().message.c_str());
    QVERIFY(!profiler::loadAgentConfig(path + ".missing"));
  }

  void everyKeyIsListedAndDocumented() {
    const std::vector<std::string> keys = profiler::agentConfigKeys();
    for (const char* expected : {"listen/address", "listen/port", "token_file", "store_dir", "cluster", "engine",
                                 "launcher/kind", "launcher/argv", "launcher/step_argv", "limits/max_connections",
                                 "limits/max_handshakes_per_address", "limits/job_memory_bytes", "limits/job_seconds"})
      QVERIFY2(std::find(keys.begin(), keys.end(), expected) != keys.end(), expected);
    for (const std::string& key : keys) {
      QVERIFY2(key != "limits" && key != "listen" && key != "launcher", key.c_str());  // objects by their keys
    }
    // docs/agent.md's table of keys names each one (`limits/job_seconds`), schema aside.
    QFile doc(QStringLiteral(SHARDSCOPE_SOURCE_DIR "/docs/agent.md"));
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(doc.readAll());
    for (const std::string& key : keys) {
      if (key == "schema") continue;
      QVERIFY2(text.contains(QStringLiteral("| `%1` |").arg(QString::fromStdString(key))), key.c_str());
    }
  }

  void jobLimitsDefaultFromTheMachine() {
    json j = minimal();
    j["limits"] = {{"max_running", 2}, {"job_seconds", 60}};
    auto c = profiler::agentConfigFromJson(j, "agent.json", "/tmp");
    QVERIFY2(c, c ? "" : c.error().message.c_str());
    const auto& l = c->limits;
    QCOMPARE(l.job_seconds, 60u);  // given: kept
    QVERIFY(l.total_memory_bytes >= std::uint64_t{256} << 20);
    QCOMPARE(l.job_memory_bytes, std::min<std::uint64_t>(std::uint64_t{8} << 30, l.total_memory_bytes));
    QCOMPARE(l.job_threads, std::max(1u, std::thread::hardware_concurrency() / 2));
  }

  void placeholdersTakeOnlyTheAgentsValues() {
    const std::vector<std::string> words{
        "srun",    "-N",        "{nodes}",       "--ntasks-per-node={gpus_per_node}", "-n", "{ranks}",
        "--chdir", "{job_dir}", "{ranks}{ranks}"};
    const auto filled = profiler::fillLauncherTemplate(words, {16, 2, 8, "/srv/agent/jobs/j7"});
    const std::vector<std::string> expected{
        "srun", "-N", "2", "--ntasks-per-node=8", "-n", "16", "--chdir", "/srv/agent/jobs/j7", "1616"};
    QCOMPARE(filled, expected);
  }

  void sbatchWritesAQuotedScript() {
    QTemporaryDir dir;
    profiler::AgentConfig c;
    c.launcher = profiler::LauncherKind::Sbatch;
    c.launcher_argv = {"sbatch", "-N", "{nodes}"};
    c.step_argv = {"srun", "-n", "{ranks}"};
    auto scheduler = std::make_shared<profiler::SchedulerJob>();
    const std::vector<std::string> engine{"/opt/engine", "--label=it's $(rm -rf /)"};
    auto p = profiler::prepareAgentLaunch(c, 12, 8, dir.path().toStdString(), engine, scheduler);
    QVERIFY(p);
    QCOMPARE(p->argv.front(), std::string("sbatch"));
    QCOMPARE(p->argv[2], std::string("2"));  // 12 ranks on 8-GPU nodes: 2 nodes
    QVERIFY(std::find(p->argv.begin(), p->argv.end(), "--parsable") != p->argv.end());
    QCOMPARE(p->argv.back(), (dir.path() + "/job.sh").toStdString());
    QCOMPARE(p->options.follow_file, (dir.path() + "/engine.out").toStdString());
    std::ifstream in((dir.path() + "/job.sh").toStdString());
    std::stringstream text;
    text << in.rdbuf();
    QVERIFY2(
        text.str().find("exec 'srun' '-n' '12' '/opt/engine' '--label=it'\\''s $(rm -rf /)'\n") != std::string::npos,
        text.str().c_str());
    QVERIFY(p->options.cancel_action);

    c.launcher = profiler::LauncherKind::Mpirun;
    c.launcher_argv = {"mpirun", "-np", "{ranks}"};
    auto m = profiler::prepareAgentLaunch(c, 4, 4, dir.path().toStdString(), engine, scheduler);
    QVERIFY(m);
    const std::vector<std::string> expected{"mpirun", "-np", "4", "/opt/engine", "--label=it's $(rm -rf /)"};
    QCOMPARE(m->argv, expected);
    QVERIFY(!m->options.cancel_action);
    c.launcher = profiler::LauncherKind::None;
    QVERIFY(!profiler::prepareAgentLaunch(c, 4, 4, dir.path().toStdString(), engine, scheduler));
  }

  void sbatchJobIds() {
    QCOMPARE(profiler::parseSbatchJobId("4242"), std::optional<std::string>("4242"));
    QCOMPARE(profiler::parseSbatchJobId("4242;cluster-a"), std::optional<std::string>("4242"));
    QVERIFY(!profiler::parseSbatchJobId("Submitted batch job 4242"));
    QVERIFY(!profiler::parseSbatchJobId(""));
    QVERIFY(!profiler::parseSbatchJobId("12a"));
  }
};

QTEST_GUILESS_MAIN(TestAgentConfig)
#include "test_agent_config.moc"
