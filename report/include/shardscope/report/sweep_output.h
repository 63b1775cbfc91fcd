// A sweep and a grid as text and JSON: the ranked table of grids, one grid's
// per-rank detail, and their JSON (what `shardscope-cli plan` and `evaluate`
// print; docs/cli.md).
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "shardscope/core/project.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::report {

void printSweep(std::ostream& out, const planner::SweepResult& result, const core::Project& project);
void printGridDetail(std::ostream& out, const planner::GridResult& grid);
[[nodiscard]] nlohmann::ordered_json gridToJson(const planner::GridResult& grid, bool with_plan);
[[nodiscard]] nlohmann::ordered_json sweepToJson(const planner::SweepResult& result, const core::Project& project);

}  // namespace shardscope::report
