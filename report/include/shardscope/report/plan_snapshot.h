// What the Plan page shows, as one immutable value: the grid's result, every
// shard priced (planner::PlanBreakdown), the stacked-bar and heatmap views of
// it and a summary per table. Built off the GUI thread for big plans; the
// hover texts are made from it, so they always describe what is drawn.
// Qt-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/project.h"
#include "shardscope/planner/plan_breakdown.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::report {

// The heaviest tables (by total load) get their own colour in the stacked
// bars and their own row in the placement heatmap; the tables that make the
// slowest rank slow (>= kCriticalShare of its load) are always among them.
inline constexpr std::size_t kStackedTables = 10;
inline constexpr std::size_t kHeatmapTables = 40;
inline constexpr double kCriticalShare = 0.05;
// More ranks than this share heatmap columns (each the largest of its ranks):
// a map drawn narrower than its columns would drop some.
inline constexpr std::uint32_t kHeatmapColumns = 256;

// Where a plan table lives and what it costs, summed over its shards.
struct TableSummary {
  std::uint32_t shards = 0;          // entries priced (a data-parallel table: one copy per rank)
  std::vector<std::uint32_t> ranks;  // group ranks holding it, ascending
  double load_ms = 0;                // over all ranks
  double max_rank_ms = 0;            // on its heaviest rank
  std::uint64_t state_bytes = 0;     // weights + optimizer state, all its shards of one group
};

struct PlanSnapshot {
  std::uint64_t sweep_job = 0;  // id of the sweep job that planned it
  bool chosen = false;          // the project's chosen grid; else the best fitting one (or, none fitting, the fastest)
  planner::GridResult grid;
  planner::PlanBreakdown breakdown;
  planner::RankLoadStack stack;
  planner::PlacementMatrix matrix;
  std::vector<TableSummary> tables;  // per plan table

  [[nodiscard]] std::uint32_t groupSize() const { return grid.grid.group_size; }
  // Index of the plan table named `name`, or -1.
  [[nodiscard]] int tableIndex(const std::string& name) const;
};

// Roughly how many shard prices a snapshot of `grid` takes (data-parallel
// tables count once per rank, and each table's cost-model set-up as 16):
// the page builds small ones inline.
[[nodiscard]] std::size_t snapshotWork(const planner::GridResult& grid);

// Prices `grid` with the cost model `planned_from` was swept with.
[[nodiscard]] PlanSnapshot makePlanSnapshot(planner::GridResult grid, const core::Project& planned_from,
                                            const planner::SweepOptions& options,
                                            const std::atomic<bool>* cancel = nullptr);

// "0–63", "3", "0, 5, 9", "0, 5, 9, … (12 ranks)".
[[nodiscard]] std::string rankSpanText(const std::vector<std::uint32_t>& ranks);
// "rows 0–4,999,999 of 40,000,000, cols 0–127".
[[nodiscard]] std::string shardRangeText(const core::TablePlacement& table, const core::Shard& shard);
// What plan table `table` has on `group_rank`: type, each shard's range and
// fwd/bwd/comm cost, and its share of the rank's load (hover text).
[[nodiscard]] std::string tableOnRankText(const PlanSnapshot& s, std::uint32_t table, std::uint32_t group_rank);
// The replica sync of `group_rank`: its ms, the weights and optimizer state it
// all-reduces across the replicas and how often (hover text).
[[nodiscard]] std::string syncOnRankText(const PlanSnapshot& s, std::uint32_t group_rank);
// The tables of the "other" series on `group_rank`, heaviest first.
[[nodiscard]] std::string otherTablesOnRankText(const PlanSnapshot& s, std::uint32_t group_rank);

}  // namespace shardscope::report
