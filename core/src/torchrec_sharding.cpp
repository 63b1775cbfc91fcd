// TorchRec's placement rules, checked shard by shard. The rules and the
// TorchRec lines they come from are listed in docs/formats/plan.md
// ("What TorchRec runs").
#include "shardscope/core/torchrec_sharding.h"

#include <algorithm>
#include <map>

#include "shardscope/core/rank_layout.h"

namespace shardscope::core {

std::vector<RowBlock> rowWiseBlocks(std::uint64_t rows, std::uint32_t ways) {
  std::vector<RowBlock> out;
  if (ways == 0) return out;
  out.reserve(ways);
  const std::uint64_t block = (rows + ways - 1) / ways;
  std::uint64_t offset = 0;
  for (std::uint32_t k = 0; k < ways; ++k) {
    const std::uint64_t n = std::min(block, rows - offset);
    out.push_back({offset, n});
    offset += n;
  }
  return out;
}

std::uint32_t columnShardWidth(std::uint32_t dim, std::uint32_t min_partition) {
  for (std::uint32_t w = min_partition; w < dim; ++w)
    if (dim % w == 0 && w % 4 == 0) return w;
  return dim;
}

namespace {

std::string shardsPath(std::size_t table) { return "/tables/" + std::to_string(table) + "/shards"; }
std::string shardPath(std::size_t table, std::size_t shard) { return shardsPath(table) + "/" + std::to_string(shard); }
std::string rowsText(std::uint64_t offset, std::uint64_t rows) {
  return "rows [" + std::to_string(offset) + ", " + std::to_string(offset + rows) + ")";
}

// Shard indices of `shards` ordered by row offset (stable: ties keep file order).
std::vector<std::size_t> byRowOffset(const std::vector<Shard>& shards, const std::vector<std::size_t>& subset) {
  std::vector<std::size_t> order = subset;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return shards[a].row_offset < shards[b].row_offset; });
  return order;
}

// One run of row blocks (a row_wise table, a table_row_wise table or one
// column block of a grid): `ways` blocks of TorchRec's geometry, block j on
// group rank base + j, where base is 0 for row_wise and the node group's
// first rank otherwise (taken from block 0's rank).
void checkRowBlocks(const TablePlacement& t, std::size_t ti, const std::vector<std::size_t>& subset, std::uint32_t ways,
                    bool node_group, std::uint32_t node_group_size, const std::string& what,
                    std::vector<LayoutProblem>& out) {
  const std::string rule = node_group ? std::string("TorchRec puts block j of ceil(rows / ") + std::to_string(ways) +
                                            ") rows on rank j of one node group of " + std::to_string(node_group_size) +
                                            " consecutive group ranks, empty blocks included"
                                      : std::string("TorchRec gives row block k of ceil(rows / ") +
                                            std::to_string(ways) + ") rows to group rank k, empty blocks included";
  if (subset.size() != ways) {
    out.push_back({shardsPath(ti), "expected " + std::to_string(ways) + " " + what + " shards of table \"" + t.name +
                                       "\" (" + rule + "), got " + std::to_string(subset.size())});
    return;
  }
  const std::vector<RowBlock> blocks = rowWiseBlocks(t.rows, ways);
  const std::vector<std::size_t> order = byRowOffset(t.shards, subset);
  const std::uint32_t base = node_group ? t.shards[order.front()].group_rank / node_group_size * node_group_size : 0;
  for (std::uint32_t j = 0; j < ways; ++j) {
    const Shard& s = t.shards[order[j]];
    const std::uint32_t want_rank = base + j;
    if (s.row_offset != blocks[j].offset || s.rows != blocks[j].rows || s.group_rank != want_rank) {
      out.push_back({shardPath(ti, order[j]), "expected block " + std::to_string(j) + " of table \"" + t.name +
                                                  "\" to be " + rowsText(blocks[j].offset, blocks[j].rows) +
                                                  " on group rank " + std::to_string(want_rank) + " (" + rule +
                                                  "), got " + rowsText(s.row_offset, s.rows) + " on group rank " +
                                                  std::to_string(s.group_rank)});
      return;  // one problem per run of blocks
    }
  }
}

void checkTable(const TablePlacement& t, std::size_t ti, std::uint32_t M, std::uint32_t L,
                std::vector<LayoutProblem>& out) {
  std::vector<std::size_t> all(t.shards.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  switch (t.sharding_type) {
    case ShardingType::TableWise:
      if (t.shards.size() != 1)
        out.push_back({shardsPath(ti), "expected one table_wise shard (the whole table on one group rank), got " +
                                           std::to_string(t.shards.size())});
      break;
    case ShardingType::RowWise:
      checkRowBlocks(t, ti, all, M, false, L, "row_wise", out);
      break;
    case ShardingType::TableRowWise:
      checkRowBlocks(t, ti, all, L, true, L, "table_row_wise", out);
      break;
    case ShardingType::ColumnWise:
    case ShardingType::TableColumnWise:
      for (std::size_t i = 0; i < t.shards.size(); ++i)
        if (t.shards[i].row_offset != 0 || t.shards[i].rows != t.rows) {
          out.push_back({shardPath(ti, i), std::string("expected a ") + toString(t.sharding_type) +
                                               " shard spanning all " + std::to_string(t.rows) + " rows, got " +
                                               rowsText(t.shards[i].row_offset, t.shards[i].rows)});
          break;
        }
      break;
    case ShardingType::GridShard: {
      std::map<std::uint32_t, std::vector<std::size_t>> by_column;
      for (std::size_t i = 0; i < t.shards.size(); ++i) by_column[t.shards[i].col_offset].push_back(i);
      for (const auto& [col, subset] : by_column) {
        const std::size_t before = out.size();
        checkRowBlocks(t, ti, subset, L, true, L, "grid_shard (columns from " + std::to_string(col) + ")", out);
        if (out.size() != before) break;
      }
      break;
    }
    case ShardingType::DataParallel:
      break;
  }
}

}  // namespace

std::vector<LayoutProblem> torchRecLayoutProblems(const ShardPlan& plan) {
  std::vector<LayoutProblem> out;
  const std::uint32_t M = plan.sharding_group_size;
  if (M == 0 || plan.world_size == 0 || plan.gpus_per_node == 0 || plan.world_size % M != 0) return out;
  const std::uint32_t L = nodeGroupSize(plan.world_size, plan.gpus_per_node, M, plan.layout);
  for (std::size_t ti = 0; ti < plan.tables.size(); ++ti) checkTable(plan.tables[ti], ti, M, L, out);
  return out;
}

}  // namespace shardscope::core
