// Between the embedding kernels' host side (embedding_cuda.cpp, C++20, the
// public API) and their device side (embedding_cuda.cu, CUDA C++17): plain
// descriptors in device memory and one launcher per operation. Private to
// shardscope_cuda; C++17 and no device code, so that both sides include it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "shardscope/profiler/cuda/launch_config.h"

namespace shardscope::profiler::cuda::detail {

// One shard as a launch sees it (a device array, one entry per DeviceTables
// shard). The per-call fields come from the BatchLayout.
struct ShardDesc {
  unsigned char* weights = nullptr;  // row 0
  std::uint64_t pitch = 0;           // bytes per row (16-byte multiple)
  std::uint64_t out_offset = 0;      // floats: bag 0's output (forward) or gradient (backward) row
  std::uint32_t dim = 0;
  std::uint32_t type = 0;          // DeviceWeightType
  std::uint32_t row_base = 0;      // linear row of row 0: momentum index and sort key base
  std::uint32_t rows = 0;          // rows
  std::uint32_t bag_begin = 0;     // first global bag
  std::uint32_t bags = 0;          // bags
  std::uint32_t out_stride = 0;    // floats between consecutive bags' rows
  std::uint32_t item_begin = 0;    // first forward warp item
  std::uint32_t threads_log2 = 0;  // forward threads per bag = 1 << threads_log2
  std::uint32_t vectors = 0;       // 16-byte vectors per row
  std::uint32_t vector_store = 0;  // 1: output rows 16-byte aligned (float4 stores)
  std::uint32_t reserved = 0;
};

// A failed step: the CUDA error and which call or kernel.
struct LaunchError {
  cudaError_t error = cudaSuccess;
  const char* what = "";
  [[nodiscard]] bool failed() const { return error != cudaSuccess; }
};

// ---------------------------------------------------------------- initialize

struct InitializeArgs {
  unsigned char* weights = nullptr;
  std::uint64_t pitch = 0;
  std::uint64_t rows = 0;
  std::uint32_t dim = 0;
  std::uint32_t type = 0;
  std::uint64_t seed = 0;
  std::uint64_t row_offset = 0;
  std::uint32_t col_offset = 0;
  GridLaunch grid;
};
[[nodiscard]] LaunchError launchInitialize(const InitializeArgs& args, cudaStream_t stream);

// ---------------------------------------------------------------- forward

struct ForwardArgs {
  const ShardDesc* shards = nullptr;
  std::uint32_t shard_count = 0;
  std::uint32_t items = 0;  // warp work items over all shards
  const std::uint32_t* offsets = nullptr;
  const std::uint32_t* ids = nullptr;
  float* out = nullptr;
  bool mean = false;
  GridLaunch grid;
};
[[nodiscard]] LaunchError launchForward(const ForwardArgs& args, cudaStream_t stream);

// ---------------------------------------------------------------- backward

// Device scratch of one backward, sized by the host side: keys/bags pairs
// (two buffers each for the radix sort) and starts of `lookups` entries,
// counters[2] (unique rows, hot rows), long_rows, chunk_counts and
// chunk_begin of longRowBound + 1 entries, partials of longChunkBound x
// max_dim floats, stats of 2 x shards + 2.
struct BackwardScratch {
  std::uint32_t* keys[2] = {nullptr, nullptr};
  std::uint32_t* bags[2] = {nullptr, nullptr};
  std::uint32_t* starts = nullptr;
  std::uint32_t* long_rows = nullptr;
  std::uint32_t* counters = nullptr;
  std::uint32_t* chunk_counts = nullptr;
  std::uint32_t* chunk_begin = nullptr;
  float* partials = nullptr;
  std::uint32_t* stats = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
};

struct BackwardArgs {
  const ShardDesc* shards = nullptr;
  std::uint32_t shard_count = 0;
  std::uint32_t bags = 0;
  std::uint32_t lookups = 0;
  std::uint32_t long_row_bound = 0;  // longRowBound(lookups): 0 means no row can be hot
  const std::uint32_t* offsets = nullptr;
  const std::uint32_t* ids = nullptr;
  const float* grad = nullptr;
  float* momentum = nullptr;  // linear over all shards' rows
  bool mean = false;
  float learning_rate = 0.0f;
  float eps = 0.0f;
  int end_bit = 1;
  std::uint32_t max_dim = 0;
  GridLaunch keys, update, chunk_count, chunk_sum, long_update, stats;
  BackwardScratch scratch;
  // stats[0] = unique rows, [1 + s] = lookups of shard s, [1 + S + s] = the
  // first unique row of shard s (s <= S: [1 + 2S] = unique rows): copied here.
  std::uint32_t* host_stats = nullptr;  // pinned, 2 x shards + 2; nullptr: no statistics
};
// CUB temporary bytes for `lookups` pairs sorted over `end_bit` bits (and the rest of the backward's CUB steps).
[[nodiscard]] LaunchError backwardTempBytes(std::uint32_t lookups, int end_bit, std::uint32_t long_row_bound,
                                            std::size_t& bytes);
[[nodiscard]] LaunchError launchBackward(const BackwardArgs& args, cudaStream_t stream);

// ---------------------------------------------------------------- routing

struct RouteDesc {
  std::uint64_t row_begin = 0;
  std::uint64_t rows = 0;
  std::uint64_t physical_rows = 1;
  std::uint32_t shard = 0;  // output index
  std::uint32_t reserved = 0;
};

// Scratch: sample_begin (samples), dest (ids), cursor (cells + 1).
struct RouteArgs {
  const std::uint32_t* lengths_in = nullptr;
  const std::uint64_t* ids_in = nullptr;
  std::uint32_t samples = 0;
  std::uint32_t id_count = 0;
  std::uint32_t shard_count = 0;
  const RouteDesc* row_wise = nullptr;  // non-empty ranges, sorted by row_begin, disjoint
  std::uint32_t row_wise_count = 0;
  const RouteDesc* all_ids = nullptr;
  std::uint32_t all_ids_count = 0;
  std::uint32_t* sample_begin = nullptr;
  std::uint32_t* dest = nullptr;
  std::uint32_t* cursor = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  std::uint32_t* lengths_out = nullptr;  // shards x samples + 1
  std::uint32_t* ids_out = nullptr;
  std::uint32_t* id_begin = nullptr;       // shards + 1
  std::uint32_t* host_id_begin = nullptr;  // pinned, shards + 1
  GridLaunch grid;
};
[[nodiscard]] LaunchError routeTempBytes(std::uint32_t samples, std::uint64_t cells, std::size_t& bytes);
[[nodiscard]] LaunchError launchRoute(const RouteArgs& args, cudaStream_t stream);

}  // namespace shardscope::profiler::cuda::detail
