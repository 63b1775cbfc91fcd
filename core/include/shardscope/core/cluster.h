// The GPU cluster: nodes x GPUs per node, what one GPU can hold and move, and
// the links between GPUs inside a node and across nodes. JSON form
// `shardscope.cluster/1` in docs/formats/cluster.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/device.h"

namespace shardscope::core {

struct GpuKind {
  std::string name;
  std::uint64_t hbm_bytes = 0;
  double hbm_bandwidth_gbps = 0.0;  // GB/s (1e9 bytes/s)
  double peak_dense_tflops = 0.0;   // dense bf16 TFLOP/s
  // What the "GPUs" are: GPUs (the default), or CPU ranks (a cluster that
  // models the engine's CPU processes, priced for any CPU: docs/formats/cluster.md).
  DeviceClass device = DeviceClass::Gpu;
  bool operator==(const GpuKind&) const = default;
};

struct LinkSpec {
  double bandwidth_gbps = 0.0;  // GB/s per GPU, one direction
  double latency_us = 0.0;
  bool operator==(const LinkSpec&) const = default;
};

// A measured collective: time for a message size, from a profile run.
struct CollectivePoint {
  std::uint64_t bytes = 0;
  double time_us = 0.0;
  bool operator==(const CollectivePoint&) const = default;
};

struct CollectiveCurve {
  std::string op;     // all_to_all | all_reduce | reduce_scatter | all_gather
  std::string scope;  // intra_node | inter_node
  std::uint32_t ranks = 0;
  std::vector<CollectivePoint> points;  // sorted by bytes
  bool operator==(const CollectiveCurve&) const = default;
};

struct ClusterSpec {
  std::string name;
  std::uint32_t nodes = 0;
  std::uint32_t gpus_per_node = 0;
  GpuKind gpu;
  LinkSpec intra_node;
  LinkSpec inter_node;
  std::vector<CollectiveCurve> collectives;  // optional measurements

  [[nodiscard]] std::uint32_t worldSize() const { return nodes * gpus_per_node; }
  bool operator==(const ClusterSpec&) const = default;
};

// The same GPUs and links at another size: world_size GPUs in nodes of
// gpus_per_node (0: the cluster's own) capped at world_size, or one node of
// world_size GPUs when that does not divide it. Measured collective curves
// belong to the cluster's own size and are dropped when the size changes.
// The name is kept.
[[nodiscard]] ClusterSpec resizedCluster(const ClusterSpec& cluster, std::uint32_t world_size,
                                         std::uint32_t gpus_per_node = 0);

}  // namespace shardscope::core
