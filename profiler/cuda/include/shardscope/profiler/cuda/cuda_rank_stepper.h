// One process's rank of the distributed engine on its GPU (the MPI driver's
// RankStepper for --device cuda): NCCL communicators from the id rank 0
// broadcast, the GPU step, and this process's CUPTI records as spans.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/rank_stepper.h"
#include "shardscope/profiler/engine/shard_inputs.h"

namespace shardscope::profiler::cuda {

struct GpuStepperOptions {
  std::uint64_t seed = 1;
  std::uint32_t batch = 0;
  AdagradConfig adagrad;
  bool tracing = true;
  bool cupti = true;
  unsigned input_threads = 1;
};

// Collective over the plan's world (every process calls it): device
// `device` becomes current, the NCCL grid is built from `id`, the shards
// are allocated and initialised. The plan and model must outlive the stepper.
[[nodiscard]] core::Result<std::unique_ptr<RankStepper>> makeCudaRankStepper(
    const core::ModelSpec& model, const core::ShardPlan& plan, std::vector<std::vector<RankShard>> group_shards,
    const ncclUniqueId& id, std::uint32_t rank, int device, const GpuStepperOptions& options, const std::string& host);

}  // namespace shardscope::profiler::cuda
