// A project's grid in a sweep: which grid its choice names, whether an edit
// changes only that choice (no re-planning), and the numbers every view of
// the grids quotes (peak memory per GPU, how many grids fit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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

// Which of a grid's figures a calibration changes: its embedding constants
// change embedding compute; its network constants and measured collectives
// the all-to-all, the replica sync and the dense all-reduce; its dense
// efficiency the dense part. Step time and throughput change with any.
struct CalibratedFigures {
  bool embedding = false;
  bool all_to_all = false;
  bool replica_sync = false;
  bool dense = false;
  [[nodiscard]] bool any() const { return embedding || all_to_all || replica_sync || dense; }
};
[[nodiscard]] CalibratedFigures calibratedFigures(const core::Calibration* calibration);

// How much slower `grid` is than the best fitting grid of `sweep` (step
// time ratio); 1 for the best itself or when nothing fits.
[[nodiscard]] double slowdownAgainstBest(const planner::SweepResult& sweep, const planner::GridResult& grid);

}  // namespace shardscope::report
