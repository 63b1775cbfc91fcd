// The distributed engine's inputs (model, cluster, plan): rank 0 reads or
// plans them and broadcasts their JSON, so every rank runs what rank 0 read.
#pragma once

#include <mpi.h>

#include <string>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/profiler/engine_mpi/distributed.h"

namespace shardscope::profiler::mpi_engine {

struct Inputs {
  core::ModelSpec model;
  core::ClusterSpec cluster;
  core::ShardPlan plan;
  std::string model_json, cluster_json, plan_json;
  std::string plan_source;
};

// Every rank: the inputs as rank 0 read them (one source of truth, so that a
// file that differs between nodes cannot make ranks disagree).
[[nodiscard]] core::Result<Inputs> broadcastInputs(MPI_Comm world, const DistributedConfig& c);

}  // namespace shardscope::profiler::mpi_engine
