// The plan a trainer runs, as a file: a shardscope.plan/1 or TorchRec's
// ShardingPlan._serialize() JSON (one sharding group's ranks, placed on the
// world by a world size and rank layout), and the cluster it runs on. What
// `evaluate` reads before it prices the plan (planner::evaluatePlan), and
// what `import`, `report` and `calibrate` take with the model and cluster it
// is for (docs/import.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

// Where a TorchRec plan's sharding group lies on the world, as the user typed
// it (checked only for a TorchRec plan; a usage error for a shardscope plan).
struct TorchRecPlacement {
  std::optional<std::string> world_size;  // N = M x R, a positive whole number
  std::optional<std::string> layout;      // strided | contiguous (default strided)
  std::uint32_t default_world_size = 0;   // without world_size; 0: M (R = 1)
};

struct LoadedPlan {
  ShardPlan plan;
  bool from_torchrec = false;  // the file was a TorchRec plan
};

// Reads `path` as a TorchRec plan when it looks like one (its tables' shapes
// from `model`), else as a shardscope.plan/1. Errors name the file and field;
// a malformed placement is a Usage error.
[[nodiscard]] Result<LoadedPlan> loadPlanFile(const std::string& path, const ModelSpec& model,
                                              std::uint32_t gpus_per_node, const TorchRecPlacement& placement);

// The cluster `plan` runs on: `cluster` when it has the plan's world size;
// otherwise an error when the user chose it (`cluster_given`: "the plan is for
// N GPUs but cluster C has K"), else its GPU kind resized to the plan, named
// "<GPU> x N (resized to the plan)".
[[nodiscard]] Result<ClusterSpec> clusterForPlan(const ClusterSpec& cluster, const ShardPlan& plan, bool cluster_given);

// A plan file with the model it is for and the cluster it runs on.
struct PlanFileInputs {
  ModelSpec model;
  ClusterSpec cluster;
  ShardPlan plan;
};

// The inputs of a plan file `plan_path` for `model` on `cluster` (resized to
// the plan's world size unless `cluster_given`): what loadTrainerPlan does
// once the model and cluster are loaded, and what the desktop does with its
// project's.
[[nodiscard]] Result<PlanFileInputs> planFileInputs(const std::string& plan_path, ModelSpec model,
                                                    const ClusterSpec& cluster, bool cluster_given,
                                                    const TorchRecPlacement& placement);

// --plan P --model M [--cluster C] [--world-size N] [--layout L], as given.
struct TrainerPlanSpec {
  std::optional<std::string> plan, model, cluster, world_size, layout;
  [[nodiscard]] bool any() const { return plan || model || cluster || world_size || layout; }
};

// Loads the trainer's model, cluster (default: the built-in cluster's GPU,
// resized to the plan) and plan. `ranks`: the number of ranks of the trace,
// a TorchRec plan's world size when none is given. A spec that is incomplete
// or malformed is a Usage error; files that do not load are InvalidInput.
[[nodiscard]] Result<PlanFileInputs> loadTrainerPlan(const TrainerPlanSpec& spec, std::uint32_t ranks);

}  // namespace shardscope::core
