// shardscope-cli scaling: weak scaling of a model on a cluster kind, 8 to
// 4,096 GPUs: per world size the best grid, its per-GPU throughput and the
// phase whose growth causes each drop (the Grid Explorer's scaling heatmap).
#include <atomic>
#include <cstdio>
#include <iostream>
#include <unistd.h>

#include "cli.h"
#include "common_options.h"
#include "progress.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/project_inputs.h"
#include "shardscope/planner/scaling_sweep.h"
#include "shardscope/report/scaling_output.h"

namespace shardscope::app::cli {

namespace {
std::atomic<bool> g_cancel{false};

constexpr const char* kScalingHelp = R"(usage: shardscope-cli scaling [--project F] [--model M] [--cluster C]
                             [--calibration F] [--constraints F] [--sync-interval K] [--json]

Weak scaling (the batch per GPU fixed): plans the model on 8, 16, ..., 4,096
GPUs of the cluster's kind, in whole nodes of its shape (nodes of 72 GPUs:
72, 144, ...), with the calibration and constraints as `plan` takes them,
and prints, per world size,
the best grid that fits, its step time by phase, the predicted throughput per
GPU, its efficiency against the best world size, and where throughput per
GPU drops by 5 % or more, the phase whose time grew most (or "memory" when no
grid fits). "dense ms" is the dense compute plus the exposed part of the
dense all-reduce; "AR ms" the whole all-reduce, most of it hidden behind the
embedding backward. The Grid Explorer's scaling heatmap shows the same.
Ctrl-C cancels (exit 130) and prints the world sizes planned so far.
)";

}  // namespace

int runScaling(Args args) {
  if (args.flag("--help")) {
    std::cout << kScalingHelp;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  auto sync_arg = args.option("--sync-interval");
  const core::ProjectSources sources = takeProjectSources(args);
  if (auto bad = args.problem()) return usageError("scaling: " + *bad);
  auto project = core::resolveProject(sources);
  if (!project) return fail(project.error());
  if (sync_arg) {
    const auto k = parsePositive(*sync_arg, core::kMaxSyncInterval);
    if (!k) return usageError("scaling: --sync-interval must be a positive integer, got " + *sync_arg);
    project->sync_interval = static_cast<std::uint32_t>(*k);
  }
  const CancelOnSignals on_signals(g_cancel);
  const bool tty = isatty(STDERR_FILENO);
  auto progress = [&](int done, int total) {
    if (tty) std::fprintf(stderr, "\rplanning world size %d/%d ", done, total);
  };
  const planner::ScalingResult result = planner::runScalingSweep(*project, &g_cancel, progress);
  if (tty) std::fprintf(stderr, "\r%40s\r", "");
  if (!result.error.empty()) return fail(core::Error{"scaling: " + result.error});
  const std::vector<planner::WeakScalingPoint> points = result.weakScaling();
  if (points.empty())
    return fail(core::Error{"scaling: cancelled before any world size was planned", core::ErrorKind::Cancelled});
  if (json)
    std::cout << report::weakScalingToJson(points, *project, result.cancelled).dump(2) << "\n";
  else
    report::printWeakScaling(std::cout, points, *project);
  if (result.cancelled)
    return fail(
        core::Error{"scaling: cancelled; showing " + std::to_string(points.size()) + " world size(s) planned so far",
                    core::ErrorKind::Cancelled});
  return kExitOk;
}

}  // namespace shardscope::app::cli
