// shardscope-cli remote against a real shardscope-agent on loopback: the
// certificate pinned on first use and a changed one refused loudly, a wrong
// token, submit-watch-fetch of an emulate and an mpi job with the fetched
// file checksum-identical to the agent's and the run in the local store, a
// client that leaves and comes back to its job, a fetch resumed from a part
// file, and the command line's errors.
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QtTest>

#include "agent_harness.h"
#include "cli_run.h"
#include "shardscope/core/store/trace_store.h"

using namespace agent_test;
using cli_test::Run;
namespace st = shardscope::core::store;

class TestCliRemote : public QObject {
  Q_OBJECT

  Agent agent_;
  QTemporaryDir home_;

  QString known() const { return home_.filePath("known_agents"); }
  Run remote(const QStringList& args, const QString& token_file = {}) {
    QStringList all{"remote", "--agent",      "127.0.0.1:" + QString::number(agent_.port()),           "--known-agents",
                    known(),  "--token-file", token_file.isEmpty() ? agent_.path("token") : token_file};
    all += args;
    return cli_test::runCli(all, {.timeout_ms = 120000, .env = agent_.environment()});
  }
  QStringList submitArgs(const QString& mode, int steps) const {
    return {"submit",
            "--model",
            kTinyModel,
            "--cluster",
            kCpu4,
            "--mode",
            mode,
            "--steps",
            QString::number(steps),
            "--label",
            "cli remote " + mode};
  }

 private slots:
  void initTestCase() { QVERIFY2(agent_.start(), qPrintable(agent_.output())); }

  void anUnknownAgentIsRefusedUntilAccepted() {
    QFile::remove(known());
    Run r = remote({"describe"});
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains("is not known yet") && r.err.contains(agent_.fingerprint()), qPrintable(r.err));
    QVERIFY(!QFile::exists(known()));
    r = remote({"--fingerprint", "sha256:" + QString(64, 'a'), "describe"});
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains("refused"), qPrintable(r.err));
    r = remote({"--fingerprint", agent_.fingerprint().toUpper().replace("SHA256:", "SHA256:"), "describe"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("launcher mpirun; modes emulate mpi"), qPrintable(r.out));
    QFile f(known());
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(QString::fromUtf8(f.readAll()).contains(agent_.fingerprint()));
  }

  void aChangedFingerprintIsRefusedLoudly() {
    QFile f(known());
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(("127.0.0.1:" + QString::number(agent_.port()) + " sha256:" + QString(64, 'b') + "\n").toUtf8());
    f.close();
    Run r = remote({"--accept-new", "describe"});  // accept-new never replaces a pin
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains("CHANGED") && r.err.contains(agent_.fingerprint()) && r.err.contains("line 1 of"),
             qPrintable(r.err));
    QVERIFY(QFile::remove(known()));
    QCOMPARE(remote({"--accept-new", "describe"}).code, 0);  // pinned again after the user removed it
  }

  void aWrongTokenFails() {
    const QString bad = home_.filePath("bad.token");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not-the-agent-token-0000\n");
    f.close();
    Run r = remote({"list"}, bad);
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains("wrong token") && r.err.contains("[auth_failed]"), qPrintable(r.err));
  }

  void submitWatchFetch_data() {
    QTest::addColumn<QString>("mode");
    QTest::newRow("emulate") << "emulate";
    QTest::newRow("mpi") << "mpi";
  }
  void submitWatchFetch() {
    QFETCH(QString, mode);
    QTemporaryDir dir;
    const QString store = dir.filePath("local.sqlite");
    Run r = remote(submitArgs(mode, 20) + QStringList{"--watch", "--fetch", "--store", store, "--keep-file"});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    const QString job = r.out.split('\n').front().trimmed();
    QVERIFY(job.startsWith('j'));
    QVERIFY2(r.out.contains("run 1 in " + store), qPrintable(r.out));
    QFile agents(agent_.path("store/jobs/" + job + "/run.sqlite"));
    QVERIFY(agents.open(QIODevice::ReadOnly));
    const std::string sha = sha256Hex(agents.readAll());
    QVERIFY2(r.out.contains(QString::fromStdString(sha)), qPrintable(r.out));
    QFile kept(dir.filePath("local.sqlite.fetch/127.0.0.1_" + QString::number(agent_.port()) + "_" + job + ".sqlite"));
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QCOMPARE(sha256Hex(kept.readAll()), sha);  // byte-identical to the agent's copy
    auto local = st::openStore(store.toStdString());
    QVERIFY(local);
    auto runs = local->listRuns();
    QVERIFY(runs && runs->size() == 1);
    QCOMPARE(runs->front().status, st::RunStatus::Complete);
    QCOMPARE(QString::fromStdString(runs->front().label), "cli remote " + mode);
  }

  void describeSaysWhatAJobMayAskAndTheAgentHoldsToIt() {
    Run r = remote({"--accept-new", "describe"});
    QCOMPARE(r.code, 0);
    // One node of 4 CPU ranks: the node counts and grids a submit may name, and the job limits.
    QVERIFY2(r.out.contains("jobs on 1 node (--nodes 1, N = 4): --grid 1 2 4"), qPrintable(r.out));
    QVERIFY2(r.out.contains("; per job "), qPrintable(r.out));
    // A grid or node count the agent's cluster does not have is refused by the agent, whatever the
    // client's own --cluster says (it has 8 GPUs here; the agent 4).
    r = remote({"submit", "--model", kTinyModel, "--cluster", "h100x8", "--grid", "8", "--steps", "1"});
    QVERIFY2(r.code == 1, qPrintable(r.err));  // an invalid job: the input's fault
    QVERIFY2(r.err.contains("grid 8 does not divide the job's 4 GPUs (1 node of 4 GPUs"), qPrintable(r.err));
    r = remote({"submit", "--model", kTinyModel, "--nodes", "2", "--steps", "1"});
    QVERIFY2(r.code == 1, qPrintable(r.err));
    QVERIFY2(r.err.contains("a job of 2 nodes: this agent's cluster") && r.err.contains("has 1 node of 4 GPUs"),
             qPrintable(r.err));
  }

  void aClientComesBackToItsJob() {
    Run r = remote(submitArgs("mpi", 400));
    QCOMPARE(r.code, 0);
    const QString job = r.out.trimmed();
    // The submitting client is gone; another one follows the job to its end.
    r = remote({"watch", job, "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.err.contains(job + "  complete"));
    r = remote({"list"});
    QVERIFY(r.out.contains(job + "  complete  mpi x4"));
  }

  void aFetchResumesFromItsPart() {
    QTemporaryDir dir;
    const QString store = dir.filePath("local.sqlite");
    Run r = remote(submitArgs("emulate", 5) + QStringList{"--watch"});
    QCOMPARE(r.code, 0);
    const QString job = r.out.split('\n').front().trimmed();
    QFile agents(agent_.path("store/jobs/" + job + "/run.sqlite"));
    QVERIFY(agents.open(QIODevice::ReadOnly));
    const QByteArray bytes = agents.readAll();
    const std::string sha = sha256Hex(bytes);
    // Half a file from an interrupted fetch, and one of a damaged one.
    const QString part = dir.filePath("local.sqlite.fetch/127.0.0.1_" + QString::number(agent_.port()) + "_" + job);
    QVERIFY(QDir().mkpath(dir.filePath("local.sqlite.fetch")));
    QFile half(part + ".part");
    QVERIFY(half.open(QIODevice::WriteOnly));
    half.write(bytes.left(bytes.size() / 2));
    half.close();
    QFile side(part + ".part.json");
    QVERIFY(side.open(QIODevice::WriteOnly));
    side.write(json{{"sha256", sha}, {"total", bytes.size()}, {"run", 1}}.dump().c_str());
    side.close();
    r = remote({"fetch", job, "--store", store});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains(QString::fromStdString(sha)));
    QVERIFY(!QFile::exists(part + ".part"));  // removed once imported
    // A damaged part (same size, other bytes) fails the checksum and is removed.
    QByteArray damaged = bytes;
    damaged[100] = static_cast<char>(damaged[100] ^ 0x5a);
    QVERIFY(half.open(QIODevice::WriteOnly));
    half.write(damaged);
    half.close();
    QVERIFY(side.open(QIODevice::WriteOnly));
    side.write(json{{"sha256", sha}, {"total", bytes.size()}, {"run", 1}}.dump().c_str());
    side.close();
    r = remote({"fetch", job, "--store", store});
    QCOMPARE(r.code, 3);
    QVERIFY2(r.err.contains("damaged"), qPrintable(r.err));
    QVERIFY(!QFile::exists(part + ".part"));
    QCOMPARE(remote({"fetch", job, "--store", store}).code, 0);  // and the next fetch starts over
  }

  // A peer with the agent's identity that answers the hello with bytes that
  // are not a frame of the protocol: the client stops with a clear error.
  void aMalformedAgentIsLeftWithAClearError_data() {
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<QString>("message");
    QTest::newRow("oversized") << QByteArray("\xff\xff\xff\xffgarbage", 11) << "sent a malformed frame";
    QTest::newRow("not json") << QByteArray("\0\0\0\x05{{{{{", 9) << "sent a malformed frame";
    const QByteArray welcome_without_agent = R"({"v":1,"type":"welcome","id":1})";
    QByteArray framed(4, '\0');
    framed[3] = static_cast<char>(welcome_without_agent.size());
    QTest::newRow("welcome without agent") << framed + welcome_without_agent << "/agent";
  }
  void aMalformedAgentIsLeftWithAClearError() {
    QFETCH(QByteArray, answer);
    QFETCH(QString, message);
    QFile key(agent_.path("store/identity/agent.key")), cert(agent_.path("store/identity/agent.crt"));
    QVERIFY(key.open(QIODevice::ReadOnly) && cert.open(QIODevice::ReadOnly));
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setPrivateKey(QSslKey(key.readAll(), QSsl::Ec));
    tls.setLocalCertificate(QSslCertificate(cert.readAll()));
    QSslServer fake;
    fake.setSslConfiguration(tls);
    QVERIFY(fake.listen(QHostAddress::LocalHost, 0));
    connect(&fake, &QTcpServer::pendingConnectionAvailable, this, [&] {
      QTcpSocket* s = fake.nextPendingConnection();
      connect(s, &QIODevice::readyRead, s, [s, answer] {
        s->readAll();
        s->write(answer);
      });
    });
    QTemporaryDir dir;
    QProcess p;
    p.setProcessEnvironment(agent_.environment());
    p.start(QStringLiteral(SHARDSCOPE_CLI),
            {"remote", "--agent", "127.0.0.1:" + QString::number(fake.serverPort()), "--known-agents",
             dir.filePath("known"), "--accept-new", "--token-file", agent_.path("token"), "describe"});
    QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, 30000);
    QCOMPARE(p.exitCode(), 3);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains(message) && err.contains("agent 127.0.0.1:"), qPrintable(err));
  }

  void commandLineErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("no agent") << QStringList{"remote", "list"} << "--agent HOST:PORT is required";
    QTest::newRow("bad address") << QStringList{"remote", "--agent", "gpu01", "list"}
                                 << "expected the agent as host:port";
    QTest::newRow("bad port") << QStringList{"remote", "--agent", "gpu01:99999", "list"} << "host:port";
    QTest::newRow("no command") << QStringList{"remote", "--agent", "h:1"} << "give a command";
    QTest::newRow("unknown command") << QStringList{"remote", "--agent", "h:1", "frob"} << "unknown command 'frob'";
    QTest::newRow("bad job") << QStringList{"remote", "--agent", "h:1", "watch", "42"} << "give one job id";
    QTest::newRow("fetch store") << QStringList{"remote", "--agent", "h:1", "fetch", "j1"} << "needs --store";
    QTest::newRow("job options") << QStringList{"remote", "--agent", "h:1", "list", "--steps", "3"}
                                 << "job options belong to submit";
    QTest::newRow("steps") << QStringList{"remote", "--agent", "h:1", "submit", "--steps", "0"} << "--steps must be";
  }
  void commandLineErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("SHARDSCOPE_AGENT_TOKEN", "a-token-from-the-environment");
    Run r = cli_test::runCli(args, {.env = env});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
  }

  void theTokenMustBeGiven() {
    auto env = QProcessEnvironment::systemEnvironment();
    env.remove("SHARDSCOPE_AGENT_TOKEN");
    Run r = cli_test::runCli({"remote", "--agent", "h:1", "list"}, {.env = env});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--token-file F or $SHARDSCOPE_AGENT_TOKEN"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestCliRemote)
#include "test_cli_remote.moc"
