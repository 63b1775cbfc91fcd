#include "shardscope/report/grid_choice.h"

#include <algorithm>
#include <optional>

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

}  // namespace shardscope::report
