#include "agent_client.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QSslConfiguration>

#include "shardscope/core/protocol/known_agents.h"

namespace shardscope::app::remote {

namespace {
using nlohmann::json;

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

template <class T, class Parse>
std::function<void(core::Result<json>)> parsed(AgentClient::Done<T> done, Parse parse, std::string source) {
  return [done = std::move(done), parse, source = std::move(source)](core::Result<json> m) {
    if (!m) return done(m.error());
    auto r = parse(*m, source);
    if (!r) return done(r.error());
    done(std::move(r).value());
  };
}
// A "job" answer's info to `done`.
std::function<void(core::Result<json>)> jobAnswer(AgentClient::Done<proto::JobInfo> done, std::string source) {
  return [done = std::move(done), source = std::move(source)](core::Result<json> m) {
    if (!m) return done(m.error());
    auto j = proto::parseJobMessage(*m, source);
    if (!j) return done(j.error());
    done(std::move(j->info));
  };
}
}  // namespace

std::string AgentAddress::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

core::Result<AgentAddress> parseAgentAddress(const std::string& text) {
  const auto bad = [&text] {
    return core::Error{
        "expected the agent as host:port (e.g. gpu01.example.org:7443 or [::1]:7443), got \"" + text + "\"",
        core::ErrorKind::Usage};
  };
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find("]:");
    if (close == std::string::npos) return bad();
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) return bad();
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  const int p = std::stoi(port);
  if (p < 1 || p > 65535) return bad();
  return AgentAddress{host, static_cast<std::uint16_t>(p)};
}

AgentClient::AgentClient(QObject* parent) : QObject(parent) {
  connect(&socket_, &QSslSocket::encrypted, this, &AgentClient::onEncrypted);
  connect(&socket_, &QIODevice::readyRead, this, &AgentClient::onReadyRead);
  connect(&socket_, &QAbstractSocket::errorOccurred, this, &AgentClient::onSocketError);
  connect(&socket_, &QSslSocket::sslErrors, this, [this](const QList<QSslError>&) {
    socket_.ignoreSslErrors();  // a self-signed certificate: trust comes from the pin, checked in onEncrypted
  });
  connect(&socket_, &QAbstractSocket::disconnected, this, [this] {
    const bool was_ready = ready_;
    ready_ = false;
    failAllPending("the connection was closed");
    if (!failed_ && !was_ready) fail("the agent closed the connection before the hello was answered");
    emit disconnected();
  });
  deadline_timer_.setInterval(250);
  connect(&deadline_timer_, &QTimer::timeout, this, &AgentClient::checkDeadlines);
}

AgentClient::~AgentClient() {
  pending_.clear();
  socket_.abort();
}

void AgentClient::connectToAgent(ConnectOptions options) {
  options_ = std::move(options);
  if (options_.known_agents_path.empty()) options_.known_agents_path = proto::defaultKnownAgentsPath();
  address_ = options_.address.text();
  ready_ = failed_ = awaiting_trust_ = false;
  decoder_ = proto::FrameDecoder();
  QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
  tls.setPeerVerifyMode(QSslSocket::QueryPeer);  // self-signed: pinned below instead of verified by a CA
  tls.setProtocol(QSsl::TlsV1_2OrLater);
  socket_.setSslConfiguration(tls);
  socket_.connectToHostEncrypted(QString::fromStdString(options_.address.host), options_.address.port);
  pending_[0] = Pending{[](core::Result<json>) {}, false, nowMs() + options_.connect_timeout_ms};
  deadline_timer_.start();
}

void AgentClient::disconnectFromAgent() {
  failAllPending("disconnected");
  ready_ = false;
  socket_.disconnectFromHost();
}

void AgentClient::fail(const std::string& message) {
  if (failed_) return;
  failed_ = true;
  ready_ = false;
  failAllPending(message);
  socket_.abort();
  const std::string prefix = "agent " + address_ + ": ";
  emit failed(QString::fromStdString(message.rfind(prefix, 0) == 0 ? message : prefix + message));
}

void AgentClient::onSocketError() {
  if (failed_) return;
  if (ready_) {
    ready_ = false;
    failAllPending(socket_.errorString().toStdString());
    emit failed(QString::fromStdString("agent " + address_ + ": " + socket_.errorString().toStdString()));
    return;
  }
  fail("cannot connect: " + socket_.errorString().toStdString());
}

void AgentClient::onEncrypted() {
  if (socket_.peerCertificate().isNull()) return fail("presented no certificate: refused");
  const QByteArray digest = socket_.peerCertificate().digest(QCryptographicHash::Sha256);
  fingerprint_ = "sha256:" + digest.toHex().toStdString();
  auto known = proto::KnownAgents::load(options_.known_agents_path);
  if (!known) return fail(known.error().message);
  const auto check = known->check(address_, fingerprint_);
  using V = proto::KnownAgents::Verdict;
  if (check.verdict == V::Match) return sayHello();
  if (check.verdict == V::Mismatch)
    return fail("its certificate fingerprint has CHANGED.\n  pinned:    " + check.pinned +
                "\n  presented: " + fingerprint_ +
                "\nSomeone may be between you and the agent, or the agent made a new identity. If the "
                "change is expected (ask the agent's administrator for the fingerprint it printed), delete line " +
                std::to_string(check.line) + " of " + options_.known_agents_path + " and connect again.");
  const auto expected = proto::normalizeFingerprint(options_.expected_fingerprint);
  if (!options_.expected_fingerprint.empty()) {
    if (!expected || *expected != fingerprint_)
      return fail("presents fingerprint " + fingerprint_ + ", not the " + options_.expected_fingerprint +
                  " you gave: refused");
  } else if (options_.trust == TrustPolicy::Refuse) {
    return fail("is not known yet; it presents fingerprint " + fingerprint_ +
                ". Compare it with the one the agent printed at start, then accept it (--accept-new, or "
                "--fingerprint " +
                fingerprint_ + ")");
  } else if (options_.trust == TrustPolicy::Ask) {
    awaiting_trust_ = true;
    pending_.erase(0);  // a person answers: no deadline
    emit trustQuestion(QString::fromStdString(address_), QString::fromStdString(fingerprint_));
    return;
  }
  known->pin(address_, fingerprint_);
  if (auto s = known->save(); !s) return fail(s.error().message);
  sayHello();
}

void AgentClient::answerTrust(bool trust) {
  if (!awaiting_trust_) return;
  awaiting_trust_ = false;
  if (!trust) return fail("its fingerprint " + fingerprint_ + " was not trusted");
  auto known = proto::KnownAgents::load(options_.known_agents_path);
  if (!known) return fail(known.error().message);
  known->pin(address_, fingerprint_);
  if (auto s = known->save(); !s) return fail(s.error().message);
  sayHello();
}

void AgentClient::sayHello() {
  pending_.erase(0);
  json hello = proto::toJson(proto::Hello{next_id_, options_.client_name, options_.token});
  const std::uint64_t id = next_id_++;
  pending_[id] = Pending{[this](core::Result<json> m) {
                           if (!m) return fail(m.error().message);
                           auto w = proto::parseWelcome(*m, "agent " + address_);
                           if (!w) return fail(w.error().message);
                           agent_name_ = w->agent;
                           ready_ = true;
                           emit ready();
                         },
                         false, nowMs() + options_.request_timeout_ms};
  auto frame = proto::encodeFrame(hello);
  if (!frame) return fail(frame.error().message);
  socket_.write(frame->data(), static_cast<qint64>(frame->size()));
}

void AgentClient::request(json message, Pending pending) {
  const std::uint64_t id = next_id_++;
  message["id"] = id;
  if (!ready_) {
    pending.answer(core::Error{"agent " + address_ + ": not connected", core::ErrorKind::Io, address_});
    return;
  }
  auto frame = proto::encodeFrame(message);
  if (!frame) return pending.answer(frame.error());
  if (!pending.stream) pending.deadline_ms = nowMs() + options_.request_timeout_ms;
  pending_[id] = std::move(pending);
  socket_.write(frame->data(), static_cast<qint64>(frame->size()));
}

core::Error AgentClient::agentError(const json& message) const {
  auto e = proto::parseErrorMessage(message, "agent " + address_);
  if (!e) return e.error();
  return core::Error{"agent " + address_ + ": " + e->message + " [" + std::string(proto::toString(e->code)) + "]",
                     e->code == proto::ErrorCode::InvalidJob || e->code == proto::ErrorCode::BadMessage
                         ? core::ErrorKind::InvalidInput
                         : core::ErrorKind::Io,
                     address_, e->path};
}

void AgentClient::onReadyRead() {
  const QByteArray bytes = socket_.readAll();
  decoder_.feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  while (!failed_) {
    auto next = decoder_.next();
    if (!next) return fail("sent a malformed frame: " + next.error().message);
    if (!next->has_value()) return;
    dispatch(**next);
  }
}

void AgentClient::dispatch(const json& message) {
  const std::uint64_t id = proto::messageId(message);
  if (proto::messageType(message) == "error" && id == 0) return fail(agentError(message).message);
  const auto it = pending_.find(id);
  if (it == pending_.end()) return;  // an answer to a request given up on
  if (proto::messageType(message) == "error") {
    auto answer = std::move(it->second.answer);
    pending_.erase(it);
    return answer(agentError(message));
  }
  if (it->second.stream) {  // the watch decides when it ends (and may erase itself: call a copy)
    const auto handler = it->second.answer;
    return handler(message);
  }
  auto answer = std::move(it->second.answer);
  pending_.erase(it);
  answer(message);
}

void AgentClient::checkDeadlines() {
  const qint64 now = nowMs();
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline_ms == 0 || it->second.deadline_ms > now) {
      ++it;
      continue;
    }
    if (it->first == 0) return fail("no TLS connection within " + std::to_string(options_.connect_timeout_ms) + " ms");
    auto answer = std::move(it->second.answer);
    it = pending_.erase(it);
    answer(
        core::Error{"agent " + address_ + ": no answer within " + std::to_string(options_.request_timeout_ms) + " ms",
                    core::ErrorKind::Io, address_});
  }
}

void AgentClient::failAllPending(const std::string& why) {
  auto pending = std::move(pending_);
  pending_.clear();
  const std::string prefix = "agent " + address_ + ": ";
  for (auto& [id, p] : pending)
    if (id != 0) p.answer(core::Error{why.rfind(prefix, 0) == 0 ? why : prefix + why, core::ErrorKind::Io, address_});
}

void AgentClient::describe(Done<proto::Description> done) {
  request(proto::toJson(proto::DescribeRequest{}),
          Pending{parsed<proto::Description>(std::move(done), proto::parseDescription, "agent " + address_)});
}

void AgentClient::list(Done<std::vector<proto::JobInfo>> done) {
  const std::string source = "agent " + address_;
  request(proto::toJson(proto::ListRequest{}), Pending{[done = std::move(done), source](core::Result<json> m) {
            if (!m) return done(m.error());
            auto l = proto::parseJobList(*m, source);
            if (!l) return done(l.error());
            done(std::move(l->jobs));
          }});
}

void AgentClient::submit(const proto::JobSpec& spec, Done<proto::JobInfo> done) {
  request(proto::toJson(proto::SubmitRequest{0, spec}), Pending{jobAnswer(std::move(done), "agent " + address_)});
}

void AgentClient::cancel(const std::string& job, Done<proto::JobInfo> done) {
  request(proto::toJson(proto::JobRequest{0, job}, "cancel"), Pending{jobAnswer(std::move(done), "agent " + address_)});
}

void AgentClient::watch(const std::string& job, std::function<void(const proto::JobInfo&)> on_job,
                        std::function<void(const proto::ProgressEvent&)> on_progress, Done<proto::JobInfo> done) {
  const std::string source = "agent " + address_;
  const std::uint64_t id = next_id_;  // request() gives the watch this id
  auto handler = [this, id, source, on_job = std::move(on_job), on_progress = std::move(on_progress),
                  done](core::Result<json> m) {
    if (!m) return done(m.error());
    if (proto::messageType(*m) == "progress") {
      auto p = proto::parseProgressEvent(*m, source);
      if (!p) {
        pending_.erase(id);
        return done(p.error());
      }
      if (on_progress) on_progress(*p);
      return;
    }
    auto j = proto::parseJobMessage(*m, source);
    if (!j) {
      pending_.erase(id);
      return done(j.error());
    }
    if (on_job) on_job(j->info);
    if (proto::finished(j->info.state)) {
      pending_.erase(id);
      done(std::move(j->info));
    }
  };
  request(proto::toJson(proto::JobRequest{0, job}, "watch"), Pending{std::move(handler), true, 0});
}

void AgentClient::fetchChunk(const std::string& job, std::uint64_t offset, std::uint64_t length,
                             Done<proto::Chunk> done) {
  request(proto::toJson(proto::FetchRequest{0, job, offset, length}),
          Pending{parsed<proto::Chunk>(std::move(done), proto::parseChunk, "agent " + address_)});
}

}  // namespace shardscope::app::remote
