#include "shardscope/profiler/agent/agent_describe.h"

#include <algorithm>
#include <thread>

#include "shardscope/core/version.h"
#include "shardscope/profiler/agent/job_admission.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::profiler {

namespace proto = core::protocol;

proto::Description describeAgent(const AgentConfig& config, const core::ClusterSpec& cluster) {
  proto::Description d;
  proto::HostInfo host;
  host.name = hostName();
  host.cpus = std::max(1u, std::thread::hardware_concurrency());
  host.memory_bytes = availableMemoryBytes();
  if (auto gpus = queryGpuDevices()) {
    for (std::size_t i = 0; i < gpus->size(); ++i)
      host.gpus.push_back(
          proto::GpuInfo{static_cast<std::uint32_t>(i), (*gpus)[i].name, (*gpus)[i].total_memory_bytes});
  }
  d.hosts.push_back(std::move(host));
  const std::string version = core::versionString();
  d.agent = "shardscope-agent " + version + " on " + d.hosts.front().name;
  d.engine_version = version;
  d.gpu_engine = gpuEngineBuilt();
  const auto versions = gpuStackVersions();
  d.cuda_version = versions.cuda_runtime.empty()
                       ? ""
                       : versions.cuda_runtime +
                             (versions.cuda_driver.empty() ? " (no driver)" : " (driver " + versions.cuda_driver + ")");
  d.nccl_version = versions.nccl;
  d.launcher = toString(config.launcher);
  d.modes = {"emulate"};
  if (config.launcher != LauncherKind::None) d.modes.emplace_back("mpi");
  d.cluster = cluster;
  const AgentLimits& l = config.limits;
  d.max_ranks = l.max_ranks;
  d.max_steps = l.max_steps;
  d.max_jobs = l.max_jobs;
  d.shapes = jobShapes(cluster, l.max_ranks);
  d.job_limits = {l.job_memory_bytes, l.total_memory_bytes, l.job_threads, l.job_seconds};
  return d;
}

}  // namespace shardscope::profiler
