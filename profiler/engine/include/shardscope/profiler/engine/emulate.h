// Emulate mode: run a plan's embedding work in one process, no MPI. Each
// measured rank runs after the other with its real shards (capped to a memory
// budget), real ids from the workload generator and the CPU kernels; its
// per-step times go into a trace-store run (kind emulate) like a distributed
// run's, minus the collectives. How it works: docs/engine.md#emulate-mode.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/workload.h"
#include "shardscope/profiler/trace/engine_run_config.h"

namespace shardscope::profiler {

// Called after every (rank, step), warm-up steps included; `what` reads like
// "rank 4 (group 0, group rank 1): step 3 of 5".
using EmulateProgress = std::function<void(std::uint64_t done, std::uint64_t total, std::string_view what)>;

// One rank's step as it finished (warm-up steps have step -1), for live views.
struct RankStepTime {
  std::uint32_t rank = 0;  // global rank
  std::int64_t step = -1;  // measured step, -1 for a warm-up step
  double step_ms = 0;      // the whole step: inputs, forward, backward
};
using EmulateStepFn = std::function<void(const RankStepTime&)>;

struct EmulateOptions {
  std::uint32_t steps = 5;   // measured steps per rank, at least 1
  std::uint32_t warmup = 1;  // run first, not recorded
  std::uint64_t seed = 1;    // ids and initial weights
  unsigned threads = 0;      // kernel threads; 0: every hardware thread
  // Weights + optimizer state + per-step buffers of one rank; 0: 60% of MemAvailable.
  std::uint64_t memory_budget_bytes = 0;
  bool trace_spans = true;  // off: only step summaries and table stats are written
  bool all_groups = false;  // measure every sharding group's ranks; default: group 0's only
  Pooling pooling = Pooling::Sum;
  AdagradConfig adagrad;
  const IdTrace* replay = nullptr;  // replay recorded ids instead of generating them; must outlive the call
  std::string label;                // default "emulate <model> M=<M> R=<R>"
  EmulateProgress progress;
  EmulateStepFn on_step;                             // called after every (rank, step), on the calling thread
  std::function<void(core::store::RunId)> on_run;    // once the run is begun in the store (before the first step)
  const std::atomic<bool>* cancel = nullptr;         // checked before every step
  std::optional<std::uint32_t> batch_size_override;  // samples per GPU; default the model's batch_size_per_gpu
};

struct EmulateTableResult {
  std::string table;
  double mean_ms = 0;  // forward + backward per measured step, over the rank's shards of the table
  double lookups_per_step = 0;
  double unique_rows_per_step = 0;  // rows the backward pass updated
};

struct EmulateRankResult {
  std::uint32_t rank = 0;        // global rank
  std::uint32_t group = 0;       // sharding group
  std::uint32_t group_rank = 0;  // rank inside it
  double fwd_ms = 0;             // means per measured step
  double bwd_ms = 0;
  double step_ms = 0;                      // the whole step: input generation and routing, forward, backward
  std::uint64_t state_bytes = 0;           // weights + optimizer state allocated (after capping)
  std::vector<EmulateTableResult> tables;  // in plan order
};

struct EmulateResult {
  core::store::RunId run{};
  bool cancelled = false;  // the run is in the store, failed with "cancelled"
  unsigned threads = 0;
  std::uint64_t memory_budget_bytes = 0;  // the budget used (after resolving 0)
  std::vector<EmulateRankResult> ranks;   // measured ranks, in the order they ran
  std::vector<CappedShard> capped;        // once per (group rank, shard)
};

// What runEmulate allocates for one group rank (the same in every sharding
// group) before any cap: its shards' weights and optimizer state, and the
// upper bound on its per-step buffers the budget reserves first. The ranks
// run one after another, each freeing its shards before the next allocates,
// so a run's peak is its largest rank's.
struct EmulateRankMemory {
  std::uint32_t group_rank = 0;
  std::size_t shards = 0;
  std::uint64_t state_bytes = 0;    // weights + row-wise AdaGrad momentum of every row (no cap)
  std::uint64_t scratch_bytes = 0;  // per-step buffers (ids, bags, forward output, gradient, backward workspace)
};
// Errors: a plan table the model lacks or whose shape differs (as shardsOfRank).
[[nodiscard]] core::Result<std::vector<EmulateRankMemory>> emulateRankMemory(const core::ModelSpec& model,
                                                                             const core::ShardPlan& plan,
                                                                             std::uint32_t batch_size);

// 60% of /proc/meminfo's MemAvailable, or 1 GiB when that cannot be read.
[[nodiscard]] std::uint64_t autoMemoryBudgetBytes();

// Runs the plan's measured ranks one after another and writes one run into
// the store at `store` (created when missing). Errors in the inputs come back
// before a run is begun; a failure once it has begun (out of memory, a store
// error) marks the run failed with the reason and returns the error; a
// cancel marks it failed ("cancelled") and returns a result with cancelled set.
[[nodiscard]] core::Result<EmulateResult> runEmulate(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                                     const core::ShardPlan& plan, const EmulateOptions& options,
                                                     const std::filesystem::path& store);

}  // namespace shardscope::profiler
