// The per-rank table of a grid as CSV (one row per group rank, the planner's
// RankResult numbers in plain units) for spreadsheets and scripts. Qt-free.
#pragma once

#include <string>

#include "shardscope/planner/grid_result.h"

namespace shardscope::report {

// Header line, then one line per rank of the sharding group, "\n"-terminated.
// Times in ms (6 decimals), memory in bytes; `critical` is 1 on the rank
// that sets the step time.
[[nodiscard]] std::string perRankCsv(const planner::GridResult& grid);

}  // namespace shardscope::report
