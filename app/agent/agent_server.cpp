#include "agent_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include <QSslConfiguration>

#include "agent_connection.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::app::agent {

namespace {
constexpr std::size_t kMinTokenBytes = 16;
constexpr auto kForgetFailuresAfter = std::chrono::minutes(10);

core::Error usage(std::string message) { return core::Error{std::move(message), core::ErrorKind::Usage}; }
}  // namespace

core::Result<std::string> readTokenFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return usage("token file " + path +
                 " does not exist: write a random token into it, e.g. `head -c 32 "
                 "/dev/urandom | base64 > " +
                 path + " && chmod 600 " + path + "`");
  if (st.st_uid != ::geteuid())
    return usage("token file " + path + " belongs to another user: it must be the agent user's own");
  if ((st.st_mode & 077) != 0) return usage("token file " + path + " is readable by other users: chmod 600 " + path);
  std::ifstream in(path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  if (token.size() < kMinTokenBytes)
    return usage("token file " + path + " holds a token of " + std::to_string(token.size()) +
                 " bytes on its first line; use at least " + std::to_string(kMinTokenBytes));
  if (token.size() > proto::kMaxTokenBytes)
    return usage("token file " + path + ": the token is longer than " + std::to_string(proto::kMaxTokenBytes) +
                 " bytes");
  return token;
}

proto::Description describeAgent(const profiler::AgentConfig& config, const core::ClusterSpec& cluster) {
  proto::Description d;
  proto::HostInfo host;
  host.name = profiler::hostName();
  host.cpus = std::max(1u, std::thread::hardware_concurrency());
  host.memory_bytes = profiler::availableMemoryBytes();
  if (auto gpus = profiler::queryGpuDevices()) {
    for (std::size_t i = 0; i < gpus->size(); ++i)
      host.gpus.push_back(
          proto::GpuInfo{static_cast<std::uint32_t>(i), (*gpus)[i].name, (*gpus)[i].total_memory_bytes});
  }
  d.hosts.push_back(std::move(host));
  d.agent = "shardscope-agent " SHARDSCOPE_VERSION " on " + d.hosts.front().name;
  d.engine_version = SHARDSCOPE_VERSION;
  d.gpu_engine = profiler::gpuEngineBuilt();
  const auto versions = profiler::gpuStackVersions();
  d.cuda_version = versions.cuda_runtime.empty()
                       ? ""
                       : versions.cuda_runtime +
                             (versions.cuda_driver.empty() ? " (no driver)" : " (driver " + versions.cuda_driver + ")");
  d.nccl_version = versions.nccl;
  d.launcher = profiler::toString(config.launcher);
  d.modes = {"emulate"};
  if (config.launcher != profiler::LauncherKind::None) d.modes.emplace_back("mpi");
  d.cluster = cluster;
  d.max_ranks = config.limits.max_ranks;
  d.max_steps = config.limits.max_steps;
  d.max_jobs = config.limits.max_jobs;
  return d;
}

AgentServer::AgentServer(profiler::AgentConfig config, TlsIdentity identity, std::string token,
                         proto::Description description, JobManager* jobs, QObject* parent)
    : QObject(parent),
      config_(std::move(config)),
      identity_(std::move(identity)),
      token_(std::move(token)),
      description_(std::move(description)),
      jobs_(jobs) {
  QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
  tls.setLocalCertificate(identity_.certificate);
  tls.setPrivateKey(identity_.key);
  tls.setProtocol(QSsl::TlsV1_2OrLater);
  tls.setPeerVerifyMode(QSslSocket::VerifyNone);  // clients prove themselves with the token
  server_.setSslConfiguration(tls);
  server_.setHandshakeTimeout(static_cast<int>(config_.limits.handshake_seconds) * 1000);
  server_.setMaxPendingConnections(256);
  connect(&server_, &QTcpServer::pendingConnectionAvailable, this, &AgentServer::accept);
}

core::Status AgentServer::listen() {
  QHostAddress address;
  if (!address.setAddress(QString::fromStdString(config_.listen_address)))
    return core::Error{config_.source + ": /listen/address: \"" + config_.listen_address + "\" is not an IP address",
                       core::ErrorKind::InvalidInput, config_.source, "/listen/address"};
  if (!server_.listen(address, config_.port))
    return core::Error{"cannot listen on " + config_.listen_address + ":" + std::to_string(config_.port) + ": " +
                           server_.errorString().toStdString(),
                       core::ErrorKind::Io};
  return core::Ok{};
}

void AgentServer::accept() {
  while (server_.hasPendingConnections()) {
    auto* socket = qobject_cast<QSslSocket*>(server_.nextPendingConnection());
    if (socket == nullptr) continue;
    if (connections_ >= config_.limits.max_connections) {
      const auto frame = proto::encodeFrame(
          proto::toJson(proto::ErrorMessage{0, proto::ErrorCode::LimitExceeded,
                                            "this agent serves " + std::to_string(config_.limits.max_connections) +
                                                " clients at once (limits.max_connections); try again later",
                                            ""}));
      if (frame) socket->write(frame->data(), static_cast<qint64>(frame->size()));
      socket->disconnectFromHost();
      connect(socket, &QAbstractSocket::disconnected, socket, &QObject::deleteLater);
      continue;
    }
    ++connections_;
    auto* c = new AgentConnection(socket, this);
    connect(c, &QObject::destroyed, this, [this] { --connections_; });
  }
}

bool AgentServer::tokenMatches(const std::string& token) const {
  // Every byte of the longer one is looked at, whatever the first difference.
  const std::size_t n = std::max(token.size(), token_.size());
  unsigned diff = token.size() == token_.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<unsigned char>(i < token.size() ? token[i] : 0);
    const auto b = static_cast<unsigned char>(i < token_.size() ? token_[i] : 0);
    diff |= static_cast<unsigned>(a ^ b);
  }
  return diff == 0;
}

std::chrono::milliseconds AgentServer::authFailed(const QHostAddress& peer) {
  const auto now = std::chrono::steady_clock::now();
  Failures& f = failures_[peer.toString()];
  if (now - f.last > kForgetFailuresAfter) f.count = 0;
  f.count = std::min(f.count + 1, 16);
  f.last = now;
  return std::chrono::milliseconds(std::min<long long>(250LL << (f.count - 1), 8000));
}

void AgentServer::authSucceeded(const QHostAddress& peer) { failures_.erase(peer.toString()); }

}  // namespace shardscope::app::agent
