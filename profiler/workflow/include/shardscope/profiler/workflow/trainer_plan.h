// The plan a trainer runs, as a file: a shardscope.plan/1 or TorchRec's
// ShardingPlan._serialize() JSON (one sharding group's ranks, placed on the
// world by a world size and rank layout), the cluster it runs on, and its
// price next to the optimized plan for the same grid (`evaluate`). Imported
// traces carry no plan; `import`, `report` and `calibrate` take one with the
// model and cluster it is for (docs/import.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/project.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/plan_comparison.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::profiler {

// Where a TorchRec plan's sharding group lies on the world, as the user typed
// it (checked only for a TorchRec plan; a usage error for a shardscope plan).
struct TorchRecPlacement {
  std::optional<std::string> world_size;  // N = M x R, a positive whole number
  std::optional<std::string> layout;      // strided | contiguous (default strided)
  std::uint32_t default_world_size = 0;   // without world_size; 0: M (R = 1)
};

struct LoadedPlan {
  core::ShardPlan plan;
  bool from_torchrec = false;  // the file was a TorchRec plan
};

// Reads `path` as a TorchRec plan when it looks like one (its tables' shapes
// from `model`), else as a shardscope.plan/1. Errors name the file and field;
// a malformed placement is a Usage error.
[[nodiscard]] core::Result<LoadedPlan> loadPlanFile(const std::string& path, const core::ModelSpec& model,
                                                    std::uint32_t gpus_per_node, const TorchRecPlacement& placement);

// The cluster `plan` runs on: `cluster` when it has the plan's world size;
// otherwise an error when the user chose it (`cluster_given`: "the plan is for
// N GPUs but cluster C has K"), else its GPU kind resized to the plan, named
// "<GPU> x N (resized to the plan)".
[[nodiscard]] core::Result<core::ClusterSpec> clusterForPlan(const core::ClusterSpec& cluster,
                                                             const core::ShardPlan& plan, bool cluster_given);

// Prices `plan` on `cluster` with the project's model, calibration and
// constraints, next to the optimized plan for the same grid and target;
// `balance_compute` balances compute and all-to-all only (the sync priced, not balanced).
[[nodiscard]] planner::PlanComparison evaluatePlan(const core::Project& project, const core::ClusterSpec& cluster,
                                                   const core::ShardPlan& plan, bool balance_compute);

// --plan P --model M [--cluster C] [--world-size N] [--layout L], as given.
struct TrainerPlanSpec {
  std::optional<std::string> plan, model, cluster, world_size, layout;
  [[nodiscard]] bool any() const { return plan || model || cluster || world_size || layout; }
};

// Loads the trainer's model, cluster (default: the built-in cluster's GPU,
// resized to the plan) and plan. `ranks`: the number of ranks of the trace,
// a TorchRec plan's world size when none is given. A spec that is incomplete
// or malformed is a Usage error; files that do not load are InvalidInput.
[[nodiscard]] core::Result<RunInputs> loadTrainerPlan(const TrainerPlanSpec& spec, std::uint32_t ranks);

// The inputs of a plan file `plan_path` for `model` on `cluster` (resized to
// the plan's world size unless `cluster_given`): what loadTrainerPlan does
// once the model and cluster are loaded, and what the desktop does with its
// project's.
[[nodiscard]] core::Result<RunInputs> planFileInputs(const std::string& plan_path, core::ModelSpec model,
                                                     const core::ClusterSpec& cluster, bool cluster_given,
                                                     const TorchRecPlacement& placement);

// What `report` and `calibrate` do with a spec: nothing when it is empty,
// else loadTrainerPlan with the run's rank count.
[[nodiscard]] core::Result<std::optional<RunInputs>> trainerPlanForRun(const TrainerPlanSpec& spec,
                                                                       const core::store::TraceStore& store,
                                                                       core::store::RunId run);

}  // namespace shardscope::profiler
