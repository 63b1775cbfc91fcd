#include "shardscope/core/plan_file.h"

#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/torchrec_plan.h"
#include "shardscope/core/units.h"

namespace shardscope::core {

namespace {
Error usageError(std::string message) { return Error{std::move(message), ErrorKind::Usage}; }
}  // namespace

Result<LoadedPlan> loadPlanFile(const std::string& path, const ModelSpec& model, std::uint32_t gpus_per_node,
                                const TorchRecPlacement& placement) {
  auto j = readJsonFile(path);
  if (!j) return j.error();
  LoadedPlan out;
  out.from_torchrec = looksLikeTorchRecPlan(*j);
  if (!out.from_torchrec) {
    if (placement.world_size || placement.layout)
      return usageError("--world-size/--layout apply to TorchRec plans only");
    auto p = planFromJson(*j, path);
    if (!p) return p.error();
    out.plan = std::move(p).value();
    return out;
  }
  TorchRecImportOptions o;
  o.model = &model;
  o.gpus_per_node = gpus_per_node;
  o.world_size = placement.default_world_size;
  if (placement.world_size) {
    const auto w = parseWholeNumber(*placement.world_size, 1, kMaxWorldSize);
    if (!w) return usageError("--world-size must be a positive integer, got " + *placement.world_size);
    o.world_size = static_cast<std::uint32_t>(*w);
  }
  if (placement.layout) {
    auto l = rankLayoutFromString(*placement.layout);
    if (!l) return usageError("--layout must be strided or contiguous, got " + *placement.layout);
    o.layout = *l;
  }
  auto p = shardPlanFromTorchRec(*j, path, o);
  if (!p) return p.error();
  out.plan = std::move(p).value();
  return out;
}

Result<ClusterSpec> clusterForPlan(const ClusterSpec& cluster, const ShardPlan& plan, bool cluster_given) {
  if (cluster.worldSize() == plan.world_size) return cluster;
  if (cluster_given)
    return Error{"the plan is for " + std::to_string(plan.world_size) + " GPUs but cluster " + cluster.name + " has " +
                 std::to_string(cluster.worldSize())};
  ClusterSpec resized = resizedCluster(cluster, plan.world_size, plan.gpus_per_node);
  resized.name = resized.gpu.name + " x " + std::to_string(plan.world_size) + " (resized to the plan)";
  return resized;
}

Result<PlanFileInputs> planFileInputs(const std::string& plan_path, ModelSpec model, const ClusterSpec& cluster,
                                      bool cluster_given, const TorchRecPlacement& placement) {
  auto loaded = loadPlanFile(plan_path, model, cluster.gpus_per_node, placement);
  if (!loaded) return loaded.error();
  auto fitted = clusterForPlan(cluster, loaded->plan, cluster_given);
  if (!fitted) return Error{plan_path + ": " + fitted.error().message, fitted.error().kind, plan_path};
  return PlanFileInputs{std::move(model), std::move(fitted).value(), std::move(loaded->plan)};
}

Result<PlanFileInputs> loadTrainerPlan(const TrainerPlanSpec& spec, std::uint32_t ranks) {
  if (!spec.plan) return usageError("--model/--cluster/--world-size/--layout describe a plan: give --plan too");
  if (!spec.model) return usageError("--plan needs --model: the model the trainer ran (a preset or a file)");
  auto model = loadModelByNameOrFile(*spec.model);
  if (!model) return model.error();
  ClusterSpec cluster = defaultProject().cluster;
  if (spec.cluster) {
    auto c = loadClusterByNameOrFile(*spec.cluster);
    if (!c) return c.error();
    cluster = std::move(c).value();
  }
  const TorchRecPlacement placement{spec.world_size, spec.layout, spec.cluster ? cluster.worldSize() : ranks};
  return planFileInputs(*spec.plan, std::move(model).value(), cluster, spec.cluster.has_value(), placement);
}

}  // namespace shardscope::core
