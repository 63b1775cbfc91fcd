// shardscope-cli plan: sweep every grid (M, layout) of a cluster for a model,
// print them ranked, then the per-rank picture of the chosen grid.
#include <atomic>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <unistd.h>

#include "cli.h"
#include "common_options.h"
#include "progress.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/project_inputs.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/report/sweep_output.h"

namespace shardscope::app::cli {

namespace {
std::atomic<bool> g_cancel{false};

constexpr const char* kPlanHelp = R"(usage: shardscope-cli plan [--project F] [--model M] [--cluster C] [--grid M]
                          [--layout strided|contiguous] [--algorithm NAME] [--calibration F]
                          [--constraints F] [--sync-interval K] [--balance-compute]
                          [--target torchrec|shardscope] [--out plan.json] [--json]

Sweeps every sharding group size M dividing N (R = N/M replicas) in both rank
layouts, shards the tables inside the group, and ranks the grids by predicted
step time. Prints the ranked grids and a per-rank table for the best grid
(or the one --grid/--layout selects); --out writes its shardscope.plan/1.
Without --project/--model/--cluster: the built-in default project.

--target says which trainer runs the plan: torchrec (the default, or the
project's) writes only layouts TorchRec runs exactly as priced (row blocks in
rank order, table_row_wise and grid blocks in order on one node group);
shardscope also lets ShardScope's engine run row blocks on any rank.

By default each rank's load counts its share of the replica weight sync, so
the partitioner balances the step time (with one replica this is the load
alone); --balance-compute balances embedding compute + all-to-all only and
prices the sync without balancing it.

algorithms: optimized (default), random, round_robin, dim_greedy, size_greedy,
            lookup_greedy, size_lookup_greedy, torchrec_greedy
Ctrl-C cancels (exit 130) and prints the grids planned so far.
)";
}  // namespace

int runPlan(Args args) {
  if (args.flag("--help")) {
    std::cout << kPlanHelp;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  const bool balance_compute = args.flag("--balance-compute");
  auto grid_arg = args.option("--grid");
  auto layout_arg = args.option("--layout");
  auto algo_arg = args.option("--algorithm");
  auto sync_arg = args.option("--sync-interval");
  auto target_arg = args.option("--target");
  auto out_arg = args.option("--out");
  const core::ProjectSources sources = takeProjectSources(args);
  if (auto bad = args.problem()) return usageError("plan: " + *bad);
  // From here on Ctrl-C cancels (also while a large model loads: the sweep then stops at once).
  const CancelOnSignals on_signals(g_cancel);
  auto project = core::resolveProject(sources);
  if (!project) return fail(project.error());
  planner::SweepOptions options;
  options.balance_replica_sync = !balance_compute;
  options.sync_interval = std::max<std::uint32_t>(1, project->sync_interval);  // the project's, unless --sync-interval
  options.planner.target = project->target;                                    // the project's, unless --target
  if (target_arg) {
    auto t = core::planTargetFromString(*target_arg);
    if (!t) return usageError("plan: --target must be torchrec or shardscope, got " + *target_arg);
    options.planner.target = *t;
  }
  if (grid_arg) {
    const auto m = parsePositive(*grid_arg, project->cluster.worldSize());
    if (!m || project->cluster.worldSize() % *m != 0)
      return usageError("plan: --grid must be a divisor of N = " + std::to_string(project->cluster.worldSize()) +
                        ", got " + *grid_arg);
    options.only_group_size = static_cast<std::uint32_t>(*m);
  }
  if (layout_arg) {
    auto l = core::rankLayoutFromString(*layout_arg);
    if (!l) return usageError("plan: --layout must be strided or contiguous, got " + *layout_arg);
    options.only_layout = *l;
  }
  if (algo_arg) {
    auto a = planner::algorithmFromString(*algo_arg);
    if (!a) return usageError("plan: unknown --algorithm " + *algo_arg);
    options.planner.algorithm = *a;
  }
  if (sync_arg) {
    const auto k = parsePositive(*sync_arg, core::kMaxSyncInterval);
    if (!k) return usageError("plan: --sync-interval must be a positive integer, got " + *sync_arg);
    options.sync_interval = static_cast<std::uint32_t>(*k);
  }

  const bool tty = isatty(STDERR_FILENO);
  auto progress = [&](std::size_t done, std::size_t total) {
    if (tty) std::fprintf(stderr, "\rplanning grid %zu/%zu ", done, total);
    return true;
  };
  const core::Calibration* cal = project->calibration ? &*project->calibration : nullptr;
  const planner::SweepResult result =
      planner::sweep(project->model, project->cluster, cal, project->constraints, options, progress, &g_cancel);
  if (tty) std::fprintf(stderr, "\r%40s\r", "");
  if (result.grids.empty())
    return fail(core::Error{"plan: cancelled before any grid was planned", core::ErrorKind::Cancelled});
  const planner::GridResult& chosen = result.grids.front();
  if (json) {
    std::cout << report::sweepToJson(result, *project).dump(2) << "\n";
  } else {
    report::printSweep(std::cout, result, *project);
    report::printGridDetail(std::cout, chosen);
  }
  if (out_arg && result.cancelled) {
    std::cerr << "plan: cancelled, " << *out_arg << " not written\n";
  } else if (const std::string why = planner::unpricedReason(chosen); out_arg && !why.empty()) {
    return fail(core::Error{"plan: " + why + "; " + *out_arg + " not written"});
  } else if (out_arg) {
    if (auto s = core::writeJsonFile(*out_arg, core::toJson(chosen.plan)); !s) return fail(s.error());
    if (!json) std::cout << "\nplan written to " << *out_arg << "\n";
  }
  if (result.cancelled)
    return fail(
        core::Error{"plan: cancelled; showing " + std::to_string(result.grids.size()) + " grid(s) planned so far",
                    core::ErrorKind::Cancelled});
  return kExitOk;
}

}  // namespace shardscope::app::cli
