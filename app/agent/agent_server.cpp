#include "agent_server.h"

#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>

#include <QSslCipher>

#include "agent_connection.h"
#include "agent_log.h"
#include "shardscope/profiler/agent/agent_token.h"

namespace shardscope::app::agent {

namespace {
constexpr auto kForgetFailuresAfter = std::chrono::minutes(10);
// A peer that has sent no byte this long after connecting is closed: an idle
// socket holds a slot in handshake but has not begun TLS, so the
// per-address cap does not see it.
constexpr std::uint32_t kFirstByteSeconds = 3;
// A peer refused with a message that does not read it is cut off after this.
constexpr int kRefusalGraceMs = 2000;
constexpr auto kAcceptRetry = std::chrono::seconds(1);
// After this many connections in handshake at once, memory is given back once they are gone.
constexpr std::size_t kTrimAfterHandshakes = 64;
}  // namespace

core::Result<QSslConfiguration> serverTlsConfiguration(const TlsIdentity& identity) {
  QList<QSslCipher> ciphers;
  for (const QSslCipher& c : QSslConfiguration::supportedCiphers()) {
    const QString encryption = c.encryptionMethod();
    const bool aead =
        encryption.startsWith(QLatin1String("AESGCM")) || encryption.startsWith(QLatin1String("CHACHA20/POLY1305"));
    // TLS 1.3's suites are all AEAD with ephemeral key exchange.
    if (c.protocol() == QSsl::TlsV1_3 ||
        (c.protocol() == QSsl::TlsV1_2 && c.keyExchangeMethod() == QLatin1String("ECDH") && aead))
      ciphers.push_back(c);
  }
  const bool tls12 =
      std::any_of(ciphers.begin(), ciphers.end(), [](const QSslCipher& c) { return c.protocol() == QSsl::TlsV1_2; });
  if (!tls12)  // an empty list would mean Qt's defaults, CBC suites included
    return core::Error{"this OpenSSL offers no TLS 1.2 cipher suite with ECDHE and AES-GCM or ChaCha20-Poly1305",
                       core::ErrorKind::Io};
  QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
  tls.setLocalCertificate(identity.certificate);
  tls.setPrivateKey(identity.key);
  tls.setProtocol(QSsl::TlsV1_2OrLater);
  tls.setCiphers(ciphers);
  tls.setPeerVerifyMode(QSslSocket::VerifyNone);  // clients prove themselves with the token
  return tls;
}

TlsListener::TlsListener(std::function<void(qintptr)> accept, QObject* parent)
    : QTcpServer(parent), accept_(std::move(accept)) {
  connect(this, &QTcpServer::acceptError, this, [this](QAbstractSocket::SocketError) {
    // QTcpServer pauses accepting on any error but EAGAIN (EMFILE, ENFILE,
    // ECONNABORTED, ...); a paused agent would serve nobody, forever.
    logLine("cannot accept a connection: " + errorString().toStdString() + "; trying again in 1 s");
    QTimer::singleShot(kAcceptRetry, this, &QTcpServer::resumeAccepting);
  });
}

void TlsListener::incomingConnection(qintptr descriptor) { accept_(descriptor); }

void ClientLog::line(const QString& address, const std::string& text) {
  const auto now = Clock::now();
  const auto it = by_address_.find(address);
  if (it != by_address_.end() && now - it->last < std::chrono::seconds(1)) {
    ++it->count;
    return;
  }
  if (!spend(now)) {
    ++over_budget_;
    return;
  }
  std::string out = text;
  if (it != by_address_.end() && it->count > 0)
    out += " (and " + std::to_string(it->count) + " more lines about " + address.toStdString() + " held back)";
  by_address_.insert(address, Held{now, 0});
  logLine(out);
}

void ClientLog::flush() {
  const auto now = Clock::now();
  for (auto it = by_address_.begin(); it != by_address_.end();) {
    if (now - it->last < std::chrono::seconds(1)) {
      ++it;
    } else if (it->count == 0) {
      it = by_address_.erase(it);
    } else if (spend(now)) {
      logLine("client " + it.key().toStdString() + ": " + std::to_string(it->count) +
              " more lines about this address held back");
      it = by_address_.erase(it);
    } else {
      ++it;
    }
  }
  if (over_budget_ > 0 && spend(now)) {
    logLine(std::to_string(over_budget_) + " more lines about clients held back (at most " +
            std::to_string(kLinesPerSecond) + " a second)");
    over_budget_ = 0;
  }
}

bool ClientLog::spend(Clock::time_point now) {
  if (now - window_ >= std::chrono::seconds(1)) {
    window_ = now;
    lines_in_window_ = 0;
  }
  if (lines_in_window_ >= kLinesPerSecond) return false;
  ++lines_in_window_;
  return true;
}

AgentServer::AgentServer(profiler::AgentConfig config, TlsIdentity identity, std::string token,
                         proto::Description description, JobManager* jobs, QObject* parent)
    : QObject(parent),
      config_(std::move(config)),
      identity_(std::move(identity)),
      token_(std::move(token)),
      description_(std::move(description)),
      jobs_(jobs),
      listener_([this](qintptr descriptor) { accept(descriptor); }) {
  housekeeping_.setInterval(1000);
  connect(&housekeeping_, &QTimer::timeout, this, [this] {
    log_.flush();
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(failures_, [&](const auto& f) { return now - f.second.last > kForgetFailuresAfter; });
    giveBackMemory();
  });
}

core::Status AgentServer::listen() {
  QHostAddress address;
  if (!address.setAddress(QString::fromStdString(config_.listen_address)))
    return core::Error{config_.source + ": /listen/address: \"" + config_.listen_address + "\" is not an IP address",
                       core::ErrorKind::InvalidInput, config_.source, "/listen/address"};
  auto tls = serverTlsConfiguration(identity_);
  if (!tls) return tls.error();
  tls_ = std::move(tls).value();
  listener_.setListenBacklogSize(1024);  // a burst of connects waits in the kernel, not in SYN retries
  if (!listener_.listen(address, config_.port))
    return core::Error{"cannot listen on " + config_.listen_address + ":" + std::to_string(config_.port) + ": " +
                           listener_.errorString().toStdString(),
                       core::ErrorKind::Io};
  housekeeping_.start();
  logLine("listening on " + config_.listen_address + ":" + std::to_string(port()));
  return core::Ok{};
}

void AgentServer::giveBackMemory() {
  // A flood of handshakes leaves the allocator holding their TLS contexts'
  // memory (tens of KiB each); once it is over, that goes back to the system.
  handshakes_peak_ = std::max(handshakes_peak_, waiting_.size());
  if (handshakes_peak_ < kTrimAfterHandshakes || waiting_.size() > kTrimAfterHandshakes / 8) return;
  handshakes_peak_ = 0;
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

void AgentServer::accept(qintptr descriptor) {
  auto* socket = new QSslSocket(this);
  if (!socket->setSocketDescriptor(descriptor)) {
    ::close(static_cast<int>(descriptor));
    delete socket;
    return;
  }
  if (waiting_.size() >= config_.limits.max_handshakes) evictOldest();
  handshakes_peak_ = std::max(handshakes_peak_, waiting_.size() + 1);
  const QString address = socket->peerAddress().toString();
  const std::uint64_t order = ++accepted_;
  peers_.emplace(socket, Peer{address, "client " + address.toStdString() + ":" + std::to_string(socket->peerPort()),
                              Phase::Silent, false, order, nullptr});
  waiting_.emplace(order, socket);
  socket->setSslConfiguration(tls_);
  // Until TLS begins the socket is a plain one: readyRead is the peer's first byte.
  connect(socket, &QIODevice::readyRead, this, [this, socket] { beginTls(socket); });
  connect(socket, &QSslSocket::encrypted, this, [this, socket] { encrypted(socket); });
  connect(socket, &QAbstractSocket::disconnected, this, [this, socket] { close(socket); });
  connect(socket, &QAbstractSocket::errorOccurred, this,
          [this, socket](QAbstractSocket::SocketError) { handshakeFailed(socket, socket->errorString()); });
  connect(socket, &QSslSocket::sslErrors, this, [this, socket](const QList<QSslError>& errors) {
    handshakeFailed(socket, errors.isEmpty() ? QStringLiteral("TLS error") : errors.front().errorString());
  });
  connect(socket, &QObject::destroyed, this, [this, socket] { forget(socket); });
  const std::chrono::seconds first_byte(std::min(kFirstByteSeconds, config_.limits.handshake_seconds));
  QTimer::singleShot(first_byte, socket, [this, socket] { deadline(socket, true); });
  QTimer::singleShot(std::chrono::seconds(config_.limits.handshake_seconds), socket,
                     [this, socket] { deadline(socket, false); });
}

void AgentServer::beginTls(QSslSocket* socket) {
  const auto it = peers_.find(socket);
  if (it == peers_.end() || it->second.phase != Phase::Silent) return;
  Peer& peer = it->second;
  QObject::disconnect(socket, &QIODevice::readyRead, this, nullptr);
  std::uint32_t& begun = begun_[peer.address];
  if (begun >= config_.limits.max_handshakes_per_address) {
    log_.line(peer.address, peer.name + ": refused, " + std::to_string(begun) +
                                " handshakes from this address (limits.max_handshakes_per_address)");
    return close(socket);
  }
  ++begun;
  peer.phase = Phase::Tls;
  socket->startServerEncryption();
}

void AgentServer::encrypted(QSslSocket* socket) {
  const auto it = peers_.find(socket);
  if (it == peers_.end() || it->second.closing) return;
  Peer& peer = it->second;
  peer.phase = Phase::Hello;
  if (clients_ >= config_.limits.max_connections) {
    log_.line(peer.address,
              peer.name + ": refused, " + std::to_string(clients_) + " clients connected (limits.max_connections)");
    return refuse(socket, proto::ErrorCode::LimitExceeded,
                  "this agent serves " + std::to_string(config_.limits.max_connections) +
                      " clients at once (limits.max_connections); try again later");
  }
  // From here the connection owns the socket and closes it on errors; the
  // server still holds its slot and the hello deadline.
  QObject::disconnect(socket, nullptr, this, nullptr);
  connect(socket, &QObject::destroyed, this, [this, socket] { forget(socket); });
  auto* connection = new AgentConnection(socket, this);
  peer.connection = connection;
  by_connection_.emplace(connection, socket);
}

void AgentServer::handshakeFailed(QSslSocket* socket, const QString& why) {
  const auto it = peers_.find(socket);
  if (it == peers_.end()) return;
  // A peer that closes before sending anything (a port check) is not worth a line.
  if (it->second.phase == Phase::Tls && !it->second.closing)
    log_.line(it->second.address, it->second.name + ": TLS handshake failed: " + logSafe(why.toStdString()));
  close(socket);
}

void AgentServer::deadline(QSslSocket* socket, bool first_byte) {
  const auto it = peers_.find(socket);
  if (it == peers_.end() || it->second.closing) return;
  const Peer& peer = it->second;
  const std::string seconds = std::to_string(config_.limits.handshake_seconds);
  if (first_byte) {
    if (peer.phase != Phase::Silent) return;
    const auto quiet = std::min(kFirstByteSeconds, config_.limits.handshake_seconds);
    log_.line(peer.address, peer.name + ": sent nothing in " + std::to_string(quiet) + " s; closed");
    return close(socket);
  }
  switch (peer.phase) {
    case Phase::Client:
      return;
    case Phase::Hello:
      log_.line(peer.address, peer.name + ": no hello within " + seconds + " s (limits.handshake_seconds); closed");
      return refuse(socket, proto::ErrorCode::NotAuthenticated, "no hello within " + seconds + " s");
    case Phase::Silent:
    case Phase::Tls:
      log_.line(peer.address,
                peer.name + ": no TLS handshake within " + seconds + " s (limits.handshake_seconds); closed");
      return close(socket);
  }
}

void AgentServer::evictOldest() {
  // The oldest that sent nothing goes first, else the oldest in handshake: a
  // real client finishes in a few round trips, so the oldest is the slowest.
  auto victim = std::find_if(waiting_.begin(), waiting_.end(),
                             [&](const auto& w) { return peers_.at(w.second).phase == Phase::Silent; });
  if (victim == waiting_.end()) victim = waiting_.begin();
  if (victim == waiting_.end()) return;
  const Peer& peer = peers_.at(victim->second);
  log_.line(peer.address, peer.name + ": closed, " + std::to_string(waiting_.size()) +
                              " connections in handshake (limits.max_handshakes), the oldest goes first");
  close(victim->second);
}

void AgentServer::refuse(QSslSocket* socket, proto::ErrorCode code, const std::string& message) {
  peers_.at(socket).closing = true;
  const auto frame = proto::encodeFrame(proto::toJson(proto::errorReply(0, code, core::Error{message})));
  if (frame) socket->write(frame->data(), static_cast<qint64>(frame->size()));
  socket->disconnectFromHost();
  QTimer::singleShot(kRefusalGraceMs, socket, [socket] { socket->abort(); });
}

void AgentServer::close(QSslSocket* socket) {
  const auto it = peers_.find(socket);
  if (it == peers_.end()) return;
  const bool owned = it->second.connection == nullptr;
  forget(socket);
  if (owned) {
    QObject::disconnect(socket, nullptr, this, nullptr);
    socket->abort();
    socket->deleteLater();
  } else {
    socket->abort();  // its AgentConnection goes with it
  }
}

void AgentServer::forget(QSslSocket* socket) {
  const auto it = peers_.find(socket);
  if (it == peers_.end()) return;
  const Peer& peer = it->second;
  if (peer.phase == Phase::Client) {
    --clients_;
  } else {
    waiting_.erase(peer.order);
    if (peer.phase != Phase::Silent) {
      const auto n = begun_.find(peer.address);
      if (n != begun_.end() && --*n == 0) begun_.erase(n);
    }
  }
  if (peer.connection != nullptr) by_connection_.erase(peer.connection);
  peers_.erase(it);
}

std::optional<core::Error> AgentServer::authSucceeded(const AgentConnection* connection, const QHostAddress& peer) {
  failures_.erase(peer.toString());
  const auto found = by_connection_.find(connection);
  if (found == by_connection_.end()) return core::Error{"closed"};
  QSslSocket* socket = found->second;
  Peer& p = peers_.at(socket);
  if (p.closing || p.phase != Phase::Hello) return core::Error{"closed"};
  if (clients_ >= config_.limits.max_connections) {
    p.closing = true;  // the connection answers and closes it
    log_.line(p.address,
              p.name + ": refused, " + std::to_string(clients_) + " clients connected (limits.max_connections)");
    return core::Error{"this agent serves " + std::to_string(config_.limits.max_connections) +
                       " clients at once (limits.max_connections); try again later"};
  }
  waiting_.erase(p.order);
  const auto n = begun_.find(p.address);
  if (n != begun_.end() && --*n == 0) begun_.erase(n);
  p.phase = Phase::Client;
  ++clients_;
  return std::nullopt;
}

bool AgentServer::tokenMatches(const std::string& token) const { return profiler::tokenMatches(token, token_); }

std::chrono::milliseconds AgentServer::authFailed(const QHostAddress& peer) {
  const auto now = std::chrono::steady_clock::now();
  Failures& f = failures_[peer.toString()];
  if (now - f.last > kForgetFailuresAfter) f.count = 0;
  f.count = std::min(f.count + 1, 16);
  f.last = now;
  return std::chrono::milliseconds(std::min<long long>(250LL << (f.count - 1), 8000));
}

}  // namespace shardscope::app::agent
