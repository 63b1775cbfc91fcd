// A ShardScope project: the model and cluster being planned plus the user's
// calibration and chosen grid. Saved as `*.shardscope` (JSON
// `shardscope.project/1`, docs/formats/project.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/constraints.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"

namespace shardscope::core {

struct Project {
  std::string name;
  ModelSpec model;
  ClusterSpec cluster;
  std::optional<Calibration> calibration;
  Constraints constraints;
  // Replica weight + optimizer sync every k steps (TorchRec's
  // dmp_collection_sync_interval_batches, default 1): a planning input.
  std::uint32_t sync_interval = 1;
  // The trainer plans are made for (TorchRec's layouts, or any layout for
  // ShardScope's engine): a planning input.
  PlanTarget target = PlanTarget::TorchRec;
  // The trace store of the project's runs, as given (relative paths are
  // relative to the project file's folder); "": <project>.runs.sqlite next to it.
  std::string trace_store;
  // The measured access file whose histograms the model's tables took
  // (applyAccess): where it came from and which tables, for provenance.
  struct AttachedAccess {
    std::string file;
    std::string source;
    std::vector<std::string> tables;
    bool operator==(const AttachedAccess&) const = default;
  };
  std::optional<AttachedAccess> access;
  std::optional<std::uint32_t> chosen_group_size;  // M of the grid the user picked
  std::optional<RankLayout> chosen_layout;         // its rank layout (absent: whichever is best)
  bool operator==(const Project&) const = default;
};

}  // namespace shardscope::core
