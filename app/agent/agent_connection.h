// One client of the agent: reads frames (FrameDecoder, the agent's frame
// limit), allows nothing but hello until the token matched, answers requests
// by their id, streams the jobs it watches (progress coalesced to at most 20
// messages a second per job, so a slow client never holds anything up), and
// serves run files in chunks. A client that sends a malformed frame gets an
// error and is closed; one that does not finish its handshake in time, or
// lets unsent answers pile up past the limit, is dropped. Closing never
// touches a job.
#pragma once

#include <map>
#include <string>

#include <QObject>
#include <QPointer>
#include <QSslSocket>
#include <QTimer>

#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/messages.h"

namespace shardscope::app::agent {

class AgentServer;
namespace proto = core::protocol;

class AgentConnection : public QObject {
  Q_OBJECT

 public:
  AgentConnection(QSslSocket* socket, AgentServer* server);
  ~AgentConnection() override;
  AgentConnection(const AgentConnection&) = delete;
  AgentConnection& operator=(const AgentConnection&) = delete;

 private:
  void readAvailable();
  void handle(const nlohmann::json& message);
  void handleRequest(const std::string& type, const nlohmann::json& message);
  void hello(const nlohmann::json& message);
  void submit(const nlohmann::json& message);
  void watch(const nlohmann::json& message);
  void cancel(const nlohmann::json& message);
  void fetch(const nlohmann::json& message);
  void jobChanged(const proto::JobInfo& info);
  void jobProgress(const proto::ProgressEvent& event);
  void flushProgress();
  void send(const nlohmann::json& message);
  void sendError(std::uint64_t id, proto::ErrorCode code, const core::Error& error);
  void close();  // after what was written is sent

  QSslSocket* socket_;  // a child of this connection
  AgentServer* server_;
  std::string peer_;  // "client 10.0.0.5:51234", for messages
  proto::FrameDecoder decoder_;
  bool authenticated_ = false;
  bool closing_ = false;
  QTimer handshake_timer_;
  QTimer progress_timer_;
  std::map<std::string, std::uint64_t> watches_;         // job -> the watch's request id
  std::map<std::string, proto::ProgressEvent> pending_;  // newest progress per watched job, not yet sent
};

}  // namespace shardscope::app::agent
