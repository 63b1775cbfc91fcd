// The agent's loopback tests: a real shardscope-agent process on 127.0.0.1
// with a config, token and store in a temporary folder, and a raw client
// that speaks frames over TLS (blocking, for tests only) so each test can
// send exactly what it means to, malformed bytes included.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <QByteArray>
#include <QCryptographicHash>
#include <QDebug>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSslSocket>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/messages.h"

namespace agent_test {

using nlohmann::json;
namespace proto = shardscope::core::protocol;

inline const QString kTinyModel = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/engine/tiny_model.json");
inline const QString kCpu4 = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/engine/cpu4.json");
inline const QString kFakeSlurm = QStringLiteral(SHARDSCOPE_SOURCE_DIR "/tests/app/agent/fake_slurm");

inline json readJson(const QString& path) {
  QFile f(path);
  (void)f.open(QIODevice::ReadOnly);
  return json::parse(f.readAll().toStdString());
}

// A project of the tiny model on the 4-rank CPU cluster.
inline json tinyProject() {
  return {{"schema", "shardscope.project/1"},
          {"name", "agent test"},
          {"model", readJson(kTinyModel)},
          {"cluster", readJson(kCpu4)}};
}

inline json jobSpec(const std::string& mode, int steps, const std::string& label = "agent test") {
  return {{"label", label}, {"project", tinyProject()}, {"mode", mode}, {"steps", steps}, {"warmup", 0}};
}

// One shardscope-agent process and its folder.
class Agent {
 public:
  Agent() {
    token_ = "agent-test-token-0123456789abcdef";
    writeFile("token", token_ + "\n", 0600);
    config_ = {
        {"schema", "shardscope.agent-config/1"},
        {"listen", {{"address", "127.0.0.1"}, {"port", 0}}},
        {"token_file", "token"},
        {"store_dir", "store"},
        {"cluster", kCpu4.toStdString()},
        {"engine", SHARDSCOPE_ENGINE},
        {"limits", {{"max_steps", 100000}}},
        {"launcher",
         {{"kind", "mpirun"}, {"argv", {"mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "{ranks}"}}}}};
  }
  ~Agent() { stop(); }
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  json& config() { return config_; }
  [[nodiscard]] QString path(const QString& name) const { return dir_.filePath(name); }
  [[nodiscard]] const std::string& token() const { return token_; }
  [[nodiscard]] quint16 port() const { return port_; }
  [[nodiscard]] const QString& fingerprint() const { return fingerprint_; }
  // What it printed: since the last start (its log included, read now), or of the last runToExit.
  [[nodiscard]] QString output() const {
    if (!logging_) return output_;
    QFile f(path("agent.log"));
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
  }
  // What the running agent printed so far (its log included).
  [[nodiscard]] QString readOutput() const { return output(); }
  [[nodiscard]] qint64 pid() const { return process_ ? process_->processId() : 0; }
  QProcessEnvironment& environment() { return env_; }

  void writeFile(const QString& name, const std::string& text, mode_t mode = 0644) {
    QFile f(dir_.filePath(name));
    (void)f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(text.data(), static_cast<qint64>(text.size()));
    f.close();
    ::chmod(dir_.filePath(name).toLocal8Bit().constData(), mode);
  }

  // Starts it; false (output() says why) when it exits or prints no port in 20 s.
  bool start() {
    writeFile("agent.json", config_.dump(1));
    output_.clear();
    process_ = std::make_unique<QProcess>();
    process_->setProcessEnvironment(env_);
    // Its output and log go to a file: a pipe the test does not drain while it waits on sockets
    // would stop an agent that logs every connection.
    process_->setProcessChannelMode(QProcess::MergedChannels);
    process_->setStandardOutputFile(path("agent.log"));
    logging_ = true;
    process_->start(QStringLiteral(SHARDSCOPE_AGENT), {"--config", path("agent.json")});
    QElapsedTimer t;
    t.start();
    static const QRegularExpression listening("listening on [0-9.]+:([0-9]+)");
    static const QRegularExpression print("fingerprint (sha256:[0-9a-f]{64})");
    while (t.elapsed() < 20000) {
      process_->waitForFinished(100);
      output_ = output();
      const auto m = listening.match(output_);
      const auto f = print.match(output_);
      if (m.hasMatch() && f.hasMatch()) {
        port_ = static_cast<quint16>(m.captured(1).toUInt());
        fingerprint_ = f.captured(1);
        return true;
      }
      if (process_->state() == QProcess::NotRunning) return false;
    }
    return false;
  }

  // Runs it to its exit (a start that must fail): its exit code.
  int runToExit() {
    writeFile("agent.json", config_.dump(1));
    logging_ = false;
    QProcess p;
    p.setProcessEnvironment(env_);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(SHARDSCOPE_AGENT), {"--config", path("agent.json")});
    if (!p.waitForFinished(20000)) {
      p.kill();
      p.waitForFinished();
      return -1;
    }
    output_ = QString::fromUtf8(p.readAll());
    return p.exitCode();
  }

  void stop() {
    if (!process_) return;
    process_->terminate();
    if (!process_->waitForFinished(60000)) process_->kill();
    process_->waitForFinished();
    process_.reset();
  }
  void kill9() {
    if (!process_) return;
    process_->kill();
    process_->waitForFinished();
    process_.reset();
  }

 private:
  QTemporaryDir dir_;
  std::string token_;
  json config_;
  QProcessEnvironment env_ = [] {
    auto e = QProcessEnvironment::systemEnvironment();
    e.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    e.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    e.insert("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
    return e;
  }();
  std::unique_ptr<QProcess> process_;
  QString output_;
  bool logging_ = false;  // output() reads agent.log (a started agent's)
  quint16 port_ = 0;
  QString fingerprint_;
};

// A blocking TLS client of frames, for tests.
class RawClient {
 public:
  bool connect(quint16 port, int timeout_ms = 10000) {
    socket_.setPeerVerifyMode(QSslSocket::VerifyNone);
    socket_.connectToHostEncrypted(QStringLiteral("127.0.0.1"), port);
    if (!socket_.waitForEncrypted(timeout_ms)) return false;
    socket_.flush();  // the handshake's last flight, which an event loop would send
    return true;
  }
  [[nodiscard]] QString fingerprint() const {
    return "sha256:" + socket_.peerCertificate().digest(QCryptographicHash::Sha256).toHex();
  }
  void sendRaw(const QByteArray& bytes) {
    socket_.write(bytes);
    socket_.flush();
    while (socket_.bytesToWrite() > 0 && socket_.waitForBytesWritten(5000)) {
    }
  }
  void send(const json& message) {
    const auto frame = proto::encodeFrame(message);
    sendRaw(QByteArray(frame->data(), static_cast<qsizetype>(frame->size())));
  }
  // The next message, or nullopt when none came in `timeout_ms` or the peer closed.
  std::optional<json> receive(int timeout_ms = 30000) {
    QElapsedTimer t;
    t.start();
    while (true) {
      auto next = decoder_.next();
      if (next && next->has_value()) return **next;
      if (!next) return std::nullopt;
      const qint64 left = timeout_ms - t.elapsed();
      if (left <= 0) return std::nullopt;
      if (socket_.bytesAvailable() == 0 && !socket_.waitForReadyRead(static_cast<int>(std::min<qint64>(left, 200)))) {
        if (socket_.state() != QAbstractSocket::ConnectedState && socket_.bytesAvailable() == 0) return std::nullopt;
        continue;
      }
      const QByteArray bytes = socket_.readAll();
      decoder_.feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    }
  }
  // Sends a request with the next id and returns its first answer.
  std::optional<json> request(json message, int timeout_ms = 30000) {
    message["v"] = proto::kProtocolVersion;
    message["id"] = ++last_id_;
    send(message);
    return receive(timeout_ms);
  }
  std::optional<json> hello(const std::string& token) {
    return request({{"type", "hello"}, {"client", "agent test"}, {"token", token}});
  }
  // Whether the agent closed the connection within `timeout_ms`.
  bool closedWithin(int timeout_ms) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeout_ms) {
      if (socket_.state() == QAbstractSocket::UnconnectedState) return true;
      socket_.waitForReadyRead(50);
      socket_.readAll();
    }
    return socket_.state() == QAbstractSocket::UnconnectedState;
  }
  void disconnect() { socket_.abort(); }
  QSslSocket& socket() { return socket_; }
  [[nodiscard]] std::uint64_t lastId() const { return last_id_; }

 private:
  QSslSocket socket_;
  proto::FrameDecoder decoder_;
  std::uint64_t last_id_ = 0;
};

// A process's resident memory (VmRSS), KiB; 0 when it is gone or unreadable.
inline long residentKiB(qint64 pid) {
  QFile f(QStringLiteral("/proc/%1/status").arg(pid));
  if (!f.open(QIODevice::ReadOnly)) return 0;
  for (const QByteArray& line : f.readAll().split('\n'))
    if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').front().toLong();
  return 0;
}

// A frame around `body` exactly as given (any bytes: what a hostile client sends).
inline QByteArray rawFrame(const QByteArray& body) {
  QByteArray f(4, '\0');
  const auto n = static_cast<quint32>(body.size());
  f[0] = static_cast<char>(n >> 24);
  f[1] = static_cast<char>(n >> 16);
  f[2] = static_cast<char>(n >> 8);
  f[3] = static_cast<char>(n);
  return f + body;
}

// A started agent with an authenticated client.
inline bool startAndHello(Agent& agent, RawClient& client) {
  if (!agent.start()) return false;
  if (!client.connect(agent.port())) return false;
  auto w = client.hello(agent.token());
  return w && (*w)["type"] == "welcome";
}

// The answer to a submit (a "job" or an "error"; null json when none came).
inline json submitAnswer(RawClient& c, const json& spec) {
  auto r = c.request({{"type", "submit"}, {"job", spec}});
  return r ? *r : json();
}

// The id of a submitted job; empty (the answer printed) when it was refused.
inline std::string submit(RawClient& c, const json& spec) {
  const json r = submitAnswer(c, spec);
  if (r.value("type", "") != "job") {
    qWarning() << "submit answered" << QString::fromStdString(r.dump());
    return {};
  }
  return r["job"]["job"].get<std::string>();
}

// Watches a job until its first progress past step 0 (it is running).
inline bool waitRunning(RawClient& c, const std::string& job) {
  auto first = c.request({{"type", "watch"}, {"job", job}});
  if (!first) return false;
  for (int i = 0; i < 400; ++i) {
    auto m = c.receive(30000);
    if (!m) return false;
    if ((*m)["type"] == "progress" && (*m)["progress"]["done"].get<int>() > 0) return true;
  }
  return false;
}

// Follows a job with a watch until it ends: its final info (null json on timeout).
inline json watchToEnd(RawClient& c, const std::string& job, int timeout_ms = 120000) {
  auto first = c.request({{"type", "watch"}, {"job", job}});
  if (!first || (*first)["type"] != "job") return {};
  json last = (*first)["job"];
  QElapsedTimer t;
  t.start();
  while (last["state"] != "complete" && last["state"] != "failed" && last["state"] != "cancelled") {
    auto m = c.receive(static_cast<int>(std::max<qint64>(1, timeout_ms - t.elapsed())));
    if (!m) return {};
    if ((*m)["type"] == "job") last = (*m)["job"];
  }
  return last;
}

// Fetches a finished job's run file whole: its bytes and the announced sha256.
inline std::optional<std::pair<QByteArray, std::string>> fetchAll(RawClient& c, const std::string& job,
                                                                  std::uint64_t chunk = 1u << 20) {
  QByteArray data;
  std::string sha;
  while (true) {
    auto m = c.request({{"type", "fetch"}, {"job", job}, {"offset", data.size()}, {"length", chunk}});
    if (!m || (*m)["type"] != "chunk") return std::nullopt;
    auto bytes = proto::base64Decode((*m)["data"].get<std::string>());
    if (!bytes) return std::nullopt;
    data.append(bytes->data(), static_cast<qsizetype>(bytes->size()));
    sha = (*m)["sha256"].get<std::string>();
    if (static_cast<std::uint64_t>(data.size()) >= (*m)["total"].get<std::uint64_t>()) break;
    if (bytes->empty()) return std::nullopt;
  }
  return std::pair{data, sha};
}

// Answer times of one or more clients' describe + list sessions, and errors
// (a missing answer, a wrong type or id).
struct Latencies {
  std::vector<double> ms;
  int errors = 0;
};

// One client's session: connect, hello, then describe + list `rounds` times.
inline Latencies session(quint16 port, const std::string& token, int rounds) {
  Latencies out;
  RawClient c;
  if (!c.connect(port, 30000) || !c.hello(token)) {
    out.errors = 2 * rounds;
    return out;
  }
  for (int i = 0; i < rounds; ++i) {
    for (const std::string type : {"describe", "list"}) {
      QElapsedTimer t;
      t.start();
      auto m = c.request({{"type", type}}, 30000);
      out.ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
      const char* expected = type == "describe" ? "description" : "jobs";
      if (!m || (*m)["type"] != expected || (*m)["id"] != c.lastId()) ++out.errors;
    }
  }
  return out;
}

// `clients` sessions at once, each on its own thread and connection.
inline Latencies concurrently(quint16 port, const std::string& token, int clients, int rounds) {
  std::vector<Latencies> each(static_cast<std::size_t>(clients));
  std::vector<std::thread> threads;
  for (int k = 0; k < clients; ++k)
    threads.emplace_back([&, k] { each[static_cast<std::size_t>(k)] = session(port, token, rounds); });
  for (auto& t : threads) t.join();
  Latencies all;
  for (auto& l : each) {
    all.ms.insert(all.ms.end(), l.ms.begin(), l.ms.end());
    all.errors += l.errors;
  }
  return all;
}

inline std::string sha256Hex(const QByteArray& bytes) {
  return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex().toStdString();
}

}  // namespace agent_test
