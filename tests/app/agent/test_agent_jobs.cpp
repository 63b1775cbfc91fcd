// shardscope-agent's jobs as child processes, on loopback: memory estimates
// past the per-job limit and what is left of the total refused at submit, a
// child that outgrows the limit killed (and the next job runs), the wall
// time limit, the agent's own memory small while its job holds the tables,
// cancel and kill -9 leaving no engine behind, unknown config keys, a
// client's cluster that never reaches the launcher (a fake mpirun records
// its words), the job folder's modes, and shardscope-cli's dcnv2 refused.
#include <sys/stat.h>

#include <fstream>

#include <QtTest>

#include "agent_harness.h"
#include "shardscope/core/store/trace_store.h"

using namespace agent_test;
namespace st = shardscope::core::store;

namespace {

const QString kFakeJobs = QStringLiteral(SHARDSCOPE_SOURCE_DIR "/tests/app/agent/fake_jobs");

// A model with one 2M x 32 fp32 table: 264 MB of weights and momentum on one rank at grid 1.
json bigModel() {
  return {{"schema", "shardscope.model/1"},
          {"name", "one big table"},
          {"batch_size_per_gpu", 256},
          {"optimizer", "rowwise_adagrad"},
          {"dense", {{"parameters", 1000}, {"flops_per_sample", 1000}}},
          {"tables", {{{"name", "big"}, {"rows", 2000000}, {"dim", 32}, {"pooling", 4}}}}};
}

// A CPU cluster of `nodes` x `gpus` ranks (cpu4's links and device).
json cpuCluster(int nodes, int gpus) {
  json c = readJson(kCpu4);
  c["name"] = "cpu " + std::to_string(nodes) + "x" + std::to_string(gpus);
  c["nodes"] = nodes;
  c["gpus_per_node"] = gpus;
  c["world_size"] = nodes * gpus;
  return c;
}

// /proc: a process's parent and command line, its resident kilobytes.
int parentOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 1));
  char state = 0;
  int ppid = -1;
  rest >> state >> ppid;
  return ppid;
}
std::string commandLine(int pid) {
  QFile f(QString("/proc/%1/cmdline").arg(pid));
  if (!f.open(QIODevice::ReadOnly)) return {};
  QByteArray s = f.readAll();
  s.replace('\0', ' ');
  return s.toStdString();
}
std::vector<int> processes() {
  std::vector<int> out;
  for (const QString& name : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    bool number = false;
    const int pid = name.toInt(&number);
    if (number) out.push_back(pid);
  }
  return out;
}
// The agent started with `config` (its command line names it).
int agentPid(const QString& config) {
  for (const int pid : processes())
    if (commandLine(pid).find(config.toStdString()) != std::string::npos && parentOf(pid) == getpid()) return pid;
  return -1;
}
std::vector<int> childrenOf(int parent) {
  std::vector<int> out;
  for (const int pid : processes())
    if (parentOf(pid) == parent) out.push_back(pid);
  return out;
}
// Whether `pid` still runs (a zombie nobody reaped yet does not).
bool alive(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}
// Waits up to `ms` for `pid` to be gone.
bool goneWithin(int pid, int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) {
    if (!alive(pid)) return true;
    QTest::qWait(50);
  }
  return !alive(pid);
}

}  // namespace

class TestAgentJobs : public QObject {
  Q_OBJECT

 private:
  // The agent's engine child (shardscope-engine --emulate), -1 when none.
  static int engineChild(const Agent& agent) {
    const int a = agentPid(agent.path("agent.json"));
    for (const int pid : childrenOf(a))
      if (commandLine(pid).find("--emulate") != std::string::npos) return pid;
    return -1;
  }
  static std::string text(const json& j, const char* key) { return j.is_object() ? j.value(key, std::string()) : ""; }

 private slots:
  void anEstimatePastTheJobLimitIsRefused() {
    Agent agent;
    agent.config()["limits"]["job_memory_bytes"] = 64 << 20;
    agent.config()["limits"]["total_memory_bytes"] = 64 << 20;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    json spec = jobSpec("emulate", 3);
    spec["project"]["model"] = bigModel();
    spec["grid"] = 1;
    const json r = submitAnswer(c, spec);
    QCOMPARE(r["code"], "limit_exceeded");
    const std::string m = text(r, "message");
    QVERIFY2(m.find("limits.job_memory_bytes") != std::string::npos && m.find("64.0 MiB") != std::string::npos &&
                 m.find("of embedding weights and optimizer state") != std::string::npos,
             m.c_str());
    // What is left of the total: a long tiny job holds its estimate until it ends.
    json untraced = jobSpec("emulate", 100000);
    untraced["trace_spans"] = false;  // a trace of 100000 steps alone would pass 64 MiB
    const std::string first = submit(c, untraced);
    QVERIFY(!first.empty());
    const json second = submitAnswer(c, jobSpec("emulate", 3));
    QCOMPARE(second["code"], "limit_exceeded");
    QVERIFY2(text(second, "message").find("limits.total_memory_bytes") != std::string::npos, second.dump().c_str());
    QCOMPARE((*c.request({{"type", "cancel"}, {"job", first}}))["type"], "job");
    QCOMPARE(watchToEnd(c, first)["state"], "cancelled");
    const std::string third = submit(c, jobSpec("emulate", 2));  // the estimate is free again
    QCOMPARE(watchToEnd(c, third)["state"], "complete");
  }

  void aModelPastTheTableLimitIsRefusedBeforeItIsPlanned() {
    Agent agent;
    agent.config()["limits"]["max_tables"] = 2;  // the tiny model has more
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const json r = submitAnswer(c, jobSpec("emulate", 1));
    QCOMPARE(r["code"], "limit_exceeded");
    QVERIFY2(text(r, "message").find("(limits.max_tables)") != std::string::npos, r.dump().c_str());
  }

  void aChildPastItsLimitIsKilledAndTheNextJobRuns() {
    Agent agent;
    agent.config()["engine"] = (kFakeJobs + "/grow-engine").toStdString();
    agent.config()["limits"]["job_memory_bytes"] = 128 << 20;
    agent.environment().insert("FAKE_JOBS_REAL_ENGINE", SHARDSCOPE_ENGINE);
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string grow = submit(c, jobSpec("emulate", 3, "grow"));
    QVERIFY(!grow.empty());
    const json end = watchToEnd(c, grow);
    QCOMPARE(end["state"], "failed");
    QVERIFY2(text(end, "error").rfind("memory limit (128.0 MiB, limits.job_memory_bytes)", 0) == 0, end.dump().c_str());
    const std::string next = submit(c, jobSpec("emulate", 2));
    QCOMPARE(watchToEnd(c, next)["state"], "complete");
  }

  void theWallTimeLimitStopsAJob() {
    Agent agent;
    agent.config()["limits"]["job_seconds"] = 2;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string job = submit(c, jobSpec("emulate", 100000));
    const json end = watchToEnd(c, job);
    QCOMPARE(end["state"], "failed");
    QVERIFY2(text(end, "error").rfind("wall time limit (2 s, limits.job_seconds)", 0) == 0, end.dump().c_str());
    if (end["run"].get<int>() == 0) return;  // killed before its run began (a slow start): nothing to mark
    auto store = st::openStore(agent.path(QString::fromStdString("store/jobs/" + job + "/store.sqlite")).toStdString());
    QVERIFY(store);
    auto runs = store->listRuns();
    QVERIFY(runs && runs->size() == 1);
    QCOMPARE(runs->front().status, st::RunStatus::Failed);
  }

  void theAgentStaysSmallWhileItsJobHoldsTheTables() {
    Agent agent;
    RawClient c, w;
    QVERIFY(startAndHello(agent, c));
    QVERIFY(w.connect(agent.port()) && w.hello(agent.token()));
    json spec = jobSpec("emulate", 100000);
    spec["project"]["model"] = bigModel();
    spec["grid"] = 1;  // one rank holds the whole table
    const std::string job = submit(c, spec);
    QVERIFY(waitRunning(w, job));
    const int agent_pid = agentPid(agent.path("agent.json"));
    const int child = engineChild(agent);
    QVERIFY(agent_pid > 0 && child > 0);
    QVERIFY2(residentKiB(child) > 200 * 1024, qPrintable(QString::number(residentKiB(child))));  // the tables are there
    QVERIFY2(residentKiB(agent_pid) < 150 * 1024, qPrintable(QString::number(residentKiB(agent_pid))));
    QCOMPARE((*c.request({{"type", "cancel"}, {"job", job}}))["type"], "job");
    QCOMPARE(watchToEnd(c, job)["state"], "cancelled");
  }

  void cancelLeavesNoEngineBehind() {
    Agent agent;
    RawClient c, w;
    QVERIFY(startAndHello(agent, c));
    QVERIFY(w.connect(agent.port()) && w.hello(agent.token()));
    const std::string job = submit(c, jobSpec("emulate", 100000));
    QVERIFY(waitRunning(w, job));
    const int child = engineChild(agent);
    QVERIFY(child > 0);
    QCOMPARE((*c.request({{"type", "cancel"}, {"job", job}}))["type"], "job");
    QCOMPARE(watchToEnd(c, job)["state"], "cancelled");
    QVERIFY(!alive(child));  // reaped before the job's end was recorded
    QVERIFY(childrenOf(agentPid(agent.path("agent.json"))).empty());
  }

  void aKill9TakesTheEngineAlong() {
    Agent agent;
    RawClient c, w;
    QVERIFY(startAndHello(agent, c));
    QVERIFY(w.connect(agent.port()) && w.hello(agent.token()));
    const std::string job = submit(c, jobSpec("emulate", 100000));
    QVERIFY(waitRunning(w, job));
    const int child = engineChild(agent);
    QVERIFY(child > 0);
    agent.kill9();
    QVERIFY(goneWithin(child, 10000));
    RawClient after;
    QVERIFY2(startAndHello(agent, after), qPrintable(agent.output()));
    const json end = watchToEnd(after, job);
    QCOMPARE(end["state"], "failed");
    QVERIFY(text(end, "error").find("agent stopped") != std::string::npos);
  }

  void unknownConfigKeysAreRefusedWithTheirPath_data() {
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("expected");
    QTest::newRow("limits") << "limits"
                            << "max_conections"
                            << "/limits/max_conections: unknown key; expected one of";
    QTest::newRow("listen") << "listen"
                            << "adress"
                            << "/listen/adress: unknown key; expected one of address, port";
    QTest::newRow("launcher") << "launcher"
                              << "args"
                              << "/launcher/args: unknown key; expected one of argv, kind";
    QTest::newRow("top") << ""
                         << "clusters"
                         << "agent.json: /clusters: unknown key; expected one of cluster";
  }
  void unknownConfigKeysAreRefusedWithTheirPath() {
    QFETCH(QString, where);
    QFETCH(QString, key);
    QFETCH(QString, expected);
    Agent agent;
    json& target = where.isEmpty() ? agent.config() : agent.config()[where.toStdString()];
    if (where == "listen") target["address"] = "127.0.0.1";
    target[key.toStdString()] = 5;
    QCOMPARE(agent.runToExit(), 2);
    QVERIFY2(agent.output().contains(expected), qPrintable(agent.output()));
    QVERIFY(agent.output().contains("max_connections") || where != "limits");  // the list names the right keys
  }

  void noClusterAndNoGpusSaysSo() {
    if (QFile::exists("/dev/nvidiactl")) QSKIP("this machine has GPUs: it describes a cluster of its own");
    Agent agent;
    agent.config().erase("cluster");
    QCOMPARE(agent.runToExit(), 2);
    QVERIFY2(agent.output().contains("/cluster: the config names no cluster and this machine has no GPUs"),
             qPrintable(agent.output()));
  }

  void anEmulateCudaJobNeedsAGpuHere() {
    if (QFile::exists("/dev/nvidiactl")) QSKIP("this machine has GPUs");
    Agent agent;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    json spec = jobSpec("emulate", 1);
    spec["device"] = "cuda";
    const json r = submitAnswer(c, spec);
    QCOMPARE(r["code"], "invalid_job");  // refused at submit, not failed later
    const std::string m = text(r, "message");
    QVERIFY2(m.find("has no GPU for an emulate job") != std::string::npos ||
                 m.find("built without CUDA") != std::string::npos,
             m.c_str());
  }

  void aMissingEngineStopsTheStart() {
    Agent agent;
    agent.config()["engine"] = "/nonexistent/shardscope-engine";
    QCOMPARE(agent.runToExit(), 1);
    QVERIFY2(agent.output().contains("/engine: the engine /nonexistent/shardscope-engine is not an executable file"),
             qPrintable(agent.output()));
  }

  void aClientsClusterNeverReachesTheLauncher() {
    Agent agent;
    agent.config()["cluster"] = cpuCluster(2, 2);
    agent.config()["limits"]["job_threads"] = 4;  // 2 per rank: a node's 2 ranks share them
    agent.config()["launcher"] = {{"kind", "mpirun"},
                                  {"argv",
                                   {(kFakeJobs + "/mpirun").toStdString(), "-np", "{ranks}", "--fake-nodes={nodes}",
                                    "--fake-gpus-per-node={gpus_per_node}"}}};
    agent.environment().insert("FAKE_JOBS_DIR", agent.path(""));
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const json d = *c.request({{"type", "describe"}});
    QCOMPARE(d["cluster"]["nodes"], 2);
    QCOMPARE(d["jobs"]["shapes"], json::parse(R"([{"nodes":1,"world_size":2,"grids":[1,2]},
                                                  {"nodes":2,"world_size":4,"grids":[1,2,4]}])"));
    QVERIFY(d["limits"]["job_memory_bytes"].get<std::uint64_t>() > 0);
    QVERIFY(d["limits"]["job_threads"].get<int>() > 0);

    json spec = jobSpec("mpi", 2);
    spec["project"]["cluster"] = cpuCluster(6, 8);  // 48 GPUs the agent does not have
    spec["grid"] = 4;
    const std::string job = submit(c, spec);
    const json end = watchToEnd(c, job);
    QCOMPARE(end["state"], "complete");
    QCOMPARE(end["world_size"], 4);
    spec["nodes"] = 1;
    spec["grid"] = 2;
    QCOMPARE(watchToEnd(c, submit(c, spec))["state"], "complete");
    QFile args(agent.path("mpirun.args"));
    QVERIFY(args.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(args.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].startsWith("-np 4 --fake-nodes=2 --fake-gpus-per-node=2 "), qPrintable(lines[0]));
    QVERIFY2(lines[1].startsWith("-np 2 --fake-nodes=1 --fake-gpus-per-node=2 "), qPrintable(lines[1]));
    for (const QString& word : lines.join(' ').split(' '))  // no word of the client's 6 x 8 cluster
      QVERIFY2(word != "48" && word != "--fake-nodes=6" && word != "--fake-gpus-per-node=8", qPrintable(word));
    QVERIFY2(lines[0].contains(" --threads 2"), qPrintable(lines[0]));

    spec["nodes"] = 3;  // more than it has
    json r = submitAnswer(c, spec);
    QCOMPARE(r["code"], "invalid_job");
    QCOMPARE(r["path"], "/job/nodes");
    QVERIFY2(text(r, "message").find("has 2 nodes of 2 GPUs") != std::string::npos, r.dump().c_str());
    spec.erase("nodes");
    spec["grid"] = 3;  // divides the spec's 48, not the agent's 4
    r = submitAnswer(c, spec);
    QCOMPARE(r["code"], "invalid_job");
    QCOMPARE(r["path"], "/job/grid");
    QVERIFY2(text(r, "message").find("expected 1, 2 or 4") != std::string::npos, r.dump().c_str());
  }

  void jobFoldersAndFilesAreTheOwnersOnly() {
    Agent agent;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string job = submit(c, jobSpec("emulate", 2));
    QCOMPARE(watchToEnd(c, job)["state"], "complete");
    const QString dir = agent.path(QString::fromStdString("store/jobs/" + job));
    const auto mode = [](const QString& path) {
      struct stat s {};
      return ::stat(path.toLocal8Bit().constData(), &s) == 0 ? (s.st_mode & 0777) : 01000u;
    };
    QCOMPARE(mode(dir), 0700u);
    QCOMPARE(mode(dir + "/inputs"), 0700u);
    for (const char* file : {"job.json", "store.sqlite", "run.sqlite", "inputs/model.json", "inputs/plan.json"})
      QVERIFY2(mode(dir + "/" + file) == 0600u, file);
  }

  void theCliDcnv2IsRefusedAndTheAgentStaysUp() {
    Agent agent;
    agent.config()["limits"]["job_memory_bytes"] = std::uint64_t{4} << 30;
    QVERIFY(agent.start());
    const QStringList connect = {"remote",
                                 "--agent",
                                 QString("127.0.0.1:%1").arg(agent.port()),
                                 "--token-file",
                                 agent.path("token"),
                                 "--known-agents",
                                 agent.path("known_agents"),
                                 "--accept-new"};
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.start(SHARDSCOPE_CLI, connect + QStringList{"submit", "--model", "dcnv2", "--grid", "2", "--steps", "3"});
    QVERIFY(cli.waitForFinished(60000));
    const QString refused = QString::fromUtf8(cli.readAll());
    QCOMPARE(cli.exitCode(), 3);
    QVERIFY2(refused.contains("limits.job_memory_bytes") && refused.contains("limit_exceeded"), qPrintable(refused));
    cli.start(SHARDSCOPE_CLI, connect + QStringList{"submit", "--model", kTinyModel, "--cluster", kCpu4, "--steps", "2",
                                                    "--watch", "--quiet"});
    QVERIFY(cli.waitForFinished(120000));
    QVERIFY2(cli.exitCode() == 0, cli.readAll().constData());
  }
};

QTEST_GUILESS_MAIN(TestAgentJobs)
#include "test_agent_jobs.moc"
