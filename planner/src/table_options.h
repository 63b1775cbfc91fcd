// The ways one table may be sharded inside a group (TorchRec's types and
// geometry), each as a list of pieces with their cost and where each piece
// may go for the plan's target trainer. Shared by the partitioner and the
// lower bound so both reason about the same choices.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/constraints.h"
#include "shardscope/core/plan.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"

namespace shardscope::planner::detail {

// Where a piece may go. slot >= 0: the pieces of one (table, slot) share a
// node group (table_row_wise, a grid column block); position >= 0 fixes the
// rank: rank `position` of that node group, or with no slot the group rank
// itself (TorchRec's row_wise block k on group rank k).
struct Piece {
  std::uint32_t table = 0;
  std::uint64_t row_offset = 0;
  std::uint64_t rows = 0;
  std::uint32_t col_offset = 0;
  std::uint32_t cols = 0;
  int slot = -1;
  int position = -1;
  double load = 0;
  std::uint64_t memory = 0;
};

struct TableOption {
  core::ShardingType type = core::ShardingType::TableWise;
  // Empty for data_parallel, and for row_wise over the whole group, whose one
  // piece per rank is priced for the summary below but built only when the
  // option is used (piecesOf): most row-wise options never are.
  std::vector<Piece> pieces;
  std::uint32_t piece_count = 0;
  double dp_load = 0;           // data_parallel: load added to every rank
  std::uint64_t dp_memory = 0;  // data_parallel: state on every rank
  double total_load = 0;        // summed over the group
  double max_piece = 0;         // largest indivisible load
  double min_piece = 0;
  std::uint64_t max_piece_memory = 0;
};

// The pieces of an option (built on demand for row_wise over the group).
[[nodiscard]] std::vector<Piece> piecesOf(const CostModel& model, const Grid& grid, const GridCosts& gc,
                                          std::uint32_t table, const TableOption& option, core::PlanTarget target);

struct TableChoices {
  std::vector<TableOption> options;   // allowed ones, cheapest total first
  std::vector<std::string> problems;  // constraints that cannot be met, naming the table and why
  std::vector<std::uint32_t> pins;    // valid pinned group ranks (empty: free)
};

// All allowed options of every table. Splitting options (row-wise, table-row-wise,
// grid) cost one piece per rank to price, so they are enumerated only for tables
// whose table-wise piece is heavy (> split_threshold x the mean rank load) or does
// not fit; a split never lowers a table's total load, so the lower bound is unchanged.
[[nodiscard]] std::vector<TableChoices> enumerateAllOptions(const CostModel& model, const Grid& grid,
                                                            const GridCosts& gc, const core::Constraints& constraints,
                                                            core::PlanTarget target, std::uint64_t capacity,
                                                            double split_threshold = 0.25);

// max(sum of each table's cheapest total / M, largest indivisible piece), over
// the options whose pieces fit `capacity` (all options for a table none of whose do).
// *cancel stops it early; the value is then meaningless (the caller drops it).
[[nodiscard]] double lowerBoundOf(const std::vector<TableChoices>& choices, std::uint32_t group_size,
                                  std::uint64_t capacity, const std::atomic<bool>* cancel = nullptr);

}  // namespace shardscope::planner::detail
