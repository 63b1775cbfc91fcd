// shardscope-agent's server: TLS only (the agent's own identity; TLS 1.3, or
// 1.2 with ECDHE and AEAD suites), one AgentConnection per client, the token
// compared in constant time (profiler/agent's agent_token.h), wrong tokens
// answered after a back-off that grows per client address. The description
// a describe answers is made once at start (agent_describe.h). docs/agent.md.
//
// Accepting never stops. Each accepted socket is tracked from accept until
// its client is authenticated: one that sends nothing in its first seconds,
// fails TLS, or does not finish TLS and hello within handshake_seconds is
// closed, and its slot freed at once; TLS state is made only when a peer's
// first byte arrives. Connections in handshake are capped in all
// (limits.max_handshakes: past it the oldest goes) and, once TLS has begun,
// per address (limits.max_handshakes_per_address: past it the new one is
// refused); authenticated clients are capped by limits.max_connections.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include <QHash>
#include <QHostAddress>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTcpServer>
#include <QTimer>

#include "job_manager.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/profiler/agent/agent_config.h"
#include "tls_identity.h"

namespace shardscope::app::agent {

class AgentConnection;

// The listening socket: every accepted descriptor goes straight to `accept`
// (QTcpServer's pending queue stays empty, so it cannot fill), and a failed
// accept (out of file descriptors, a peer gone before it was taken) is
// retried rather than ending accepting.
class TlsListener final : public QTcpServer {
  Q_OBJECT

 public:
  explicit TlsListener(std::function<void(qintptr)> accept, QObject* parent = nullptr);

 protected:
  void incomingConnection(qintptr descriptor) override;

 private:
  std::function<void(qintptr)> accept_;
};

// Lines about clients (refusals, failed or late handshakes): at most one a
// second per address and kLinesPerSecond a second in all. What is held back
// is counted and said with the address's next line or by flush(), so a
// flood costs a few lines a second.
class ClientLog {
 public:
  static constexpr int kLinesPerSecond = 20;

  void line(const QString& address, const std::string& text);
  // Says the counts held back more than a second ago; forgets quiet addresses.
  void flush();

 private:
  using Clock = std::chrono::steady_clock;
  bool spend(Clock::time_point now);  // one line of this second's budget

  struct Held {
    Clock::time_point last{};
    std::uint64_t count = 0;  // lines held back since `last`
  };
  QHash<QString, Held> by_address_;
  Clock::time_point window_{};
  int lines_in_window_ = 0;
  std::uint64_t over_budget_ = 0;
};

class AgentServer : public QObject {
  Q_OBJECT

 public:
  AgentServer(profiler::AgentConfig config, TlsIdentity identity, std::string token, proto::Description description,
              JobManager* jobs, QObject* parent = nullptr);

  // Listens on the config's address and port. Errors (Io) name them.
  [[nodiscard]] core::Status listen();
  [[nodiscard]] std::uint16_t port() const { return static_cast<std::uint16_t>(listener_.serverPort()); }

  [[nodiscard]] const profiler::AgentConfig& config() const { return config_; }
  [[nodiscard]] const proto::Description& description() const { return description_; }
  [[nodiscard]] JobManager& jobs() { return *jobs_; }

  // Whether `token` is the agent's (profiler::tokenMatches).
  [[nodiscard]] bool tokenMatches(const std::string& token) const;
  // A failed hello from `peer`: how long to wait before answering it. Grows
  // 250 ms, 500 ms, ... up to 8 s with each failure in a row; forgotten after
  // ten quiet minutes or a success.
  [[nodiscard]] std::chrono::milliseconds authFailed(const QHostAddress& peer);
  // `connection` said hello with the token: it becomes a client, or, past
  // limits.max_connections (or already closed by its deadline), the error to
  // answer before closing it.
  [[nodiscard]] std::optional<core::Error> authSucceeded(const AgentConnection* connection, const QHostAddress& peer);

 private:
  enum class Phase {
    Silent,  // accepted, nothing received yet (no TLS state)
    Tls,     // TLS handshake under way
    Hello,   // encrypted, waiting for hello (an AgentConnection has it)
    Client,  // authenticated
  };
  struct Peer {
    QString address;
    std::string name;  // "client 10.0.0.5:51234"
    Phase phase = Phase::Silent;
    bool closing = false;  // refused with a message; its slot is held until the socket goes
    std::uint64_t order = 0;
    const AgentConnection* connection = nullptr;
  };

  void accept(qintptr descriptor);
  void beginTls(QSslSocket* socket);
  void encrypted(QSslSocket* socket);
  void handshakeFailed(QSslSocket* socket, const QString& why);
  void deadline(QSslSocket* socket, bool first_byte);
  void evictOldest();
  void giveBackMemory();
  // Writes an error to the peer, then closes it (aborted if it does not read).
  void refuse(QSslSocket* socket, proto::ErrorCode code, const std::string& message);
  // Closes at once and frees the slot; the socket is deleted unless an AgentConnection has it.
  void close(QSslSocket* socket);
  // Frees the slot of `socket` (counts decremented once, however often called).
  void forget(QSslSocket* socket);

  profiler::AgentConfig config_;
  TlsIdentity identity_;
  std::string token_;
  proto::Description description_;
  JobManager* jobs_;
  QSslConfiguration tls_;
  TlsListener listener_;
  std::unordered_map<QSslSocket*, Peer> peers_;
  std::unordered_map<const AgentConnection*, QSslSocket*> by_connection_;
  std::map<std::uint64_t, QSslSocket*> waiting_;  // not yet authenticated, in accept order
  QHash<QString, std::uint32_t> begun_;           // in the Tls or Hello phase, per address
  std::size_t clients_ = 0;
  std::uint64_t accepted_ = 0;
  std::size_t handshakes_peak_ = 0;  // since memory was last given back
  ClientLog log_;
  QTimer housekeeping_;  // once a second: held-back log lines, stale auth failures
  struct Failures {
    int count = 0;
    std::chrono::steady_clock::time_point last{};
  };
  std::map<QString, Failures> failures_;  // by client address
};

// The agent's TLS settings: its identity, TLS 1.2 or later (1.3 when the
// client speaks it), and for TLS 1.2 only ECDHE key exchange with AES-GCM or
// ChaCha20-Poly1305. Fails when this OpenSSL offers none of those.
[[nodiscard]] core::Result<QSslConfiguration> serverTlsConfiguration(const TlsIdentity& identity);

}  // namespace shardscope::app::agent
