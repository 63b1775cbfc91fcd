// shardscope-agent --config FILE: serves the agent protocol over TLS on a
// cluster's login or GPU node (docs/agent.md). Prints the address it listens
// on and its certificate's fingerprint (clients pin it on first use), then
// serves until SIGTERM or SIGINT, which cancel running jobs (marked
// cancelled, their runs failed) before it exits.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include <QCoreApplication>
#include <QTimer>

#include "agent_server.h"
#include "job_manager.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/engine/local_cluster.h"
#include "tls_identity.h"

namespace {
using namespace shardscope;
volatile std::sig_atomic_t g_stop = 0;

constexpr const char* kUsage = R"(usage: shardscope-agent --config FILE

Serves ShardScope clients (the desktop's Connections, shardscope-cli remote)
over TLS: describe this cluster, run engine jobs through its launcher, stream
their progress and hand out their runs. FILE is a shardscope.agent-config/1
file (docs/agent.md). On first start the agent makes its key and certificate
in <store_dir>/identity and prints the certificate's fingerprint.
)";

int fail(const core::Error& e) {
  std::cerr << "shardscope-agent: " << e.message << "\n";
  return e.kind == core::ErrorKind::Usage || e.kind == core::ErrorKind::InvalidInput ? 2 : 1;
}

core::Result<core::ClusterSpec> agentCluster(const profiler::AgentConfig& config) {
  if (config.cluster) return *config.cluster;
  auto local = profiler::queryLocalCluster();
  if (!local)
    return core::Error{config.source + ": /cluster: none given and this machine's GPUs cannot describe one (" +
                           local.error().message + "); name a preset or a shardscope.cluster/1 file",
                       core::ErrorKind::InvalidInput, config.source, "/cluster"};
  return local->cluster;
}
}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (a.rfind("--config=", 0) == 0) {
      config_path = a.substr(9);
    } else {
      std::cerr << "shardscope-agent: unknown argument " << a << "\n" << kUsage;
      return 2;
    }
  }
  if (config_path.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  QCoreApplication app(argc, argv);
  auto config = profiler::loadAgentConfig(config_path);
  if (!config) return fail(config.error());
  auto token = app::agent::readTokenFile(config->token_file);
  if (!token) return fail(token.error());
  auto cluster = agentCluster(*config);
  if (!cluster) return fail(cluster.error());
  auto identity = app::agent::loadOrCreateIdentity(config->store_dir + "/identity", profiler::hostName());
  if (!identity) return fail(identity.error());
  auto* jobs = new app::agent::JobManager(*config, *cluster, &app);
  auto recovered = jobs->recover();
  if (!recovered) return fail(recovered.error());
  for (const auto& line : *recovered) std::cout << "recovered: " << line << "\n";
  const std::string fingerprint = identity->fingerprint;
  const bool created = identity->created;
  auto* server = new app::agent::AgentServer(*config, std::move(identity).value(), *token,
                                             app::agent::describeAgent(*config, *cluster), jobs, &app);
  if (auto s = server->listen(); !s) return fail(s.error());
  if (created) std::cout << "made a new key and certificate in " << config->store_dir << "/identity\n";
  std::cout << "shardscope-agent listening on " << config->listen_address << ":" << server->port() << "\n"
            << "certificate fingerprint " << fingerprint << "\n"
            << std::flush;
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  QTimer stop_check;
  QObject::connect(&stop_check, &QTimer::timeout, &app, [] {
    if (g_stop != 0) QCoreApplication::quit();
  });
  stop_check.start(100);
  const int rc = QCoreApplication::exec();
  delete server;
  delete jobs;  // cancels running jobs and waits for them
  return rc;
}
