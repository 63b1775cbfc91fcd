// What a profile's engine processes will hold in host memory on one machine,
// predicted from its model and plan before anything runs: what
// shardscope-agent checks a job against (limits.job_memory_bytes and what is
// left of limits.total_memory_bytes) before it queues it. docs/agent.md
// "Jobs and their limits" explains every term.
#pragma once

#include <cstdint>
#include <string>

#include "shardscope/core/result.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::profiler {

// A process's own memory besides its tables: code, libraries, the store's
// writer, thread stacks (shardscope-engine --emulate of a small model holds
// about 12 MiB resident).
inline constexpr std::uint64_t kEngineProcessBytes = std::uint64_t{32} << 20;
// A GPU process's host memory besides that: the CUDA context, NCCL and the
// staging of inputs and traces. Its tables live in GPU memory.
inline constexpr std::uint64_t kGpuProcessHostBytes = std::uint64_t{768} << 20;
// A launcher (mpirun and its daemons) on the machine.
inline constexpr std::uint64_t kLauncherBytes = std::uint64_t{64} << 20;

struct JobMemoryEstimate {
  std::uint64_t bytes = 0;          // the total: the most the job's processes hold at once on one machine
  std::uint64_t state_bytes = 0;    // of it: embedding weights and row-wise AdaGrad momentum (no cap)
  std::uint64_t buffer_bytes = 0;   // per-step buffers (ids, bags, outputs, gradients, backward workspace)
  std::uint64_t trace_bytes = 0;    // spans a rank keeps until it is written
  std::uint64_t process_bytes = 0;  // the processes themselves (and the launcher's)
  std::uint32_t processes = 0;      // engine processes on that machine
  std::string where;                // "its largest rank (group rank 1)", "node 0 (8 ranks)"
};

// Emulate: one process that runs the measured ranks one after another, each
// freeing its shards before the next allocates, so the largest rank's state
// and buffers (CPU) or only the process (GPU: the tables are in GPU memory).
// Mpi: the ranks of the busiest node (gpus_per_node consecutive ranks) with a
// process each, rank 0 also holding a peer's trace while it writes the run.
// Errors: a plan table the model lacks or whose shape differs.
[[nodiscard]] core::Result<JobMemoryEstimate> estimateJobMemory(const ProfileRequest& request);

// "49.1 GiB: 49.0 GiB of embedding state, 12.3 MiB of step buffers, ..." for messages.
[[nodiscard]] std::string describeEstimate(const JobMemoryEstimate& e);

}  // namespace shardscope::profiler
