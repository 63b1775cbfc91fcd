// Text and JSON output of planning results, shared by `plan` and `evaluate`.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "shardscope/core/project.h"
#include "shardscope/core/result.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::app::cli {

using core::Result;

void printSweep(std::ostream& out, const planner::SweepResult& result, const core::Project& project);
void printGridDetail(std::ostream& out, const planner::GridResult& grid);
[[nodiscard]] nlohmann::ordered_json gridToJson(const planner::GridResult& grid, bool with_plan);
[[nodiscard]] nlohmann::ordered_json sweepToJson(const planner::SweepResult& result, const core::Project& project);

// --project/--model/--cluster/--calibration/--constraints, applied to the default project.
class Args;
Result<core::Project> projectFromArgs(Args& args);

}  // namespace shardscope::app::cli
