// The cluster presets as the Cluster page offers them: the GPU kinds (GPU,
// links and network) and world sizes (nodes x GPUs per node) they are made of, in
// the pickers' order, which kind, size or preset a cluster's values match,
// and the name a cluster gets once its values change.
#pragma once

#include <cstdint>
#include <vector>

#include "shardscope/core/cluster.h"

namespace shardscope::report {

class ClusterCatalog {
 public:
  struct Kind {
    core::GpuKind gpu;
    core::LinkSpec intra_node;
    core::LinkSpec inter_node;
    core::NetworkSpec network;  // NICs per node as the kind's presets set them
  };
  struct Size {
    std::uint32_t nodes = 0;
    std::uint32_t gpus_per_node = 0;
  };
  struct Preset {
    int kind = 0;
    int size = 0;
    core::ClusterSpec cluster;
  };

  // The name a cluster gets once its values match no preset: keeping
  // "h100x64" on 16 nodes of B200 would mislead in every export.
  static constexpr const char* kCustomName = "custom";

  // The built-in presets (core::clusterPresetNames).
  [[nodiscard]] static ClusterCatalog builtIn();
  // Kinds ordered H100, H200, A100, B200, then the others as given; sizes by GPU count.
  explicit ClusterCatalog(std::vector<core::ClusterSpec> presets);

  [[nodiscard]] const std::vector<Kind>& kinds() const { return kinds_; }
  [[nodiscard]] const std::vector<Size>& sizes() const { return sizes_; }
  [[nodiscard]] const std::vector<Preset>& presets() const { return presets_; }

  // Index of the kind / size whose values `c` has, else -1.
  [[nodiscard]] int matchingKind(const core::ClusterSpec& c) const;
  [[nodiscard]] int matchingSize(const core::ClusterSpec& c) const;
  // The preset with `c`'s values (its name and measured collectives aside), else nullptr.
  [[nodiscard]] const core::ClusterSpec* matchingPreset(const core::ClusterSpec& c) const;
  // The preset made of kind `kind` at size `size`, else nullptr.
  [[nodiscard]] const core::ClusterSpec* preset(int kind, int size) const;
  // `cluster` named for its values: a preset's name stays only while the
  // values are the preset's (else "custom"); a name the user gave ("lab")
  // stays whatever the values.
  [[nodiscard]] core::ClusterSpec namedForValues(core::ClusterSpec cluster) const;

 private:
  std::vector<Kind> kinds_;
  std::vector<Size> sizes_;
  std::vector<Preset> presets_;
};

// Whether two clusters have the same hardware (name and measured collectives
// aside). NICs per node are compared as counts: 0 (one per GPU) on nodes of
// 8 GPUs is the same network as 8.
[[nodiscard]] bool sameValues(const core::ClusterSpec& a, const core::ClusterSpec& b);
// The divisors of n, ascending: the sharding group sizes M a world size N allows.
[[nodiscard]] std::vector<std::uint32_t> divisors(std::uint32_t n);

}  // namespace shardscope::report
