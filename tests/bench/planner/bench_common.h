// Small helpers shared by the planner benchmarks: clusters of any size,
// wall-clock timing, order statistics.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/presets.h"

namespace shardscope::bench {

inline core::ModelSpec modelOrDie(const std::string& name) {
  auto m = core::modelPreset(name);
  if (!m) {
    std::fprintf(stderr, "error: %s\n", m.error().message.c_str());
    std::exit(2);
  }
  return std::move(m).value();
}

inline core::ClusterSpec clusterOrDie(const std::string& name) {
  auto c = core::clusterPreset(name);
  if (!c) {
    std::fprintf(stderr, "error: %s\n", c.error().message.c_str());
    std::exit(2);
  }
  return std::move(c).value();
}

// An H100 cluster of `gpus` GPUs (8 per node): the h100x8 preset with its node count changed.
inline core::ClusterSpec h100Cluster(std::uint32_t gpus) {
  core::ClusterSpec c = clusterOrDie("h100x8");
  c.nodes = std::max<std::uint32_t>(1, gpus / c.gpus_per_node);
  c.name = "h100x";
  c.name += std::to_string(c.worldSize());
  return c;
}

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Linear interpolation between order statistics (the usual "type 7" quantile).
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

inline double median(const std::vector<double>& v) { return quantile(v, 0.5); }
inline double minimum(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

}  // namespace shardscope::bench
