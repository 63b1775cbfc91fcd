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

// One link: intra_node is a GPU's NVLink (GB/s per GPU, one direction);
// inter_node is one NIC, a rail (GB/s per NIC, one direction). Latency: one
// hop of a small message (docs/cost-model.md "Collectives").
struct LinkSpec {
  double bandwidth_gbps = 0.0;  // GB/s, one direction
  double latency_us = 0.0;
  bool operator==(const LinkSpec&) const = default;
};

// How nodes reach each other: the NICs of a node (rails of a rail-optimized,
// non-blocking fat tree: NIC k of every node on leaf k), and what the
// switches can do. A node is one NVLink domain (an NVL72 rack is one node of
// 72 GPUs). Files without `network` read as one NIC per GPU, no NVLS, no SHARP.
struct NetworkSpec {
  std::uint32_t nics_per_node = 0;  // 0: one per GPU (gpus_per_node)
  bool nvls = false;                // NVLink SHARP: the NVSwitches reduce (H100/H200/B200 HGX)
  bool sharp = false;               // in-network reduction in the IB switches (SHARP / NCCL CollNet)
  // Share of inter-node collective bandwidth lost per doubling of the nodes a
  // collective spans (congestion of a fabric that is not non-blocking at
  // scale); 0 for a non-blocking fat tree.
  double congestion_per_doubling = 0.0;
  bool operator==(const NetworkSpec&) const = default;
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
  NetworkSpec network;
  std::vector<CollectiveCurve> collectives;  // optional measurements

  [[nodiscard]] std::uint32_t worldSize() const { return nodes * gpus_per_node; }
  [[nodiscard]] std::uint32_t nicsPerNode() const {
    return network.nics_per_node ? network.nics_per_node : gpus_per_node;
  }
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
