// shardscope-cli evaluate --plan P: price a plan someone runs today (ours or
// TorchRec's serialized ShardingPlan) under the cost model, next to what the
// optimizing partitioner finds for the same grid.
#include <iostream>

#include "cli.h"
#include "common_options.h"
#include "shardscope/core/plan_file.h"
#include "shardscope/core/project_inputs.h"
#include "shardscope/core/summary.h"
#include "shardscope/planner/plan_comparison.h"
#include "shardscope/report/sweep_output.h"

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
  const core::ProjectSources sources = takeProjectSources(args);
  const bool model_given = sources.project || sources.model;
  const bool cluster_given = sources.project || sources.cluster;
  if (auto bad = args.problem()) return usageError("evaluate: " + *bad);
  if (!plan_arg) return usageError("evaluate needs --plan FILE");
  if (!model_given)
    return usageError(
        "evaluate needs the model the plan is for: --model PRESET|FILE or --project FILE "
        "(its access skew and pooling price every shard; nothing is assumed)");
  auto project = core::resolveProject(sources);
  if (!project) return fail(project.error());
  auto loaded = core::loadPlanFile(*plan_arg, project->model, project->cluster.gpus_per_node,
                                   core::TorchRecPlacement{world_arg, layout_arg, 0});
  if (!loaded) return fail(loaded.error(), "evaluate: ");
  const core::ShardPlan& plan = loaded->plan;
  if (auto match = core::planMatchesModel(plan, project->model, *plan_arg); !match) return fail(match.error());
  auto cluster = core::clusterForPlan(project->cluster, plan, cluster_given);
  if (!cluster) return fail(core::Error{"evaluate: " + cluster.error().message, cluster.error().kind});
  const planner::PlanComparison compared = planner::evaluatePlan(*project, *cluster, plan, balance_compute);
  const planner::GridResult& theirs = compared.given;
  const planner::GridResult& ours = compared.optimized;
  if (json) {
    nlohmann::ordered_json out;
    out["plan"] = *plan_arg;
    out["evaluated"] = report::gridToJson(theirs, false);
    out["optimized_same_grid"] = report::gridToJson(ours, false);
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "Evaluating " << *plan_arg << " (for " << core::toString(plan.target) << ") against model \""
            << project->model.name << "\" (" << project->model.tables.size() << " tables) on " << cluster->name << "\n";
  if (!plan.model.empty() && plan.model != project->model.name && !loaded->from_torchrec)
    std::cout << "note: the plan names model \"" << plan.model << "\"\n";
  report::printGridDetail(std::cout, theirs);
  std::cout << "\nOptimized plan for the same grid: "
            << core::formatf("step %.3f ms vs %.3f ms given; slowest rank load %.3f ms vs %.3f ms", ours.step.step_ms,
                             theirs.step.step_ms, ours.max_load_ms, theirs.max_load_ms);
  if (theirs.step.step_ms > 0) std::cout << core::formatf(" (step %+.1f%%)", (compared.stepRatio() - 1.0) * 100.0);
  std::cout << "\n";
  if (!theirs.unpriced_tables.empty())
    std::cout << "note: the given plan lacks tables of the model, so its figures leave their cost out\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
