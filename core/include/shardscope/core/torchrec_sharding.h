// TorchRec's sharding conventions, as its runtime applies them: the shard
// geometry (row blocks of ceil(rows / W), column shards of its minimum
// partition) and where each sharding type's shards must sit inside a
// sharding group for a TorchRec trainer to run exactly the layout a plan
// names. The planner builds plans for the TorchRec target from these rules
// and plan validation checks them; docs/formats/plan.md links each rule to
// the TorchRec source it comes from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/plan.h"

namespace shardscope::core {

struct RowBlock {
  std::uint64_t offset = 0;
  std::uint64_t rows = 0;
  bool operator==(const RowBlock&) const = default;
};

// Exactly `ways` blocks of ceil(rows / ways) rows; the last non-empty one is
// short and any after it are empty, as TorchRec cuts them: 10 rows on 4 ->
// 3,3,3,1; 5 on 4 -> 2,2,1,0; 3 on 8 -> 1,1,1,0,0,0,0,0. Empty blocks sit at
// offset `rows`.
[[nodiscard]] std::vector<RowBlock> rowWiseBlocks(std::uint64_t rows, std::uint32_t ways);

// Column shard width for a dim: the smallest width >= min_partition (TorchRec's
// 128) that divides dim and is a multiple of 4; dim itself when none does.
[[nodiscard]] std::uint32_t columnShardWidth(std::uint32_t dim, std::uint32_t min_partition = 128);

// A place in a plan (JSON pointer into its shardscope.plan/1 form) and what
// TorchRec needs there.
struct LayoutProblem {
  std::string path;
  std::string expectation;
};

// Everything about a plan's shards that a TorchRec trainer would run
// differently from the plan, or not at all: row_wise as M blocks with block k
// on group rank k; table_row_wise as node_group_size blocks in order on one node
// group; grid_shard as column blocks each laid out like table_row_wise;
// table_wise as one shard; column_wise shards spanning every row. Assumes the
// shards already tile each table (the plan reader checks that first).
[[nodiscard]] std::vector<LayoutProblem> torchRecLayoutProblems(const ShardPlan& plan);

}  // namespace shardscope::core
