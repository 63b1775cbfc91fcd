// shardscope-agent on loopback, as clients meet it: its identity and token
// file, the handshake, malformed and oversized frames, wrong tokens and their
// back-off, submit-watch-fetch of emulate and mpi jobs, jobs that outlive
// their client, cancel, a launcher that is killed, Slurm's srun and sbatch
// (fake ones on PATH), a kill -9 in the middle of a job, slow clients and
// the connection cap.
#include <QtTest>

#include "agent_harness.h"
#include "shardscope/core/store/trace_store.h"

using namespace agent_test;
namespace st = shardscope::core::store;

class TestAgentServer : public QObject {
  Q_OBJECT

 private slots:
  void identityIsMadeOnceAndKept() {
    Agent agent;
    QVERIFY2(agent.start(), qPrintable(agent.output()));
    QVERIFY(agent.output().contains("made a new key and certificate"));
    struct stat st {};
    QCOMPARE(::stat(agent.path("store/identity/agent.key").toLocal8Bit().constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    RawClient c;
    QVERIFY(c.connect(agent.port()));
    QCOMPARE(c.fingerprint(), agent.fingerprint());  // what it printed is what it presents
    const QString first = agent.fingerprint();
    agent.stop();
    QVERIFY(agent.start());
    QCOMPARE(agent.fingerprint(), first);
    QVERIFY(!agent.output().contains("made a new key"));
  }

  void badTokenFilesAndConfigsRefuseToStart() {
    Agent agent;
    agent.writeFile("token", agent.token() + "\n", 0644);
    QCOMPARE(agent.runToExit(), 2);
    QVERIFY2(agent.output().contains("readable by other users: chmod 600"), qPrintable(agent.output()));
    QVERIFY2(agent.output().contains("/token_file: token file"), qPrintable(agent.output()));  // the config's path
    agent.writeFile("token", "short\n", 0600);
    QCOMPARE(agent.runToExit(), 2);
    QVERIFY2(agent.output().contains("at least 16"), qPrintable(agent.output()));
    agent.writeFile("token", agent.token() + "\n", 0600);
    agent.config()["launcher"]["argv"] = {"mpirun", "-np", "{ranks}", "{command}"};
    QCOMPARE(agent.runToExit(), 2);
    QVERIFY2(agent.output().contains("/launcher/argv/3: unknown placeholder \"{command}\""),
             qPrintable(agent.output()));
  }

  void wrongTokenIsRefusedAfterAGrowingBackOff() {
    Agent agent;
    QVERIFY(agent.start());
    qint64 previous = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
      RawClient c;
      QVERIFY(c.connect(agent.port()));
      QElapsedTimer t;
      t.start();
      auto r = c.hello("not-the-token-at-all-0000000000");
      const qint64 waited = t.elapsed();
      QVERIFY(r);
      QCOMPARE((*r)["type"], "error");
      QCOMPARE((*r)["code"], "auth_failed");
      QVERIFY2(waited >= 200 * (1 << attempt), qPrintable(QString::number(waited)));  // 250, 500, 1000 ms
      QVERIFY(waited > previous);
      previous = waited;
      QVERIFY(c.closedWithin(5000));
    }
    RawClient good;
    QVERIFY(good.connect(agent.port()));
    auto w = good.hello(agent.token());
    QVERIFY(w);
    QCOMPARE((*w)["type"], "welcome");
  }

  void nothingButHelloBeforeAuthentication() {
    Agent agent;
    QVERIFY(agent.start());
    RawClient c;
    QVERIFY(c.connect(agent.port()));
    auto r = c.request({{"type", "list"}});
    QVERIFY(r);
    QCOMPARE((*r)["code"], "not_authenticated");
    QVERIFY(c.closedWithin(5000));
  }

  void handshakeMustFinishInTime() {
    Agent agent;
    agent.config()["limits"] = {{"handshake_seconds", 1}};
    QVERIFY(agent.start());
    RawClient c;
    QVERIFY(c.connect(agent.port()));
    QVERIFY(c.closedWithin(5000));  // TLS done, no hello: dropped
  }

  void malformedFramesCloseOnlyTheirConnection_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const auto frame = rawFrame;
    QTest::newRow("oversized") << QByteArray("\xff\xff\xff\xff", 4) << "frame";
    QTest::newRow("not json") << frame("{\"v\":1,") << "";
    QTest::newRow("array") << frame("[1,2]") << "object";
    QTest::newRow("version") << frame(R"({"v":2,"type":"hello"})") << "/v";
    QTest::newRow("no type") << frame(R"({"v":1})") << "/type";
  }
  void malformedFramesCloseOnlyTheirConnection() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    Agent agent;
    RawClient bystander;
    QVERIFY(startAndHello(agent, bystander));
    RawClient c;
    QVERIFY(c.connect(agent.port()));
    c.sendRaw(bytes);
    auto r = c.receive(5000);
    QVERIFY(r);
    QCOMPARE((*r)["code"], "bad_frame");
    QVERIFY2(QString::fromStdString((*r)["message"].get<std::string>()).contains(expected),
             (*r)["message"].get<std::string>().c_str());
    QVERIFY(c.closedWithin(5000));
    auto d = bystander.request({{"type", "describe"}});
    QVERIFY(d);
    QCOMPARE((*d)["type"], "description");
  }

  void badRequestsNameTheirPath() {
    Agent agent;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    json spec = jobSpec("emulate", 1);
    spec["steps"] = -3;
    auto r = c.request({{"type", "submit"}, {"job", spec}});
    QCOMPARE((*r)["code"], "invalid_job");
    QCOMPARE((*r)["path"], "/job/steps");
    spec = jobSpec("emulate", 1);
    spec["project"]["model"] = "/etc/passwd";  // never read a file a client names
    r = c.request({{"type", "submit"}, {"job", spec}});
    QCOMPARE((*r)["code"], "invalid_job");
    QCOMPARE((*r)["path"], "/job/project/model");
    r = c.request({{"type", "watch"}, {"job", "j999"}});
    QCOMPARE((*r)["code"], "no_such_job");
    r = c.request({{"type", "frobnicate"}});
    QCOMPARE((*r)["code"], "unknown_type");
    r = c.request({{"type", "describe"}});  // still served after all that
    QCOMPARE((*r)["type"], "description");
    QCOMPARE((*r)["launcher"], "mpirun");
    QCOMPARE((*r)["cluster"]["gpus_per_node"], 4);
  }

  void submitWatchFetchEmulate() {
    Agent agent;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string job = submit(c, jobSpec("emulate", 3));
    QVERIFY(!job.empty());
    const json end = watchToEnd(c, job);
    QCOMPARE(end["state"], "complete");
    QVERIFY(end["run"].get<int>() > 0);
    QCOMPARE(end["group_size"], 4);
    auto fetched = fetchAll(c, job, 64 * 1024);  // many chunks
    QVERIFY(fetched);
    QCOMPARE(sha256Hex(fetched->first), fetched->second);
    QFile onDisk(agent.path(QString::fromStdString("store/jobs/" + job + "/run.sqlite")));
    QVERIFY(onDisk.open(QIODevice::ReadOnly));
    QCOMPARE(sha256Hex(onDisk.readAll()), fetched->second);  // byte-identical to the agent's copy
    // Resuming in the middle gives the same bytes.
    auto tail = c.request({{"type", "fetch"}, {"job", job}, {"offset", 1000}, {"length", 100}});
    QCOMPARE((*tail)["type"], "chunk");
    QCOMPARE(QByteArray::fromStdString(*proto::base64Decode((*tail)["data"].get<std::string>())),
             fetched->first.mid(1000, 100));
    auto past = c.request({{"type", "fetch"}, {"job", job}, {"offset", fetched->first.size() + 1}, {"length", 10}});
    QCOMPARE((*past)["path"], "/offset");
    auto list = c.request({{"type", "list"}});
    QCOMPARE((*list)["jobs"].size(), 1u);
    QCOMPARE((*list)["jobs"][0]["state"], "complete");
  }

  void aJobOutlivesItsClient() {
    Agent agent;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string job = submit(c, jobSpec("mpi", 300));
    QVERIFY(!job.empty());
    c.disconnect();  // gone before the job even started
    RawClient again;
    QVERIFY(again.connect(agent.port()));
    QVERIFY(again.hello(agent.token()));
    const json end = watchToEnd(again, job);
    QCOMPARE(end["state"], "complete");
    QVERIFY(fetchAll(again, job));
  }

  void cancelStopsARunningJob() {
    Agent agent;
    RawClient c, watcher;
    QVERIFY(startAndHello(agent, c));
    QVERIFY(watcher.connect(agent.port()) && watcher.hello(agent.token()));
    const std::string job = submit(c, jobSpec("mpi", 50000));
    QVERIFY(waitRunning(watcher, job));
    auto r = c.request({{"type", "cancel"}, {"job", job}});
    QCOMPARE((*r)["type"], "job");
    json end;
    for (int i = 0; i < 2000 && end.is_null(); ++i) {
      auto m = watcher.receive(60000);
      QVERIFY(m);
      if ((*m)["type"] == "job" && (*m)["job"]["state"] != "running") end = (*m)["job"];
    }
    QCOMPARE(end["state"], "cancelled");
    auto store = st::openStore(agent.path(QString::fromStdString("store/jobs/" + job + "/store.sqlite")).toStdString());
    QVERIFY(store);
    auto runs = store->listRuns();
    QVERIFY(runs && runs->size() == 1);
    QCOMPARE(runs->front().status, st::RunStatus::Failed);
  }

  void aKilledLauncherReportsItsStderr() {
    Agent agent;
    agent.config()["launcher"] = {
        {"kind", "mpirun"},
        {"argv", {"sh", "-c", "echo 'launcher: out of nodes' >&2; echo 'second line' >&2; kill -9 $$", "launcher"}}};
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string job = submit(c, jobSpec("mpi", 3));
    const json end = watchToEnd(c, job);
    QCOMPARE(end["state"], "failed");
    QCOMPARE(end["exit_code"], 137);
    QVERIFY2(end["stderr_tail"].dump().find("launcher: out of nodes") != std::string::npos, end.dump().c_str());
    auto r = c.request({{"type", "fetch"}, {"job", job}, {"offset", 0}, {"length", 10}});
    QCOMPARE((*r)["code"], "no_run");
  }

  void slurmSrunAndSbatchFromPath() {
    Agent agent;
    auto& env = agent.environment();
    env.insert("PATH", kFakeSlurm + ":" + env.value("PATH"));
    env.insert("FAKE_SLURM_DIR", agent.path(""));
    agent.config()["launcher"] = {
        {"kind", "srun"},
        {"argv", {"srun", "--ntasks", "{ranks}", "--nodes", "{nodes}", "--ntasks-per-node", "{gpus_per_node}"}}};
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    std::string job = submit(c, jobSpec("mpi", 3));
    QCOMPARE(watchToEnd(c, job)["state"], "complete");
    QFile srun(agent.path("srun.args"));
    QVERIFY(srun.open(QIODevice::ReadOnly));
    const QString srun_args = QString::fromUtf8(srun.readAll());
    QVERIFY2(srun_args.startsWith("--ntasks 4 --nodes 1 --ntasks-per-node 4 "), qPrintable(srun_args));
    agent.stop();

    agent.config()["launcher"] = {{"kind", "sbatch"},
                                  {"argv", {"sbatch", "--nodes", "{nodes}", "--ntasks-per-node", "{gpus_per_node}"}},
                                  {"step_argv", {"srun", "--ntasks", "{ranks}"}}};
    RawClient b;
    QVERIFY(startAndHello(agent, b));
    job = submit(b, jobSpec("mpi", 3));
    const json end = watchToEnd(b, job);
    QCOMPARE(end["state"], "complete");
    QCOMPARE(end["scheduler_job"], "4242");
    QCOMPARE(end["launcher"], "sbatch");
    QFile sbatch(agent.path("sbatch.args"));
    QVERIFY(sbatch.open(QIODevice::ReadOnly));
    const QString sbatch_args = QString::fromUtf8(sbatch.readAll());
    QVERIFY2(sbatch_args.contains("--nodes 1 --ntasks-per-node 4 --parsable --wait"), qPrintable(sbatch_args));
    QVERIFY(sbatch_args.contains("/job.sh"));
    QVERIFY(fetchAll(b, job));

    // A cancel of a queued Slurm job is scancel with its id.
    const std::string long_job = submit(b, jobSpec("mpi", 50000));
    RawClient w;
    QVERIFY(w.connect(agent.port()) && w.hello(agent.token()));
    QVERIFY(waitRunning(w, long_job));
    QCOMPARE((*b.request({{"type", "cancel"}, {"job", long_job}}))["type"], "job");
    QCOMPARE(watchToEnd(b, long_job)["state"], "cancelled");
    QFile scancel(agent.path("scancel.args"));
    QVERIFY(scancel.open(QIODevice::ReadOnly));
    QVERIFY(QString::fromUtf8(scancel.readAll()).contains("--signal=USR1 --full 4242"));
  }

  void aKill9LeavesEveryJobAccountedFor() {
    Agent agent;
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string done = submit(c, jobSpec("emulate", 2));
    QCOMPARE(watchToEnd(c, done)["state"], "complete");
    const auto before = fetchAll(c, done);
    QVERIFY(before);
    const std::string running = submit(c, jobSpec("emulate", 100000));
    RawClient w;
    QVERIFY(w.connect(agent.port()) && w.hello(agent.token()));
    QVERIFY(waitRunning(w, running));
    const std::string queued = submit(c, jobSpec("emulate", 2, "queued behind"));
    agent.kill9();

    RawClient after;
    QVERIFY2(startAndHello(agent, after), qPrintable(agent.output()));
    QVERIFY2(agent.output().contains("job " + QString::fromStdString(running) + " was running"),
             qPrintable(agent.output()));
    auto list = after.request({{"type", "list"}});
    QCOMPARE((*list)["jobs"].size(), 3u);
    QCOMPARE((*list)["jobs"][1]["state"], "failed");
    QVERIFY((*list)["jobs"][1]["error"].get<std::string>().find("agent stopped") != std::string::npos);
    QCOMPARE(watchToEnd(after, queued)["state"], "complete");  // queued work runs after the restart
    const auto again = fetchAll(after, done);
    QVERIFY(again);
    QCOMPARE(again->second, before->second);  // the finished job's run file is untouched
    auto store =
        st::openStore(agent.path(QString::fromStdString("store/jobs/" + running + "/store.sqlite")).toStdString());
    QVERIFY(store);
    auto runs = store->listRuns();
    QVERIFY(runs && runs->size() == 1);
    QCOMPARE(runs->front().status, st::RunStatus::Failed);
    QVERIFY(fetchAll(after, running));  // its partial run can still be fetched
  }

  void aClientThatDoesNotReadIsDropped() {
    Agent agent;
    agent.config()["limits"] = {{"max_client_backlog_bytes", 1 << 20}};
    RawClient c;
    QVERIFY(startAndHello(agent, c));
    const std::string job = submit(c, jobSpec("emulate", 2));
    QCOMPARE(watchToEnd(c, job)["state"], "complete");
    RawClient slow;
    QVERIFY(slow.connect(agent.port()) && slow.hello(agent.token()));
    slow.socket().setReadBufferSize(4096);
    for (int i = 0; i < 400; ++i) slow.send({{"v", 1}, {"type", "list"}, {"id", i + 100}});
    for (int i = 0; i < 400; ++i)
      slow.send({{"v", 1}, {"type", "fetch"}, {"id", i + 1000}, {"job", job}, {"offset", 0}, {"length", 1 << 20}});
    auto d = c.request({{"type", "describe"}}, 10000);  // the others are served meanwhile
    QVERIFY(d);
    QCOMPARE((*d)["type"], "description");
  }

  void fiftyClientsAtOnce() {
    Agent agent;
    QVERIFY(agent.start());
    const Latencies l = concurrently(agent.port(), agent.token(), 50, 20);  // timing: bench_agent_load
    QCOMPARE(l.errors, 0);
    QCOMPARE(l.ms.size(), std::size_t{50 * 20 * 2});
  }

  void aStopCancelsRunningJobsAndRecordsIt() {
    Agent agent;
    RawClient c, w;
    QVERIFY(startAndHello(agent, c));
    QVERIFY(w.connect(agent.port()) && w.hello(agent.token()));
    const std::string job = submit(c, jobSpec("emulate", 100000));
    QVERIFY(waitRunning(w, job));
    agent.stop();  // SIGTERM
    RawClient after;
    QVERIFY(startAndHello(agent, after));
    QVERIFY2(!agent.output().contains("was running"), qPrintable(agent.output()));
    auto list = after.request({{"type", "list"}});
    QCOMPARE((*list)["jobs"][0]["state"], "cancelled");
    const std::string error = (*list)["jobs"][0].value("error", std::string());
    QVERIFY2(error.find("the agent stopped") != std::string::npos, error.c_str());  // not "by a client"
    QVERIFY(fetchAll(after, job));  // what it ran before the stop is there
  }

  void connectionsAreCapped() {
    Agent agent;
    agent.config()["limits"] = {{"max_connections", 2}};
    QVERIFY(agent.start());
    RawClient a, b, c;
    QVERIFY(a.connect(agent.port()) && a.hello(agent.token()));
    QVERIFY(b.connect(agent.port()) && b.hello(agent.token()));
    QVERIFY(c.connect(agent.port()));
    auto r = c.receive(5000);
    QVERIFY(r);
    QCOMPARE((*r)["code"], "limit_exceeded");
    QVERIFY(c.closedWithin(5000));
    a.disconnect();
    QTest::qWait(300);
    RawClient d;
    QVERIFY(d.connect(agent.port()));
    auto w = d.hello(agent.token());
    QVERIFY(w);
    QCOMPARE((*w)["type"], "welcome");
  }
};

QTEST_GUILESS_MAIN(TestAgentServer)
#include "test_agent_server.moc"
