// The GPU engine's own small kernels (private to shardscope_cuda): bag
// offsets from lengths, combining pooled blocks, the loss gradient, the
// data-parallel tables' row gradients, and the dense stand-in's GEMM.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "shardscope/core/result.h"

namespace shardscope::profiler::cuda {

// Scratch for the scan (grown, kept).
struct ScanScratch {
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  ScanScratch() = default;
  ScanScratch(const ScanScratch&) = delete;
  ScanScratch& operator=(const ScanScratch&) = delete;
  ~ScanScratch();
};

// offsets[0] = 0, offsets[i + 1] = lengths[0] + ... + lengths[i]. Asynchronous.
[[nodiscard]] core::Status lengthsToOffsets(const std::uint32_t* lengths, std::uint32_t n, std::uint32_t* offsets,
                                            ScanScratch& scratch, cudaStream_t stream);

// Combining the received pooled blocks into each sharded table's B x dim
// output: table `tables[j]` (pooled offset out_offset[j], dim dims[j]) sums
// its blocks [block_begin[j], block_begin[j + 1]) in order from +0.0f, each
// B x cols at source_offset, added at columns [col_offset, col_offset + cols).
// Columns no block covers are zero. All arrays in device memory.
struct CombineArgs {
  const std::uint64_t* out_offset = nullptr;
  const std::uint32_t* dims = nullptr;
  const std::uint32_t* block_begin = nullptr;
  const std::uint64_t* source_offset = nullptr;
  const std::uint32_t* col_offset = nullptr;
  const std::uint32_t* cols = nullptr;
  std::uint32_t tables = 0;
  std::uint32_t batch = 0;
  std::uint32_t max_dim = 0;
};
[[nodiscard]] core::Status combinePooled(const float* received, float* pooled, const CombineArgs& args,
                                         cudaStream_t stream);

// grad[t] = (pooled[t] - target) / B for every listed table, with the CPU
// engine's targets: key = splitMix64(seed ^ splitMix64((first + b) * 0x100000001B3 + t)),
// target(c) = (splitMix64(key + c) >> 40) / 2^23 - 1.
struct LossArgs {
  const std::uint64_t* offset = nullptr;  // per listed table, floats into pooled / grad
  const std::uint32_t* dims = nullptr;
  const std::uint32_t* table = nullptr;  // model table index (for the target)
  std::uint32_t tables = 0;
  std::uint32_t batch = 0;
  std::uint32_t max_dim = 0;
  std::uint64_t seed = 0;
  std::uint64_t first_sample = 0;
};
[[nodiscard]] core::Status lossGradient(const float* pooled, float* grad, const LossArgs& args, cudaStream_t stream);

// Data-parallel tables: row_grad[id][c] += grad[bag][c] for every id of
// every bag (atomics: these tables are small and replicated), and
// row_count[id] += 1. `bag_grad` rows have stride grad_stride.
[[nodiscard]] core::Status accumulateRowGradients(const std::uint32_t* offsets, const std::uint32_t* ids,
                                                  std::uint32_t bags, const float* bag_grad, std::uint32_t grad_stride,
                                                  std::uint32_t cols, float* row_grad, cudaStream_t stream);

// ids[i] = i for i < n (identity bags over every row).
[[nodiscard]] core::Status fillIota(std::uint32_t* ids, std::uint32_t n, cudaStream_t stream);

// C = A x B for n x n fp32 matrices, `reps` times (the dense stand-in: its cost, not a model).
[[nodiscard]] core::Status denseStandIn(const float* a, const float* b, float* c, std::uint32_t n, std::uint64_t reps,
                                        cudaStream_t stream);

}  // namespace shardscope::profiler::cuda
