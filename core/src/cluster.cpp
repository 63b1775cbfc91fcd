#include "shardscope/core/cluster.h"

#include <algorithm>

namespace shardscope::core {

ClusterSpec resizedCluster(const ClusterSpec& cluster, std::uint32_t world_size, std::uint32_t gpus_per_node) {
  ClusterSpec resized = cluster;
  const std::uint32_t per_node = std::min(gpus_per_node > 0 ? gpus_per_node : cluster.gpus_per_node, world_size);
  if (per_node > 0 && world_size % per_node == 0) {
    resized.gpus_per_node = per_node;
    resized.nodes = world_size / per_node;
  } else {
    resized.nodes = 1;
    resized.gpus_per_node = world_size;
  }
  if (resized.worldSize() != cluster.worldSize()) resized.collectives.clear();
  return resized;
}

}  // namespace shardscope::core
