// Weak scaling as text and JSON: per world size the best grid, its step by
// phase, throughput per GPU, efficiency and the cause of each drop (what
// `shardscope-cli scaling` prints; docs/cli.md). The Grid Explorer's heatmap
// words the same reading with weak_scaling_text.h.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/project.h"
#include "shardscope/planner/scaling_sweep.h"

namespace shardscope::report {

// The heading (model, cluster kind, batch, sync interval, calibration) and the table.
void printWeakScaling(std::ostream& out, const std::vector<planner::WeakScalingPoint>& points,
                      const core::Project& project);
// {model, cluster, sync_interval, calibration, cancelled, world_sizes: [...]}.
[[nodiscard]] nlohmann::ordered_json weakScalingToJson(const std::vector<planner::WeakScalingPoint>& points,
                                                       const core::Project& project, bool cancelled);

}  // namespace shardscope::report
