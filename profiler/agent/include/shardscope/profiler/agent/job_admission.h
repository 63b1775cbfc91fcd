// What shardscope-agent lets a job ask for and take (docs/agent.md "Jobs and
// their limits"). A spec first passes checkJobRequest (steps, tables and
// jobs within the limits, a mode and device this agent runs), then admitJob.
// A job runs on the agent's own cluster only: the spec's project cluster is
// what the client planned with and is replaced before anything is planned or
// launched; a spec chooses only how many whole nodes
// of it (`nodes`, default all, within limits.max_ranks) and a grid dividing
// that world size, or a plan for it. A job is queued only when the memory its
// engine processes will hold on one machine (estimateJobMemory)
// fits limits.job_memory_bytes and what queued and running jobs leave of
// limits.total_memory_bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/profiler/agent/agent_config.h"
#include "shardscope/profiler/agent/job_memory.h"
#include "shardscope/profiler/agent/job_refusal.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::profiler {

namespace proto = core::protocol;

// What a spec must pass before anything is planned (the agent plans a job
// when it is submitted, on the loop that serves every client): its steps and
// tables within the limits, fewer than limits.max_jobs queued or running
// (`in_flight`), mpi only with a launcher, cuda only with the GPU engine and,
// for an emulate job, a GPU on this machine (`local_gpus`).
[[nodiscard]] std::optional<JobRefusal> checkJobRequest(const proto::JobSpec& spec, const AgentConfig& config,
                                                        std::size_t in_flight, std::size_t local_gpus);

struct Admission {
  proto::JobSpec spec;  // on the agent's cluster (`nodes` of it), with the plan that runs (no grid left)
  JobMemoryEstimate memory;
};

// Checks a spec against the agent's cluster and limits; `reserved_bytes`: the
// estimates of the jobs queued or running now.
[[nodiscard]] std::variant<Admission, JobRefusal> admitJob(const proto::JobSpec& spec, const AgentConfig& config,
                                                           const core::ClusterSpec& cluster,
                                                           std::uint64_t reserved_bytes);

// The profile request of an admitted spec run in `dir`: the engine as a child
// process (emulate too), the config's engine, the job's threads.
[[nodiscard]] ProfileRequest jobProfileRequest(const proto::JobSpec& spec, const std::string& dir,
                                               const AgentConfig& config);

// Every shape a spec may ask for: 1..max nodes (within max_ranks) and, for
// each, the grids (divisors of its world size).
[[nodiscard]] std::vector<proto::JobShape> jobShapes(const core::ClusterSpec& cluster, std::uint32_t max_ranks);

}  // namespace shardscope::profiler
