// The 2D grids of a cluster: every sharding group size M that divides N,
// in both rank layouts, with the explicit groups and how their members sit
// on nodes (which decides intra- vs inter-node bandwidth).
#pragma once

#include <cstdint>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/rank_layout.h"

namespace shardscope::planner {

// How the members of one rank group are spread over nodes.
struct GroupTopology {
  std::uint32_t nodes_spanned = 0;
  std::uint32_t max_members_per_node = 0;
  // Mean over members of (peers on my node) / (group size - 1); 1 for a group of one.
  double intra_node_peer_fraction = 1.0;
};

struct Grid {
  std::uint32_t world_size = 0;  // N
  std::uint32_t gpus_per_node = 0;
  std::uint32_t group_size = 0;  // M
  std::uint32_t replicas = 0;    // R = N / M
  core::RankLayout layout = core::RankLayout::Strided;
  // Blocks of this many consecutive group ranks sit on one node
  // (core::nodeGroupSize): where table_row_wise and grid_shard go.
  std::uint32_t node_group_size = 1;
  core::RankGroups sharding_groups;              // R groups of M ranks
  core::RankGroups replica_groups;               // M groups of R ranks
  std::vector<GroupTopology> sharding_topology;  // per sharding group
  std::vector<GroupTopology> replica_topology;   // per replica group

  // The sharding group whose members share nodes least (its all-to-alls are slowest).
  [[nodiscard]] const GroupTopology& worstShardingTopology() const;
  [[nodiscard]] const GroupTopology& worstReplicaTopology() const;
  // True when every replica group sits inside one node.
  [[nodiscard]] bool replicaSyncIntraNode() const;
};

[[nodiscard]] GroupTopology topologyOf(const std::vector<std::uint32_t>& ranks, std::uint32_t gpus_per_node);
[[nodiscard]] std::vector<std::uint32_t> groupSizes(std::uint32_t world_size);  // divisors, ascending
[[nodiscard]] Grid makeGrid(std::uint32_t world_size, std::uint32_t gpus_per_node, std::uint32_t group_size,
                            core::RankLayout layout);
// Every M dividing N, strided then contiguous for each M.
[[nodiscard]] std::vector<Grid> enumerateGrids(const core::ClusterSpec& cluster);

}  // namespace shardscope::planner
