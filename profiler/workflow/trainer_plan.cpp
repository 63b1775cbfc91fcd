#include "shardscope/profiler/workflow/trainer_plan.h"

#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/torchrec_plan.h"
#include "shardscope/core/units.h"
#include "shardscope/planner/cost_model.h"

namespace shardscope::profiler {

namespace {
core::Error usageError(std::string message) { return core::Error{std::move(message), core::ErrorKind::Usage}; }
}  // namespace

core::Result<LoadedPlan> loadPlanFile(const std::string& path, const core::ModelSpec& model,
                                      std::uint32_t gpus_per_node, const TorchRecPlacement& placement) {
  auto j = core::readJsonFile(path);
  if (!j) return j.error();
  LoadedPlan out;
  out.from_torchrec = core::looksLikeTorchRecPlan(*j);
  if (!out.from_torchrec) {
    if (placement.world_size || placement.layout)
      return usageError("--world-size/--layout apply to TorchRec plans only");
    auto p = core::planFromJson(*j, path);
    if (!p) return p.error();
    out.plan = std::move(p).value();
    return out;
  }
  core::TorchRecImportOptions o;
  o.model = &model;
  o.gpus_per_node = gpus_per_node;
  o.world_size = placement.default_world_size;
  if (placement.world_size) {
    const auto w = core::parseWholeNumber(*placement.world_size, 1, core::kMaxWorldSize);
    if (!w) return usageError("--world-size must be a positive integer, got " + *placement.world_size);
    o.world_size = static_cast<std::uint32_t>(*w);
  }
  if (placement.layout) {
    auto l = core::rankLayoutFromString(*placement.layout);
    if (!l) return usageError("--layout must be strided or contiguous, got " + *placement.layout);
    o.layout = *l;
  }
  auto p = core::shardPlanFromTorchRec(*j, path, o);
  if (!p) return p.error();
  out.plan = std::move(p).value();
  return out;
}

core::Result<core::ClusterSpec> clusterForPlan(const core::ClusterSpec& cluster, const core::ShardPlan& plan,
                                               bool cluster_given) {
  if (cluster.worldSize() == plan.world_size) return cluster;
  if (cluster_given)
    return core::Error{"the plan is for " + std::to_string(plan.world_size) + " GPUs but cluster " + cluster.name +
                       " has " + std::to_string(cluster.worldSize())};
  core::ClusterSpec resized = core::resizedCluster(cluster, plan.world_size, plan.gpus_per_node);
  resized.name = resized.gpu.name + " x " + std::to_string(plan.world_size) + " (resized to the plan)";
  return resized;
}

planner::PlanComparison evaluatePlan(const core::Project& project, const core::ClusterSpec& cluster,
                                     const core::ShardPlan& plan, bool balance_compute) {
  const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
  planner::CostConstants k = planner::CostConstants::from(cluster, cal);
  k.balance_replica_sync = !balance_compute;
  const planner::CostModel cost(project.model, cluster, k);
  return planner::compareWithOptimized(cost, plan, project.constraints);
}

core::Result<RunInputs> planFileInputs(const std::string& plan_path, core::ModelSpec model,
                                       const core::ClusterSpec& cluster, bool cluster_given,
                                       const TorchRecPlacement& placement) {
  RunInputs in;
  in.model = std::move(model);
  auto loaded = loadPlanFile(plan_path, *in.model, cluster.gpus_per_node, placement);
  if (!loaded) return loaded.error();
  in.plan = std::move(loaded->plan);
  auto fitted = clusterForPlan(cluster, *in.plan, cluster_given);
  if (!fitted) return core::Error{plan_path + ": " + fitted.error().message, fitted.error().kind, plan_path};
  in.cluster = std::move(fitted).value();
  return in;
}

core::Result<RunInputs> loadTrainerPlan(const TrainerPlanSpec& spec, std::uint32_t ranks) {
  if (!spec.plan) return usageError("--model/--cluster/--world-size/--layout describe a plan: give --plan too");
  if (!spec.model) return usageError("--plan needs --model: the model the trainer ran (a preset or a file)");
  auto model = core::loadModelByNameOrFile(*spec.model);
  if (!model) return model.error();
  core::ClusterSpec cluster = core::defaultProject().cluster;
  if (spec.cluster) {
    auto c = core::loadClusterByNameOrFile(*spec.cluster);
    if (!c) return c.error();
    cluster = std::move(c).value();
  }
  const TorchRecPlacement placement{spec.world_size, spec.layout, spec.cluster ? cluster.worldSize() : ranks};
  return planFileInputs(*spec.plan, std::move(model).value(), cluster, spec.cluster.has_value(), placement);
}

core::Result<std::optional<RunInputs>> trainerPlanForRun(const TrainerPlanSpec& spec,
                                                         const core::store::TraceStore& store, core::store::RunId run) {
  if (!spec.any()) return std::optional<RunInputs>{};
  auto ranks = store.ranks(run);
  auto in = loadTrainerPlan(spec, ranks ? static_cast<std::uint32_t>(ranks->size()) : 0u);
  if (!in) return in.error();
  return std::optional<RunInputs>(std::move(in).value());
}

}  // namespace shardscope::profiler
