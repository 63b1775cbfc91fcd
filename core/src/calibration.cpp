#include "shardscope/core/calibration.h"

namespace shardscope::core {

const std::vector<std::string_view>& knownCalibrationCoefficients() {
  // Keep in step with docs/cost-model.md and docs/formats/calibration.md.
  static const std::vector<std::string_view> names = {
      "embedding_bandwidth_gbps",   // effective HBM bandwidth of embedding lookups
      "lookup_overhead_ns",         // fixed cost per looked-up row
      "kernel_overhead_us",         // fixed cost per table and pass
      "backward_scale",             // multiplier on the backward + fused-update byte model
      "backward_lookup_ns",         // per looked-up id in the backward pass only (deduplication)
      "dim_penalty_narrow",         // per-byte multiplier of rows below 64 columns (TorchRec: 1.75)
      "dim_penalty_mid",            // ... of 64 to 127 columns (TorchRec: 1.15)
      "intra_node_bandwidth_gbps",  // achieved collective bandwidth inside a node
      "intra_node_latency_us",
      "inter_node_bandwidth_gbps",  // achieved collective bandwidth across nodes
      "inter_node_latency_us",
      // Per-op, per-link fits of measured collective calls (nccl-tests bus
      // bandwidth and latency); they replace the algorithm model for that op
      // on groups inside one node (intra) or across nodes (inter).
      "all_reduce_intra_node_busbw_gbps", "all_reduce_intra_node_latency_us", "all_reduce_inter_node_busbw_gbps",
      "all_reduce_inter_node_latency_us", "all_to_all_intra_node_busbw_gbps", "all_to_all_intra_node_latency_us",
      "all_to_all_inter_node_busbw_gbps", "all_to_all_inter_node_latency_us",
      "dense_efficiency",  // achieved fraction of peak dense TFLOP/s
      "cache_bytes",       // cache that keeps a shard's hottest rows resident
      "cache_miss_ns",     // extra per looked-up id / updated row outside it
  };
  return names;
}

}  // namespace shardscope::core
