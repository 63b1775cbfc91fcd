// The CUDA embedding kernels (device side of embedding_cuda.h; the host side
// is embedding_cuda.cpp). Every floating-point operation that must match the
// CPU backend is written as an explicitly rounded intrinsic (__fadd_rn,
// __fmul_rn, __fdiv_rn, __fsqrt_rn): nvcc never contracts those into FMAs,
// so sums run in the same order with the same roundings as the CPU loops.
// Semantics: docs/engine-cuda.md#kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>

#include "embedding_launch.h"

namespace shardscope::profiler::cuda::detail {

namespace {

using namespace launch;

constexpr unsigned kFull = 0xffffffffu;
constexpr std::uint32_t kF32 = static_cast<std::uint32_t>(DeviceWeightType::F32);
constexpr std::uint32_t kF16 = static_cast<std::uint32_t>(DeviceWeightType::F16);
constexpr std::uint32_t kBF16 = static_cast<std::uint32_t>(DeviceWeightType::BF16);
constexpr std::uint32_t kNone = 0xffffffffu;

LaunchError check(cudaError_t e, const char* what) { return LaunchError{e, what}; }

// The last shard whose `Field` is <= x (shards[0].*Field == 0 <= x): shards
// with nothing (equal fields) resolve to the last of them, the one that holds x.
template <std::uint32_t ShardDesc::*Field>
__device__ __forceinline__ std::uint32_t shardAt(const ShardDesc* shards, std::uint32_t count, std::uint32_t x) {
  std::uint32_t lo = 0, hi = count;
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) >> 1;
    if (shards[mid].*Field <= x) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// ---------------------------------------------------------------- initialize

__device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// EmbeddingShard::initialize's value: uniform in [-0.05, 0.05) from 24 bits.
__device__ __forceinline__ float initialValue(std::uint64_t row_key, std::uint64_t global_col) {
  const std::uint64_t h = mix64(row_key ^ (global_col * 0xc2b2ae3d27d4eb4fULL));
  const float u = __fmul_rn(__ull2float_rn(h >> 40), 0x1p-24f);
  return __fmul_rn(__fsub_rn(u, 0.5f), 0.1f);
}

// One warp per row, lanes over columns; padding columns stay as they are (zero).
__global__ void __launch_bounds__(kInitializeBlockThreads) initializeKernel(InitializeArgs a) {
  const std::uint32_t lane = threadIdx.x & (kWarp - 1);
  const std::uint64_t warps = std::uint64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::uint64_t r = std::uint64_t{blockIdx.x} * (blockDim.x / kWarp) + threadIdx.x / kWarp; r < a.rows;
       r += warps) {
    const std::uint64_t row_key = mix64(a.seed ^ mix64((a.row_offset + r) * 0x9e3779b97f4a7c15ULL + 1));
    unsigned char* row = a.weights + r * a.pitch;
    for (std::uint32_t c = lane; c < a.dim; c += kWarp) {
      const float x = initialValue(row_key, std::uint64_t{a.col_offset} + c);
      if (a.type == kF32) {
        reinterpret_cast<float*>(row)[c] = x;
      } else if (a.type == kF16) {
        reinterpret_cast<__half*>(row)[c] = __float2half_rn(x);
      } else {
        reinterpret_cast<__nv_bfloat16*>(row)[c] = __float2bfloat16_rn(x);
      }
    }
  }
}

// ---------------------------------------------------------------- forward

template <std::uint32_t Type>
constexpr std::uint32_t kElements = Type == kF32 ? 4 : 8;

__device__ __forceinline__ float halfBits(std::uint32_t bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits & 0xffffu)));
}
__device__ __forceinline__ float bf16Bits(std::uint32_t bits) { return __uint_as_float((bits & 0xffffu) << 16); }

// 16 bytes of a row widened exactly to fp32 (element 2i is the low half of word i).
template <std::uint32_t Type>
__device__ __forceinline__ void widen(const uint4& v, float (&x)[kElements<Type>]) {
  const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (Type == kF32) {
      x[i] = __uint_as_float(w[i]);
    } else if constexpr (Type == kF16) {
      x[2 * i] = halfBits(w[i]);
      x[2 * i + 1] = halfBits(w[i] >> 16);
    } else {
      x[2 * i] = bf16Bits(w[i]);
      x[2 * i + 1] = bf16Bits(w[i] >> 16);
    }
  }
}

// Columns [c0, c0 + N) of a bag's output, those below dim: float4 stores when
// the output rows are 16-byte aligned and the whole vector is inside the row.
template <std::uint32_t N>
__device__ __forceinline__ void storeColumns(float* out, std::uint32_t c0, std::uint32_t dim, bool vector_store,
                                             const float (&acc)[N]) {
  if (vector_store && c0 + N <= dim) {
#pragma unroll
    for (std::uint32_t q = 0; q < N / 4; ++q) {
      reinterpret_cast<float4*>(out + c0)[q] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
    }
  } else {
#pragma unroll
    for (std::uint32_t i = 0; i < N; ++i) {
      if (c0 + i < dim) out[c0 + i] = acc[i];
    }
  }
}

// One bag, one thread's vectors v = sub, sub + threads, ...: each column summed
// over the bag's ids in order from +0.0f; kForwardUnroll rows are loaded
// before their additions, which stay in order.
template <std::uint32_t Type>
__device__ void poolBag(const ShardDesc& d, std::uint32_t j, std::uint32_t sub, std::uint32_t threads,
                        const ForwardArgs& a) {
  constexpr std::uint32_t N = kElements<Type>;
  const std::uint32_t bag = d.bag_begin + j;
  const std::uint32_t b = __ldg(a.offsets + bag);
  const std::uint32_t e = __ldg(a.offsets + bag + 1);
  const float scale = e > b ? __fdiv_rn(1.0f, __uint2float_rn(e - b)) : 1.0f;
  float* out = a.out + d.out_offset + std::uint64_t{j} * d.out_stride;
  for (std::uint32_t v = sub; v < d.vectors; v += threads) {
    float acc[N];
#pragma unroll
    for (std::uint32_t i = 0; i < N; ++i) acc[i] = 0.0f;
    for (std::uint32_t p = b; p < e; p += kForwardUnroll) {
      const std::uint32_t n = min(kForwardUnroll, e - p);
      uint4 raw[kForwardUnroll];
#pragma unroll
      for (std::uint32_t u = 0; u < kForwardUnroll; ++u) {
        raw[u] = make_uint4(0, 0, 0, 0);
        if (u < n) {
          const std::uint32_t id = __ldg(a.ids + p + u);
          raw[u] = __ldg(reinterpret_cast<const uint4*>(d.weights + std::uint64_t{id} * d.pitch) + v);
        }
      }
#pragma unroll
      for (std::uint32_t u = 0; u < kForwardUnroll; ++u) {
        if (u < n) {
          float x[N];
          widen<Type>(raw[u], x);
#pragma unroll
          for (std::uint32_t i = 0; i < N; ++i) acc[i] = __fadd_rn(acc[i], x[i]);
        }
      }
    }
    if (a.mean) {
#pragma unroll
      for (std::uint32_t i = 0; i < N; ++i) acc[i] = __fmul_rn(acc[i], scale);
    }
    storeColumns<N>(out, v * N, d.dim, d.vector_store != 0, acc);
  }
}

// Grid-stride over warp items; an item is bags_per_warp consecutive bags of one shard.
__global__ void __launch_bounds__(kForwardBlockThreads) forwardKernel(ForwardArgs a) {
  const std::uint32_t lane = threadIdx.x & (kWarp - 1);
  const std::uint32_t warps_per_block = blockDim.x / kWarp;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * warps_per_block;
  for (std::uint64_t item = std::uint64_t{blockIdx.x} * warps_per_block + threadIdx.x / kWarp; item < a.items;
       item += stride) {
    const auto it = static_cast<std::uint32_t>(item);
    const ShardDesc d = a.shards[shardAt<&ShardDesc::item_begin>(a.shards, a.shard_count, it)];
    const std::uint32_t log2 = d.threads_log2;
    const std::uint32_t j = (it - d.item_begin) * (kWarp >> log2) + (lane >> log2);
    if (j >= d.bags) continue;
    const std::uint32_t threads = 1u << log2;
    const std::uint32_t sub = lane & (threads - 1);
    if (d.type == kF32) {
      poolBag<kF32>(d, j, sub, threads, a);
    } else if (d.type == kF16) {
      poolBag<kF16>(d, j, sub, threads, a);
    } else {
      poolBag<kBF16>(d, j, sub, threads, a);
    }
  }
}

// ---------------------------------------------------------------- backward

// key = linear row (row_base + local row), value = the bag: sorted stably by
// key, each row's occurrences stay in (bag, position) order.
__global__ void __launch_bounds__(kKeysBlockThreads)
    keysKernel(BackwardArgs a, std::uint32_t* __restrict__ keys, std::uint32_t* __restrict__ bag_of) {
  const std::uint32_t sub = threadIdx.x % kKeysGroup;
  const std::uint64_t groups = std::uint64_t{gridDim.x} * (blockDim.x / kKeysGroup);
  for (std::uint64_t bag = (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kKeysGroup; bag < a.bags;
       bag += groups) {
    const auto g = static_cast<std::uint32_t>(bag);
    const std::uint32_t base = a.shards[shardAt<&ShardDesc::bag_begin>(a.shards, a.shard_count, g)].row_base;
    const std::uint32_t e = a.offsets[g + 1];
    for (std::uint32_t p = a.offsets[g] + sub; p < e; p += kKeysGroup) {
      keys[p] = base + a.ids[p];
      bag_of[p] = g;
    }
  }
}

struct IsSegmentStart {
  const std::uint32_t* keys;
  __device__ bool operator()(std::uint32_t i) const { return i == 0 || keys[i] != keys[i - 1]; }
};

struct IsLongSegment {
  const std::uint32_t* starts;
  const std::uint32_t* unique;  // device count of starts
  std::uint32_t lookups;
  __device__ bool operator()(std::uint32_t u) const {
    const std::uint32_t n = *unique;
    if (u >= n) return false;
    const std::uint32_t end = u + 1 < n ? starts[u + 1] : lookups;
    return end - starts[u] > kLongSegment;
  }
};

// The CUB steps with their temp storage (temp == nullptr: only sizes them).
struct BackwardCub {
  cudaError_t sort(void* temp, std::size_t& bytes, cub::DoubleBuffer<std::uint32_t>& keys,
                   cub::DoubleBuffer<std::uint32_t>& vals, std::uint32_t n, int end_bit, cudaStream_t stream) const {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, keys, vals, n, 0, end_bit, stream);
  }
  cudaError_t starts(void* temp, std::size_t& bytes, const std::uint32_t* sorted, std::uint32_t* out,
                     std::uint32_t* count, std::uint32_t n, cudaStream_t stream) const {
    return cub::DeviceSelect::If(temp, bytes, thrust::counting_iterator<std::uint32_t>(0), out, count,
                                 static_cast<std::int64_t>(n), IsSegmentStart{sorted}, stream);
  }
  cudaError_t longRows(void* temp, std::size_t& bytes, const std::uint32_t* starts, const std::uint32_t* unique,
                       std::uint32_t* out, std::uint32_t* count, std::uint32_t n, cudaStream_t stream) const {
    return cub::DeviceSelect::If(temp, bytes, thrust::counting_iterator<std::uint32_t>(0), out, count,
                                 static_cast<std::int64_t>(n), IsLongSegment{starts, unique, n}, stream);
  }
  cudaError_t chunkScan(void* temp, std::size_t& bytes, std::uint32_t* counts, std::uint32_t* begin, std::uint32_t n,
                        cudaStream_t stream) const {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, counts, begin, n, stream);
  }
};

// The inputs of the row updates.
struct UpdateArgs {
  const ShardDesc* shards;
  std::uint32_t shard_count;
  std::uint32_t lookups;
  const std::uint32_t* keys;  // sorted
  const std::uint32_t* bags;  // sorted with them
  const std::uint32_t* starts;
  const std::uint32_t* counters;  // [0] unique rows, [1] hot rows
  const std::uint32_t* long_rows;
  const std::uint32_t* chunk_begin;  // per hot row, + 1
  float* partials;                   // per chunk, max_dim floats
  const std::uint32_t* offsets;
  const float* grad;
  float* momentum;
  bool mean;
  float learning_rate;
  float eps;
  std::uint32_t max_dim;
};

// One warp's sum over occurrences [k0, k1) of columns tile + r x 32 + lane:
// g += grad (Sum) or g += grad x (1/len) (Mean), in occurrence order from +0.
__device__ __forceinline__ void warpSumTile(const UpdateArgs& a, const ShardDesc& d, std::uint32_t k0, std::uint32_t k1,
                                            std::uint32_t tile, std::uint32_t lane, float (&acc)[kTileRegisters]) {
#pragma unroll
  for (std::uint32_t r = 0; r < kTileRegisters; ++r) acc[r] = 0.0f;
  const float* grad = a.grad + d.out_offset;
  for (std::uint32_t k = k0; k < k1; k += kBackwardUnroll) {
    const std::uint32_t n = min(kBackwardUnroll, k1 - k);
    float v[kBackwardUnroll][kTileRegisters];
    float scale[kBackwardUnroll];
#pragma unroll
    for (std::uint32_t u = 0; u < kBackwardUnroll; ++u) {
      scale[u] = 1.0f;
#pragma unroll
      for (std::uint32_t r = 0; r < kTileRegisters; ++r) v[u][r] = 0.0f;
      if (u < n) {
        const std::uint32_t bag = __ldg(a.bags + k + u);
        const float* go = grad + std::uint64_t{bag - d.bag_begin} * d.out_stride;
        if (a.mean) scale[u] = __fdiv_rn(1.0f, __uint2float_rn(__ldg(a.offsets + bag + 1) - __ldg(a.offsets + bag)));
#pragma unroll
        for (std::uint32_t r = 0; r < kTileRegisters; ++r) {
          const std::uint32_t c = tile + r * kWarp + lane;
          if (c < d.dim) v[u][r] = __ldg(go + c);
        }
      }
    }
#pragma unroll
    for (std::uint32_t u = 0; u < kBackwardUnroll; ++u) {
      if (u < n) {
#pragma unroll
        for (std::uint32_t r = 0; r < kTileRegisters; ++r) {
          acc[r] = a.mean ? __fadd_rn(acc[r], __fmul_rn(v[u][r], scale[u])) : __fadd_rn(acc[r], v[u][r]);
        }
      }
    }
  }
}

// One warp's sum over occurrences [k0, k1), every column, into out[0, dim).
__device__ __forceinline__ void warpSumRow(const UpdateArgs& a, const ShardDesc& d, std::uint32_t k0, std::uint32_t k1,
                                           std::uint32_t lane, float* out) {
  for (std::uint32_t tile = 0; tile < d.dim; tile += kTileColumns) {
    float acc[kTileRegisters];
    warpSumTile(a, d, k0, k1, tile, lane, acc);
#pragma unroll
    for (std::uint32_t r = 0; r < kTileRegisters; ++r) {
      const std::uint32_t c = tile + r * kWarp + lane;
      if (c < d.dim) out[c] = acc[r];
    }
  }
}

// Sum of g[c]^2 as the CPU backend takes it: lane k < 8 over the columns c = k
// (mod 8) in increasing order, then ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
// Called by a whole warp; every lane gets the total.
__device__ __forceinline__ float warpSumOfSquares(const float* g, std::uint32_t dim, std::uint32_t lane) {
  float s = 0.0f;
  if (lane < 8) {
    for (std::uint32_t c = lane; c < dim; c += 8) s = __fadd_rn(s, __fmul_rn(g[c], g[c]));
  }
  float l[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) l[k] = __shfl_sync(kFull, s, k);
  return __fadd_rn(__fadd_rn(__fadd_rn(l[0], l[4]), __fadd_rn(l[2], l[6])),
                   __fadd_rn(__fadd_rn(l[1], l[5]), __fadd_rn(l[3], l[7])));
}

// The fused row-wise AdaGrad of one row by one warp, its gradient g (dim
// floats) in shared memory: momentum += mean(g^2), then w[c] -= lr x g[c] /
// (sqrt(momentum) + eps), fp16/bf16 in fp32 rounded to nearest even.
__device__ void warpAdagrad(const UpdateArgs& a, const ShardDesc& d, std::uint32_t key, const float* g,
                            std::uint32_t lane) {
  const float total = warpSumOfSquares(g, d.dim, lane);
  const float m_old = __shfl_sync(kFull, lane == 0 ? a.momentum[key] : 0.0f, 0);
  const float m = __fadd_rn(m_old, __fdiv_rn(total, __uint2float_rn(d.dim)));
  if (lane == 0) a.momentum[key] = m;
  const float step = __fdiv_rn(a.learning_rate, __fadd_rn(__fsqrt_rn(m), a.eps));
  unsigned char* row = d.weights + std::uint64_t{key - d.row_base} * d.pitch;
  if (d.type == kF32) {
    auto* w = reinterpret_cast<float*>(row);
    for (std::uint32_t c = lane; c < d.dim; c += kWarp) w[c] = __fsub_rn(w[c], __fmul_rn(step, g[c]));
  } else if (d.type == kF16) {
    auto* w = reinterpret_cast<__half*>(row);
    for (std::uint32_t c = lane; c < d.dim; c += kWarp) {
      w[c] = __float2half_rn(__fsub_rn(__half2float(w[c]), __fmul_rn(step, g[c])));
    }
  } else {
    auto* w = reinterpret_cast<__nv_bfloat16*>(row);
    for (std::uint32_t c = lane; c < d.dim; c += kWarp) {
      w[c] = __float2bfloat16_rn(__fsub_rn(__bfloat162float(w[c]), __fmul_rn(step, g[c])));
    }
  }
}

__device__ __forceinline__ std::uint32_t segmentEnd(const UpdateArgs& a, std::uint32_t u, std::uint32_t unique) {
  return u + 1 < unique ? a.starts[u + 1] : a.lookups;
}

// Rows with at most kLongSegment occurrences: one warp each, in order.
__global__ void updateRowsKernel(UpdateArgs a) {
  extern __shared__ float shared[];
  const std::uint32_t lane = threadIdx.x & (kWarp - 1);
  const std::uint32_t warp = threadIdx.x / kWarp;
  float* g = shared + std::size_t{warp} * a.max_dim;
  const std::uint32_t unique = a.counters[0];
  const std::uint64_t stride = std::uint64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::uint64_t uu = std::uint64_t{blockIdx.x} * (blockDim.x / kWarp) + warp; uu < unique; uu += stride) {
    const auto u = static_cast<std::uint32_t>(uu);
    const std::uint32_t begin = a.starts[u];
    const std::uint32_t end = segmentEnd(a, u, unique);
    if (end - begin > kLongSegment) continue;
    const std::uint32_t key = a.keys[begin];
    const ShardDesc d = a.shards[shardAt<&ShardDesc::row_base>(a.shards, a.shard_count, key)];
    warpSumRow(a, d, begin, end, lane, g);
    __syncwarp();
    warpAdagrad(a, d, key, g, lane);
    __syncwarp();  // g is rewritten by the next row
  }
}

// Chunks per hot row (0 past the last one, so that the exclusive scan's entry
// at the hot-row count is the number of chunks).
__global__ void __launch_bounds__(kChunkBlockThreads)
    chunkCountKernel(UpdateArgs a, std::uint32_t* counts, std::uint32_t entries) {
  const std::uint32_t unique = a.counters[0];
  const std::uint32_t hot = a.counters[1];
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < entries;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint32_t chunks = 0;
    if (i < hot) {
      const std::uint32_t u = a.long_rows[i];
      chunks = (segmentEnd(a, u, unique) - a.starts[u] + kLongChunk - 1) / kLongChunk;
    }
    counts[i] = chunks;
  }
}

// One warp per chunk of kLongChunk occurrences of a hot row: its sum, in order.
__global__ void __launch_bounds__(kChunkBlockThreads) chunkSumKernel(UpdateArgs a) {
  const std::uint32_t lane = threadIdx.x & (kWarp - 1);
  const std::uint32_t unique = a.counters[0];
  const std::uint32_t hot = a.counters[1];
  const std::uint32_t chunks = a.chunk_begin[hot];
  const std::uint64_t stride = std::uint64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::uint64_t qq = std::uint64_t{blockIdx.x} * (blockDim.x / kWarp) + threadIdx.x / kWarp; qq < chunks;
       qq += stride) {
    const auto q = static_cast<std::uint32_t>(qq);
    std::uint32_t lo = 0, hi = hot;  // the hot row with chunk_begin[i] <= q < chunk_begin[i + 1]
    while (hi - lo > 1) {
      const std::uint32_t mid = (lo + hi) >> 1;
      if (a.chunk_begin[mid] <= q) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    const std::uint32_t u = a.long_rows[lo];
    const std::uint32_t begin = a.starts[u];
    const std::uint32_t k0 = begin + (q - a.chunk_begin[lo]) * kLongChunk;
    const std::uint32_t k1 = min(k0 + kLongChunk, segmentEnd(a, u, unique));
    const std::uint32_t key = a.keys[begin];
    const ShardDesc d = a.shards[shardAt<&ShardDesc::row_base>(a.shards, a.shard_count, key)];
    warpSumRow(a, d, k0, k1, lane, a.partials + std::uint64_t{q} * a.max_dim);
  }
}

// One warp per hot row: its chunks' sums added in chunk order, then AdaGrad.
__global__ void updateLongRowsKernel(UpdateArgs a) {
  extern __shared__ float shared[];
  const std::uint32_t lane = threadIdx.x & (kWarp - 1);
  const std::uint32_t warp = threadIdx.x / kWarp;
  float* g = shared + std::size_t{warp} * a.max_dim;
  const std::uint32_t hot = a.counters[1];
  const std::uint64_t stride = std::uint64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::uint64_t ii = std::uint64_t{blockIdx.x} * (blockDim.x / kWarp) + warp; ii < hot; ii += stride) {
    const auto i = static_cast<std::uint32_t>(ii);
    const std::uint32_t key = a.keys[a.starts[a.long_rows[i]]];
    const ShardDesc d = a.shards[shardAt<&ShardDesc::row_base>(a.shards, a.shard_count, key)];
    const std::uint32_t q0 = a.chunk_begin[i], q1 = a.chunk_begin[i + 1];
    for (std::uint32_t c = lane; c < d.dim; c += kWarp) {
      const float* p = a.partials + c;
      float x = p[std::uint64_t{q0} * a.max_dim];
#pragma unroll 4
      for (std::uint32_t q = q0 + 1; q < q1; ++q) x = __fadd_rn(x, p[std::uint64_t{q} * a.max_dim]);
      g[c] = x;
    }
    __syncwarp();
    warpAdagrad(a, d, key, g, lane);
    __syncwarp();
  }
}

// Per shard: its lookups and the index of its first unique row (rows sort by
// linear key, shards by row_base), so that shard s has [first(s), first(s+1)).
__global__ void statsKernel(BackwardArgs a, const std::uint32_t* keys) {
  const std::uint32_t S = a.shard_count;
  const std::uint32_t unique = a.scratch.counters[0];
  std::uint32_t* stats = a.scratch.stats;
  for (std::uint32_t s = threadIdx.x; s <= S; s += blockDim.x) {
    std::uint32_t first = unique;
    if (s < S) {
      const ShardDesc& d = a.shards[s];
      stats[1 + s] = a.bags == 0 ? 0 : a.offsets[d.bag_begin + d.bags] - a.offsets[d.bag_begin];
      std::uint32_t lo = 0, hi = unique;
      while (lo < hi) {
        const std::uint32_t mid = (lo + hi) >> 1;
        if (keys[a.scratch.starts[mid]] < d.row_base) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      first = lo;
    }
    stats[1 + S + s] = first;
  }
  if (threadIdx.x == 0) stats[0] = unique;
}

#define SS_LAUNCHED(what)                                                                     \
  do {                                                                                        \
    if (const cudaError_t e_ = cudaGetLastError(); e_ != cudaSuccess) return check(e_, what); \
  } while (0)

// The updates after the sort: short rows, then the hot rows' chunks and rows.
LaunchError launchUpdates(const BackwardArgs& a, const std::uint32_t* keys, const std::uint32_t* bags,
                          cudaStream_t stream) {
  const BackwardScratch& s = a.scratch;
  const UpdateArgs u{a.shards,   a.shard_count, a.lookups,       keys,       bags,      s.starts,
                     s.counters, s.long_rows,   s.chunk_begin,   s.partials, a.offsets, a.grad,
                     a.momentum, a.mean,        a.learning_rate, a.eps,      a.max_dim};
  updateRowsKernel<<<a.update.blocks, a.update.threads, a.update.shared_bytes, stream>>>(u);
  SS_LAUNCHED("row update kernel");
  if (a.long_row_bound == 0) return {};
  const BackwardCub cub_steps;
  std::size_t bytes = s.temp_bytes;
  if (const cudaError_t e =
          cub_steps.longRows(s.temp, bytes, s.starts, s.counters, s.long_rows, s.counters + 1, a.lookups, stream);
      e != cudaSuccess)
    return check(e, "cub::DeviceSelect::If (hot rows)");
  chunkCountKernel<<<a.chunk_count.blocks, a.chunk_count.threads, 0, stream>>>(u, s.chunk_counts, a.long_row_bound + 1);
  SS_LAUNCHED("hot row chunk count kernel");
  bytes = s.temp_bytes;
  if (const cudaError_t e =
          cub_steps.chunkScan(s.temp, bytes, s.chunk_counts, s.chunk_begin, a.long_row_bound + 1, stream);
      e != cudaSuccess)
    return check(e, "cub::DeviceScan::ExclusiveSum (hot row chunks)");
  chunkSumKernel<<<a.chunk_sum.blocks, a.chunk_sum.threads, 0, stream>>>(u);
  SS_LAUNCHED("hot row chunk sum kernel");
  updateLongRowsKernel<<<a.long_update.blocks, a.long_update.threads, a.long_update.shared_bytes, stream>>>(u);
  SS_LAUNCHED("hot row update kernel");
  return {};
}

// ---------------------------------------------------------------- routing

// The row-wise shard holding global row `id` (an index into row_wise), or kNone.
__device__ __forceinline__ std::uint32_t bucketOf(const RouteArgs& a, std::uint64_t id) {
  if (a.row_wise_count == 0 || id < a.row_wise[0].row_begin) return kNone;
  std::uint32_t lo = 0, hi = a.row_wise_count;
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) >> 1;
    if (a.row_wise[mid].row_begin <= id) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return id - a.row_wise[lo].row_begin < a.row_wise[lo].rows ? lo : kNone;
}

__device__ __forceinline__ std::uint32_t foldRow(std::uint64_t local, std::uint64_t physical) {
  return static_cast<std::uint32_t>(local < physical ? local : local % physical);
}

// Sample s's ids: [sample_begin[s], + lengths[s]) clamped to the id count (as routeToShard).
__device__ __forceinline__ void sampleRange(const RouteArgs& a, std::uint32_t s, std::uint32_t& b, std::uint32_t& e) {
  b = min(a.sample_begin[s], a.id_count);
  e = static_cast<std::uint32_t>(min(std::uint64_t{b} + a.lengths_in[s], std::uint64_t{a.id_count}));
}

// Counts per (shard, sample); remembers each id's row-wise shard.
__global__ void __launch_bounds__(kRouteBlockThreads) routeCountKernel(RouteArgs a) {
  const std::uint32_t lane = threadIdx.x & (kWarp - 1);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::uint64_t ss = std::uint64_t{blockIdx.x} * (blockDim.x / kWarp) + threadIdx.x / kWarp; ss < a.samples;
       ss += stride) {
    const auto s = static_cast<std::uint32_t>(ss);
    std::uint32_t b = 0, e = 0;
    sampleRange(a, s, b, e);
    for (std::uint32_t p0 = b; p0 < e; p0 += kWarp) {
      const std::uint32_t p = p0 + lane;
      const std::uint32_t r = p < e ? bucketOf(a, a.ids_in[p]) : kNone;
      if (p < e) a.dest[p] = r;
      const unsigned same = __match_any_sync(kFull, r);
      if (r != kNone && lane == static_cast<std::uint32_t>(__ffs(same) - 1)) {
        atomicAdd(a.lengths_out + std::uint64_t{a.row_wise[r].shard} * a.samples + s, __popc(same));
      }
    }
    for (std::uint32_t k = lane; k < a.all_ids_count; k += kWarp) {
      a.lengths_out[std::uint64_t{a.all_ids[k].shard} * a.samples + s] = e - b;
    }
  }
}

__global__ void routeIdBeginKernel(RouteArgs a) {
  for (std::uint32_t k = threadIdx.x; k <= a.shard_count; k += blockDim.x) {
    a.id_begin[k] = a.cursor[std::uint64_t{k} * a.samples];
  }
}

// Writes every id at its (shard, sample) cursor: a warp owns a sample, so
// claiming runs of the cursor chunk by chunk keeps the ids in input order.
__global__ void __launch_bounds__(kRouteBlockThreads) routeScatterKernel(RouteArgs a) {
  const std::uint32_t lane = threadIdx.x & (kWarp - 1);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * (blockDim.x / kWarp);
  for (std::uint64_t ss = std::uint64_t{blockIdx.x} * (blockDim.x / kWarp) + threadIdx.x / kWarp; ss < a.samples;
       ss += stride) {
    const auto s = static_cast<std::uint32_t>(ss);
    std::uint32_t b = 0, e = 0;
    sampleRange(a, s, b, e);
    for (std::uint32_t p0 = b; p0 < e; p0 += kWarp) {
      const std::uint32_t p = p0 + lane;
      const bool valid = p < e;
      const std::uint64_t id = valid ? a.ids_in[p] : 0;
      const std::uint32_t r = valid ? a.dest[p] : kNone;
      const unsigned same = __match_any_sync(kFull, r);
      const auto leader = static_cast<std::uint32_t>(__ffs(same) - 1);
      std::uint32_t base = 0;
      if (r != kNone && lane == leader) {
        base = atomicAdd(a.cursor + std::uint64_t{a.row_wise[r].shard} * a.samples + s, __popc(same));
      }
      base = __shfl_sync(kFull, base, leader);
      if (r != kNone) {
        const RouteDesc& rd = a.row_wise[r];
        a.ids_out[base + __popc(same & ((1u << lane) - 1u))] = foldRow(id - rd.row_begin, rd.physical_rows);
      }
      if (valid) {
        for (std::uint32_t k = 0; k < a.all_ids_count; ++k) {
          const RouteDesc& ad = a.all_ids[k];
          const std::uint32_t at = a.cursor[std::uint64_t{ad.shard} * a.samples + s] + (p - b);
          a.ids_out[at] = foldRow(id - ad.row_begin, ad.physical_rows);
        }
      }
    }
  }
}

}  // namespace

// ---------------------------------------------------------------- launchers

LaunchError launchInitialize(const InitializeArgs& args, cudaStream_t stream) {
  if (args.grid.blocks == 0) return {};
  initializeKernel<<<args.grid.blocks, args.grid.threads, 0, stream>>>(args);
  return check(cudaGetLastError(), "initialize kernel");
}

LaunchError launchForward(const ForwardArgs& args, cudaStream_t stream) {
  if (args.grid.blocks == 0) return {};
  forwardKernel<<<args.grid.blocks, args.grid.threads, 0, stream>>>(args);
  return check(cudaGetLastError(), "forward kernel");
}

LaunchError backwardTempBytes(std::uint32_t lookups, int end_bit, std::uint32_t long_row_bound, std::size_t& bytes) {
  const BackwardCub cub_steps;
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr), vals(nullptr, nullptr);
  std::size_t need[4] = {0, 0, 0, 0};
  if (const cudaError_t e = cub_steps.sort(nullptr, need[0], keys, vals, lookups, end_bit, nullptr); e != cudaSuccess)
    return check(e, "cub::DeviceRadixSort::SortPairs (sizing)");
  if (const cudaError_t e = cub_steps.starts(nullptr, need[1], nullptr, nullptr, nullptr, lookups, nullptr);
      e != cudaSuccess)
    return check(e, "cub::DeviceSelect::If (sizing)");
  if (const cudaError_t e = cub_steps.longRows(nullptr, need[2], nullptr, nullptr, nullptr, nullptr, lookups, nullptr);
      e != cudaSuccess)
    return check(e, "cub::DeviceSelect::If (sizing)");
  if (const cudaError_t e = cub_steps.chunkScan(nullptr, need[3], nullptr, nullptr, long_row_bound + 1, nullptr);
      e != cudaSuccess)
    return check(e, "cub::DeviceScan::ExclusiveSum (sizing)");
  bytes = 0;
  for (const std::size_t n : need) bytes = n > bytes ? n : bytes;
  return {};
}

LaunchError launchBackward(const BackwardArgs& a, cudaStream_t stream) {
  const BackwardScratch& s = a.scratch;
  if (const cudaError_t e = cudaMemsetAsync(s.counters, 0, 2 * sizeof(std::uint32_t), stream); e != cudaSuccess)
    return check(e, "cudaMemsetAsync (backward counters)");
  const std::uint32_t* keys = s.keys[0];
  if (a.lookups > 0) {
    keysKernel<<<a.keys.blocks, a.keys.threads, 0, stream>>>(a, s.keys[0], s.bags[0]);
    SS_LAUNCHED("backward keys kernel");
    const BackwardCub cub_steps;
    cub::DoubleBuffer<std::uint32_t> kb(s.keys[0], s.keys[1]), vb(s.bags[0], s.bags[1]);
    std::size_t bytes = s.temp_bytes;
    if (const cudaError_t e = cub_steps.sort(s.temp, bytes, kb, vb, a.lookups, a.end_bit, stream); e != cudaSuccess)
      return check(e, "cub::DeviceRadixSort::SortPairs");
    keys = kb.Current();
    bytes = s.temp_bytes;
    if (const cudaError_t e = cub_steps.starts(s.temp, bytes, keys, s.starts, s.counters, a.lookups, stream);
        e != cudaSuccess)
      return check(e, "cub::DeviceSelect::If (row segments)");
    if (const LaunchError le = launchUpdates(a, keys, vb.Current(), stream); le.failed()) return le;
  }
  if (a.host_stats == nullptr) return {};  // nobody reads the statistics
  statsKernel<<<a.stats.blocks, a.stats.threads, 0, stream>>>(a, keys);
  SS_LAUNCHED("backward statistics kernel");
  const std::size_t stat_bytes = (2 * std::size_t{a.shard_count} + 2) * sizeof(std::uint32_t);
  return check(cudaMemcpyAsync(a.host_stats, s.stats, stat_bytes, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync (backward statistics to the host)");
}

LaunchError routeTempBytes(std::uint32_t samples, std::uint64_t cells, std::size_t& bytes) {
  // The same argument types as launchRoute's calls, so that the sizes are theirs.
  std::size_t a = 0, b = 0;
  const std::uint32_t* lengths = nullptr;
  std::uint32_t* counts = nullptr;
  std::uint32_t* out = nullptr;
  if (const cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, a, lengths, out, samples); e != cudaSuccess)
    return check(e, "cub::DeviceScan::ExclusiveSum (sizing)");
  if (const cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, b, counts, out, cells + 1); e != cudaSuccess)
    return check(e, "cub::DeviceScan::ExclusiveSum (sizing)");
  bytes = a > b ? a : b;
  return {};
}

LaunchError launchRoute(const RouteArgs& a, cudaStream_t stream) {
  const std::uint64_t cells = std::uint64_t{a.shard_count} * a.samples;
  if (const cudaError_t e = cudaMemsetAsync(a.lengths_out, 0, (cells + 1) * sizeof(std::uint32_t), stream);
      e != cudaSuccess)
    return check(e, "cudaMemsetAsync (routed lengths)");
  if (a.samples > 0) {
    std::size_t bytes = a.temp_bytes;
    if (const cudaError_t e =
            cub::DeviceScan::ExclusiveSum(a.temp, bytes, a.lengths_in, a.sample_begin, a.samples, stream);
        e != cudaSuccess)
      return check(e, "cub::DeviceScan::ExclusiveSum (sample offsets)");
    routeCountKernel<<<a.grid.blocks, a.grid.threads, 0, stream>>>(a);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return check(e, "route count kernel");
  }
  std::size_t bytes = a.temp_bytes;
  if (const cudaError_t e = cub::DeviceScan::ExclusiveSum(a.temp, bytes, a.lengths_out, a.cursor, cells + 1, stream);
      e != cudaSuccess)
    return check(e, "cub::DeviceScan::ExclusiveSum (routed offsets)");
  routeIdBeginKernel<<<1, kRouteBlockThreads, 0, stream>>>(a);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return check(e, "route id_begin kernel");
  if (a.samples > 0) {
    routeScatterKernel<<<a.grid.blocks, a.grid.threads, 0, stream>>>(a);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return check(e, "route scatter kernel");
  }
  const std::size_t begin_bytes = (std::size_t{a.shard_count} + 1) * sizeof(std::uint32_t);
  return check(cudaMemcpyAsync(a.host_id_begin, a.id_begin, begin_bytes, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync (routed id_begin to the host)");
}

}  // namespace shardscope::profiler::cuda::detail
