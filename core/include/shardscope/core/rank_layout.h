// Rank layouts of a 2D grid, matching TorchRec's DMPCollection: which global
// ranks form each sharding group and each replica group. One place for the
// formulas so the planner, the engine and plan validation agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace shardscope::core {

enum class RankLayout {
  Strided,     // DMPCollection default: group g = [g, g+R, ..., g+(M-1)R]
  Contiguous,  // use_inter_host_allreduce: group g = [g*M, ..., g*M+M-1]
};

[[nodiscard]] const char* toString(RankLayout l);
[[nodiscard]] std::optional<RankLayout> rankLayoutFromString(std::string_view s);

using RankGroups = std::vector<std::vector<std::uint32_t>>;

// N = world size, M = sharding group size (must divide N). R = N / M groups of M ranks.
[[nodiscard]] RankGroups shardingGroups(std::uint32_t world_size, std::uint32_t group_size, RankLayout layout);
// M groups of R ranks: member i of every sharding group forms replica group i.
[[nodiscard]] RankGroups replicaGroups(std::uint32_t world_size, std::uint32_t group_size, RankLayout layout);

// The node group size of a grid: the largest L dividing M such that every
// block of L consecutive members of every sharding group sits on one node
// (ranks r and s share a node when r / gpus_per_node == s / gpus_per_node).
// TorchRec's table_row_wise and grid_shard place a table on one such block
// (DMPCollection's node_group_size): strided with R <= gpus_per_node gives
// gpus_per_node / R, contiguous gives min(M, gpus_per_node) when one divides
// the other, and 1 when no larger block stays on a node.
[[nodiscard]] std::uint32_t nodeGroupSize(std::uint32_t world_size, std::uint32_t gpus_per_node,
                                          std::uint32_t group_size, RankLayout layout);

// How world rank `rank` splits the world communicator into its sharding and
// its replica communicator (MPI_Comm_split, ncclCommSplit): color = the
// index of its group in `sharding` / `replica` (a plan's groups), key = its
// position in that group, so the new communicator's rank is the group rank
// (sharding) or the replica index (replica). nullopt when `rank` is not in
// exactly one group of each.
struct CommSplit {
  int sharding_color = -1, sharding_key = -1;
  int replica_color = -1, replica_key = -1;
  friend bool operator==(const CommSplit&, const CommSplit&) = default;
};
[[nodiscard]] std::optional<CommSplit> commSplitOf(const RankGroups& sharding, const RankGroups& replica,
                                                   std::uint32_t rank);

}  // namespace shardscope::core
