// Launch math of the CUDA embedding kernels (launch_config.h): plain C++.
#include "shardscope/profiler/cuda/launch_config.h"

#include <algorithm>
#include <bit>

namespace shardscope::profiler::cuda {

using namespace launch;

std::size_t elementBytes(DeviceWeightType type) { return type == DeviceWeightType::F32 ? 4 : 2; }

const char* weightTypeName(DeviceWeightType type) {
  switch (type) {
    case DeviceWeightType::F32:
      return "fp32";
    case DeviceWeightType::F16:
      return "fp16";
    case DeviceWeightType::BF16:
      return "bf16";
  }
  return "?";
}

std::size_t rowPitchBytes(std::uint32_t dim, DeviceWeightType type) {
  const std::size_t bytes = std::size_t{dim} * elementBytes(type);
  return (bytes + kVectorBytes - 1) / kVectorBytes * kVectorBytes;
}

bool dimSupported(std::uint32_t dim) { return dim >= 1 && dim <= kMaxDim; }

ForwardShardLaunch forwardShardLaunch(std::uint32_t dim, DeviceWeightType type) {
  ForwardShardLaunch s;
  s.elements_per_vector = static_cast<std::uint32_t>(kVectorBytes / elementBytes(type));
  s.vectors = static_cast<std::uint32_t>(rowPitchBytes(dim, type) / kVectorBytes);
  // The fewest threads (a power of two, so that groups tile a warp) that read
  // the row in one pass, at most a warp; wider rows take several passes.
  s.threads_per_bag = std::min(kWarp, std::bit_ceil(std::max(s.vectors, 1u)));
  s.bags_per_warp = kWarp / s.threads_per_bag;
  s.passes = (s.vectors + s.threads_per_bag - 1) / s.threads_per_bag;
  return s;
}

std::uint32_t forwardWarpItems(std::uint32_t bags, const ForwardShardLaunch& shard) {
  if (shard.bags_per_warp == 0) return 0;
  return static_cast<std::uint32_t>((std::uint64_t{bags} + shard.bags_per_warp - 1) / shard.bags_per_warp);
}

GridLaunch gridLaunch(std::uint64_t items, std::uint32_t items_per_block, std::uint32_t threads,
                      std::uint32_t multiprocessors) {
  GridLaunch g;
  g.threads = threads;
  if (items == 0 || items_per_block == 0 || threads == 0) return g;
  const std::uint64_t resident = std::max<std::uint32_t>(1, kMaxThreadsPerSm / threads);
  const std::uint64_t cap = kWaves * resident * std::max<std::uint32_t>(1, multiprocessors);
  const std::uint64_t wanted = (items + items_per_block - 1) / items_per_block;
  g.blocks = static_cast<std::uint32_t>(std::min(wanted, cap));
  return g;
}

GridLaunch forwardLaunch(std::uint64_t warp_items, std::uint32_t multiprocessors) {
  return gridLaunch(warp_items, kForwardBlockThreads / kWarp, kForwardBlockThreads, multiprocessors);
}

GridLaunch keysLaunch(std::uint64_t bags, std::uint32_t multiprocessors) {
  return gridLaunch(bags, kKeysBlockThreads / kKeysGroup, kKeysBlockThreads, multiprocessors);
}

GridLaunch updateLaunch(std::uint64_t lookups, std::uint32_t max_dim, std::uint32_t multiprocessors) {
  const std::size_t row_bytes = std::size_t{std::max(max_dim, 1u)} * sizeof(float);
  const auto fit = static_cast<std::uint32_t>(std::min<std::size_t>(kSharedMemoryLimit / row_bytes, 1024));
  const std::uint32_t warps = std::clamp(fit, 1u, kUpdateMaxWarpsPerBlock);
  GridLaunch g = gridLaunch(lookups, warps, warps * kWarp, multiprocessors);
  g.shared_bytes = warps * row_bytes;
  return g;
}

std::uint64_t longRowBound(std::uint64_t lookups) { return lookups / (kLongSegment + 1); }

std::uint64_t longChunkBound(std::uint64_t lookups) {
  // sum over hot rows of ceil(count / chunk) <= lookups / chunk + hot rows.
  const std::uint64_t rows = longRowBound(lookups);
  return rows == 0 ? 0 : lookups / kLongChunk + rows;
}

GridLaunch chunkCountLaunch(std::uint64_t lookups, std::uint32_t multiprocessors) {
  const std::uint64_t rows = longRowBound(lookups);
  return gridLaunch(rows == 0 ? 0 : rows + 1, kChunkBlockThreads, kChunkBlockThreads, multiprocessors);
}

GridLaunch chunkSumLaunch(std::uint64_t lookups, std::uint32_t multiprocessors) {
  return gridLaunch(longChunkBound(lookups), kChunkBlockThreads / kWarp, kChunkBlockThreads, multiprocessors);
}

GridLaunch longUpdateLaunch(std::uint64_t lookups, std::uint32_t max_dim, std::uint32_t multiprocessors) {
  return updateLaunch(longRowBound(lookups), max_dim, multiprocessors);
}

GridLaunch statsLaunch() {
  GridLaunch g;
  g.threads = kStatsBlockThreads;
  g.blocks = 1;  // every shard (and the end marker) in one block's stride loop
  return g;
}

GridLaunch routeLaunch(std::uint64_t samples, std::uint32_t multiprocessors) {
  return gridLaunch(samples, kRouteBlockThreads / kWarp, kRouteBlockThreads, multiprocessors);
}

GridLaunch initializeLaunch(std::uint64_t rows, std::uint32_t multiprocessors) {
  return gridLaunch(rows, kInitializeBlockThreads / kWarp, kInitializeBlockThreads, multiprocessors);
}

int sortEndBit(std::uint64_t total_rows) {
  if (total_rows <= 1) return 1;
  return static_cast<int>(std::bit_width(total_rows - 1));
}

}  // namespace shardscope::profiler::cuda
