#include "agent_connection.h"

#include <QFile>

#include "agent_server.h"

namespace shardscope::app::agent {

namespace {
using nlohmann::json;
constexpr int kProgressIntervalMs = 50;  // at most 20 progress messages a second per watched job
}  // namespace

AgentConnection::AgentConnection(QSslSocket* socket, AgentServer* server)
    : QObject(server),
      socket_(socket),
      server_(server),
      peer_("client " + socket->peerAddress().toString().toStdString() + ":" + std::to_string(socket->peerPort())),
      decoder_(server->config().limits.max_frame_bytes) {
  socket->setParent(this);
  connect(socket, &QIODevice::readyRead, this, &AgentConnection::readAvailable);
  connect(socket, &QAbstractSocket::disconnected, this, &QObject::deleteLater);
  connect(socket, &QAbstractSocket::errorOccurred, this, [this](QAbstractSocket::SocketError) {
    if (socket_->state() != QAbstractSocket::ConnectedState) deleteLater();
  });
  connect(socket, &QIODevice::bytesWritten, this, [this] {
    if (closing_ && socket_->bytesToWrite() == 0) socket_->disconnectFromHost();
  });
  handshake_timer_.setSingleShot(true);
  connect(&handshake_timer_, &QTimer::timeout, this, [this] {
    if (!authenticated_) {
      sendError(0, proto::ErrorCode::NotAuthenticated,
                core::Error{"no hello within " + std::to_string(server_->config().limits.handshake_seconds) + " s"});
      close();
    }
  });
  handshake_timer_.start(static_cast<int>(server_->config().limits.handshake_seconds) * 1000);
  progress_timer_.setSingleShot(true);
  connect(&progress_timer_, &QTimer::timeout, this, &AgentConnection::flushProgress);
  JobManager& jobs = server_->jobs();
  connect(&jobs, &JobManager::jobChanged, this, &AgentConnection::jobChanged);
  connect(&jobs, &JobManager::jobProgress, this, &AgentConnection::jobProgress);
  if (socket->bytesAvailable() > 0)
    QMetaObject::invokeMethod(this, &AgentConnection::readAvailable, Qt::QueuedConnection);
}

AgentConnection::~AgentConnection() = default;

void AgentConnection::close() {
  closing_ = true;
  decoder_ = proto::FrameDecoder(1);  // read nothing more
  if (socket_->bytesToWrite() == 0) socket_->disconnectFromHost();
  // A peer that never reads what is left is cut off after a while.
  QTimer::singleShot(5000, this, [this] {
    socket_->abort();
    deleteLater();
  });
}

void AgentConnection::send(const json& message) {
  if (socket_->state() != QAbstractSocket::ConnectedState) return;
  auto frame = proto::encodeFrame(message, server_->config().limits.max_frame_bytes);
  if (!frame) {  // our bug, not the client's: say so rather than send nothing
    frame = proto::encodeFrame(proto::toJson(
        proto::ErrorMessage{proto::messageId(message), proto::ErrorCode::Internal, frame.error().message, ""}));
    if (!frame) return;
  }
  socket_->write(frame->data(), static_cast<qint64>(frame->size()));
  if (static_cast<std::uint64_t>(socket_->bytesToWrite()) > server_->config().limits.max_client_backlog_bytes) {
    // A client that does not read its answers must not make the agent buffer without end.
    socket_->abort();
    deleteLater();
  }
}

void AgentConnection::sendError(std::uint64_t id, proto::ErrorCode code, const core::Error& error) {
  send(proto::toJson(proto::errorReply(id, code, error)));
}

void AgentConnection::readAvailable() {
  if (closing_) return;
  const QByteArray bytes = socket_->readAll();
  decoder_.feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  while (!closing_) {
    auto next = decoder_.next();
    if (!next) {
      core::Error e = next.error();
      e.message = peer_ + ": " + e.message;
      sendError(0, proto::ErrorCode::BadFrame, e);
      close();
      return;
    }
    if (!next->has_value()) return;
    handle(**next);
  }
}

void AgentConnection::handle(const json& message) {
  const std::string type = proto::messageType(message);
  const std::uint64_t id = proto::messageId(message);
  if (!authenticated_) {
    if (type == "hello") return hello(message);
    sendError(id, proto::ErrorCode::NotAuthenticated, core::Error{"say hello with the agent's token first"});
    return close();
  }
  if (type == "hello") return sendError(id, proto::ErrorCode::BadMessage, core::Error{"already authenticated"});
  handleRequest(type, message);
}

void AgentConnection::handleRequest(const std::string& type, const json& message) {
  const std::uint64_t id = proto::messageId(message);
  if (type == "describe") {
    auto r = proto::parseDescribeRequest(message, peer_);
    if (!r) return sendError(id, proto::ErrorCode::BadMessage, r.error());
    proto::Description d = server_->description();
    d.id = r->id;
    return send(proto::toJson(d));
  }
  if (type == "list") {
    auto r = proto::parseListRequest(message, peer_);
    if (!r) return sendError(id, proto::ErrorCode::BadMessage, r.error());
    return send(proto::toJson(proto::JobList{r->id, server_->jobs().list()}));
  }
  if (type == "submit") return submit(message);
  if (type == "watch") return watch(message);
  if (type == "cancel") return cancel(message);
  if (type == "fetch") return fetch(message);
  sendError(id, proto::ErrorCode::UnknownType, core::Error{"unknown message type \"" + type + "\""});
}

void AgentConnection::hello(const json& message) {
  auto h = proto::parseHello(message, peer_);
  if (!h) {
    sendError(proto::messageId(message), proto::ErrorCode::BadMessage, h.error());
    return close();
  }
  const QHostAddress address = socket_->peerAddress();
  if (!server_->tokenMatches(h->token)) {
    closing_ = true;  // nothing more is read from a client that failed
    const auto delay = server_->authFailed(address);
    const std::uint64_t id = h->id;
    QTimer::singleShot(delay, this, [this, id] {
      sendError(id, proto::ErrorCode::AuthFailed, core::Error{"wrong token"});
      closing_ = false;
      close();
    });
    return;
  }
  if (auto refused = server_->authSucceeded(this, address)) {
    sendError(h->id, proto::ErrorCode::LimitExceeded, *refused);
    return close();
  }
  authenticated_ = true;
  handshake_timer_.stop();
  send(proto::toJson(proto::Welcome{h->id, server_->description().agent, server_->description().hosts.front().name}));
}

void AgentConnection::submit(const json& message) {
  auto r = proto::parseSubmitRequest(message, peer_);
  if (!r) return sendError(proto::messageId(message), proto::ErrorCode::InvalidJob, r.error());
  auto result = server_->jobs().submit(r->job);
  if (auto* refused = std::get_if<JobManager::Refusal>(&result)) return sendError(r->id, refused->code, refused->error);
  send(proto::toJson(proto::JobMessage{r->id, std::get<proto::JobInfo>(result)}));
}

void AgentConnection::watch(const json& message) {
  auto r = proto::parseJobRequest(message, peer_);
  if (!r) return sendError(proto::messageId(message), proto::ErrorCode::BadMessage, r.error());
  const proto::JobInfo* info = server_->jobs().find(r->job);
  if (info == nullptr)
    return sendError(r->id, proto::ErrorCode::NoSuchJob, core::Error{"no job " + r->job + " on this agent"});
  send(proto::toJson(proto::JobMessage{r->id, *info}));
  if (!proto::finished(info->state)) watches_[r->job] = r->id;
}

void AgentConnection::cancel(const json& message) {
  auto r = proto::parseJobRequest(message, peer_);
  if (!r) return sendError(proto::messageId(message), proto::ErrorCode::BadMessage, r.error());
  auto result = server_->jobs().cancel(r->job);
  if (auto* refused = std::get_if<JobManager::Refusal>(&result)) return sendError(r->id, refused->code, refused->error);
  send(proto::toJson(proto::JobMessage{r->id, std::get<proto::JobInfo>(result)}));
}

void AgentConnection::fetch(const json& message) {
  auto r = proto::parseFetchRequest(message, peer_);
  if (!r) return sendError(proto::messageId(message), proto::ErrorCode::BadMessage, r.error());
  auto result = server_->jobs().runFile(r->job);
  if (auto* refused = std::get_if<JobManager::Refusal>(&result)) return sendError(r->id, refused->code, refused->error);
  const RunFile& file = std::get<RunFile>(result);
  if (r->offset > file.size)
    return sendError(r->id, proto::ErrorCode::BadMessage,
                     core::Error{"offset " + std::to_string(r->offset) + " is past the end of the run file (" +
                                     std::to_string(file.size) + " bytes)",
                                 core::ErrorKind::InvalidInput, peer_, "/offset"});
  QFile f(QString::fromStdString(file.path));
  if (!f.open(QIODevice::ReadOnly) || !f.seek(static_cast<qint64>(r->offset)))
    return sendError(r->id, proto::ErrorCode::Internal, core::Error{"cannot read the run file of " + r->job});
  const QByteArray bytes = f.read(static_cast<qint64>(std::min(r->length, file.size - r->offset)));
  proto::Chunk c;
  c.id = r->id;
  c.job = r->job;
  c.offset = r->offset;
  c.total = file.size;
  c.sha256 = file.sha256;
  c.run = file.run;
  c.data.assign(bytes.constData(), static_cast<std::size_t>(bytes.size()));
  send(proto::toJson(c));
}

void AgentConnection::jobChanged(const proto::JobInfo& info) {
  const auto it = watches_.find(info.job);
  if (it == watches_.end()) return;
  if (proto::finished(info.state)) {
    pending_.erase(info.job);  // the final state replaces any progress not yet sent
  } else {
    flushProgress();
  }
  send(proto::toJson(proto::JobMessage{it->second, info}));
  if (proto::finished(info.state)) watches_.erase(it);
}

void AgentConnection::jobProgress(const proto::ProgressEvent& event) {
  const auto it = watches_.find(event.job);
  if (it == watches_.end()) return;
  proto::ProgressEvent e = event;
  e.id = it->second;
  pending_[event.job] = std::move(e);
  if (!progress_timer_.isActive()) progress_timer_.start(kProgressIntervalMs);
}

void AgentConnection::flushProgress() {
  for (const auto& [job, event] : pending_) send(proto::toJson(event));
  pending_.clear();
}

}  // namespace shardscope::app::agent
