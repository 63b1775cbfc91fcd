// shardscope-cli evaluate --plan P: price a plan someone runs today (ours or
// TorchRec's serialized ShardingPlan) under the cost model, next to what the
// optimizing partitioner finds for the same grid.
#include <algorithm>
#include <iostream>

#include "cli.h"
#include "plan_output.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/summary.h"
#include "shardscope/core/torchrec_plan.h"
#include "shardscope/planner/plan_comparison.h"

namespace shardscope::app::cli {

namespace {
constexpr const char* kEvaluateHelp = R"(usage: shardscope-cli evaluate --plan P (--model M | --project F) [--cluster C]
                              [--world-size N] [--layout strided|contiguous] [--calibration F]
                              [--constraints F] [--balance-compute] [--json]

Prices a shard plan under ShardScope's cost model: a shardscope.plan/1 file, or a
TorchRec ShardingPlan._serialize() JSON (group-local ranks; --world-size N and
--layout say how the sharding group is replicated, default N = M, strided).
The model the plan is for is required (--model, a preset name or a file, or the
project's): it supplies the access skew and pooling every cost depends on, and
its tables must have the plan's rows and dims. The cluster defaults to the
default GPU kind resized to the plan's world size. Prints the plan's per-rank
costs and, for comparison, the optimized plan for the same grid and target
(--balance-compute: balanced on compute + all-to-all, the sync left out).
A plan TorchRec would not run as written (a TorchRec plan, or one whose target
is torchrec) is refused with the rule it breaks.
)";
}  // namespace

int runEvaluate(Args args) {
  if (args.flag("--help")) {
    std::cout << kEvaluateHelp;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  const bool balance_compute = args.flag("--balance-compute");
  auto plan_arg = args.option("--plan");
  auto world_arg = args.option("--world-size");
  auto layout_arg = args.option("--layout");
  bool cluster_given = false, model_given = false;
  for (const auto& a : args.positional()) {
    const bool project = a == "--project" || a.starts_with("--project=");
    if (a == "--cluster" || a.starts_with("--cluster=") || project) cluster_given = true;
    if (a == "--model" || a.starts_with("--model=") || project) model_given = true;
  }
  auto project = projectFromArgs(args);
  if (!args.error().empty()) return usageError("evaluate: " + args.error());
  if (auto u = args.unknownOption()) return usageError("evaluate: unknown option " + *u);
  if (!args.positional().empty()) return usageError("evaluate: unexpected argument " + args.positional().front());
  if (!plan_arg) return usageError("evaluate needs --plan FILE");
  if (!model_given)
    return usageError(
        "evaluate needs the model the plan is for: --model PRESET|FILE or --project FILE "
        "(its access skew and pooling price every shard; nothing is assumed)");
  if (!project) {
    std::cerr << project.error().message << "\n";
    return kExitInvalid;
  }
  auto j = core::readJsonFile(*plan_arg);
  if (!j) {
    std::cerr << j.error().message << "\n";
    return kExitInvalid;
  }
  core::Result<core::ShardPlan> plan = core::Error{""};
  if (core::looksLikeTorchRecPlan(*j)) {
    core::TorchRecImportOptions o;
    o.model = &project->model;
    o.gpus_per_node = project->cluster.gpus_per_node;
    if (world_arg) {
      const auto w = parsePositive(*world_arg, 1u << 24);
      if (!w) return usageError("evaluate: --world-size must be a positive integer, got " + *world_arg);
      o.world_size = static_cast<std::uint32_t>(*w);
    }
    if (layout_arg) {
      auto l = core::rankLayoutFromString(*layout_arg);
      if (!l) return usageError("evaluate: --layout must be strided or contiguous, got " + *layout_arg);
      o.layout = *l;
    }
    plan = core::shardPlanFromTorchRec(*j, *plan_arg, o);
  } else {
    if (world_arg || layout_arg) return usageError("evaluate: --world-size/--layout apply to TorchRec plans only");
    plan = core::planFromJson(*j, *plan_arg);
  }
  if (!plan) {
    std::cerr << plan.error().message << "\n";
    return kExitInvalid;
  }
  if (auto match = core::planMatchesModel(*plan, project->model, *plan_arg); !match) {
    std::cerr << match.error().message << "\n";
    return kExitInvalid;
  }
  core::ClusterSpec cluster = project->cluster;
  if (cluster.worldSize() != plan->world_size) {
    if (cluster_given) {
      std::cerr << "evaluate: the plan is for " << plan->world_size << " GPUs but cluster " << cluster.name << " has "
                << cluster.worldSize() << "\n";
      return kExitInvalid;
    }
    cluster = core::resizedCluster(cluster, plan->world_size, plan->gpus_per_node);
    cluster.name = cluster.gpu.name + " x " + std::to_string(plan->world_size) + " (resized to the plan)";
  }
  const core::Calibration* cal = project->calibration ? &*project->calibration : nullptr;
  planner::CostConstants k = planner::CostConstants::from(cluster, cal);
  k.balance_replica_sync = !balance_compute;
  const planner::CostModel cost(project->model, cluster, k);
  const planner::PlanComparison compared = planner::compareWithOptimized(cost, *plan, project->constraints);
  const planner::GridResult& theirs = compared.given;
  const planner::GridResult& ours = compared.optimized;
  if (json) {
    nlohmann::ordered_json out;
    out["plan"] = *plan_arg;
    out["evaluated"] = gridToJson(theirs, false);
    out["optimized_same_grid"] = gridToJson(ours, false);
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "Evaluating " << *plan_arg << " (for " << core::toString(plan->target) << ") against model \""
            << project->model.name << "\" (" << project->model.tables.size() << " tables) on " << cluster.name << "\n";
  if (!plan->model.empty() && plan->model != project->model.name && !core::looksLikeTorchRecPlan(*j))
    std::cout << "note: the plan names model \"" << plan->model << "\"\n";
  printGridDetail(std::cout, theirs);
  std::cout << "\nOptimized plan for the same grid: "
            << core::formatf("step %.3f ms vs %.3f ms given; slowest rank load %.3f ms vs %.3f ms", ours.step.step_ms,
                             theirs.step.step_ms, ours.max_load_ms, theirs.max_load_ms);
  if (theirs.step.step_ms > 0)
    std::cout << core::formatf(" (step %+.1f%%)", (ours.step.step_ms / theirs.step.step_ms - 1.0) * 100.0);
  std::cout << "\n";
  if (theirs.problems.size() > 0 &&
      std::any_of(theirs.problems.begin(), theirs.problems.end(),
                  [](const std::string& p) { return p.find("is not in the plan") != std::string::npos; }))
    std::cout << "note: the given plan lacks tables of the model, so its figures leave their cost out\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
