// The engine's CPU embedding kernels: pooled lookups (sum or mean) over one
// shard's rows, and the backward pass fused with FBGEMM's row-wise AdaGrad
// update over deduplicated rows. fp32 or fp16 weights, fp32 outputs,
// gradients and optimizer state. Multi-threaded over a ThreadPool.
// Semantics (what the tests check against a naive reference) are in
// docs/engine.md#kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "shardscope/profiler/engine/thread_pool.h"

namespace shardscope::profiler {

enum class WeightType { F32, F16 };
enum class Pooling { Sum, Mean };

// Storage for large tables: blocks of 2 MiB and more are 2 MiB-aligned and
// advised for transparent huge pages before they are first touched, so that
// random row lookups over a table far larger than the caches miss the TLB far
// less often (the difference is tens of percent). Smaller blocks use operator new.
[[nodiscard]] void* allocateTableBytes(std::size_t bytes);
void freeTableBytes(void* p, std::size_t bytes) noexcept;

template <typename T>
struct TableAllocator {
  using value_type = T;
  TableAllocator() = default;
  template <typename U>
  explicit TableAllocator(const TableAllocator<U>& /*other*/) noexcept {}
  [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(allocateTableBytes(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { freeTableBytes(p, n * sizeof(T)); }
  friend bool operator==(const TableAllocator&, const TableAllocator&) { return true; }
};

// rows x dim weights (row-major) and one row-wise AdaGrad accumulator per row.
class EmbeddingShard {
 public:
  EmbeddingShard() = default;
  EmbeddingShard(std::uint64_t rows, std::uint32_t dim, WeightType type);

  // Deterministic values from (seed, global row, global column): every process
  // and every shard split of a table starts from the same weights; momentum 0.
  // Row r of this shard is global row row_offset + r, column c is col_offset + c.
  void initialize(std::uint64_t seed, std::uint64_t row_offset, std::uint32_t col_offset);

  [[nodiscard]] std::uint64_t rows() const { return rows_; }
  [[nodiscard]] std::uint32_t dim() const { return dim_; }
  [[nodiscard]] WeightType type() const { return type_; }
  [[nodiscard]] std::size_t rowBytes() const;  // dim x 4 or dim x 2

  [[nodiscard]] float* f32Row(std::uint64_t r);  // type F32
  [[nodiscard]] const float* f32Row(std::uint64_t r) const;
  [[nodiscard]] std::uint16_t* f16Row(std::uint64_t r);  // type F16 (IEEE binary16 bits)
  [[nodiscard]] const std::uint16_t* f16Row(std::uint64_t r) const;
  [[nodiscard]] std::span<float> momentum() { return momentum_; }
  [[nodiscard]] std::span<const float> momentum() const { return momentum_; }
  // All weight bytes (for replica sync and digests).
  [[nodiscard]] std::span<std::byte> weightBytes();
  [[nodiscard]] std::span<const std::byte> weightBytes() const;
  // Bytes held: weights + momentum.
  [[nodiscard]] std::uint64_t memoryBytes() const;
  // FNV-1a 64 over weights then momentum: equal digests = identical state.
  [[nodiscard]] std::uint64_t digest() const;

 private:
  std::uint64_t rows_ = 0;
  std::uint32_t dim_ = 0;
  WeightType type_ = WeightType::F32;
  std::vector<float, TableAllocator<float>> f32_;
  std::vector<std::uint16_t, TableAllocator<std::uint16_t>> f16_;
  std::vector<float, TableAllocator<float>> momentum_;
};

// Bags in CSR form: bag s looks up ids[offsets[s] .. offsets[s+1]), local rows < shard.rows()
// (a precondition the kernels do not check), fewer than 2^32 ids in all.
struct Bags {
  std::span<const std::uint32_t> offsets;  // bags + 1 entries, offsets[0] == 0
  std::span<const std::uint32_t> ids;
  [[nodiscard]] std::size_t count() const { return offsets.empty() ? 0 : offsets.size() - 1; }
};

// out[s * out_stride + c] = sum (or mean) over bag s of row(id)[c], c < dim.
// An empty bag gives zeros. fp32 sums accumulate in bag order from +0.0f, so
// the result is bit-identical to the naive loop for Sum on fp32 weights.
void embeddingForward(const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out,
                      std::size_t out_stride, ThreadPool* pool = nullptr);

struct AdagradConfig {
  float learning_rate = 0.01f;
  float eps = 1e-8f;
};

// Reused between calls so that the backward pass does not allocate in steady state.
// After a call: order = lookup positions sorted by (row, position); unique_rows
// = the distinct rows in increasing order; row_begin[u] .. row_begin[u+1] =
// row u's slice of order; sample_of[position] = its bag. The rest is scratch.
struct BackwardWorkspace {
  std::vector<std::uint32_t> order;
  std::vector<std::uint32_t> unique_rows;
  std::vector<std::uint32_t> row_begin;
  std::vector<std::uint32_t> sample_of;
  std::vector<float> grad;
  std::vector<std::uint32_t> keys;  // sorted row ids, one per position
  std::vector<std::uint32_t> keys_tmp;
  std::vector<std::uint32_t> order_tmp;
  std::vector<std::uint32_t> histogram;
};

struct BackwardStats {
  std::uint64_t lookups = 0;
  std::uint64_t unique_rows = 0;
};

// Row-wise AdaGrad, fused (FBGEMM's EXACT_ROWWISE_ADAGRAD): for every distinct
// row r looked up, g = sum over its occurrences of grad_out[bag] (x 1/len for
// Mean), in order of (bag, position); momentum[r] += mean over columns of g^2;
// row -= learning_rate x g / (sqrt(momentum[r]) + eps). fp16 rows are updated
// in fp32 and rounded to nearest even.
BackwardStats embeddingBackwardAdagrad(EmbeddingShard& shard, const Bags& bags, Pooling pooling, const float* grad_out,
                                       std::size_t grad_stride, const AdagradConfig& config,
                                       BackwardWorkspace& workspace, ThreadPool* pool = nullptr);

// Which code path runs the kernels. Both give bit-identical results; the
// overloads taking a KernelIsa exist so that tests and benchmarks can compare
// them. Asking for Avx2F16c on a CPU without it runs the portable path.
enum class KernelIsa { Portable, Avx2F16c };
[[nodiscard]] KernelIsa detectedKernelIsa();  // the best path this CPU supports (what the plain overloads use)
[[nodiscard]] const char* kernelIsaName(KernelIsa isa);

void embeddingForward(KernelIsa isa, const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out,
                      std::size_t out_stride, ThreadPool* pool = nullptr);
BackwardStats embeddingBackwardAdagrad(KernelIsa isa, EmbeddingShard& shard, const Bags& bags, Pooling pooling,
                                       const float* grad_out, std::size_t grad_stride, const AdagradConfig& config,
                                       BackwardWorkspace& workspace, ThreadPool* pool = nullptr);

// IEEE binary16 conversions (round to nearest even), used by the kernels and their tests.
[[nodiscard]] float halfToFloat(std::uint16_t h);
[[nodiscard]] std::uint16_t floatToHalf(float f);

}  // namespace shardscope::profiler
