// A project's grid in a sweep: which grid its choice names, whether an edit
// changes only that choice (no re-planning), and the numbers every view of
// the grids quotes (peak memory per GPU, how many grids fit).
#pragma once

#include <cstddef>
#include <cstdint>

#include "shardscope/core/project.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::report {

// The grid the project's choice names in `sweep` (M, and the layout when one
// was chosen, else the better-ranked layout); -1 when there is no choice or
// it is not in the sweep.
[[nodiscard]] int chosenIndex(const planner::SweepResult& sweep, const core::Project& project);

// Whether two projects plan the same (they differ at most in the chosen grid).
[[nodiscard]] bool samePlanningInput(core::Project a, core::Project b);

// The most memory any rank of the grid needs (bytes).
[[nodiscard]] std::uint64_t peakMemory(const planner::GridResult& grid);
// How many grids of the sweep fit in memory.
[[nodiscard]] std::size_t fittingCount(const planner::SweepResult& sweep);

}  // namespace shardscope::report
