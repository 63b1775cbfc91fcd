#include "shardscope/planner/sharding.h"

namespace shardscope::planner {

std::vector<RowBlock> rowWiseBlocks(std::uint64_t rows, std::uint32_t ways) {
  std::vector<RowBlock> out;
  if (ways == 0 || rows == 0) return out;
  const std::uint64_t block = (rows + ways - 1) / ways;
  for (std::uint64_t off = 0; off < rows; off += block) out.push_back({off, std::min(block, rows - off)});
  return out;
}

std::uint32_t columnShardWidth(std::uint32_t dim, std::uint32_t min_partition) {
  for (std::uint32_t w = min_partition; w < dim; ++w)
    if (dim % w == 0 && w % 4 == 0) return w;
  return dim;
}

}  // namespace shardscope::planner
