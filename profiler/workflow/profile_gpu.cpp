#include "profile_gpu.h"

#include <string>

#ifdef SHARDSCOPE_GPU_ENGINE
#include "shardscope/profiler/cuda/cuda_engine.h"
#endif

namespace shardscope::profiler {

#ifdef SHARDSCOPE_GPU_ENGINE

GpuStackVersions gpuStackVersions() {
  const cuda::StackVersions v = cuda::stackVersions();
  return {v.cuda_runtime, v.cuda_driver, v.nccl};
}

bool gpuEngineBuilt() { return true; }

core::Result<core::store::RunId> runOnLocalGpus(const ProfileRequest& r, const ProfileProgressFn& progress,
                                                const std::atomic<bool>* cancel) {
  const core::ModelSpec model = profileModel(r);
  cuda::CudaProfileOptions o;
  o.steps = r.steps;
  o.warmup = r.warmup;
  o.seed = r.seed;
  o.sync_interval = profileSyncInterval(r);
  o.trace_spans = r.trace_spans;
  o.cupti = r.cupti && r.trace_spans;
  o.memory_budget_bytes = r.memory_budget_bytes.value_or(0);
  o.label = r.label.value_or("cuda " + model.name + " M=" + std::to_string(r.plan.sharding_group_size) +
                             " R=" + std::to_string(r.plan.replicas));
  o.cancel = cancel;
  if (r.on_step)
    o.on_step = [&r](std::uint32_t rank, std::int64_t step, double ms) { r.on_step(RankStepTime{rank, step, ms}); };
  const std::string stage = "cuda x" + std::to_string(r.plan.world_size);
  if (progress) progress({ProfileProgress::Kind::Begin, stage, 0, 0, {}});
  o.progress = [&](std::uint64_t done, std::uint64_t total, std::string_view what) {
    if (progress) progress({ProfileProgress::Kind::Step, stage, done, total, std::string(what)});
  };
  auto result = cuda::runCudaProfile(model, r.project.cluster, r.plan, o, r.store);
  if (progress) progress({ProfileProgress::Kind::End, stage, 0, 0, {}});
  if (!result) return result.error();
  if (result->cancelled)
    return core::Error{"cancelled; run " + std::to_string(static_cast<long long>(result->run)) + " in " + r.store +
                           " is marked failed",
                       core::ErrorKind::Cancelled};
  return result->run;
}

#else

GpuStackVersions gpuStackVersions() { return {}; }

bool gpuEngineBuilt() { return false; }

core::Result<core::store::RunId> runOnLocalGpus(const ProfileRequest& /*request*/,
                                                const ProfileProgressFn& /*progress*/,
                                                const std::atomic<bool>* /*cancel*/) {
  return core::Error{
      "--device cuda: this build has no GPU engine (it needs the CUDA toolkit with NCCL and CUPTI at "
      "configure time: docs/engine-cuda.md#building)",
      core::ErrorKind::Usage};
}

#endif

}  // namespace shardscope::profiler
