// Text and JSON output of planning results, shared by `plan` and `evaluate`.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "shardscope/core/project.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::app::cli {

void printSweep(std::ostream& out, const planner::SweepResult& result, const core::Project& project);
void printGridDetail(std::ostream& out, const planner::GridResult& grid);
[[nodiscard]] nlohmann::ordered_json gridToJson(const planner::GridResult& grid, bool with_plan);
[[nodiscard]] nlohmann::ordered_json sweepToJson(const planner::SweepResult& result, const core::Project& project);

}  // namespace shardscope::app::cli
