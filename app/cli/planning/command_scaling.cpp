// shardscope-cli scaling: weak scaling of a model on a cluster kind, 8 to
// 4,096 GPUs: per world size the best grid, its per-GPU throughput and the
// phase whose growth causes each drop (the Grid Explorer's scaling heatmap).
#include <atomic>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "common_options.h"
#include "progress.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/project_inputs.h"
#include "shardscope/core/summary.h"
#include "shardscope/planner/scaling_sweep.h"

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

nlohmann::ordered_json toJson(const std::vector<planner::WeakScalingPoint>& points) {
  auto arr = nlohmann::ordered_json::array();
  for (const auto& p : points) {
    nlohmann::ordered_json j;
    j["world_size"] = p.world_size;
    j["fits"] = p.best != nullptr;
    if (p.best) {
      const planner::ScalingCell& c = *p.best;
      j["group_size"] = c.group_size;
      j["replicas"] = p.world_size / c.group_size;
      j["layout"] = core::toString(c.layout);
      j["step_ms"] = c.step_ms;
      j["embedding_ms"] = c.step.embedding_ms;
      j["all_to_all_ms"] = c.step.all_to_all_ms;
      j["replica_sync_ms"] = c.step.replica_sync_ms;
      j["dense_ms"] = c.step.dense_ms;
      j["dense_allreduce_ms"] = c.step.dense_allreduce_ms;
      j["samples_per_second_per_gpu"] = c.samples_per_second_per_gpu;
      j["efficiency"] = p.efficiency;
    }
    j["drop"] = p.drop;
    if (p.drop) {
      j["cause"] = std::string(planner::toString(p.cause));
      if (p.best) j["cause_ms"] = p.cause_ms;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

void printTable(std::ostream& out, const std::vector<planner::WeakScalingPoint>& points) {
  out << core::formatf("%6s %6s %5s %-10s %9s %8s %8s %8s %8s %8s %13s %5s  %s\n", "N", "M", "R", "layout", "step ms",
                       "emb ms", "a2a ms", "sync ms", "dense ms", "AR ms", "samples/s/GPU", "eff", "drop caused by");
  for (const auto& p : points) {
    if (!p.best) {
      out << core::formatf("%6u %6s %5s %-10s %9s %8s %8s %8s %8s %8s %13s %5s  %s\n", p.world_size, "-", "-", "-", "-",
                           "-", "-", "-", "-", "-", "-", "-", "memory: no grid fits in HBM");
      continue;
    }
    const planner::ScalingCell& c = *p.best;
    const std::string cause =
        p.drop ? std::string(planner::toString(p.cause)) + core::formatf(" (+%.3f ms)", p.cause_ms) : "";
    out << core::formatf("%6u %6u %5u %-10s %9.3f %8.3f %8.3f %8.3f %8.3f %8.3f %13.3g %4.0f%%  %s\n", p.world_size,
                         c.group_size, p.world_size / c.group_size, core::toString(c.layout), c.step_ms,
                         c.step.embedding_ms, c.step.all_to_all_ms, c.step.replica_sync_ms, c.step.dense_ms,
                         c.step.dense_allreduce_ms, c.samples_per_second_per_gpu, p.efficiency * 100.0, cause.c_str());
  }
}
}  // namespace

int runScaling(Args args) {
  if (args.flag("--help")) {
    std::cout << kScalingHelp;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  auto sync_arg = args.option("--sync-interval");
  const core::ProjectSources sources = takeProjectSources(args);
  if (!args.error().empty()) return usageError("scaling: " + args.error());
  if (auto u = args.unknownOption()) return usageError("scaling: unknown option " + *u);
  if (!args.positional().empty()) return usageError("scaling: unexpected argument " + args.positional().front());
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
  if (json) {
    nlohmann::ordered_json j;
    j["model"] = project->model.name;
    j["cluster"] = project->cluster.name;
    j["sync_interval"] = std::max<std::uint32_t>(1, project->sync_interval);
    j["calibration"] = project->calibration ? nlohmann::ordered_json(project->calibration->source) : nullptr;
    j["cancelled"] = result.cancelled;
    j["world_sizes"] = toJson(points);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "Weak scaling of \"" << project->model.name << "\" on " << project->cluster.name << " nodes ("
              << project->cluster.gpus_per_node << " " << project->cluster.gpu.name << " per node), batch "
              << project->model.batch_size_per_gpu << " per GPU, sync every "
              << std::max<std::uint32_t>(1, project->sync_interval) << " step(s), "
              << (project->calibration ? "calibrated: " + project->calibration->source : "default constants") << "\n\n";
    printTable(std::cout, points);
  }
  if (result.cancelled)
    return fail(
        core::Error{"scaling: cancelled; showing " + std::to_string(points.size()) + " world size(s) planned so far",
                    core::ErrorKind::Cancelled});
  return kExitOk;
}

}  // namespace shardscope::app::cli
