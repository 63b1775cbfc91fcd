// The engine on this machine's GPUs, in this process: one thread per rank,
// each on its own GPU, NCCL communicators split from the world exactly as
// the plan's groups (nccl_comms.h), real training steps (cuda_rank), CUPTI
// activity tracing with external correlation to the engine's phases, and
// one run in the trace store with the same names an MPI run has (kind
// "cuda"). docs/engine-cuda.md says what runs and how it is measured.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/trace/engine_run_config.h"

namespace shardscope::profiler::cuda {

// The CUDA runtime, the newest CUDA the driver supports ("" without a
// driver) and NCCL this process runs with: "13.0", "12.8", "2.28.9".
struct StackVersions {
  std::string cuda_runtime;
  std::string cuda_driver;
  std::string nccl;
};
[[nodiscard]] StackVersions stackVersions();

using CudaProgress = std::function<void(std::uint64_t done, std::uint64_t total, std::string_view what)>;

struct CudaProfileOptions {
  std::uint32_t steps = 5;
  std::uint32_t warmup = 1;
  std::uint64_t seed = 1;
  std::uint32_t sync_interval = 1;  // replica weight sync after every K-th step
  std::optional<std::uint32_t> batch_size_override;
  AdagradConfig adagrad;
  bool trace_spans = true;  // spans and collectives (off: step summaries and table stats only)
  bool cupti = true;        // CUPTI activity records (kernels, copies, API, NVTX) as spans too
  // Untraced steps timed before the tracer starts: the baseline of the tracing overhead.
  std::uint32_t overhead_probe_steps = 3;
  // Embedding state per GPU; 0: 60% of the GPU's free memory.
  std::uint64_t memory_budget_bytes = 0;
  std::vector<int> devices;  // GPU of rank r = devices[r]; empty: rank r on GPU r
  std::string label;         // default "cuda <model> M=<M> R=<R>"
  CudaProgress progress;
  // Every rank's time of every measured step as the step ends (live views), called on one thread at a time.
  std::function<void(std::uint32_t rank, std::int64_t step, double step_ms)> on_step;
  const std::atomic<bool>* cancel = nullptr;  // checked between steps; all ranks stop after the same step
};

struct CudaProfileResult {
  core::store::RunId run{};
  bool cancelled = false;
  std::vector<double> step_ms;  // per measured step: the slowest rank's step
  GpuTracing tracing;
};

// Runs plan on this machine's GPUs (world size <= visible GPUs) and writes
// one run into `store`. Errors in the inputs (too few GPUs, a plan that does
// not match the model) come back before a run begins; a failure after it
// began marks the run failed with the reason; a cancel marks it "cancelled".
[[nodiscard]] core::Result<CudaProfileResult> runCudaProfile(const core::ModelSpec& model,
                                                             const core::ClusterSpec& cluster,
                                                             const core::ShardPlan& plan,
                                                             const CudaProfileOptions& options,
                                                             const std::filesystem::path& store);

}  // namespace shardscope::profiler::cuda
