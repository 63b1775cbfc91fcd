#include "shardscope/planner/grid.h"

#include <algorithm>

namespace shardscope::planner {

GroupTopology topologyOf(const std::vector<std::uint32_t>& ranks, std::uint32_t gpus_per_node) {
  GroupTopology t;
  // Members per node, over the sorted node ids of the members.
  std::vector<std::uint32_t> nodes;
  nodes.reserve(ranks.size());
  for (auto r : ranks) nodes.push_back(r / gpus_per_node);
  std::sort(nodes.begin(), nodes.end());
  double peer_share = 0.0;
  for (std::size_t i = 0; i < nodes.size();) {
    std::size_t j = i;
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    const auto count = static_cast<std::uint32_t>(j - i);
    ++t.nodes_spanned;
    t.max_members_per_node = std::max(t.max_members_per_node, count);
    if (ranks.size() > 1)
      peer_share += count * (static_cast<double>(count - 1) / static_cast<double>(ranks.size() - 1));
    i = j;
  }
  t.intra_node_peer_fraction = ranks.size() > 1 ? peer_share / static_cast<double>(ranks.size()) : 1.0;
  return t;
}

const GroupTopology& Grid::worstShardingTopology() const {
  return *std::min_element(sharding_topology.begin(), sharding_topology.end(), [](const auto& a, const auto& b) {
    return a.intra_node_peer_fraction < b.intra_node_peer_fraction;
  });
}

const GroupTopology& Grid::worstReplicaTopology() const {
  return *std::min_element(replica_topology.begin(), replica_topology.end(), [](const auto& a, const auto& b) {
    return a.intra_node_peer_fraction < b.intra_node_peer_fraction;
  });
}

bool Grid::replicaSyncIntraNode() const {
  return std::all_of(replica_topology.begin(), replica_topology.end(),
                     [](const auto& t) { return t.nodes_spanned == 1; });
}

std::vector<std::uint32_t> groupSizes(std::uint32_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t m = 1; m <= n; ++m)
    if (n % m == 0) out.push_back(m);
  return out;
}

Grid makeGrid(std::uint32_t world_size, std::uint32_t gpus_per_node, std::uint32_t group_size,
              core::RankLayout layout) {
  Grid g;
  g.world_size = world_size;
  g.gpus_per_node = gpus_per_node;
  g.group_size = group_size;
  g.replicas = world_size / group_size;
  g.layout = layout;
  g.node_group_size = core::nodeGroupSize(world_size, gpus_per_node, group_size, layout);
  g.sharding_groups = core::shardingGroups(world_size, group_size, layout);
  g.replica_groups = core::replicaGroups(world_size, group_size, layout);
  for (const auto& grp : g.sharding_groups) g.sharding_topology.push_back(topologyOf(grp, gpus_per_node));
  for (const auto& grp : g.replica_groups) g.replica_topology.push_back(topologyOf(grp, gpus_per_node));
  return g;
}

std::vector<Grid> enumerateGrids(const core::ClusterSpec& cluster) {
  std::vector<Grid> grids;
  for (auto m : groupSizes(cluster.worldSize()))
    for (auto layout : {core::RankLayout::Strided, core::RankLayout::Contiguous})
      grids.push_back(makeGrid(cluster.worldSize(), cluster.gpus_per_node, m, layout));
  return grids;
}

}  // namespace shardscope::planner
