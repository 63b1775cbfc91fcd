// The scaling sweep: predicted throughput per GPU over world sizes 8..4,096
// and every sharding group size, each cell the best layout that fits (the
// Grid Explorer's heatmap). Also how a project is swept: its sweep options
// and why a project cannot be planned at all.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/project.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::planner {

// How the project asks to be swept (sync interval, target, ...): the one
// place a project turns into planner options.
[[nodiscard]] SweepOptions sweepOptionsOf(const core::Project& project);

// Why a project cannot be planned at all ("the cluster has no GPUs (N =
// 0)", ...), or empty.
[[nodiscard]] std::string unplannable(const core::Project& project);

// One cell of the heatmap: the best layout of group size M at world size N
// (scaling efficiency: its per-GPU throughput over the best of the table).
struct ScalingCell {
  std::uint32_t world_size = 0;
  std::uint32_t group_size = 0;
  core::RankLayout layout = core::RankLayout::Strided;
  bool planned = false;  // M divides N and the grid was planned
  bool fits = false;
  double samples_per_second_per_gpu = 0;
  double step_ms = 0;
  StepBreakdown step;  // its phases
};

// The phases of a step, for saying which one makes a world size slower.
enum class StepPhase { Embedding, AllToAll, ReplicaSync, Dense, Memory };
[[nodiscard]] std::string_view toString(StepPhase p);

// One column of the heatmap read as weak scaling (the batch per GPU fixed):
// the best grid that fits at this world size, and, against the previous
// world size, the phase whose time grew most (the cause of a drop in
// per-GPU throughput), or Memory where no grid fits.
struct WeakScalingPoint {
  std::uint32_t world_size = 0;
  const ScalingCell* best = nullptr;  // nullptr: no planned grid fits
  double efficiency = 0;              // per-GPU throughput / the best per-GPU throughput of all world sizes
  bool drop = false;                  // per-GPU throughput at least 5 % below the previous world size's
  StepPhase cause = StepPhase::Embedding;
  double cause_ms = 0;  // how much that phase grew (ms per step)
};

struct ScalingResult {
  std::vector<std::uint32_t> world_sizes;  // columns, ascending
  std::vector<std::uint32_t> group_sizes;  // rows, ascending
  std::vector<ScalingCell> cells;          // row-major: group_sizes x world_sizes
  bool cancelled = false;
  std::string error;
  [[nodiscard]] const ScalingCell* at(std::size_t m_index, std::size_t n_index) const {
    const std::size_t i = m_index * world_sizes.size() + n_index;
    return i < cells.size() ? &cells[i] : nullptr;
  }
  // The highest per-GPU throughput of a planned cell that fits (0: none).
  [[nodiscard]] double bestPerGpu() const;
  // Per world size (columns done so far), its best grid and what grew. The
  // points' `best` point into this result's cells: valid while it lives unchanged.
  [[nodiscard]] std::vector<WeakScalingPoint> weakScaling() const;
};

// The world sizes of the heatmap for a cluster, all whole nodes of its shape
// (or part of one node): powers of two from 8 to 4,096 that its nodes make,
// the node size times powers of two up to 4,096 when it is not a power of two
// (72: 72, 144, ..., 2,304), and the cluster's own N.
[[nodiscard]] std::vector<std::uint32_t> scalingWorldSizes(const core::ClusterSpec& cluster);

// Plans the project at every world size of scalingWorldSizes (the cluster
// resized, nodes of the same shape); progress(done, total) per world size.
// Cancelled: the world sizes done so far. An unplannable project or a
// planner exception: `error` set.
[[nodiscard]] ScalingResult runScalingSweep(const core::Project& project, const std::atomic<bool>* cancel,
                                            const std::function<void(int, int)>& progress = {});

}  // namespace shardscope::planner
