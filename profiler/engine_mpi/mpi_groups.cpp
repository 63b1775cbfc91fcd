#include "shardscope/profiler/engine_mpi/mpi_groups.h"

#include <string>
#include <utility>

#include "shardscope/core/rank_layout.h"

namespace shardscope::profiler {

namespace {
void freeComm(MPI_Comm& c) {
  if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  c = MPI_COMM_NULL;
}
}  // namespace

GridComms::GridComms(GridComms&& o) noexcept
    : sharding(std::exchange(o.sharding, MPI_COMM_NULL)),
      replica(std::exchange(o.replica, MPI_COMM_NULL)),
      sharding_group(o.sharding_group),
      replica_group(o.replica_group) {}

GridComms& GridComms::operator=(GridComms&& o) noexcept {
  if (this != &o) {
    freeComm(sharding);
    freeComm(replica);
    sharding = std::exchange(o.sharding, MPI_COMM_NULL);
    replica = std::exchange(o.replica, MPI_COMM_NULL);
    sharding_group = o.sharding_group;
    replica_group = o.replica_group;
  }
  return *this;
}

GridComms::~GridComms() {
  freeComm(sharding);
  freeComm(replica);
}

core::Result<GridComms> makeGridComms(MPI_Comm world, const core::ShardPlan& plan) {
  int size = 0, rank = 0;
  MPI_Comm_size(world, &size);
  MPI_Comm_rank(world, &rank);
  if (static_cast<std::uint32_t>(size) != plan.world_size)
    return core::Error{"the plan is for " + std::to_string(plan.world_size) + " ranks but MPI started " +
                       std::to_string(size)};
  const auto split = core::commSplitOf(plan.sharding_groups, plan.replica_groups, static_cast<std::uint32_t>(rank));
  if (!split)
    return core::Error{"rank " + std::to_string(rank) +
                       " is not in exactly one sharding and one replica group of the plan"};
  GridComms c;
  c.sharding_group = split->sharding_color;
  c.replica_group = split->replica_color;
  if (MPI_Comm_split(world, split->sharding_color, split->sharding_key, &c.sharding) != MPI_SUCCESS)
    return core::Error{"MPI_Comm_split (sharding group) failed"};
  if (MPI_Comm_split(world, split->replica_color, split->replica_key, &c.replica) != MPI_SUCCESS)
    return core::Error{"MPI_Comm_split (replica group) failed"};
  return c;
}

}  // namespace shardscope::profiler
