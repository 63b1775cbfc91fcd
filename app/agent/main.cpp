// shardscope-agent --config FILE: serves the agent protocol over TLS on a
// cluster's login or GPU node (docs/agent.md). Prints the address it listens
// on and its certificate's fingerprint (clients pin it on first use), then
// serves until SIGTERM or SIGINT, which cancel running jobs (marked
// cancelled, their runs failed) before it exits. Everything it and its jobs
// write is its user's only (umask 077).
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <QCoreApplication>
#include <QTimer>

#include "agent_log.h"
#include "agent_server.h"
#include "job_manager.h"
#include "shardscope/app/args.h"
#include "shardscope/core/summary.h"
#include "shardscope/core/version.h"
#include "shardscope/profiler/agent/agent_describe.h"
#include "shardscope/profiler/agent/agent_token.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/engine/local_cluster.h"
#include "shardscope/profiler/workflow/engine_launch.h"
#include "tls_identity.h"

namespace {
using namespace shardscope;
volatile std::sig_atomic_t g_stop = 0;

constexpr const char* kUsage = R"(usage: shardscope-agent --config FILE
       shardscope-agent --help | --version

Serves ShardScope clients (the desktop's Connections, shardscope-cli remote)
over TLS: describe this cluster, run engine jobs (each a child process within
the config's limits) on the cluster the config names, stream their progress
and hand out their runs. FILE is a shardscope.agent-config/1 file
(docs/agent.md). On first start the agent makes its key and certificate in
<store_dir>/identity and prints the certificate's fingerprint. It logs one
line per event to stderr. SIGTERM or SIGINT stop it: running jobs are
cancelled first.
)";

constexpr const char* kExitCodes = R"(
exit codes:
  0  stopped by SIGTERM or SIGINT
  1  cannot run: listen, identity, job folder or engine failed (the message says which)
  2  bad command line or config (the message names the file and the JSON path)
)";

// --help: the usage, every config key (from the config reader itself) and the exit codes.
void printHelp() {
  std::cout << kUsage << "\nconfig keys (docs/agent.md has each one's default and range):\n";
  std::size_t column = 1;
  std::cout << ' ';
  for (const std::string& key : profiler::agentConfigKeys()) {
    if (column + key.size() + 1 > 78) {
      std::cout << "\n ";
      column = 1;
    }
    std::cout << ' ' << key;
    column += key.size() + 1;
  }
  std::cout << "\n" << kExitCodes;
}

int fail(const core::Error& e) {
  std::cerr << "shardscope-agent: " << e.message << "\n";
  return e.kind == core::ErrorKind::Usage || e.kind == core::ErrorKind::InvalidInput ? 2 : 1;
}

// The config's cluster (whatever GPUs this machine has), else this machine's GPUs.
core::Result<core::ClusterSpec> agentCluster(const profiler::AgentConfig& config) {
  if (config.cluster) return *config.cluster;
  auto local = profiler::queryLocalCluster();
  if (!local)
    return core::Error{config.source +
                           ": /cluster: the config names no cluster and this machine has no GPUs to describe one (" +
                           local.error().message +
                           "). On a login node, name the cluster jobs run on: a preset or a shardscope.cluster/1 "
                           "file or object",
                       core::ErrorKind::InvalidInput, config.source, "/cluster"};
  return local->cluster;
}

// Whether `program` (a path, or a name looked up in PATH) is an executable file.
bool executable(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// The start's log line: version, cluster and limits.
std::string startLine(const profiler::AgentConfig& c, const core::ClusterSpec& cluster) {
  const auto& l = c.limits;
  return "shardscope-agent " + shardscope::core::versionLine() + " starting: cluster \"" +
         app::agent::logSafe(cluster.name) + "\" (" + std::to_string(cluster.nodes) + " x " +
         std::to_string(cluster.gpus_per_node) + " GPUs" + (c.cluster ? ", from the config" : ", this machine's") +
         "), launcher " + profiler::toString(c.launcher) + "; limits: " + std::to_string(l.max_ranks) + " ranks, " +
         std::to_string(l.max_steps) + " steps, " + std::to_string(l.max_jobs) + " jobs, " +
         std::to_string(l.max_running) + " running, " + core::formatBytes(l.job_memory_bytes) + " per job, " +
         core::formatBytes(l.total_memory_bytes) + " for all jobs, " + std::to_string(l.job_threads) + " threads and " +
         std::to_string(l.job_seconds) + " s per job, " + std::to_string(l.max_connections) + " clients";
}
}  // namespace

int main(int argc, char** argv) {
  shardscope::app::Args args(std::vector<std::string>(argv + 1, argv + argc));
  const bool help = args.flag("--help") || args.flag("-h");
  const bool version = args.flag("--version");
  const std::optional<std::string> config_path = args.option("--config");
  if (auto bad = args.problem()) {
    std::cerr << "shardscope-agent: " << *bad << "\n" << kUsage;
    return shardscope::app::kExitUsage;
  }
  if (help) {
    printHelp();
    return 0;
  }
  if (version) {
    std::cout << "shardscope-agent " << shardscope::core::versionLine() << "\n";
    return 0;
  }
  if (!config_path || config_path->empty()) {
    std::cerr << kUsage;
    return shardscope::app::kExitUsage;
  }
  ::umask(077);  // job folders 0700, their files 0600 (the engine's store too: children inherit it)
  QCoreApplication app(argc, argv);
  auto config = profiler::loadAgentConfig(*config_path);
  if (!config) return fail(config.error());
  auto token = profiler::readTokenFile(config->token_file);
  if (!token)
    return fail(core::Error{config->source + ": /token_file: " + token.error().message, token.error().kind,
                            config->source, "/token_file"});
  // Every job starts the engine: a missing one is the operator's to fix now, not each job's failure later.
  if (const std::string engine = profiler::findEngine(config->engine); !executable(engine))
    return fail(core::Error{config->source + ": " + (config->engine ? "/engine: " : "") + "the engine " + engine +
                                " is not an executable file" +
                                (config->engine ? "" : " (none next to the agent or on PATH; name it in \"engine\")"),
                            core::ErrorKind::Io, config->source, config->engine ? "/engine" : ""});
  auto cluster = agentCluster(*config);
  if (!cluster) return fail(cluster.error());
  auto identity = app::agent::loadOrCreateIdentity(config->store_dir + "/identity", profiler::hostName());
  if (!identity) return fail(identity.error());
  app::agent::logLine(startLine(*config, *cluster));
  auto* jobs = new app::agent::JobManager(*config, *cluster, &app);
  auto recovered = jobs->recover();
  if (!recovered) return fail(recovered.error());
  for (const auto& line : *recovered) app::agent::logLine("recovered: " + line);
  const std::string fingerprint = identity->fingerprint;
  const bool created = identity->created;
  core::protocol::Description description = profiler::describeAgent(*config, *cluster);
  auto* server =
      new app::agent::AgentServer(*config, std::move(identity).value(), *token, std::move(description), jobs, &app);
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
  app::agent::logLine(std::string("stopping: ") + (g_stop != 0 ? "a signal asked to" : "the event loop ended") +
                      "; cancelling " + std::to_string(jobs->running()) + " running jobs");
  delete server;
  delete jobs;  // cancels running jobs and waits for them
  app::agent::logLine("stopped");
  return rc;
}
