// shardscope-agent's server: TLS only (QSslServer with the agent's own
// identity), one AgentConnection per client, the token compared in constant
// time, wrong tokens answered after a back-off that grows per client
// address, and a cap on connections. The description a describe answers is
// made once at start. docs/agent.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include <QHostAddress>
#include <QSslServer>

#include "job_manager.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/profiler/workflow/agent_config.h"
#include "tls_identity.h"

namespace shardscope::app::agent {

class AgentConnection;

class AgentServer : public QObject {
  Q_OBJECT

 public:
  AgentServer(profiler::AgentConfig config, TlsIdentity identity, std::string token, proto::Description description,
              JobManager* jobs, QObject* parent = nullptr);

  // Listens on the config's address and port. Errors (Io) name them.
  [[nodiscard]] core::Status listen();
  [[nodiscard]] std::uint16_t port() const { return static_cast<std::uint16_t>(server_.serverPort()); }

  [[nodiscard]] const profiler::AgentConfig& config() const { return config_; }
  [[nodiscard]] const proto::Description& description() const { return description_; }
  [[nodiscard]] JobManager& jobs() { return *jobs_; }

  // Whether `token` is the agent's (constant time in the token's length).
  [[nodiscard]] bool tokenMatches(const std::string& token) const;
  // A failed hello from `peer`: how long to wait before answering it. Grows
  // 250 ms, 500 ms, ... up to 8 s with each failure in a row; forgotten after
  // ten quiet minutes or a success.
  [[nodiscard]] std::chrono::milliseconds authFailed(const QHostAddress& peer);
  void authSucceeded(const QHostAddress& peer);
  [[nodiscard]] std::size_t connections() const { return connections_; }

 private:
  void accept();

  profiler::AgentConfig config_;
  TlsIdentity identity_;
  std::string token_;
  proto::Description description_;
  JobManager* jobs_;
  QSslServer server_;
  std::size_t connections_ = 0;
  struct Failures {
    int count = 0;
    std::chrono::steady_clock::time_point last{};
  };
  std::map<QString, Failures> failures_;  // by client address
};

// Reads the token file: it must belong to this user and be readable by
// nobody else (mode 0600 or stricter); the token is its first line, at least
// 16 bytes. Errors (Usage) say how to fix it.
[[nodiscard]] core::Result<std::string> readTokenFile(const std::string& path);

// What describe answers: this host, its GPUs and versions, the engine, the
// launcher, the cluster jobs run on, the limits.
[[nodiscard]] proto::Description describeAgent(const profiler::AgentConfig& config, const core::ClusterSpec& cluster);

}  // namespace shardscope::app::agent
