// MPI communicators for a 2D grid: one for this rank's sharding group (the
// all-to-alls) and one for its replica group (the weight sync), split from a
// world communicator exactly as a plan lists the groups. Only built with MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"

namespace shardscope::profiler {

struct GridComms {
  MPI_Comm sharding = MPI_COMM_NULL;  // size M; rank = group rank
  MPI_Comm replica = MPI_COMM_NULL;   // size R
  int sharding_group = -1;            // index into plan.sharding_groups
  int replica_group = -1;             // index into plan.replica_groups (= group rank)
  GridComms() = default;
  GridComms(const GridComms&) = delete;
  GridComms& operator=(const GridComms&) = delete;
  GridComms(GridComms&& o) noexcept;
  GridComms& operator=(GridComms&& o) noexcept;
  ~GridComms();
};

// Collective over `world`, whose size must equal plan.world_size.
[[nodiscard]] core::Result<GridComms> makeGridComms(MPI_Comm world, const core::ShardPlan& plan);

}  // namespace shardscope::profiler
