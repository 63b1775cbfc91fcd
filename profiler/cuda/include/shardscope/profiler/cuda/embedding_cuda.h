// The engine's CUDA embedding kernels (TBE-style): every table shard a rank
// holds lives in one device allocation, and one launch serves all of them.
// Pooled forward (fp32/fp16/bf16 weights, sum or mean, fp32 accumulation),
// backward fused with row-wise AdaGrad over deduplicated rows (sort by row,
// segment, one owner per row: no atomics on hot rows), and the id routing
// (bucketize row-wise shards, permute table-wise ones) on the GPU.
// Semantics match the CPU backend (embedding_kernels.h): the GPU check
// compares them on the same tables and ids (docs/engine-cuda.md#kernels).
//
// Objects holding device memory remember their device and free it there; the
// operations run on the current device, which must be the tables' device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/profiler/cuda/launch_config.h"
#include "shardscope/profiler/engine/embedding_kernels.h"

namespace shardscope::profiler::cuda {

struct KernelAccess;  // the implementation's view of the classes below

// bfloat16 <-> fp32 on the host as the device converts: round to nearest
// even (a NaN stays a quiet NaN), widening exact.
[[nodiscard]] std::uint16_t floatToBfloat16(float f);
[[nodiscard]] float bfloat16ToFloat(std::uint16_t b);

// One shard as the device holds it: rows x dim weights of `type` and one fp32
// AdaGrad accumulator per row. dim in [1, launch::kMaxDim].
struct DeviceShardSpec {
  std::uint64_t rows = 0;
  std::uint32_t dim = 0;
  DeviceWeightType type = DeviceWeightType::F32;
};

// Every shard of one rank on one device: one weights allocation (each row
// padded to a multiple of 16 bytes, each shard 256-byte aligned; the padding
// is zero) and one momentum array (shard s's rows from rowBase(s)).
class DeviceTables {
 public:
  DeviceTables() = default;
  DeviceTables(const DeviceTables&) = delete;
  DeviceTables& operator=(const DeviceTables&) = delete;
  DeviceTables(DeviceTables&& other) noexcept;
  DeviceTables& operator=(DeviceTables&& other) noexcept;
  ~DeviceTables();

  // Allocates on the current device, weights and momentum zero. Errors: a dim
  // outside [1, kMaxDim], more than 2^32 - 1 rows in all, out of memory
  // (naming the bytes).
  [[nodiscard]] static core::Result<DeviceTables> create(std::span<const DeviceShardSpec> shards);

  // Deterministic weights, the same values EmbeddingShard::initialize gives
  // (fp16/bf16 rounded to nearest even); momentum 0. Asynchronous on `stream`.
  [[nodiscard]] core::Status initialize(std::size_t shard, std::uint64_t seed, std::uint64_t row_offset,
                                        std::uint32_t col_offset, cudaStream_t stream);

  // Copies between a host shard (same rows and dim) and the device; both wait
  // for `stream` to finish. Types: F32 <-> F32, F16 <-> F16; a BF16 shard
  // uploads from an F32 host shard (rounded to nearest even) and downloads
  // into one (exactly); an F16 shard also downloads into an F32 one.
  [[nodiscard]] core::Status upload(std::size_t shard, const EmbeddingShard& host, cudaStream_t stream = nullptr);
  [[nodiscard]] core::Status download(std::size_t shard, EmbeddingShard& host, cudaStream_t stream = nullptr) const;
  // The same with raw packed rows (rows x dim elements of the shard's type,
  // no padding) and rows momentum values; empty spans skip that part.
  [[nodiscard]] core::Status uploadRaw(std::size_t shard, std::span<const std::byte> weights,
                                       std::span<const float> momentum, cudaStream_t stream = nullptr);
  [[nodiscard]] core::Status downloadRaw(std::size_t shard, std::span<std::byte> weights, std::span<float> momentum,
                                         cudaStream_t stream = nullptr) const;

  // Weights (rows x rowPitch bytes, padding included) and momentum (rows
  // floats) of one shard as raw device memory, for replica sync.
  [[nodiscard]] void* weights(std::size_t shard) const;
  [[nodiscard]] std::size_t weightBytes(std::size_t shard) const;
  [[nodiscard]] std::size_t rowPitch(std::size_t shard) const { return pitch_[shard]; }
  [[nodiscard]] float* momentum(std::size_t shard) const;
  [[nodiscard]] std::uint64_t rowBase(std::size_t shard) const { return row_base_[shard]; }

  [[nodiscard]] std::size_t count() const { return specs_.size(); }
  [[nodiscard]] const DeviceShardSpec& spec(std::size_t shard) const { return specs_[shard]; }
  [[nodiscard]] std::uint64_t totalRows() const { return total_rows_; }
  [[nodiscard]] std::uint32_t maxDim() const { return max_dim_; }
  [[nodiscard]] std::uint64_t memoryBytes() const { return weight_bytes_ + momentum_bytes_; }
  [[nodiscard]] int device() const { return device_; }

 private:
  friend struct KernelAccess;
  void release() noexcept;

  std::vector<DeviceShardSpec> specs_;
  std::vector<std::size_t> weight_offsets_;  // bytes into weights_
  std::vector<std::size_t> pitch_;           // bytes per row
  std::vector<std::uint64_t> row_base_;      // first linear row of each shard (momentum index)
  unsigned char* weights_ = nullptr;
  float* momentum_ = nullptr;
  std::size_t weight_bytes_ = 0, momentum_bytes_ = 0;
  std::uint64_t total_rows_ = 0;
  std::uint32_t max_dim_ = 0;
  int device_ = 0;
};

// A batch of bags over several shards in CSR form, all in device memory:
// bags of shard s are [bag_begin[s], bag_begin[s + 1]); bag b looks up
// ids[offsets[b] .. offsets[b + 1]) (local rows < that shard's rows, u32; a
// precondition the kernels do not check). Pooled output of bag b (shard s,
// bag j = b - bag_begin[s]) is written at out + out_offset[s] + j *
// out_stride[s], dim floats (columns past dim untouched). The same layout
// holds gradients in the backward pass. bag_begin has one entry per
// DeviceTables shard plus one, starts at 0 and ends at DeviceBags::bags.
struct BatchLayout {
  std::vector<std::uint32_t> bag_begin;   // shards + 1 entries
  std::vector<std::uint64_t> out_offset;  // per shard, floats
  std::vector<std::uint32_t> out_stride;  // per shard, floats (>= dim where the shard has bags)
};

// offsets[0] == 0, offsets[bags] == ids_count. The forward ignores ids_count;
// the backward needs it (the sort size): 0 with bags > 0 makes it read
// offsets[bags] from the device, a stream synchronization.
struct DeviceBags {
  const std::uint32_t* offsets = nullptr;  // bags + 1 entries, device
  const std::uint32_t* ids = nullptr;      // device
  std::uint32_t bags = 0;
  std::uint32_t ids_count = 0;
};

// Reused device scratch (sort/segment buffers, CUB temporaries, descriptor
// arrays): grown, never shrunk, so that steady-state steps allocate nothing.
// One workspace per stream (calls on it are ordered by that stream).
class KernelWorkspace {
 public:
  KernelWorkspace();
  KernelWorkspace(const KernelWorkspace&) = delete;
  KernelWorkspace& operator=(const KernelWorkspace&) = delete;
  KernelWorkspace(KernelWorkspace&& other) noexcept;
  KernelWorkspace& operator=(KernelWorkspace&& other) noexcept;
  ~KernelWorkspace();

  [[nodiscard]] std::uint64_t deviceBytes() const;  // device scratch held
  [[nodiscard]] std::uint64_t allocations() const;  // cudaMalloc/cudaMallocHost calls so far

  struct Impl;

 private:
  friend struct KernelAccess;
  std::unique_ptr<Impl> impl_;
};

// Statistics of one backwardAdagrad. The GPU writes them into pinned memory
// this object owns; a host callback enqueued after the backward copies them
// into the fields below, so they are valid once the stream has completed
// past the call. Keep the object alive (and unmoved) until then.
class BackwardCounts {
 public:
  std::uint64_t lookups = 0;                     // every shard's
  std::uint64_t unique_rows = 0;                 // distinct (shard, row) pairs updated
  std::vector<std::uint64_t> shard_lookups;      // per DeviceTables shard
  std::vector<std::uint64_t> shard_unique_rows;  // per DeviceTables shard

  BackwardCounts() = default;
  BackwardCounts(const BackwardCounts&) = delete;
  BackwardCounts& operator=(const BackwardCounts&) = delete;
  BackwardCounts(BackwardCounts&& other) noexcept;
  BackwardCounts& operator=(BackwardCounts&& other) noexcept;
  ~BackwardCounts();

 private:
  friend struct KernelAccess;
  std::uint32_t* pinned_ = nullptr;  // [unique, lookups per shard, first unique row per shard + 1]
  std::size_t capacity_ = 0;         // uint32 entries
};

// One batched launch over all shards. Asynchronous on `stream`. Sum: each
// column summed over the bag's ids in order from +0.0f (fp32 Sum is bit-
// identical to the CPU loop); Mean: that sum x (1/len); an empty bag gives 0.
[[nodiscard]] core::Status forward(const DeviceTables& tables, const BatchLayout& layout, const DeviceBags& bags,
                                   Pooling pooling, float* out, KernelWorkspace& workspace, cudaStream_t stream);

// Backward + fused row-wise AdaGrad (EXACT_ROWWISE_ADAGRAD, as the CPU
// backend): per distinct (shard, row), g = sum of grad rows of its bags in
// (bag, position) order (x 1/len for Mean); momentum += mean(g^2); row -=
// lr * g / (sqrt(momentum) + eps). Rows looked up more than kLongSegment
// times sum in fixed chunks (docs/engine-cuda.md#kernels). Asynchronous;
// `counts` (optional: it costs a host callback on the stream) holds the
// statistics once the stream completes.
[[nodiscard]] core::Status backwardAdagrad(DeviceTables& tables, const BatchLayout& layout, const DeviceBags& bags,
                                           Pooling pooling, const float* grad, const AdagradConfig& config,
                                           KernelWorkspace& workspace, cudaStream_t stream,
                                           BackwardCounts* counts = nullptr);

// Routing of one table's ids (CSR over `samples` samples, global u64 ids) to
// the shards that serve them, on the GPU. Row-wise shards are [row_begin[k],
// row_begin[k] + rows[k]) (disjoint; zero-row pieces receive nothing); each
// id goes to the shard holding its row, as the local row folded into
// physical_rows[k] (foldRow); ids in no range go nowhere. An all_ids shard
// (table-wise, column-wise, a data-parallel copy) receives every id, folded.
// Output per shard k: lengths[k * samples + i] ids of sample i, and the ids,
// shard-major then sample order (input order inside a sample), starting at
// id_begin[k]. Sample i's ids follow its length, clamped to id_count (as
// routeToShard). Asynchronous; host_id_begin is valid once the stream completes.
struct RouteShard {
  std::uint64_t row_begin = 0;
  std::uint64_t rows = 0;
  std::uint64_t physical_rows = 0;  // 0 counts as 1
  bool all_ids = false;             // column-wise / table-wise: every id, folded
};

// routeIds' output. The object owns and grows the device buffers (reused
// between calls) and a pinned host copy of id_begin; routeIds points the
// public views at them (do not assign them).
class RoutedIds {
 public:
  std::uint32_t* lengths = nullptr;              // shards x samples, device
  std::uint32_t* ids = nullptr;                  // local folded rows, device
  std::uint32_t* id_begin = nullptr;             // shards + 1, device
  std::span<const std::uint32_t> host_id_begin;  // shards + 1, pinned: valid once the stream completes

  RoutedIds() = default;
  RoutedIds(const RoutedIds&) = delete;
  RoutedIds& operator=(const RoutedIds&) = delete;
  RoutedIds(RoutedIds&& other) noexcept;
  RoutedIds& operator=(RoutedIds&& other) noexcept;
  ~RoutedIds();

  [[nodiscard]] std::size_t shards() const { return shards_; }
  [[nodiscard]] std::uint32_t samples() const { return samples_; }
  [[nodiscard]] std::uint64_t deviceBytes() const;

 private:
  friend struct KernelAccess;
  void release() noexcept;
  void refreshViews() noexcept;
  std::uint32_t* lengths_ = nullptr;
  std::uint32_t* ids_ = nullptr;
  std::uint32_t* id_begin_ = nullptr;
  std::uint32_t* host_id_begin_ = nullptr;
  std::size_t lengths_capacity_ = 0, ids_capacity_ = 0, shards_capacity_ = 0, host_capacity_ = 0;  // entries
  std::size_t shards_ = 0;
  std::uint32_t samples_ = 0;
  int device_ = 0;
};

[[nodiscard]] core::Status routeIds(const std::uint32_t* lengths, const std::uint64_t* ids, std::uint32_t samples,
                                    std::uint32_t id_count, std::span<const RouteShard> shards, RoutedIds& out,
                                    KernelWorkspace& workspace, cudaStream_t stream);

}  // namespace shardscope::profiler::cuda
