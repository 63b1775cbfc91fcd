// How shardscope-agent starts a job's engine through the cluster's own
// launcher (agent_config.h): mpirun or srun with the filled template before
// the engine's words, or sbatch with a batch script in the job's folder that
// runs the step launcher (srun) with the engine; the Slurm job id sbatch
// prints is tracked and a cancel becomes scancel. Nothing a client sent
// reaches these words: the values are integers the agent computed and the
// job folder it made.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/profiler/agent/agent_config.h"
#include "shardscope/profiler/workflow/engine_launch.h"

namespace shardscope::profiler {

// What a launch learns while it runs: Slurm's job id once sbatch printed it.
class SchedulerJob {
 public:
  void set(std::string id) {
    const std::lock_guard lock(mutex_);
    id_ = std::move(id);
  }
  [[nodiscard]] std::string get() const {
    const std::lock_guard lock(mutex_);
    return id_;
  }

 private:
  mutable std::mutex mutex_;
  std::string id_;
};

// The launch of `engine_argv` for a job of `world_size` ranks in `job_dir`
// (absolute, made by the agent). sbatch: writes job_dir/job.sh and follows
// job_dir/engine.out (the engine's stdout; its stderr goes to engine.err);
// `scheduler` receives the job id (feed it sbatch's stdout lines with
// noteSchedulerOutput). Errors: a config without a launcher (Usage), the
// script cannot be written (Io).
[[nodiscard]] core::Result<PreparedLaunch> prepareAgentLaunch(const AgentConfig& config, std::uint32_t world_size,
                                                              std::uint32_t gpus_per_node, const std::string& job_dir,
                                                              const std::vector<std::string>& engine_argv,
                                                              const std::shared_ptr<SchedulerJob>& scheduler);

// sbatch --parsable's answer ("12345" or "12345;cluster") as the job id.
[[nodiscard]] std::optional<std::string> parseSbatchJobId(std::string_view line);
// A word for a POSIX shell script, single-quoted ('it'\''s').
[[nodiscard]] std::string shellQuote(std::string_view word);
// The last `lines` lines of a text file (a batch job's stderr); empty when unreadable.
[[nodiscard]] std::vector<std::string> fileTail(const std::string& path, std::size_t lines);

}  // namespace shardscope::profiler
