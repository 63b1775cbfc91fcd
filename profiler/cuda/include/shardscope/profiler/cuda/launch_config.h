// Launch configuration of the CUDA embedding kernels as plain C++ (no CUDA
// headers, C++17 so that the kernels' .cu includes it too): the row layout of
// the device tables, the threads that serve one bag, the grids (capped,
// grid-stride) and the shared memory of every launch. Pure functions, unit-
// tested without a GPU (tests/profiler/cuda/test_cuda_launch_config.cpp);
// docs/engine-cuda.md#kernels explains the choices.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardscope::profiler::cuda {

// Weight types the device tables hold (fp16 and int8 tables run as fp16, as on the CPU).
enum class DeviceWeightType { F32, F16, BF16 };

namespace launch {

inline constexpr std::uint32_t kWarp = 32;
inline constexpr std::uint32_t kMaxThreadsPerBlock = 1024;
inline constexpr std::uint32_t kMaxThreadsPerSm = 2048;  // sm_90; the grid cap only, not correctness
// Static shared memory without opting in: every launch stays below it.
inline constexpr std::size_t kSharedMemoryLimit = 48 * 1024;
// Blocks per SM the capped grids are sized for (grid-stride loops do the rest).
inline constexpr std::uint32_t kWaves = 4;

// Rows are padded to 16 bytes so that every row is read in whole 16-byte
// vectors (float4 or 8 halves), whatever the dim; shards start 256-byte aligned.
inline constexpr std::uint32_t kVectorBytes = 16;
inline constexpr std::uint32_t kShardAlignBytes = 256;
// Largest dim the kernels serve (the backward keeps one fp32 row per warp in shared memory).
inline constexpr std::uint32_t kMaxDim = 8192;

// Forward: warps of kForwardBlockThreads / 32 per block, each warp serving 32
// / threads_per_bag bags of one shard; kForwardUnroll rows loaded ahead of
// their (in-order) additions.
inline constexpr std::uint32_t kForwardBlockThreads = 256;
inline constexpr std::uint32_t kForwardUnroll = 8;

// Backward: keys are written by groups of kKeysGroup lanes per bag.
inline constexpr std::uint32_t kKeysGroup = 8;
inline constexpr std::uint32_t kKeysBlockThreads = 256;
// A unique row's gradient is summed in column tiles of kTileColumns (each lane
// kTileRegisters columns in registers), kBackwardUnroll occurrences loaded ahead.
inline constexpr std::uint32_t kTileRegisters = 4;
inline constexpr std::uint32_t kTileColumns = kWarp * kTileRegisters;
inline constexpr std::uint32_t kBackwardUnroll = 8;
// Rows with up to kLongSegment occurrences: one warp, occurrences summed in
// order. Longer (hot) rows: their occurrences split into chunks of
// kLongChunk, one warp per chunk anywhere in the grid summing it in order,
// then one warp per row adding the chunks' sums in chunk order.
inline constexpr std::uint32_t kLongSegment = 256;
inline constexpr std::uint32_t kLongChunk = 256;
inline constexpr std::uint32_t kUpdateMaxWarpsPerBlock = 8;
inline constexpr std::uint32_t kChunkBlockThreads = 256;
inline constexpr std::uint32_t kStatsBlockThreads = 256;

// Routing: one warp per sample.
inline constexpr std::uint32_t kRouteBlockThreads = 256;
// Initialization: one warp per row.
inline constexpr std::uint32_t kInitializeBlockThreads = 256;

}  // namespace launch

[[nodiscard]] std::size_t elementBytes(DeviceWeightType type);
[[nodiscard]] const char* weightTypeName(DeviceWeightType type);

// Bytes of one device row: dim x element bytes rounded up to 16.
[[nodiscard]] std::size_t rowPitchBytes(std::uint32_t dim, DeviceWeightType type);

// dim in [1, kMaxDim].
[[nodiscard]] bool dimSupported(std::uint32_t dim);

// How a shard's bags are served by the forward.
struct ForwardShardLaunch {
  std::uint32_t elements_per_vector = 0;  // 4 (fp32) or 8 (fp16, bf16) per 16-byte load
  std::uint32_t vectors = 0;              // 16-byte vectors per row (the last may reach into the padding)
  std::uint32_t threads_per_bag = 0;      // power of two <= 32, the fewest covering `vectors` (at most 32)
  std::uint32_t bags_per_warp = 0;        // 32 / threads_per_bag
  std::uint32_t passes = 0;               // vectors per thread: ceil(vectors / threads_per_bag)
};
[[nodiscard]] ForwardShardLaunch forwardShardLaunch(std::uint32_t dim, DeviceWeightType type);

// Warp work items of a shard with `bags` bags: ceil(bags / bags_per_warp).
[[nodiscard]] std::uint32_t forwardWarpItems(std::uint32_t bags, const ForwardShardLaunch& shard);

struct GridLaunch {
  std::uint32_t blocks = 0;  // 0: nothing to launch
  std::uint32_t threads = 0;
  std::size_t shared_bytes = 0;  // dynamic shared memory
};

// A grid-stride launch over `items` work items of which one block serves
// `items_per_block` per round: ceil(items / items_per_block) blocks, capped at
// kWaves x (resident blocks per SM) x multiprocessors. 0 blocks for 0 items.
[[nodiscard]] GridLaunch gridLaunch(std::uint64_t items, std::uint32_t items_per_block, std::uint32_t threads,
                                    std::uint32_t multiprocessors);

// The launches. `multiprocessors` is the device's SM count (0 counts as 1).
[[nodiscard]] GridLaunch forwardLaunch(std::uint64_t warp_items, std::uint32_t multiprocessors);
[[nodiscard]] GridLaunch keysLaunch(std::uint64_t bags, std::uint32_t multiprocessors);
// Short rows: one warp per unique row (at most `lookups` of them), a dim-sized
// fp32 row per warp in shared memory: fewer warps per block for large dims.
[[nodiscard]] GridLaunch updateLaunch(std::uint64_t lookups, std::uint32_t max_dim, std::uint32_t multiprocessors);
// Hot rows: at most longRowBound(lookups) of them, in at most
// longChunkBound(lookups) chunks. Chunk counts: one thread per possible row
// (+1); chunk sums: one warp per chunk; the rows: as updateLaunch, per row.
[[nodiscard]] std::uint64_t longRowBound(std::uint64_t lookups);
[[nodiscard]] std::uint64_t longChunkBound(std::uint64_t lookups);
[[nodiscard]] GridLaunch chunkCountLaunch(std::uint64_t lookups, std::uint32_t multiprocessors);
[[nodiscard]] GridLaunch chunkSumLaunch(std::uint64_t lookups, std::uint32_t multiprocessors);
[[nodiscard]] GridLaunch longUpdateLaunch(std::uint64_t lookups, std::uint32_t max_dim, std::uint32_t multiprocessors);
// The per-shard statistics of a backward: one block.
[[nodiscard]] GridLaunch statsLaunch();
[[nodiscard]] GridLaunch routeLaunch(std::uint64_t samples, std::uint32_t multiprocessors);
[[nodiscard]] GridLaunch initializeLaunch(std::uint64_t rows, std::uint32_t multiprocessors);

// Bits a linear row key of a table set with `total_rows` rows needs (the
// radix sort sorts only these): bit_width(total_rows - 1), at least 1.
[[nodiscard]] int sortEndBit(std::uint64_t total_rows);

}  // namespace shardscope::profiler::cuda
