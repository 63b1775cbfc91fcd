// Where a grid's load comes from: every shard of a GridResult priced again
// with the cost model it was planned with, as (table, group rank) entries;
// per-table and per-rank totals; and the two views the Plan page draws from
// them (per-rank loads of the heaviest tables stacked, a tables x ranks
// matrix). Qt-free: the desktop computes it off the GUI thread, tests check
// that it adds up to the GridResult's rank loads.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::planner {

// One shard's cost on the group rank that holds it. A data-parallel table
// has one entry per rank (its copy there).
struct ShardLoad {
  static constexpr std::uint32_t kNoShard = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t table = 0;         // index into GridResult::plan.tables
  std::uint32_t shard = kNoShard;  // index into that table's shards; kNoShard: a data-parallel copy not listed
  std::uint32_t group_rank = 0;
  ShardCost cost;
};

struct PlanBreakdown {
  std::uint32_t group_size = 0;
  std::vector<ShardLoad> entries;         // by group rank, then in plan table order
  std::vector<std::size_t> rank_offsets;  // group_size + 1: rank r's entries are [rank_offsets[r], rank_offsets[r+1])
  std::vector<double> rank_load_ms;       // per group rank: the sum of its entries' load() (= RankResult::load_ms)
  std::vector<double> table_load_ms;      // per plan table, summed over the group's ranks
  std::vector<std::uint32_t> tables_by_load;  // plan table indices, heaviest first (ties: plan order)
  std::vector<std::string> problems;  // plan tables the model does not have (not priced, as in evaluatePlacement)
  bool cancelled = false;

  [[nodiscard]] std::span<const ShardLoad> onRank(std::uint32_t group_rank) const;
  // Load of one plan table on one rank (0 when it has nothing there).
  [[nodiscard]] double loadOf(std::uint32_t table, std::uint32_t group_rank) const;
};

// Prices every shard of `result` with `model` (the one it was planned with:
// see sweepCostModel). *cancel stops it early (the result is then marked cancelled).
[[nodiscard]] PlanBreakdown breakdownOf(const CostModel& model, const GridResult& result,
                                        const std::atomic<bool>* cancel = nullptr);

// The tables a view of `top` tables shows: the heaviest by total load, with
// the tables of `always` among them (e.g. the ones that make the slowest rank
// slow, whose total may be small); heaviest first.
[[nodiscard]] std::vector<std::uint32_t> shownTables(const PlanBreakdown& breakdown, std::size_t top,
                                                     std::span<const std::uint32_t> always = {});

// Per-rank load of some tables, one series each, and of all the others as one
// last series: what the stacked bars draw.
struct RankLoadStack {
  std::vector<std::uint32_t> tables;         // plan table indices of the first series
  std::vector<std::vector<double>> load_ms;  // [series][group rank]; tables.size() + 1 series, the last is "other"
  std::size_t other_tables = 0;              // how many tables the last series sums
  // [group rank]: the replica sync of the rank's shards, its own segment (not
  // in load_ms): a rank slow for its sync is not slow for its tables' lookups.
  std::vector<double> sync_ms;
};

[[nodiscard]] RankLoadStack rankLoadStack(const PlanBreakdown& breakdown, std::vector<std::uint32_t> tables);

// Load of some tables on each rank: what the placement heatmap draws. Rows
// are the tables; columns are group ranks, or with many ranks runs of
// `ranks_per_column` consecutive ranks holding the largest of their loads (so
// a table on one rank of 4,096 still shows). NaN where a table has nothing.
struct PlacementMatrix {
  std::vector<std::uint32_t> tables;  // rows
  std::uint32_t ranks = 0;            // group ranks 0..ranks-1
  std::uint32_t ranks_per_column = 1;
  std::uint32_t columns = 0;    // ceil(ranks / ranks_per_column)
  std::vector<double> load_ms;  // row-major rows x columns
  double max_load_ms = 0;       // largest cell
  double min_load_ms = 0;       // smallest positive cell (0 when none)

  [[nodiscard]] double at(std::size_t row, std::uint32_t column) const { return load_ms[row * columns + column]; }
  [[nodiscard]] std::uint32_t columnOf(std::uint32_t group_rank) const { return group_rank / ranks_per_column; }
  [[nodiscard]] std::uint32_t firstRank(std::uint32_t column) const { return column * ranks_per_column; }
  [[nodiscard]] std::uint32_t lastRank(std::uint32_t column) const;
};

// At most `max_columns` columns (0: one per rank).
[[nodiscard]] PlacementMatrix placementMatrix(const PlanBreakdown& breakdown, std::vector<std::uint32_t> tables,
                                              std::uint32_t max_columns = 0);

}  // namespace shardscope::planner
