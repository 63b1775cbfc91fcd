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
  // The same NICs per GPU: a node of other size keeps the cluster's rails per GPU.
  if (cluster.network.nics_per_node && resized.gpus_per_node != cluster.gpus_per_node && cluster.gpus_per_node) {
    const std::uint64_t scaled =
        std::uint64_t{cluster.network.nics_per_node} * resized.gpus_per_node / cluster.gpus_per_node;
    resized.network.nics_per_node = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, scaled));
  }
  if (resized.worldSize() != cluster.worldSize()) resized.collectives.clear();
  return resized;
}

}  // namespace shardscope::core
