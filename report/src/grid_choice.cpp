#include "shardscope/report/grid_choice.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

namespace shardscope::report {

int chosenIndex(const planner::SweepResult& sweep, const core::Project& project) {
  if (!project.chosen_group_size) return -1;
  // Ranked order: the first match is the better layout.
  for (std::size_t i = 0; i < sweep.grids.size(); ++i) {
    const planner::Grid& g = sweep.grids[i].grid;
    if (g.group_size == *project.chosen_group_size && (!project.chosen_layout || g.layout == *project.chosen_layout))
      return static_cast<int>(i);
  }
  return -1;
}

bool samePlanningInput(core::Project a, core::Project b) {
  a.chosen_group_size = b.chosen_group_size = std::nullopt;
  a.chosen_layout = b.chosen_layout = std::nullopt;
  return a == b;
}

std::uint64_t peakMemory(const planner::GridResult& grid) {
  std::uint64_t most = 0;
  for (const auto& r : grid.ranks) most = std::max(most, r.memory_bytes);
  return most;
}

std::size_t fittingCount(const planner::SweepResult& sweep) {
  return static_cast<std::size_t>(
      std::count_if(sweep.grids.begin(), sweep.grids.end(), [](const planner::GridResult& g) { return g.fits; }));
}

CalibratedFigures calibratedFigures(const core::Calibration* calibration) {
  CalibratedFigures f;
  if (calibration == nullptr) return f;
  static const std::set<std::string> kEmbedding = {
      "embedding_bandwidth_gbps", "lookup_overhead_ns", "kernel_overhead_us", "backward_scale", "backward_lookup_ns",
      "dim_penalty_narrow",       "dim_penalty_mid",    "cache_bytes",        "cache_miss_ns"};
  static const std::set<std::string> kNetwork = {"intra_node_bandwidth_gbps", "intra_node_latency_us",
                                                 "inter_node_bandwidth_gbps", "inter_node_latency_us"};
  for (const auto& [name, value] : calibration->coefficients) {
    (void)value;
    if (kEmbedding.contains(name)) f.embedding = true;
    if (kNetwork.contains(name)) f.all_to_all = f.replica_sync = f.dense = true;
    if (name == "dense_efficiency") f.dense = true;
  }
  if (!calibration->collectives.empty()) f.all_to_all = f.replica_sync = f.dense = true;
  return f;
}

double slowdownAgainstBest(const planner::SweepResult& sweep, const planner::GridResult& grid) {
  const planner::GridResult* best = sweep.best();
  if (best == nullptr || best->step.step_ms <= 0 || &grid == best) return 1.0;
  return grid.step.step_ms / best->step.step_ms;
}

}  // namespace shardscope::report
