#include "shardscope/report/project_summary.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "shardscope/core/summary.h"
#include "shardscope/report/text_table.h"

namespace shardscope::report {

using core::describeAccess;
using core::formatBytes;
using core::formatCount;
using core::formatf;

std::string formatModelSummary(const core::ModelSpec& m) {
  std::string out;
  out += "Model: " + m.name + "\n";
  out += "  tables: " + std::to_string(m.tables.size()) + ", embedding weights " + formatBytes(m.totalWeightBytes()) +
         ", " + formatf("%.0f", m.lookupsPerSample()) + " lookups per sample\n";
  out += "  batch per GPU: " + std::to_string(m.batch_size_per_gpu) + ", optimizer " + core::toString(m.optimizer) +
         ", dense " + formatCount(static_cast<double>(m.dense.parameters)) + " parameters, " +
         formatf("%.1f", m.dense.flops_per_sample / 1e6) + " MFLOP per sample (fwd+bwd)\n";
  // The largest tables first: what a planner looks at.
  std::vector<const core::TableSpec*> order;
  for (const auto& t : m.tables) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->weightBytes() > b->weightBytes(); });
  TextTable table({"table", "rows", "dim", "dtype", "pooling", "access", "size"});
  table.separator(" ").minWidths({16, 10, 5, 5, 8, 16, 10}).align(5, TextTable::Align::Left);
  const std::size_t shown = std::min<std::size_t>(order.size(), 30);
  for (std::size_t i = 0; i < shown; ++i) {
    const core::TableSpec& t = *order[i];
    table.add({t.name, formatCount(static_cast<double>(t.rows)), std::to_string(t.dim), core::toString(t.dtype),
               formatCount(t.pooling.mean), describeAccess(t.access), formatBytes(t.weightBytes())});
  }
  out += table.text("  ");
  if (order.size() > shown) out += "  ... " + std::to_string(order.size() - shown) + " smaller tables\n";
  return out;
}

std::string formatClusterSummary(const core::ClusterSpec& c) {
  std::string out;
  out += "Cluster: " + c.name + "\n";
  out += "  " + std::to_string(c.nodes) + " nodes x " + std::to_string(c.gpus_per_node) +
         " GPUs = " + std::to_string(c.worldSize()) + " GPUs (" + c.gpu.name + ")\n";
  out += "  per GPU: HBM " + formatBytes(c.gpu.hbm_bytes) + formatf(" at %.2f TB/s", c.gpu.hbm_bandwidth_gbps / 1000) +
         formatf(", %.0f dense TFLOP/s\n", c.gpu.peak_dense_tflops);
  out += formatf("  intra-node: %.0f GB/s", c.intra_node.bandwidth_gbps) +
         formatf(", %.1f us; ", c.intra_node.latency_us) +
         formatf("inter-node: %u NICs x %.1f GB/s per node", c.nicsPerNode(), c.inter_node.bandwidth_gbps) +
         formatf(", %.1f us\n", c.inter_node.latency_us);
  out += std::string("  switches: ") + (c.network.nvls ? "NVLS (NVLink SHARP)" : "no NVLS") + ", " +
         (c.network.sharp ? "SHARP in the fabric" : "no SHARP") +
         (c.network.congestion_per_doubling > 0 ? formatf(", %.0f%% of inter-node bandwidth lost per doubling of nodes",
                                                          c.network.congestion_per_doubling * 100.0)
                                                : "") +
         "\n";
  out += "  aggregate HBM: " + formatBytes(c.gpu.hbm_bytes * c.worldSize()) + "\n";
  return out;
}

}  // namespace shardscope::report
