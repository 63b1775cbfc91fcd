// How the Grid Explorer's scaling heatmap words weak scaling: the short label
// over a world size whose throughput per GPU dropped (the phase that grew
// most, or memory where no grid fits), its full wording, and a cell's step
// by phase. The reading itself is planner::ScalingResult::weakScaling.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/planner/scaling_sweep.h"

namespace shardscope::report {

// A label narrow enough for a heatmap column: "emb", "a2a", "sync", "dense", "memory".
[[nodiscard]] std::string_view stepPhaseLabel(planner::StepPhase phase);

// The label over world size points[index]: its cause where throughput per GPU
// dropped, "memory" where no grid fits, else "".
[[nodiscard]] std::string weakScalingLabel(const planner::WeakScalingPoint& point);

// What the label says in full, e.g. "N = 128: 12% less throughput per GPU
// than at N = 64; replica sync grew most (+1.23 ms per step)", "N = 8: no
// grid fits in HBM (memory)", or for a column without a drop its best grid
// and efficiency. "" when index is out of range.
[[nodiscard]] std::string weakScalingDescription(const std::vector<planner::WeakScalingPoint>& points,
                                                 std::size_t index);

// A heatmap cell's hover text, one fact per line: N, M, R and layout, the
// step by phase, throughput per GPU and its share of the best cell
// (best_per_gpu; 0: not shown).
[[nodiscard]] std::string scalingCellDescription(const planner::ScalingCell& cell, double best_per_gpu);

}  // namespace shardscope::report
