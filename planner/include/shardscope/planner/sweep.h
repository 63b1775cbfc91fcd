// The grid sweep: plan every (M, layout) of a cluster and rank the grids by
// predicted step time. Progress and cancellation for the CLI and the GUI.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/constraints.h"
#include "shardscope/core/model.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/planner/partitioner.h"

namespace shardscope::planner {

struct SweepOptions {
  PlannerOptions planner;
  std::optional<std::uint32_t> only_group_size;  // --grid M
  std::optional<core::RankLayout> only_layout;   // --layout
  std::uint32_t sync_interval = 1;
  bool balance_replica_sync = true;  // see CostConstants::balance_replica_sync
};

struct SweepResult {
  std::vector<GridResult> grids;  // ranked: fitting grids by step time, then the ones that do not fit
  bool cancelled = false;
  [[nodiscard]] const GridResult* best() const {
    return grids.empty() || !grids.front().fits ? nullptr : &grids.front();
  }
};

// The cost model sweep() prices with for these inputs (the same constants,
// sync interval and objective): breakdowns of its results add up.
[[nodiscard]] CostModel sweepCostModel(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                       const core::Calibration* calibration, const SweepOptions& options);

// progress(done, total) is called after each grid; return false from it, or
// set *cancel, to stop early (the result then holds the grids done so far).
using SweepProgress = std::function<bool(std::size_t done, std::size_t total)>;

[[nodiscard]] SweepResult sweep(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                const core::Calibration* calibration, const core::Constraints& constraints,
                                const SweepOptions& options, const SweepProgress& progress = {},
                                const std::atomic<bool>* cancel = nullptr);

}  // namespace shardscope::planner
