#include "shardscope/profiler/engine_mpi/mpi_groups.h"

#include <string>
#include <utility>

namespace shardscope::profiler {

namespace {
void freeComm(MPI_Comm& c) {
  if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  c = MPI_COMM_NULL;
}

// (group index, position) of `rank` in `groups`, or (-1, -1).
std::pair<int, int> find(const std::vector<std::vector<std::uint32_t>>& groups, int rank) {
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i = 0; i < groups[g].size(); ++i)
      if (static_cast<int>(groups[g][i]) == rank) return {static_cast<int>(g), static_cast<int>(i)};
  return {-1, -1};
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
  const auto [sg, spos] = find(plan.sharding_groups, rank);
  const auto [rg, rpos] = find(plan.replica_groups, rank);
  if (sg < 0 || rg < 0)
    return core::Error{"rank " + std::to_string(rank) + " is in no sharding or replica group of the plan"};
  GridComms c;
  c.sharding_group = sg;
  c.replica_group = rg;
  // Color = group index, key = position: the communicator rank is the group rank.
  if (MPI_Comm_split(world, sg, spos, &c.sharding) != MPI_SUCCESS)
    return core::Error{"MPI_Comm_split (sharding group) failed"};
  if (MPI_Comm_split(world, rg, rpos, &c.replica) != MPI_SUCCESS)
    return core::Error{"MPI_Comm_split (replica group) failed"};
  return c;
}

}  // namespace shardscope::profiler
