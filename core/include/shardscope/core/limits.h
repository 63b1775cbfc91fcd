// The largest values ShardScope's inputs may hold, checked when a file is
// read, before anything is allocated from them, and arithmetic on sizes that
// cannot wrap. Each maximum is far above any real model or cluster (the
// largest public DLRMs hold tens of TB of embeddings in a few thousand
// tables, trained on at most tens of thousands of GPUs); what it bounds is
// what a hostile or mistyped file can make the tools allocate or compute.
// docs/formats/README.md lists them.
#pragma once

#include <cstdint>
#include <optional>

namespace shardscope::core {

inline constexpr std::uint64_t kMaxWorldSize = std::uint64_t{1} << 17;  // GPUs in a cluster or plan (131,072)
inline constexpr std::uint64_t kMaxGpusPerNode = 1024;
inline constexpr std::uint64_t kMaxTables = 100000;                      // tables in a model, a plan or an access file
inline constexpr std::uint64_t kMaxRows = std::uint64_t{1} << 48;        // rows of one table
inline constexpr std::uint64_t kMaxDim = 65536;                          // embedding width
inline constexpr std::uint64_t kMaxTableBytes = std::uint64_t{1} << 50;  // one table's weights (1 PiB)
inline constexpr std::uint64_t kMaxModelBytes = std::uint64_t{1} << 56;  // all tables' weights together (64 PiB)
inline constexpr std::uint64_t kMaxBatchPerGpu = std::uint64_t{1} << 24;
inline constexpr double kMaxPooling = 65536.0;  // mean ids per sample of one table
inline constexpr std::uint64_t kMaxDenseParameters = std::uint64_t{1} << 44;
inline constexpr std::uint64_t kMaxHbmBytes = std::uint64_t{1} << 44;  // one GPU's memory (16 TiB)
inline constexpr std::uint64_t kMaxSyncInterval = 1000000;             // steps between replica weight syncs

// a * b and a + b, or nullopt where the result does not fit 64 bits.
[[nodiscard]] constexpr std::optional<std::uint64_t> mulChecked(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}
[[nodiscard]] constexpr std::optional<std::uint64_t> addChecked(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// A size computed in floating point as a byte count: 0 for NaN or a negative
// value, UINT64_MAX from 2^64 on (where a plain cast is undefined behaviour).
[[nodiscard]] constexpr std::uint64_t toByteCount(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  return static_cast<std::uint64_t>(v);
}

}  // namespace shardscope::core
