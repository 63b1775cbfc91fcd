// What one rank of a plan holds and the lookups each of its shards serves:
// the shards of a group rank, their physical row counts under a memory
// budget, and the routing of a group's global ids to a shard's local rows.
// Shared by the emulate mode and the distributed engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/workload.h"

namespace shardscope::profiler {

// One shard held by a rank.
struct RankShard {
  std::size_t table = 0;      // index into ModelSpec::tables
  std::size_t placement = 0;  // index into ShardPlan::tables
  core::ShardingType type = core::ShardingType::TableWise;
  core::Shard shard;
  std::uint64_t physical_rows = 0;  // == shard.rows unless capped by the memory budget
  [[nodiscard]] bool capped() const { return physical_rows < shard.rows; }
  [[nodiscard]] bool dataParallel() const { return type == core::ShardingType::DataParallel; }
};

// The shards of group rank `group_rank` (every sharding group holds the same
// ones), in plan order; tables matched to the model by name. Errors name the
// plan table that the model lacks or whose rows/dim differ.
[[nodiscard]] core::Result<std::vector<RankShard>> shardsOfRank(const core::ModelSpec& model,
                                                                const core::ShardPlan& plan, std::uint32_t group_rank);

// Caps physical rows so that weights + optimizer state of `shards` fit in
// `budget_bytes` (0 = no cap): shards that fit keep all rows, the largest are
// cut to a common row count (water-filling). Also caps at 2^32 - 1 rows.
void applyMemoryBudget(std::vector<RankShard>& shards, const core::ModelSpec& model, std::uint64_t budget_bytes);

// Gives every group rank's copy of a data-parallel table the fewest physical
// rows any copy got from its budget (applyMemoryBudget caps each rank on its
// own), so that the group's all-reduce of their gradients has one size and
// the copies stay equal. `group_shards`: per group rank, its shards.
void equalizeDataParallelRows(std::vector<std::vector<RankShard>>& group_shards);

// Bytes of weights + optimizer state of `shard`'s physical rows, as the
// budget counts them: cols x (4 for fp32 tables, 2 for every narrower dtype,
// which runs as fp16) + 4 B of AdaGrad momentum per row.
[[nodiscard]] std::uint64_t shardStateBytes(const RankShard& shard, const core::ModelSpec& model);

// A shard's bags in CSR form (local, folded row ids), reusable between steps.
struct ShardBags {
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> ids;
  [[nodiscard]] Bags view() const { return Bags{offsets, ids}; }
  [[nodiscard]] std::uint64_t lookups() const { return ids.size(); }
};

// Local row of global row `row` of a shard starting at `row_offset`, folded
// into `physical_rows`: (row - row_offset) mod physical_rows. Rows are in
// popularity order for skewed tables (row 0 hottest), so the hot rows keep
// their own physical rows and their share of the lookups.
[[nodiscard]] inline std::uint32_t foldRow(std::uint64_t row, std::uint64_t row_offset, std::uint64_t physical_rows) {
  return static_cast<std::uint32_t>((row - row_offset) % physical_rows);
}

// The bags `shard` serves from `batch` (global ids of one table for a run of
// samples): one bag per sample holding the ids in the shard's row range, in
// order, as folded local rows. Column-wise shards see every id.
void routeToShard(const Batch& batch, const RankShard& shard, ShardBags& out);

}  // namespace shardscope::profiler
