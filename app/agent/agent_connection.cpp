#include "agent_connection.h"

#include "agent_log.h"
#include "agent_server.h"
#include "shardscope/core/protocol/safe_text.h"

namespace shardscope::app::agent {

namespace {

std::string peerName(const QSslSocket& socket) {
  return "client " + socket.peerAddress().toString().toStdString() + ":" + std::to_string(socket.peerPort());
}

}  // namespace

AgentConnection::AgentConnection(QSslSocket* socket, AgentServer* server)
    : QObject(server),
      socket_(socket),
      server_(server),
      address_(socket->peerAddress()),
      session_(*this, peerName(*socket), server->config().limits.max_frame_bytes,
               server->config().limits.handshake_seconds) {
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
  connect(&handshake_timer_, &QTimer::timeout, this, [this] { guard([this] { apply(session_.handshakeExpired()); }); });
  handshake_timer_.start(static_cast<int>(server_->config().limits.handshake_seconds) * 1000);
  progress_timer_.setSingleShot(true);
  connect(&progress_timer_, &QTimer::timeout, this, [this] { guard([this] { apply(session_.flushProgress()); }); });
  JobManager& jobs = server_->jobs();
  connect(&jobs, &JobManager::jobChanged, this,
          [this](const proto::JobInfo& info) { guard([&] { apply(session_.jobChanged(info)); }); });
  connect(&jobs, &JobManager::jobProgress, this,
          [this](const proto::ProgressEvent& event) { guard([&] { apply(session_.jobProgress(event)); }); });
  if (socket->bytesAvailable() > 0)
    QMetaObject::invokeMethod(this, &AgentConnection::readAvailable, Qt::QueuedConnection);
}

AgentConnection::~AgentConnection() {
  for (const auto& line : session_.ended().log) logLine(line);
}

template <class Body>
void AgentConnection::guard(Body body) {
  try {
    body();
  } catch (const std::exception& e) {
    logLine(session_.peer() + ": internal error (" + core::protocol::safeText(e.what(), false, 300) + ")");
    socket_->abort();
    deleteLater();
  } catch (...) {
    logLine(session_.peer() + ": internal error (an exception of unknown type)");
    socket_->abort();
    deleteLater();
  }
}

void AgentConnection::readAvailable() {
  guard([this] {
    if (session_.closing()) return;  // nothing more is read once the session ends
    const QByteArray bytes = socket_->readAll();
    apply(session_.received(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size()))));
  });
}

void AgentConnection::apply(ClientSession::Output out) {
  for (const auto& line : out.log) logLine(line);
  if (session_.authenticated() || session_.closing()) handshake_timer_.stop();
  if (!write(out.send)) return;
  if (!out.send_later.empty()) {  // a wrong token's answer, after its back-off
    QTimer::singleShot(out.delay, this, [this, later = std::move(out.send_later), then_close = out.close] {
      guard([&] {
        if (write(later) && then_close) close();
      });
    });
    return;
  }
  if (out.close) return close();
  if (out.progress_due && !progress_timer_.isActive()) progress_timer_.start(ClientSession::kProgressInterval);
}

bool AgentConnection::write(const std::string& bytes) {
  if (bytes.empty() || socket_->state() != QAbstractSocket::ConnectedState) return true;
  socket_->write(bytes.data(), static_cast<qint64>(bytes.size()));
  const auto unsent = static_cast<std::uint64_t>(socket_->bytesToWrite());
  if (unsent > server_->config().limits.max_client_backlog_bytes) {
    // A client that does not read its answers must not make the agent buffer without end.
    logLine(session_.peer() + ": dropped with " + std::to_string(unsent) + " bytes unsent (it does not read)");
    socket_->abort();
    deleteLater();
    return false;
  }
  return true;
}

void AgentConnection::close() {
  closing_ = true;
  progress_timer_.stop();
  if (socket_->bytesToWrite() == 0) socket_->disconnectFromHost();
  // A peer that never reads what is left is cut off after a while.
  QTimer::singleShot(5000, this, [this] {
    socket_->abort();
    deleteLater();
  });
}

bool AgentConnection::tokenMatches(const std::string& token) const { return server_->tokenMatches(token); }

std::chrono::milliseconds AgentConnection::authFailed() { return server_->authFailed(address_); }

std::optional<core::Error> AgentConnection::authSucceeded() { return server_->authSucceeded(this, address_); }

const proto::Description& AgentConnection::description() const { return server_->description(); }

SessionHost::Answer<proto::JobInfo> AgentConnection::submit(const proto::JobSpec& spec) {
  return server_->jobs().submit(spec, session_.peer());
}

SessionHost::Answer<proto::JobInfo> AgentConnection::cancel(const std::string& job) {
  return server_->jobs().cancel(job);
}

std::optional<proto::JobInfo> AgentConnection::find(const std::string& job) const {
  const proto::JobInfo* info = server_->jobs().find(job);
  return info != nullptr ? std::optional<proto::JobInfo>(*info) : std::nullopt;
}

std::vector<proto::JobInfo> AgentConnection::list() const { return server_->jobs().list(); }

SessionHost::Answer<profiler::RunFile> AgentConnection::runFile(const std::string& job) const {
  return server_->jobs().runFile(job);
}

}  // namespace shardscope::app::agent
