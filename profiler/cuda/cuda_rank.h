// One rank of the GPU engine on its device: its shards in one DeviceTables,
// its step buffers, its NCCL grid, and the training step (docs/engine-cuda.md#step).
// Private to shardscope_cuda; the in-process driver runs one per GPU thread,
// the MPI engine one per process.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_kernels.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/profiler/cuda/embedding_cuda.h"
#include "shardscope/profiler/cuda/exchange_layout.h"
#include "shardscope/profiler/cuda/nccl_comms.h"
#include "shardscope/profiler/engine/shard_inputs.h"
#include "shardscope/profiler/engine/thread_pool.h"
#include "shardscope/profiler/engine/workload.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler::cuda {

// A device array that grows (never shrinks) and frees itself.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (p_ != nullptr) cudaFree(p_);
  }
  [[nodiscard]] core::Status reserve(std::size_t n, const char* what);
  [[nodiscard]] T* get() const { return p_; }
  [[nodiscard]] std::size_t capacity() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Pinned host memory that grows.
template <typename T>
class PinnedArray {
 public:
  PinnedArray() = default;
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  ~PinnedArray() {
    if (p_ != nullptr) cudaFreeHost(p_);
  }
  [[nodiscard]] core::Status reserve(std::size_t n, const char* what);
  [[nodiscard]] T* get() const { return p_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

[[nodiscard]] core::Error cudaError(const std::string& what, cudaError_t e);

// Returns the error of a failed CUDA call (`what` names it) or of a failed Status/Result expression.
#define SS_CUDA(call, what)                                          \
  do {                                                               \
    if (const cudaError_t ss_e_ = (call); ss_e_ != cudaSuccess)      \
      return ::shardscope::profiler::cuda::cudaError((what), ss_e_); \
  } while (0)
#define SS_TRY(expr)                                          \
  do {                                                        \
    if (auto ss_st_ = (expr); !ss_st_) return ss_st_.error(); \
  } while (0)

struct CudaRankConfig {
  std::uint64_t seed = 1;
  std::uint32_t batch = 0;  // samples per rank per step
  AdagradConfig adagrad;
  bool tracing = true;         // spans and collectives; off: step summaries and table stats only
  unsigned input_threads = 1;  // host threads generating this rank's ids
  // Set when another rank of the process failed: a wait on the stream then aborts this rank's
  // communicators (its kernels may be waiting for the failed peer) and returns an error.
  const std::atomic<bool>* peer_failed = nullptr;
};

// The engine phases (external correlation ids pushed around each for CUPTI).
enum class Phase : std::uint32_t {
  Input = 1,
  A2aIds,
  EmbFwd,
  A2aPooled,
  Dense,
  A2aGrads,
  EmbBwd,
  DpAllreduce,
  DenseAllreduce,
  ReplicaSync
};
inline constexpr std::uint32_t kPhaseCount = 11;  // index 0 unused
[[nodiscard]] const char* phaseKind(Phase p);     // the span kind (span_kind::...)

// Hooks around every phase (the CUPTI tracer's external correlation), called on the rank's thread.
struct PhaseHooks {
  void (*push)(void* ctx, std::uint64_t external_id) = nullptr;
  void (*pop)(void* ctx) = nullptr;
  void* ctx = nullptr;
};
// external id = (rank + 1) << 40 | (step + 1) << 8 | phase: decodable by the driver.
[[nodiscard]] constexpr std::uint64_t externalId(std::uint32_t rank, std::int64_t step, Phase p) {
  return (std::uint64_t{rank} + 1) << 40 | (static_cast<std::uint64_t>(step + 1) & 0xFFFFFFFFULL) << 8 |
         static_cast<std::uint32_t>(p);
}

class CudaRank {
 public:
  CudaRank(const core::ModelSpec& model, const core::ShardPlan& plan, std::vector<std::vector<RankShard>> group_shards,
           NcclGrid grid, int device, const CudaRankConfig& config, const WorkloadGenerator& workload);
  CudaRank(const CudaRank&) = delete;
  CudaRank& operator=(const CudaRank&) = delete;
  ~CudaRank();

  // Allocates the shards (initialised as the CPU engine's) and the step buffers; `host` for the rank info.
  [[nodiscard]] core::Status setup(const std::string& host);
  // One training step: `measured` >= 0 is recorded as that step, -1 is a warm-up.
  [[nodiscard]] core::Status step(std::uint64_t global_step, std::int64_t measured, bool sync);
  void setHooks(const PhaseHooks& hooks) { hooks_ = hooks; }
  void writeTableStats();
  void resetCounters();

  TraceRecorder& recorder() { return rec_; }
  [[nodiscard]] std::uint32_t rank() const { return grid_.rank(); }
  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] double lastStepMs() const { return last_step_ms_; }
  [[nodiscard]] std::uint64_t stateBytes() const { return tables_.memoryBytes(); }
  [[nodiscard]] NcclGrid& grid() { return grid_; }
  [[nodiscard]] const NcclGrid& grid() const { return grid_; }
  // FNV-1a digests of every own shard's weights + momentum (replicas must agree after a sync).
  [[nodiscard]] core::Result<std::vector<std::uint64_t>> digests() const;

 private:
  struct PhaseMark {
    Phase phase;
    cudaEvent_t begin, end;
    std::int64_t bytes;
    bool collective;
    std::uint32_t group;  // recorder name of the group (collectives)
    int peers;
  };
  [[nodiscard]] core::Status beginPhase(Phase p);
  [[nodiscard]] core::Status endPhase(Phase p, std::int64_t bytes, bool collective = false, std::uint32_t group = 0,
                                      int peers = 0);
  [[nodiscard]] core::Status generateAndRoute(std::uint64_t first);
  [[nodiscard]] core::Status exchangeIds();
  [[nodiscard]] core::Status forward();
  [[nodiscard]] core::Status exchangePooled();
  [[nodiscard]] core::Status denseStep(std::uint64_t first);
  [[nodiscard]] core::Status exchangeGradients();
  [[nodiscard]] core::Status backward();
  [[nodiscard]] core::Status dataParallelBackward();
  [[nodiscard]] core::Status denseAllreduce();
  [[nodiscard]] core::Status replicaSync();
  [[nodiscard]] core::Status recordStep(std::int64_t host_start);
  // Waits for the stream; gives up, aborting the own communicators, when a peer rank failed.
  [[nodiscard]] core::Status waitStream(const char* what);
  [[nodiscard]] core::Status setupBuffers();
  [[nodiscard]] core::Status setupDescriptors();
  void setupNames(const std::string& host);

  const core::ModelSpec& model_;
  const core::ShardPlan& plan_;
  std::vector<std::vector<RankShard>> group_shards_;
  NcclGrid grid_;
  int device_ = 0;
  CudaRankConfig cfg_;
  const WorkloadGenerator& gen_;
  ExchangeLayout layout_;
  TraceRecorder rec_;
  PhaseHooks hooks_;
  cudaStream_t stream_ = nullptr;
  DeviceTables tables_;
  KernelWorkspace route_ws_, served_ws_, dp_ws_, dp_update_ws_;
  ScanScratch scan_;
  std::int64_t step_ = -1;
  double last_step_ms_ = 0;

  ThreadPool input_pool_;
  // Inputs: per used table, this rank's B samples (host, pinned) and on the device.
  std::vector<Batch> batches_;
  PinnedArray<std::uint32_t> host_lengths_;
  PinnedArray<std::uint64_t> host_ids_;
  DeviceArray<std::uint32_t> dev_lengths_;
  DeviceArray<std::uint64_t> dev_ids_;
  std::vector<std::size_t> length_at_, id_at_, id_count_;  // per table: offsets into the input arrays
  std::vector<RoutedIds> routed_;                          // per route group (layout_.route_groups)
  std::vector<RoutedIds> dp_routed_;                       // per data-parallel shard (layout_.dp)
  // Ids all-to-all.
  DeviceArray<std::uint32_t> send_arena_, counts_send_, counts_recv_;
  PinnedArray<std::uint32_t> host_counts_;
  DeviceArray<std::uint32_t> served_lengths_, served_offsets_, served_ids_;
  std::vector<std::vector<RoutedBlock>> send_blocks_;
  // Data-parallel bags.
  DeviceArray<std::uint32_t> dp_lengths_, dp_offsets_, dp_ids_;
  DeviceArray<std::uint32_t> identity_offsets_, identity_ids_;
  BatchLayout served_layout_, dp_layout_, dp_update_layout_;
  std::vector<std::size_t> dp_grad_offset_;
  std::size_t dp_grad_floats_ = 0;
  // Activations and gradients.
  DeviceArray<float> served_out_, served_grad_, pooled_recv_, grad_send_, pooled_, grad_, dp_grad_, dense_params_;
  DeviceArray<float> dense_a_, dense_b_, dense_c_;
  std::uint32_t dense_n_ = 0;
  std::uint64_t dense_reps_ = 0;
  // Combine / loss descriptors (device).
  DeviceArray<std::uint64_t> combine_out_offset_, combine_source_, loss_offset_;
  DeviceArray<std::uint32_t> combine_dims_, combine_begin_, combine_col_, combine_cols_, loss_dims_, loss_table_;
  CombineArgs combine_args_;
  LossArgs loss_args_;

  // Timing.
  std::vector<PhaseMark> marks_;
  std::vector<cudaEvent_t> event_pool_;
  std::size_t events_used_ = 0;
  cudaEvent_t step_begin_ = nullptr;
  std::vector<BackwardCounts> counts_;  // per step: served, dp
  struct Names {
    std::uint32_t step = 0, all_to_all = 0, all_reduce = 0, sharding = 0, replica = 0, world = 0, tbe = 0;
    std::uint32_t pg_sharding = 0, pg_replica = 0, pg_world = 0;  // the communicators' names
    std::vector<std::uint32_t> phase, table;
  } names_;
  std::vector<std::int64_t> fwd_ns_, bwd_ns_, lookups_, unique_;  // per own shard (apportioned times)
  std::int64_t step_lookups_ = 0;
  std::uint32_t served_id_total_ = 0, dp_id_total_ = 0, dp_rows_ = 0;
  std::vector<std::int64_t> step_shard_lookups_;                     // per own shard, this step
  std::int64_t seq_sharding_ = 0, seq_replica_ = 0, seq_world_ = 0;  // recorded calls per communicator
};

}  // namespace shardscope::profiler::cuda
