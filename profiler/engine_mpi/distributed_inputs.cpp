#include "distributed_inputs.h"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <utility>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/sweep.h"
#include "mpi_util.h"

namespace shardscope::profiler::mpi_engine {

using namespace mpi_util;

namespace {

// Rank 0 only: reads (or plans) the inputs and renders them as JSON text.
core::Result<Inputs> loadOnRoot(const DistributedConfig& c) {
  Inputs in;
  auto model = core::loadModelByNameOrFile(c.model);
  if (!model) return model.error();
  auto cluster = core::loadClusterByNameOrFile(c.cluster);
  if (!cluster) return cluster.error();
  in.model = std::move(model).value();
  in.cluster = std::move(cluster).value();
  if (c.grid > 0) {
    const std::uint32_t n = in.cluster.worldSize();
    if (n == 0 || n % c.grid != 0) {
      std::ostringstream m;
      m << "--grid " << c.grid << ": expected a divisor of the cluster's " << n << " GPUs (" << c.cluster << ")";
      return core::Error{m.str()};
    }
    planner::SweepOptions options;
    options.only_group_size = c.grid;
    options.sync_interval = std::max<std::uint32_t>(1, c.sync_interval);
    const planner::SweepResult r = planner::sweep(in.model, in.cluster, nullptr, core::Constraints{}, options);
    if (r.grids.empty()) return core::Error{"--grid: the planner returned no grid"};
    const planner::GridResult* g = r.best() != nullptr ? r.best() : &r.grids.front();
    if (!g->fits)
      std::cerr << "warning: the planned grid M=" << c.grid
                << " does not fit the cluster's memory; running it anyway\n";
    in.plan = g->plan;
    in.plan_source = std::string("<planned for --grid ") += std::to_string(c.grid) + ">";
  } else {
    auto plan = core::loadPlan(c.plan);
    if (!plan) return plan.error();
    in.plan = std::move(plan).value();
    in.plan_source = c.plan;
    if (in.cluster.worldSize() != in.plan.world_size)
      std::cerr << "warning: cluster " << in.cluster.name << " has " << in.cluster.worldSize() << " GPUs, the plan "
                << in.plan.world_size << "; the run records both as given\n";
  }
  in.model_json = core::toJson(in.model).dump();
  in.cluster_json = core::toJson(in.cluster).dump();
  in.plan_json = core::toJson(in.plan).dump();
  return in;
}

}  // namespace

core::Result<Inputs> broadcastInputs(MPI_Comm world, const DistributedConfig& c) {
  Inputs in;
  std::string error;
  if (rankOf(world) == 0) {
    auto r = loadOnRoot(c);
    if (r)
      in = std::move(r).value();
    else
      error = r.error().message;
  }
  bcastString(world, error, 0);
  if (!error.empty()) return core::Error{error};
  bcastString(world, in.model_json, 0);
  bcastString(world, in.cluster_json, 0);
  bcastString(world, in.plan_json, 0);
  bcastString(world, in.plan_source, 0);
  auto mj = core::parseJsonText(in.model_json, c.model);
  if (!mj) return mj.error();
  auto model = core::modelFromJson(*mj, c.model);
  if (!model) return model.error();
  auto cj = core::parseJsonText(in.cluster_json, c.cluster);
  if (!cj) return cj.error();
  auto cluster = core::clusterFromJson(*cj, c.cluster);
  if (!cluster) return cluster.error();
  auto pj = core::parseJsonText(in.plan_json, in.plan_source);
  if (!pj) return pj.error();
  auto plan = core::planFromJson(*pj, in.plan_source);
  if (!plan) return plan.error();
  in.model = std::move(model).value();
  in.cluster = std::move(cluster).value();
  in.plan = std::move(plan).value();
  return in;
}

}  // namespace shardscope::profiler::mpi_engine
