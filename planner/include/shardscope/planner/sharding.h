// TorchRec's shard geometry: row-wise blocks of ceil(rows / W) and column
// shards of the smallest width >= 128 that divides dim and is a multiple of 4.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace shardscope::planner {

struct RowBlock {
  std::uint64_t offset = 0;
  std::uint64_t rows = 0;
};

// Non-empty blocks only: 10 rows on 4 ranks -> 3,3,3,1; 3 rows on 8 -> 1,1,1.
[[nodiscard]] std::vector<RowBlock> rowWiseBlocks(std::uint64_t rows, std::uint32_t ways);
// Column shard width for a dim (TorchRec min partition 128); equals dim when it cannot be split.
[[nodiscard]] std::uint32_t columnShardWidth(std::uint32_t dim, std::uint32_t min_partition = 128);

}  // namespace shardscope::planner
