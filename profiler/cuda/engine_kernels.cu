#include <cub/device/device_scan.cuh>

#include <string>

#include "engine_kernels.h"
#include "shardscope/core/hash.h"

namespace shardscope::profiler::cuda {

namespace {

core::Error launchError(const char* what, cudaError_t e) {
  return core::Error{std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")",
                     core::ErrorKind::Io};
}

core::Status lastLaunch(const char* what) {
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return launchError(what, e);
  return core::Ok{};
}

constexpr unsigned kBlock = 256;

unsigned gridFor(std::uint64_t n, unsigned block = kBlock, unsigned cap = 65535u * 16u) {
  const std::uint64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(g < 1 ? 1 : (g > cap ? cap : g));
}

// blockIdx.x = sample, blockIdx.y = listed table; threads over columns.
__global__ void combineKernel(const float* __restrict__ received, float* __restrict__ pooled, CombineArgs a) {
  const std::uint32_t b = blockIdx.x, j = blockIdx.y;
  const std::uint32_t dim = a.dims[j];
  float* out = pooled + a.out_offset[j] + std::uint64_t{b} * dim;
  for (std::uint32_t c = threadIdx.x; c < dim; c += blockDim.x) {
    float sum = 0.0f;
    for (std::uint32_t k = a.block_begin[j]; k < a.block_begin[j + 1]; ++k) {
      const std::uint32_t lo = a.col_offset[k];
      if (c >= lo && c < lo + a.cols[k]) sum += received[a.source_offset[k] + std::uint64_t{b} * a.cols[k] + (c - lo)];
    }
    out[c] = sum;
  }
}

__global__ void lossKernel(const float* __restrict__ pooled, float* __restrict__ grad, LossArgs a) {
  const std::uint32_t b = blockIdx.x, j = blockIdx.y;
  const std::uint32_t dim = a.dims[j];
  const float inv_b = 1.0f / static_cast<float>(a.batch);
  const std::uint64_t key =
      core::splitMix64(a.seed ^ core::splitMix64((a.first_sample + b) * 0x100000001B3ULL + a.table[j]));
  const std::uint64_t base = a.offset[j] + std::uint64_t{b} * dim;
  for (std::uint32_t c = threadIdx.x; c < dim; c += blockDim.x) {
    const float target = static_cast<float>(static_cast<double>(core::splitMix64(key + c) >> 40) / 8388608.0 - 1.0);
    grad[base + c] = __fmul_rn(__fsub_rn(pooled[base + c], target), inv_b);
  }
}

__global__ void rowGradKernel(const std::uint32_t* __restrict__ offsets, const std::uint32_t* __restrict__ ids,
                              std::uint32_t bags, const float* __restrict__ bag_grad, std::uint32_t stride,
                              std::uint32_t cols, float* __restrict__ row_grad) {
  for (std::uint32_t bag = blockIdx.x; bag < bags; bag += gridDim.x) {
    const float* g = bag_grad + std::uint64_t{bag} * stride;
    for (std::uint32_t i = offsets[bag]; i < offsets[bag + 1]; ++i) {
      float* r = row_grad + std::uint64_t{ids[i]} * cols;
      for (std::uint32_t c = threadIdx.x; c < cols; c += blockDim.x) atomicAdd(r + c, g[c]);
    }
  }
}

__global__ void iotaKernel(std::uint32_t* ids, std::uint32_t n) {
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) ids[i] = i;
}

constexpr unsigned kTile = 32;

// Shared-memory tiled SGEMM (n a multiple of kTile or not: bounds checked).
__global__ void sgemmKernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                            std::uint32_t n) {
  __shared__ float ta[kTile][kTile + 1];
  __shared__ float tb[kTile][kTile + 1];
  const std::uint32_t row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (std::uint32_t k0 = 0; k0 < n; k0 += kTile) {
    ta[threadIdx.y][threadIdx.x] =
        (row < n && k0 + threadIdx.x < n) ? a[std::uint64_t{row} * n + k0 + threadIdx.x] : 0.0f;
    tb[threadIdx.y][threadIdx.x] =
        (col < n && k0 + threadIdx.y < n) ? b[std::uint64_t{k0 + threadIdx.y} * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < kTile; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[std::uint64_t{row} * n + col] = acc;
}

}  // namespace

ScanScratch::~ScanScratch() {
  if (temp != nullptr) cudaFree(temp);
}

core::Status lengthsToOffsets(const std::uint32_t* lengths, std::uint32_t n, std::uint32_t* offsets,
                              ScanScratch& scratch, cudaStream_t stream) {
  if (const cudaError_t e = cudaMemsetAsync(offsets, 0, sizeof(std::uint32_t), stream); e != cudaSuccess)
    return launchError("bag offsets: cudaMemsetAsync", e);
  if (n == 0) return core::Ok{};
  std::size_t need = 0;
  if (const cudaError_t e = cub::DeviceScan::InclusiveSum(nullptr, need, lengths, offsets + 1, n, stream);
      e != cudaSuccess)
    return launchError("bag offsets: scan size", e);
  if (need > scratch.temp_bytes) {
    // cudaFree waits for the whole device: the stream first, so that it never waits inside another
    // rank's collective while that rank waits in cudaMalloc (several ranks in one process).
    if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
      return launchError("bag offsets: cudaStreamSynchronize", e);
    if (scratch.temp != nullptr) cudaFree(scratch.temp);
    scratch.temp = nullptr;
    scratch.temp_bytes = 0;
    if (const cudaError_t e = cudaMalloc(&scratch.temp, need); e != cudaSuccess)
      return launchError("bag offsets: cudaMalloc", e);
    scratch.temp_bytes = need;
  }
  std::size_t have = scratch.temp_bytes;
  if (const cudaError_t e = cub::DeviceScan::InclusiveSum(scratch.temp, have, lengths, offsets + 1, n, stream);
      e != cudaSuccess)
    return launchError("bag offsets: scan", e);
  return core::Ok{};
}

core::Status combinePooled(const float* received, float* pooled, const CombineArgs& args, cudaStream_t stream) {
  if (args.tables == 0 || args.batch == 0) return core::Ok{};
  const unsigned threads = args.max_dim >= 128 ? 128 : 32 * ((args.max_dim + 31) / 32);
  combineKernel<<<dim3(args.batch, args.tables), threads, 0, stream>>>(received, pooled, args);
  return lastLaunch("combine pooled blocks");
}

core::Status lossGradient(const float* pooled, float* grad, const LossArgs& args, cudaStream_t stream) {
  if (args.tables == 0 || args.batch == 0) return core::Ok{};
  const unsigned threads = args.max_dim >= 128 ? 128 : 32 * ((args.max_dim + 31) / 32);
  lossKernel<<<dim3(args.batch, args.tables), threads, 0, stream>>>(pooled, grad, args);
  return lastLaunch("loss gradient");
}

core::Status accumulateRowGradients(const std::uint32_t* offsets, const std::uint32_t* ids, std::uint32_t bags,
                                    const float* bag_grad, std::uint32_t grad_stride, std::uint32_t cols,
                                    float* row_grad, cudaStream_t stream) {
  if (bags == 0) return core::Ok{};
  const unsigned threads = cols >= 128 ? 128 : 32 * ((cols + 31) / 32);
  rowGradKernel<<<gridFor(bags, 1, 65535u), threads, 0, stream>>>(offsets, ids, bags, bag_grad, grad_stride, cols,
                                                                  row_grad);
  return lastLaunch("data-parallel row gradients");
}

core::Status fillIota(std::uint32_t* ids, std::uint32_t n, cudaStream_t stream) {
  if (n == 0) return core::Ok{};
  iotaKernel<<<gridFor(n), kBlock, 0, stream>>>(ids, n);
  return lastLaunch("identity ids");
}

core::Status denseStandIn(const float* a, const float* b, float* c, std::uint32_t n, std::uint64_t reps,
                          cudaStream_t stream) {
  const dim3 block(kTile, kTile), grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
  for (std::uint64_t r = 0; r < reps; ++r) sgemmKernel<<<grid, block, 0, stream>>>(a, b, c, n);
  return lastLaunch("dense stand-in GEMM");
}

}  // namespace shardscope::profiler::cuda
