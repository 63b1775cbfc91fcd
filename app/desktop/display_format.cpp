#include "display_format.h"

#include <cmath>
#include <cstdio>

namespace shardscope::app {

std::string formatCount(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  const std::size_t lead = digits.size() % 3;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (i % 3) == lead % 3) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string formatFixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string formatShort(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string formatGigabytes(std::uint64_t bytes) {
  if (bytes == 0) return "0";
  const double gb = static_cast<double>(bytes) / 1e9;
  if (gb < 0.005) return "< 0.01";
  return formatFixed(gb, 2);
}

std::string formatScaledCount(double n) {
  struct Scale {
    double factor;
    const char* suffix;
  };
  static constexpr Scale kScales[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const Scale& s : kScales) {
    if (n >= s.factor) return formatFixed(n / s.factor, n / s.factor >= 100 ? 0 : 1) + " " + s.suffix;
  }
  return formatShort(n);
}

std::string poolingText(const core::PoolingSpec& p) {
  switch (p.kind) {
    case core::PoolingKind::Fixed:
      return "fixed " + formatShort(p.mean);
    case core::PoolingKind::Uniform:
      return "uniform " + formatShort(p.mean) + " \u00b1 " + formatShort(p.spread);
  }
  return "?";
}

std::string accessText(const core::AccessSpec& a) {
  switch (a.kind) {
    case core::AccessKind::Uniform:
      return "uniform";
    case core::AccessKind::Zipf:
      return "zipf " + formatShort(a.alpha);
    case core::AccessKind::HotSet:
      return "hot " + formatShort(a.hot_fraction * 100.0) + "% \u2192 " +
             formatShort(a.hot_probability * 100.0) + "%";
    case core::AccessKind::Histogram:
      return "histogram (" + std::to_string(a.histogram.size()) + " buckets)";
  }
  return "?";
}

std::vector<SummaryRow> modelSummaryRows(const core::ModelSpec& m) {
  return {
      {"name", "Name", m.name},
      {"tables", "Embedding tables", std::to_string(m.tables.size())},
      {"embedding_gb", "Embedding size", formatGigabytes(m.totalWeightBytes()) + " GB"},
      {"lookups", "Lookups per sample", formatShort(m.lookupsPerSample())},
      {"batch", "Batch per GPU", formatCount(m.batch_size_per_gpu)},
      {"optimizer", "Optimizer", core::toString(m.optimizer)},
      {"dense_params", "Dense parameters", formatScaledCount(static_cast<double>(m.dense.parameters))},
      {"dense_flops", "Dense FLOPs per sample", formatScaledCount(m.dense.flops_per_sample)},
  };
}

std::vector<SummaryRow> clusterSummaryRows(const core::ClusterSpec& c) {
  const auto link = [](const core::LinkSpec& l) {
    return formatShort(l.bandwidth_gbps) + " GB/s, " + formatShort(l.latency_us) + " \u00b5s";
  };
  return {
      {"name", "Name", c.name},
      {"world_size", "GPUs",
       std::to_string(c.nodes) + " nodes \u00d7 " + std::to_string(c.gpus_per_node) + " GPUs = " +
           std::to_string(c.worldSize())},
      {"gpu", "GPU", c.gpu.name},
      // Capacity in GiB as vendors quote it ("80GB" is 80 GiB), bytes in GB too.
      {"hbm", "HBM",
       formatShort(std::round(static_cast<double>(c.gpu.hbm_bytes) / (1024.0 * 1024.0 * 1024.0) * 10.0) / 10.0) +
           " GiB (" + formatFixed(static_cast<double>(c.gpu.hbm_bytes) / 1e9, 1) + " GB)"},
      {"hbm_bandwidth", "HBM bandwidth", formatFixed(c.gpu.hbm_bandwidth_gbps / 1e3, 2) + " TB/s"},
      {"peak_tflops", "Peak dense", formatShort(c.gpu.peak_dense_tflops) + " TFLOP/s"},
      {"intra_node", "Intra-node link", link(c.intra_node)},
      {"inter_node", "Inter-node link", link(c.inter_node)},
  };
}

}  // namespace shardscope::app
