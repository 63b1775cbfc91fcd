// shardscope-agent's configuration (`shardscope.agent-config/1`, docs/agent.md):
// where it listens, the token file clients authenticate with, the folder its
// jobs and their stores live in, the cluster jobs run on, the launcher
// template and the limits. The launcher is a list of words, never a shell
// line: the agent fills its placeholders only with integers it computed and
// a folder it owns, and a client's job spec never adds a word to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/cluster.h"
#include "shardscope/core/result.h"

namespace shardscope::profiler {

inline constexpr const char* kAgentConfigSchema = "shardscope.agent-config/1";

// How the agent starts mpi jobs: not at all (emulate only), through mpirun
// or srun (followed until they exit), or queued with sbatch (the Slurm job id
// tracked; the batch script runs the step launcher with the engine).
enum class LauncherKind { None, Mpirun, Srun, Sbatch };
[[nodiscard]] const char* toString(LauncherKind kind);  // "emulate-only", "mpirun", "srun", "sbatch"

struct AgentLimits {
  std::uint32_t max_ranks = 1024;        // a job's world size
  std::uint32_t max_steps = 10000;       // a job's measured steps
  std::uint32_t max_tables = 2048;       // tables in a job's model (the agent plans it when it is submitted)
  std::uint32_t max_jobs = 64;           // jobs queued or running at once
  std::uint32_t max_running = 1;         // jobs running at once (the rest wait in order)
  std::uint32_t max_connections = 256;   // clients connected at once
  std::uint32_t handshake_seconds = 10;  // TLS + hello must finish within it
  // Connections not yet authenticated, at once; past it the oldest is closed.
  std::uint32_t max_handshakes = 512;
  // Of them, from one address once TLS has begun; past it a new one is refused.
  std::uint32_t max_handshakes_per_address = 64;
  std::uint64_t max_frame_bytes = 8u << 20;
  std::uint64_t max_client_backlog_bytes = 64u << 20;  // unsent bytes to one client before it is dropped as slow

  // What one job may take of the agent's machine (0 where absent until the
  // config is loaded: resolveJobLimits fills them from the machine).
  std::uint64_t job_memory_bytes = 0;    // one job's processes on this machine (default min(8 GiB, total))
  std::uint64_t total_memory_bytes = 0;  // all running jobs together (default 3/4 of physical memory)
  std::uint32_t job_threads = 0;         // kernel threads per job (default hardware threads / max_running)
  std::uint32_t job_seconds = 0;         // wall time per job from its start (default 86400)
  bool operator==(const AgentLimits&) const = default;
};

// The job limits a config left out, from this machine (physical memory and
// hardware threads); given ones are kept.
void resolveJobLimits(AgentLimits& limits);

struct AgentConfig {
  std::string source;  // the config file, for messages
  std::string listen_address = "127.0.0.1";
  std::uint16_t port = 7070;                 // 0: any free port (tests); the agent prints the one it got
  std::string token_file;                    // absolute
  std::string store_dir;                     // absolute; jobs/<id>/ and identity/ live here
  std::optional<core::ClusterSpec> cluster;  // absent: this machine's GPUs
  LauncherKind launcher = LauncherKind::None;
  std::vector<std::string> launcher_argv;      // the template (mpirun, srun, sbatch)
  std::vector<std::string> step_argv{"srun"};  // sbatch: what the batch script starts the engine with
  std::optional<std::string> engine;           // absolute; absent: findEngine
  AgentLimits limits;
};

// Reads a config file; relative paths in it are relative to its folder.
// Errors name the file and the JSON path (/launcher/argv/2: unknown
// placeholder "{cmd}"; expected one of {ranks} {nodes} {gpus_per_node} {job_dir}).
[[nodiscard]] core::Result<AgentConfig> loadAgentConfig(const std::string& path);
// Every key a config may hold, as JSON paths without the leading slash
// ("listen/address", "limits/job_seconds"), in order: what --help lists.
[[nodiscard]] std::vector<std::string> agentConfigKeys();
[[nodiscard]] core::Result<AgentConfig> agentConfigFromJson(const nlohmann::json& j, const std::string& source,
                                                            const std::string& base_dir);

// What a launcher template's placeholders become for one job.
struct LaunchValues {
  std::uint32_t ranks = 0;          // {ranks}: the world size
  std::uint32_t nodes = 0;          // {nodes}: ranks / gpus_per_node, rounded up
  std::uint32_t gpus_per_node = 0;  // {gpus_per_node}
  std::string job_dir;              // {job_dir}: the job's own folder (the agent made it)
};
// The template's words with every placeholder replaced; a word may hold a
// placeholder inside it ("--nodes={nodes}"). Unknown placeholders are refused
// when the config loads (checkLauncherTemplate), so this cannot fail.
[[nodiscard]] std::vector<std::string> fillLauncherTemplate(const std::vector<std::string>& words,
                                                            const LaunchValues& values);
// Every "{...}" in the words must be one of the four placeholders.
[[nodiscard]] core::Status checkLauncherTemplate(const std::vector<std::string>& words, const std::string& source,
                                                 const std::string& path);

}  // namespace shardscope::profiler
