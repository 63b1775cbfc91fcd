// A run's device from its configuration (docs/analysis.md#like-for-like).
#include "shardscope/profiler/trace/run_device.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace shardscope::profiler {

namespace {

// The GPU names of a configuration's "gpus", in order (empty entries: ranks that named none).
std::vector<std::string> gpuNames(const EngineRunConfig& config) {
  std::vector<std::string> names;
  for (const std::string& g : config.gpus)
    if (!g.empty()) names.push_back(gpuNameOf(g));
  return names;
}

}  // namespace

std::string gpuNameOf(const std::string& entry) {
  const auto open = entry.rfind(" (GPU ");
  return open != std::string::npos && entry.ends_with(")") ? entry.substr(0, open) : entry;
}

core::DeviceInfo runDevice(const EngineRunConfig& config) {
  core::DeviceInfo d;
  const std::vector<std::string> gpus = gpuNames(config);
  if (!gpus.empty() || config.device.value_or("") == "cuda") {
    d.kind = core::DeviceClass::Gpu;
    if (!gpus.empty()) {
      // Mixed GPUs are named by the most common model; the count is every GPU.
      std::string best;
      std::size_t best_n = 0;
      for (const std::string& g : std::set<std::string>(gpus.begin(), gpus.end())) {
        const auto n = static_cast<std::size_t>(std::count(gpus.begin(), gpus.end(), g));
        if (n > best_n) best = g, best_n = n;
      }
      d.name = best;
      d.count = static_cast<std::uint32_t>(gpus.size());
    }
    return d;
  }
  if (config.schema == kEngineRunSchema && (config.mode == "emulate" || config.mode == "mpi")) {
    d.kind = core::DeviceClass::Cpu;
    d.name = config.cpu;
    d.threads = std::min<std::uint32_t>(config.threads, 1u << 24);
    d.count = static_cast<std::uint32_t>(config.ranks_measured.size());
  }
  return d;
}

}  // namespace shardscope::profiler
