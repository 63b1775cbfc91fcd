// The distributed engine: one MPI process per rank of a plan's 2D grid runs
// real training steps (ids all-to-all, pooled lookups, dense stand-in,
// gradient all-to-all, fused AdaGrad, replica weight sync, dense all-reduce),
// traces each phase and rank 0 writes every rank's trace into one store run.
// The step and its message layouts are described in docs/engine-distributed.md.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "shardscope/core/result.h"
#include "shardscope/profiler/engine/workload.h"  // firstSampleOf

namespace shardscope::profiler {

struct DistributedConfig {
  std::string model;         // preset name or shardscope.model/1 file
  std::string cluster;       // preset name or shardscope.cluster/1 file
  std::string plan;          // shardscope.plan/1 file; empty when grid > 0
  std::uint32_t grid = 0;    // > 0: plan in-process (planner::sweep) for sharding group size M
  std::string store;         // trace store file, created when missing
  std::uint32_t steps = 10;  // measured steps
  std::uint32_t warmup = 1;  // steps run before measuring, not recorded
  std::uint64_t seed = 1;
  unsigned threads = 0;                   // kernel threads per rank; 0: hardware threads / ranks on the node
  std::uint32_t sync_interval = 1;        // replica weight sync after every K-th measured step
  std::uint64_t memory_budget_bytes = 0;  // per process; 0: 60% of MemAvailable / ranks on the node
  std::uint32_t batch = 0;                // samples per rank per step; 0: the model's batch_size_per_gpu
  float learning_rate = 0.01f;
  std::string label;           // default "mpi <model> M=<M> R=<R>"
  bool progress = false;       // rank 0 prints `progress <done> <total>` after every step
  bool tracing = true;         // false: step summaries and table stats only (no spans/collectives)
  std::string summary_json;    // rank 0 writes shardscope.engine-summary/1 here when set
  std::string device = "cpu";  // "cuda": each process on its node's GPU (local rank), NCCL collectives
  bool cupti = true;           // cuda: CUPTI activity records of each rank
};

// A completed run: its id in the store (every rank knows it).
struct DistributedRun {
  std::int64_t run = 0;
};

// Collective over `world`: every rank calls it with the same config. Rank 0
// reads the inputs and broadcasts them, begins the run before the first step
// and prints `run <id>` (and, with progress, `progress <done> <total>`) to
// `out`, flushed. `cancel` is polled at step boundaries (a signal handler
// sets it); the ranks agree on it with an all-reduce so all stop after the
// same step, and the run is marked failed "cancelled". Every rank gets the
// same result: the run, or an error whose kind says why (InvalidInput: the
// inputs or options; Io: writing the store or the summary, or setting up
// the shards; Cancelled). A rank that throws inside a step calls MPI_Abort: the other
// ranks are blocked in a collective and cannot be told otherwise (the run
// then stays 'running' in the store until someone marks it failed).
[[nodiscard]] core::Result<DistributedRun> runDistributed(MPI_Comm world, const DistributedConfig& config,
                                                          const std::atomic<bool>& cancel, std::ostream& out);

}  // namespace shardscope::profiler
