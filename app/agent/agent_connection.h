// One client of the agent on its TLS socket: the protocol is ClientSession's
// (profiler/agent's client_session.h); this class feeds it what the socket reads, writes what
// it answers, runs its timers (the handshake deadline, the progress
// interval, a wrong token's back-off), forwards the jobs' events, logs its
// lines and drops a client that lets unsent answers pile up past the limit.
// Anything that fails on one connection ends that connection only.
#pragma once

#include <string>

#include <QHostAddress>
#include <QObject>
#include <QSslSocket>
#include <QTimer>

#include "shardscope/profiler/agent/client_session.h"

namespace shardscope::app::agent {

class AgentServer;
namespace proto = core::protocol;
using profiler::ClientSession;
using profiler::SessionHost;

class AgentConnection : public QObject, private SessionHost {
  Q_OBJECT

 public:
  AgentConnection(QSslSocket* socket, AgentServer* server);
  ~AgentConnection() override;
  AgentConnection(const AgentConnection&) = delete;
  AgentConnection& operator=(const AgentConnection&) = delete;

 private:
  // SessionHost: the server's token, back-off and description, its jobs.
  [[nodiscard]] bool tokenMatches(const std::string& token) const override;
  [[nodiscard]] std::chrono::milliseconds authFailed() override;
  [[nodiscard]] std::optional<core::Error> authSucceeded() override;
  [[nodiscard]] const proto::Description& description() const override;
  [[nodiscard]] Answer<proto::JobInfo> submit(const proto::JobSpec& spec) override;
  [[nodiscard]] Answer<proto::JobInfo> cancel(const std::string& job) override;
  [[nodiscard]] std::optional<proto::JobInfo> find(const std::string& job) const override;
  [[nodiscard]] std::vector<proto::JobInfo> list() const override;
  [[nodiscard]] Answer<profiler::RunFile> runFile(const std::string& job) const override;

  void readAvailable();
  // Does what the session asked: log, write, close, schedule.
  void apply(ClientSession::Output out);
  // Writes `bytes`; false when that dropped a client that does not read.
  bool write(const std::string& bytes);
  void close();  // after what was written is sent
  // Runs a slot's body; an exception ends this connection, never the agent.
  template <class Body>
  void guard(Body body);

  QSslSocket* socket_;  // a child of this connection
  AgentServer* server_;
  QHostAddress address_;
  ClientSession session_;
  bool closing_ = false;  // disconnect once everything written is sent
  QTimer handshake_timer_;
  QTimer progress_timer_;
};

}  // namespace shardscope::app::agent
