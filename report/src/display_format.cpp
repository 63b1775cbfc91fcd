#include "shardscope/report/display_format.h"

#include "shardscope/core/summary.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace shardscope::report {

std::string formatCount(std::uint64_t n) { return core::groupDigits(std::to_string(n)); }

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

std::string formatChange(double a, double b) {
  if (!(a > 0.0) || !std::isfinite(b)) return {};
  return core::formatRelativeError(b / a - 1.0);
}

std::string formatPointsDifference(double a, double b) {
  const double pp = (b - a) * 100.0;
  const std::string digits = formatFixed(std::abs(pp), 1);
  if (digits == "0.0") return "0 pp";
  return (pp < 0 ? "\u2212" : "+") + digits + " pp";
}

std::string formatGibibytes(std::uint64_t bytes) {
  if (bytes == 0) return "0";
  const std::string s =
      core::formatBytes(static_cast<double>(bytes),
                        {.unit = core::ByteUnit::GiB, .decimals = 2, .unit_name = false, .digit_groups = true});
  return s == "0.00" ? "< 0.01" : s;
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

std::string optimizerText(core::Optimizer o) {
  switch (o) {
    case core::Optimizer::SGD:
      return "SGD";
    case core::Optimizer::RowWiseAdagrad:
      return "Row-wise Adagrad";
    case core::Optimizer::Adam:
      return "Adam";
  }
  return "?";
}

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parseNumber(std::string_view s) {
  s = trimmed(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::uint64_t> parseCount(std::string_view text) {
  std::string_view s = trimmed(text);
  double scale = 1.0;
  if (!s.empty()) {
    switch (s.back()) {
      case 'k':
      case 'K':
        scale = 1e3;
        break;
      case 'm':
      case 'M':
        scale = 1e6;
        break;
      case 'g':
      case 'G':
      case 'b':
      case 'B':
        scale = 1e9;
        break;
      case 't':
      case 'T':
        scale = 1e12;
        break;
      default:
        break;
    }
    if (scale != 1.0) s = trimmed(s.substr(0, s.size() - 1));
  }
  // Digit groups: "40,000,000", "40 000 000", "40_000_000" (a thin space too).
  std::string plain;
  std::size_t group = 0;
  bool grouped = false;
  bool only_digits = true;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    std::size_t separator = 0;
    if (c == ',' || c == '_' || c == ' ')
      separator = 1;
    else if (s.compare(i, 3, "\xE2\x80\xAF") == 0 || s.compare(i, 3, "\xE2\x80\x89") == 0)
      separator = 3;
    if (separator != 0 && only_digits && group > 0 && (grouped ? group == 3 : group <= 3)) {
      grouped = true;
      group = 0;
      i += separator - 1;
      continue;
    }
    if (separator != 0) return std::nullopt;
    if (c < '0' || c > '9') only_digits = false;
    ++group;
    plain += c;
  }
  if (plain.empty() || (grouped && (!only_digits || group != 3))) return std::nullopt;
  if (only_digits && scale == 1.0) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(plain.data(), plain.data() + plain.size(), v);
    if (ec != std::errc() || end != plain.data() + plain.size()) return std::nullopt;
    return v;
  }
  const std::optional<double> v = parseNumber(plain);
  if (!v || *v < 0.0) return std::nullopt;
  const double n = *v * scale;
  // Whole numbers only, and exactly representable (2^53) so nothing is rounded.
  if (n != std::floor(n) || n > 9007199254740992.0) return std::nullopt;
  return static_cast<std::uint64_t>(n);
}

std::string poolingEditText(const core::PoolingSpec& p) {
  if (p.kind == core::PoolingKind::Uniform) return formatShort(p.mean) + " \u00b1 " + formatShort(p.spread);
  return formatShort(p.mean);
}

std::optional<core::PoolingSpec> parsePoolingText(std::string_view text, const core::PoolingSpec& current) {
  std::string_view s = trimmed(text);
  std::optional<core::PoolingKind> kind;
  if (s.starts_with("fixed")) {
    kind = core::PoolingKind::Fixed;
    s.remove_prefix(5);
  } else if (s.starts_with("uniform")) {
    kind = core::PoolingKind::Uniform;
    s.remove_prefix(7);
  }
  core::PoolingSpec p = current;
  for (std::string_view pm : {std::string_view("\u00b1"), std::string_view("+/-"), std::string_view("+-")}) {
    const auto at = s.find(pm);
    if (at == std::string_view::npos) continue;
    const std::optional<double> mean = parseNumber(s.substr(0, at));
    const std::optional<double> spread = parseNumber(s.substr(at + pm.size()));
    if (!mean || !spread || kind == core::PoolingKind::Fixed) return std::nullopt;
    p.kind = core::PoolingKind::Uniform;
    p.mean = *mean;
    p.spread = *spread;
    return p;
  }
  const std::optional<double> mean = parseNumber(s);
  if (!mean) return std::nullopt;
  p.mean = *mean;
  if (kind) p.kind = *kind;
  if (p.kind == core::PoolingKind::Fixed) p.spread = 0.0;
  return p;
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
      return "hot " + formatShort(a.hot_fraction * 100.0) + "% \u2192 " + formatShort(a.hot_probability * 100.0) + "%";
    case core::AccessKind::Histogram:
      return "measured (" + std::to_string(a.histogram.size()) + " buckets)";
  }
  return "?";
}

std::vector<SummaryRow> modelSummaryRows(const core::ModelSpec& m) {
  return {
      {"name", "Name", m.name},
      {"tables", "Embedding tables", std::to_string(m.tables.size())},
      {"embedding_size", "Embedding size", formatGibibytes(m.totalWeightBytes()) + " GiB"},
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
       std::to_string(c.nodes) + " nodes \u00d7 " + std::to_string(c.gpus_per_node) +
           " GPUs = " + std::to_string(c.worldSize())},
      {"gpu", "GPU", c.gpu.name},
      // Capacity in GiB as vendors quote it ("80GB" is 80 GiB).
      {"hbm", "HBM",
       core::formatBytes(static_cast<double>(c.gpu.hbm_bytes), {.unit = core::ByteUnit::GiB, .trim_zeros = true})},
      {"hbm_bandwidth", "HBM bandwidth", formatFixed(c.gpu.hbm_bandwidth_gbps / 1e3, 2) + " TB/s"},
      {"peak_tflops", "Peak dense", formatShort(c.gpu.peak_dense_tflops) + " TFLOP/s"},
      {"intra_node", "Intra-node link (per GPU)", link(c.intra_node)},
      {"inter_node", "Inter-node link (per NIC)", link(c.inter_node)},
      {"network", "Network",
       std::to_string(c.nicsPerNode()) + " NICs per node" + (c.network.nvls ? ", NVLS" : "") +
           (c.network.sharp ? ", SHARP" : "") +
           (c.network.congestion_per_doubling > 0
                ? ", " + formatShort(c.network.congestion_per_doubling * 100.0) + " % lost per doubling of nodes"
                : "")},
  };
}

std::string syncIntervalText(std::uint32_t steps) {
  return steps <= 1 ? std::string("every step") : "every " + std::to_string(steps) + " steps";
}

}  // namespace shardscope::report
