// shardscope-engine --emulate: every measured rank of a plan in this one
// process, one after another (emulate mode, docs/engine.md), no MPI. What a
// program that starts the engine as a child (shardscope-agent) runs, so a
// job's tables live in the child's memory, not the caller's.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

namespace shardscope::app::engine {

struct EmulateModeArgs {
  std::string model, cluster, plan, store, label;  // model and cluster: preset names or files
  std::string device = "cpu";                      // "cuda": this machine's GPUs, one thread per rank
  std::uint32_t steps = 10, warmup = 1, batch = 0, sync_interval = 1;
  std::uint64_t seed = 1, memory_budget_bytes = 0;
  unsigned threads = 0;
  bool progress = false, tracing = true, cupti = true, all_groups = false;
};

// Runs it and prints `run <id>` once the run is begun and, with progress,
// `progress <done> <total> <what>` after every (rank, step). Returns the exit
// code (0 complete, 1 invalid input, 3 failure, 130 cancelled); errors go to
// `err`.
[[nodiscard]] int runEmulateMode(const EmulateModeArgs& args, const std::atomic<bool>& cancel, std::ostream& out,
                                 std::ostream& err);

}  // namespace shardscope::app::engine
