// A run's device from its configuration (docs/analysis.md#like-for-like).
#include "shardscope/profiler/trace/run_device.h"

#include <algorithm>
#include <set>

namespace shardscope::profiler {

namespace {

std::string stringOr(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::uint32_t countOr(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return 0;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(it->get<std::uint64_t>(), 1u << 24));
}

// The GPU names of a configuration's "gpus" (strings), in order; the most common one first when they differ.
std::vector<std::string> gpuNames(const nlohmann::json& config) {
  std::vector<std::string> names;
  const auto it = config.find("gpus");
  if (it == config.end() || !it->is_array()) return names;
  for (const auto& g : *it)
    if (g.is_string() && !g.get<std::string>().empty()) names.push_back(gpuNameOf(g.get<std::string>()));
  return names;
}

}  // namespace

std::string gpuNameOf(const std::string& entry) {
  const auto open = entry.rfind(" (GPU ");
  return open != std::string::npos && entry.ends_with(")") ? entry.substr(0, open) : entry;
}

core::DeviceInfo runDevice(const nlohmann::json& config) {
  core::DeviceInfo d;
  if (!config.is_object()) return d;
  const std::vector<std::string> gpus = gpuNames(config);
  const std::string mode = stringOr(config, "mode");
  if (!gpus.empty() || stringOr(config, "device") == "cuda") {
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
  if (stringOr(config, "schema") == "shardscope.engine-run/1" && (mode == "emulate" || mode == "mpi")) {
    d.kind = core::DeviceClass::Cpu;
    d.name = stringOr(config, "cpu");
    d.threads = countOr(config, "threads");
    const auto ranks = config.find("ranks_measured");
    if (ranks != config.end() && ranks->is_array()) d.count = static_cast<std::uint32_t>(ranks->size());
  }
  return d;
}

}  // namespace shardscope::profiler
