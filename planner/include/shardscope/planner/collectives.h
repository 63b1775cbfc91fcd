// Collectives priced as NCCL runs them: all-reduce by ring, tree, NVLS
// (NVLink SHARP), NVLS+tree and SHARP (in-network reduction), each with its
// LL and Simple protocol where NCCL has both, the fastest one taken as NCCL's
// tuner would; all-to-all over NVLink inside the node and each GPU's share of
// the node's NICs across nodes (PXN keeps it on its rail). Every constant and
// its source: docs/cost-model.md "Collectives". The model is checked against
// the published nccl-tests figures in tests/data/collectives/.
//
// Sizes follow nccl-tests: an all-reduce of `bytes` reduces a buffer of that
// size on every rank; an all-to-all of `bytes` sends that many bytes from
// every rank (bytes / n to each peer, its own share included).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "shardscope/core/device.h"
#include "shardscope/planner/grid.h"

namespace shardscope::planner {

struct CostConstants;

enum class CollectiveOp { AllReduce, AllToAll };

enum class CollectiveAlgorithm {
  Ring,      // ring, Simple protocol
  RingLL,    // ring, LL protocol (small messages)
  Tree,      // chain inside the node, double binary tree across nodes, Simple
  TreeLL,    // the same, LL
  Nvls,      // NVLink SHARP inside one node
  NvlsTree,  // NVLS inside each node, tree across nodes
  Sharp,     // in-network reduction across nodes (IB SHARP, NCCL's CollNet)
  Direct,    // all-to-all: every pair at once
  Linear,    // one alpha-beta link (CPU ranks: MPI or shared memory, no NCCL)
  Measured,  // a calibration's fit of measured calls of this op on this link
};

// A calibration's fit of measured calls of one op on one kind of link (a
// group inside one node, or across nodes): nccl-tests bus bandwidth and
// latency. It replaces the algorithm model for that op and link; 0 GB/s: none.
struct CollectiveFit {
  double busbw_gbps = 0.0;
  double latency_us = 0.0;
  bool operator==(const CollectiveFit&) const = default;
};

[[nodiscard]] std::string_view toString(CollectiveAlgorithm a);
[[nodiscard]] std::string_view toString(CollectiveOp op);

// nccl-tests' bus bandwidth factor: busbw = size / time x factor; op names as
// the store writes them (all_reduce, all_to_all, all_gather, ...).
[[nodiscard]] double busBandwidthFactor(std::string_view op, int ranks);
[[nodiscard]] double busBandwidthFactor(CollectiveOp op, std::uint32_t ranks);

// How one group of a collective sits on the nodes. Every group of its kind
// runs at once (all sharding groups' all-to-alls, all replica groups' syncs),
// so on each node a group has its members' share of the node's NICs.
struct GroupShape {
  std::uint32_t ranks = 1;
  std::uint32_t nodes = 1;                // nodes the group spans
  std::uint32_t per_node = 1;             // most members on one node
  double intra_node_peer_fraction = 1.0;  // mean share of a member's peers on its node
};

[[nodiscard]] GroupShape shapeOf(const GroupTopology& topology, std::uint32_t ranks);
// The whole world of a grid (the dense all-reduce).
[[nodiscard]] GroupShape worldShape(const Grid& grid);

// One call's time: latency_ms + bytes x ms_per_byte, by the algorithm named.
struct CollectivePrice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  double latency_ms = 0.0;
  double ms_per_byte = 0.0;
  [[nodiscard]] double ms(double bytes) const { return latency_ms + bytes * ms_per_byte; }
  // nccl-tests' bus bandwidth at `bytes` (GB/s).
  [[nodiscard]] double busBandwidthGbps(CollectiveOp op, std::uint32_t ranks, double bytes) const;
};

class CollectivePricer {
 public:
  CollectivePricer(const CostConstants& constants, std::uint32_t gpus_per_node, core::DeviceClass device);

  // The algorithm NCCL's tuner would choose for `bytes` (the fastest), priced.
  [[nodiscard]] CollectivePrice allReduce(const GroupShape& shape, double bytes) const;
  [[nodiscard]] CollectivePrice allToAll(const GroupShape& shape, double bytes) const;
  [[nodiscard]] CollectivePrice price(CollectiveOp op, const GroupShape& shape, double bytes) const;
  // Every all-reduce algorithm that runs on this group, priced (no calibration fit).
  [[nodiscard]] std::vector<CollectivePrice> allReduceCandidates(const GroupShape& shape) const;

 private:
  [[nodiscard]] CollectivePrice linear(CollectiveOp op, const GroupShape& shape) const;
  [[nodiscard]] const CollectiveFit* fitFor(CollectiveOp op, const GroupShape& shape) const;
  [[nodiscard]] double nicShareGbps(const GroupShape& shape) const;  // the group's NICs on one node, achieved
  [[nodiscard]] double congestion(std::uint32_t nodes) const;

  const CostConstants& k_;
  std::uint32_t gpus_per_node_;
  core::DeviceClass device_;
};

}  // namespace shardscope::planner
