// A client of shardscope-agent (docs/agent-protocol.md): one TLS connection
// whose certificate is pinned on first use (known_agents.h), the hello with
// the token, then requests whose answers reach the caller's callback by
// request id. Never blocks: the desktop calls it from the GUI thread, the
// CLI from its event loop. Every failure reaches the caller as a
// core::Error naming the agent ("agent gpu01:7443: ..."), with the agent's
// error code in brackets ("[no_such_job]") and its JSON path.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QSslSocket>
#include <QTimer>

#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/result.h"

namespace shardscope::app::remote {

namespace proto = core::protocol;

struct AgentAddress {
  std::string host;
  std::uint16_t port = 0;
  [[nodiscard]] std::string text() const;  // "host:port", "[::1]:7443"
};
// "host:port" or "[v6]:port" (port 1..65535). Errors (Usage) say what was expected.
[[nodiscard]] core::Result<AgentAddress> parseAgentAddress(const std::string& text);

// What to do with an agent whose fingerprint is not pinned yet.
enum class TrustPolicy {
  Refuse,     // fail, naming the fingerprint and how to accept it
  AcceptNew,  // pin it (ssh's accept-new)
  Ask,        // emit trustQuestion and wait for answerTrust
};

struct ConnectOptions {
  AgentAddress address;
  std::string token;
  std::string known_agents_path;  // "": defaultKnownAgentsPath()
  TrustPolicy trust = TrustPolicy::Refuse;
  std::string expected_fingerprint;  // given by the user: accepted and pinned when presented (never overrides a pin)
  std::string client_name = "shardscope";
  int connect_timeout_ms = 10000;
  int request_timeout_ms = 30000;
};

class AgentClient : public QObject {
  Q_OBJECT

 public:
  explicit AgentClient(QObject* parent = nullptr);
  ~AgentClient() override;
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  // Connects, checks the pin, says hello: then ready(), or failed() once.
  void connectToAgent(ConnectOptions options);
  // The answer to trustQuestion: pin the fingerprint and go on, or refuse.
  void answerTrust(bool trust);
  void disconnectFromAgent();
  [[nodiscard]] bool isReady() const { return ready_; }
  [[nodiscard]] const std::string& address() const { return address_; }
  [[nodiscard]] const std::string& fingerprint() const { return fingerprint_; }
  [[nodiscard]] const std::string& agentName() const { return agent_name_; }

  template <class T>
  using Done = std::function<void(core::Result<T>)>;
  void describe(Done<proto::Description> done);
  void list(Done<std::vector<proto::JobInfo>> done);
  void submit(const proto::JobSpec& spec, Done<proto::JobInfo> done);
  void cancel(const std::string& job, Done<proto::JobInfo> done);
  // Follows a job: on_job for each state change, on_progress for progress,
  // then done with its final info (or an error; a lost connection ends it).
  void watch(const std::string& job, std::function<void(const proto::JobInfo&)> on_job,
             std::function<void(const proto::ProgressEvent&)> on_progress, Done<proto::JobInfo> done);
  void fetchChunk(const std::string& job, std::uint64_t offset, std::uint64_t length, Done<proto::Chunk> done);

 signals:
  void ready();
  // Unknown agent under TrustPolicy::Ask: show the fingerprint, then answerTrust.
  void trustQuestion(const QString& address, const QString& fingerprint);
  void failed(const QString& message);  // the connection could not be made or was lost
  void disconnected();

 private:
  struct Pending {
    std::function<void(core::Result<nlohmann::json>)> answer;  // one answer (or the watch's stream)
    bool stream = false;
    qint64 deadline_ms = 0;  // 0: none (a watch waits as long as its job runs)
  };
  void onEncrypted();
  void onReadyRead();
  void onSocketError();
  void sayHello();
  void fail(const std::string& message);
  void request(nlohmann::json message, Pending pending);
  void dispatch(const nlohmann::json& message);
  void checkDeadlines();
  void failAllPending(const std::string& why);
  [[nodiscard]] core::Error agentError(const nlohmann::json& message) const;

  QSslSocket socket_;
  QTimer deadline_timer_;
  ConnectOptions options_;
  std::string address_;
  std::string fingerprint_;
  std::string agent_name_;
  proto::FrameDecoder decoder_;
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_id_ = 1;
  bool ready_ = false;
  bool failed_ = false;
  bool awaiting_trust_ = false;
};

}  // namespace shardscope::app::remote
