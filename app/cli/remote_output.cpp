// shardscope-cli remote's text (remote_output.h).
#include "remote_output.h"

#include <iostream>

#include "shardscope/core/summary.h"

namespace shardscope::app::cli {

namespace proto = core::protocol;

std::string jobLine(const proto::JobInfo& j) {
  std::string line = j.job + "  " + std::string(proto::toString(j.state)) + "  " + j.mode + " x" +
                     std::to_string(j.world_size) + "  \"" + j.label + "\"";
  if (j.progress.total > 0 && !proto::finished(j.state))
    line += "  " + j.progress.stage + " " + std::to_string(j.progress.done) + "/" + std::to_string(j.progress.total);
  if (j.run > 0) line += "  run " + std::to_string(j.run);
  if (!j.scheduler_job.empty()) line += "  slurm " + j.scheduler_job;
  if (!j.error.empty()) line += "  (" + j.error + ")";
  return line;
}

void printDescription(const proto::Description& d, bool json) {
  if (json) {
    std::cout << proto::toJson(d).dump(2) << "\n";
    return;
  }
  std::cout << d.agent << "\n  engine " << d.engine_version << (d.gpu_engine ? " (CUDA, NCCL, CUPTI)" : " (CPU only)")
            << "; CUDA " << (d.cuda_version.empty() ? "none" : d.cuda_version) << "; NCCL "
            << (d.nccl_version.empty() ? "none" : d.nccl_version) << "\n  launcher " << d.launcher << "; modes";
  for (const auto& m : d.modes) std::cout << " " << m;
  std::cout << "\n  cluster " << d.cluster.name << ": " << d.cluster.nodes << " x " << d.cluster.gpus_per_node
            << " GPUs\n  limits: " << d.max_ranks << " ranks, " << d.max_steps << " steps, " << d.max_jobs
            << " jobs at once";
  const proto::JobLimits& l = d.job_limits;
  if (l.job_memory_bytes > 0)
    std::cout << "; per job " << core::formatBytes(l.job_memory_bytes) << ", " << l.job_threads << " threads, "
              << l.job_seconds << " s; " << core::formatBytes(l.total_memory_bytes) << " for all jobs";
  std::cout << "\n";
  // What a submit may ask for: whole nodes of the cluster and, on them, a grid.
  for (const auto& shape : d.shapes) {
    std::cout << "  jobs on " << shape.nodes << (shape.nodes == 1 ? " node" : " nodes") << " (--nodes " << shape.nodes
              << ", N = " << shape.world_size << "): --grid";
    for (const auto m : shape.grids) std::cout << " " << m;
    std::cout << "\n";
  }
  for (const auto& h : d.hosts) {
    std::cout << "  host " << h.name << ": " << h.cpus << " CPUs, " << h.memory_bytes / (1u << 20) << " MiB available, "
              << h.gpus.size() << " GPUs\n";
    for (const auto& g : h.gpus)
      std::cout << "    gpu " << g.index << ": " << g.name << ", " << g.memory_bytes / (1u << 20) << " MiB\n";
  }
}

}  // namespace shardscope::app::cli
