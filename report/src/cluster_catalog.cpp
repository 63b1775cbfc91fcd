#include "shardscope/report/cluster_catalog.h"

#include <algorithm>
#include <array>
#include <string>

#include "shardscope/core/presets.h"

namespace shardscope::report {

namespace {

// The GPU kinds in the picker, in this order; kinds from other presets follow.
constexpr std::array<const char*, 4> kKindOrder = {"H100", "H200", "A100", "B200"};

// The NICs a network gives a node of `gpus_per_node` GPUs (0 in the spec: one per GPU).
std::uint32_t nicsOf(const core::NetworkSpec& n, std::uint32_t gpus_per_node) {
  return n.nics_per_node != 0 ? n.nics_per_node : gpus_per_node;
}

bool sameNetwork(const core::NetworkSpec& a, std::uint32_t a_gpus, const core::NetworkSpec& b, std::uint32_t b_gpus) {
  return nicsOf(a, a_gpus) == nicsOf(b, b_gpus) && a.nvls == b.nvls && a.sharp == b.sharp &&
         a.congestion_per_doubling == b.congestion_per_doubling;
}

}  // namespace

bool sameValues(const core::ClusterSpec& a, const core::ClusterSpec& b) {
  return a.nodes == b.nodes && a.gpus_per_node == b.gpus_per_node && a.gpu == b.gpu && a.intra_node == b.intra_node &&
         a.inter_node == b.inter_node && sameNetwork(a.network, a.gpus_per_node, b.network, b.gpus_per_node);
}

std::vector<std::uint32_t> divisors(std::uint32_t n) {
  std::vector<std::uint32_t> low;
  std::vector<std::uint32_t> high;
  for (std::uint32_t d = 1; static_cast<std::uint64_t>(d) * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

ClusterCatalog ClusterCatalog::builtIn() {
  std::vector<core::ClusterSpec> specs;
  for (const std::string& name : core::clusterPresetNames()) {
    core::Result<core::ClusterSpec> spec = core::clusterPreset(name);
    if (spec) specs.push_back(std::move(spec).value());
  }
  return ClusterCatalog(std::move(specs));
}

ClusterCatalog::ClusterCatalog(std::vector<core::ClusterSpec> specs) {
  const auto kind_rank = [](const core::ClusterSpec& c) {
    for (std::size_t i = 0; i < kKindOrder.size(); ++i)
      if (c.gpu.name.starts_with(kKindOrder[i])) return i;
    return kKindOrder.size();
  };
  std::stable_sort(specs.begin(), specs.end(),
                   [&](const core::ClusterSpec& a, const core::ClusterSpec& b) { return kind_rank(a) < kind_rank(b); });
  for (const core::ClusterSpec& c : specs) {
    if (matchingKind(c) < 0) kinds_.push_back({c.gpu, c.intra_node, c.inter_node, c.network});
    if (matchingSize(c) < 0) sizes_.push_back({c.nodes, c.gpus_per_node});
  }
  std::stable_sort(sizes_.begin(), sizes_.end(), [](const Size& a, const Size& b) {
    const auto gpus = [](const Size& s) { return static_cast<std::uint64_t>(s.nodes) * s.gpus_per_node; };
    return gpus(a) < gpus(b);
  });
  for (core::ClusterSpec& c : specs) presets_.push_back({matchingKind(c), matchingSize(c), std::move(c)});
}

int ClusterCatalog::matchingKind(const core::ClusterSpec& c) const {
  for (std::size_t i = 0; i < kinds_.size(); ++i) {
    const Kind& k = kinds_[i];
    // A kind's "one NIC per GPU" (0) means as many as the cluster's nodes hold.
    if (k.gpu == c.gpu && k.intra_node == c.intra_node && k.inter_node == c.inter_node &&
        sameNetwork(k.network, c.gpus_per_node, c.network, c.gpus_per_node))
      return static_cast<int>(i);
  }
  return -1;
}

int ClusterCatalog::matchingSize(const core::ClusterSpec& c) const {
  for (std::size_t i = 0; i < sizes_.size(); ++i)
    if (sizes_[i].nodes == c.nodes && sizes_[i].gpus_per_node == c.gpus_per_node) return static_cast<int>(i);
  return -1;
}

const core::ClusterSpec* ClusterCatalog::matchingPreset(const core::ClusterSpec& c) const {
  for (const Preset& p : presets_)
    if (sameValues(p.cluster, c)) return &p.cluster;
  return nullptr;
}

const core::ClusterSpec* ClusterCatalog::preset(int kind, int size) const {
  for (const Preset& p : presets_)
    if (p.kind == kind && p.size == size) return &p.cluster;
  return nullptr;
}

core::ClusterSpec ClusterCatalog::namedForValues(core::ClusterSpec cluster) const {
  const std::vector<std::string> preset_names = core::clusterPresetNames();
  const bool generated_name = cluster.name.empty() || cluster.name == kCustomName ||
                              std::find(preset_names.begin(), preset_names.end(), cluster.name) != preset_names.end();
  if (generated_name) {
    const core::ClusterSpec* p = matchingPreset(cluster);
    cluster.name = p != nullptr ? p->name : kCustomName;
  }
  return cluster;
}

}  // namespace shardscope::report
