// Built-in models and clusters (resources/models, resources/clusters),
// compiled into the library so every executable can load them by name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

inline constexpr std::string_view kDefaultModelPreset = "dcnv2";
inline constexpr std::string_view kDefaultClusterPreset = "h100x64";

[[nodiscard]] std::vector<std::string> modelPresetNames();
[[nodiscard]] std::vector<std::string> clusterPresetNames();
[[nodiscard]] Result<ModelSpec> modelPreset(std::string_view name);
[[nodiscard]] Result<ClusterSpec> clusterPreset(std::string_view name);

// A name of a preset, or a path to a `shardscope.model/1` / `shardscope.cluster/1` file.
[[nodiscard]] Result<ModelSpec> loadModelByNameOrFile(const std::string& name_or_path);
[[nodiscard]] Result<ClusterSpec> loadClusterByNameOrFile(const std::string& name_or_path);

// The built-in default project: MLPerf DLRM-DCNv2 on 8 nodes of 8 H100.
[[nodiscard]] Project defaultProject();
// "DLRM-DCNv2 on 64 H100": the model's name up to " (", the world size and
// the GPU's first word. A project with this name follows its model and cluster.
[[nodiscard]] std::string defaultProjectName(const ModelSpec& model, const ClusterSpec& cluster);
// The project after an edit: a name of the default form (for the old model
// and cluster, at any world size) becomes the default for the new ones; a
// name the user gave, before or in this edit, stays.
[[nodiscard]] Project withFollowedName(const Project& before, Project after);

}  // namespace shardscope::core
