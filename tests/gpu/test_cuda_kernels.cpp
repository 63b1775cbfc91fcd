// The CUDA embedding kernels against the CPU backend on the same shards and
// ids: initialize() (bit for bit), upload/download, the batched forward (fp32
// Sum bit for bit, the rest within 1e-3), backward + fused row-wise AdaGrad
// (weights, momentum and the unique-row counts), the id routing against
// routeToShard, steady-state steps without allocation, and input errors.
// Shards of dims 1, 3, 8, 64, 128, 130 in fp32, fp16 and bf16, zipf-skewed
// ids with rows hot enough to take the hot-row path, empty bags, a shard
// without bags, output strides wider than the dim.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.h"
#include "kernel_inputs.h"
#include "shardscope/profiler/cuda/embedding_cuda.h"
#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/shard_inputs.h"

using namespace shardscope;
using namespace shardscope::profiler;
using namespace shardscope::profiler::cuda;
using gputest::HostBags;

namespace {

#define CHECK_OK(expr)                                                                   \
  do {                                                                                   \
    const auto& status_ = (expr);                                                        \
    GPU_CHECK_MSG(status_.ok(), status_.ok() ? std::string() : status_.error().message); \
    if (!status_.ok()) return;                                                           \
  } while (0)

template <class T>
struct DeviceArray {
  T* p = nullptr;
  std::size_t n = 0;
  DeviceArray() = default;
  explicit DeviceArray(const std::vector<T>& host) { assign(host); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(p); }
  void assign(const std::vector<T>& host) {
    cudaFree(p);
    p = nullptr;
    n = host.size();
    void* raw = nullptr;
    GPU_CHECK_CUDA(cudaMalloc(&raw, std::max<std::size_t>(n, 1) * sizeof(T)));
    p = static_cast<T*>(raw);
    if (n > 0) GPU_CHECK_CUDA(cudaMemcpy(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  [[nodiscard]] std::vector<T> read(std::size_t count) const {
    std::vector<T> host(count);
    if (count > 0) GPU_CHECK_CUDA(cudaMemcpy(host.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
};

struct ShardCase {
  std::uint64_t rows;
  std::uint32_t dim;
  DeviceWeightType type;
  std::uint32_t bags;
  double alpha;
  std::uint32_t stride_pad;  // output stride = dim + pad
};

// Shard 2 has about 40k lookups over 5000 rows at alpha 1.2: its top rows
// are looked up thousands of times (the hot-row path); shard 7 has no bags.
const ShardCase kCases[] = {
    {1000, 1, DeviceWeightType::F32, 300, 1.1, 0},   {777, 3, DeviceWeightType::F16, 200, 1.05, 1},
    {5000, 64, DeviceWeightType::F32, 2048, 1.2, 0}, {3000, 128, DeviceWeightType::F16, 1024, 1.2, 4},
    {2000, 130, DeviceWeightType::F32, 512, 0.9, 2}, {1500, 64, DeviceWeightType::BF16, 512, 1.1, 0},
    {400, 128, DeviceWeightType::BF16, 700, 1.3, 0}, {50, 8, DeviceWeightType::F32, 0, 1.0, 0},
};
constexpr std::size_t kShards = std::size(kCases);

WeightType hostType(DeviceWeightType t) { return t == DeviceWeightType::F16 ? WeightType::F16 : WeightType::F32; }

// The bits of a float or a 16-bit value as an ordered integer (for ulp distances).
std::int64_t ordered(std::uint32_t bits, int width) {
  const std::uint32_t sign = 1u << (width - 1);
  const std::int64_t magnitude = bits & (sign - 1);
  return (bits & sign) != 0 ? -magnitude : magnitude;
}

bool closeRel(float a, float b, float rel, float floor) {
  return std::abs(a - b) <= rel * std::max({std::abs(a), std::abs(b), floor});
}

struct Fixture {
  DeviceTables tables;
  std::vector<EmbeddingShard> cpu;  // bf16 shards as fp32 holding bf16 values
  HostBags all;                     // every shard's bags, shard after shard
  std::vector<HostBags> per_shard;  // the same bags per shard (local offsets)
  BatchLayout layout;
  std::size_t out_floats = 0;
};

void roundToBf16(EmbeddingShard& s) {
  float* w = s.f32Row(0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(s.rows()) * s.dim(); ++i)
    w[i] = bfloat16ToFloat(floatToBfloat16(w[i]));
}

void checkInitialize(Fixture& f) {
  for (std::size_t s = 0; s < kShards; ++s) {
    const ShardCase& c = kCases[s];
    const std::uint64_t seed = 42 + s, row_offset = 100 * s;
    const auto col_offset = static_cast<std::uint32_t>(3 * s);
    CHECK_OK(f.tables.initialize(s, seed, row_offset, col_offset, nullptr));
    EmbeddingShard ref(c.rows, c.dim, hostType(c.type));
    ref.initialize(seed, row_offset, col_offset);
    const std::string what = "initialize, shard " + std::to_string(s);
    if (c.type == DeviceWeightType::BF16) {
      std::vector<std::uint16_t> bits(c.rows * c.dim);
      std::vector<float> momentum(c.rows, -1.0f);
      CHECK_OK(f.tables.downloadRaw(s, std::as_writable_bytes(std::span<std::uint16_t>(bits)), momentum, nullptr));
      std::size_t bad = 0;
      for (std::size_t i = 0; i < bits.size(); ++i) bad += bits[i] != floatToBfloat16(ref.f32Row(0)[i]) ? 1 : 0;
      GPU_CHECK_MSG(bad == 0, what + ": " + std::to_string(bad) + " bf16 values differ");
      GPU_CHECK_MSG(std::all_of(momentum.begin(), momentum.end(), [](float m) { return m == 0.0f; }), what);
      roundToBf16(ref);
    } else {
      EmbeddingShard got(c.rows, c.dim, hostType(c.type));
      CHECK_OK(f.tables.download(s, got, nullptr));
      GPU_CHECK_MSG(got.digest() == ref.digest(),
                    what + ": weights or momentum differ from EmbeddingShard::initialize");
    }
    f.cpu.push_back(std::move(ref));
  }
  // Upload: shard 4 (fp32, dim 130: packed host rows into 528-byte device rows) from other values.
  EmbeddingShard other(kCases[4].rows, kCases[4].dim, WeightType::F32);
  other.initialize(7, 0, 0);
  for (std::size_t r = 0; r < other.rows(); ++r) other.momentum()[r] = 0.25f * static_cast<float>(r % 5);
  CHECK_OK(f.tables.upload(4, other, nullptr));
  EmbeddingShard back(other.rows(), other.dim(), WeightType::F32);
  CHECK_OK(f.tables.download(4, back, nullptr));
  GPU_CHECK_MSG(back.digest() == other.digest(), "upload then download of shard 4 changes it");
  f.cpu[4] = std::move(other);
  // A bf16 shard also downloads exactly into an fp32 host shard.
  EmbeddingShard widened(kCases[5].rows, kCases[5].dim, WeightType::F32);
  CHECK_OK(f.tables.download(5, widened, nullptr));
  GPU_CHECK_MSG(widened.digest() == f.cpu[5].digest(), "bf16 download into fp32 differs");
}

void buildBatch(Fixture& f) {
  std::mt19937_64 rng(2024);
  f.layout.bag_begin.push_back(0);
  for (std::size_t s = 0; s < kShards; ++s) {
    const ShardCase& c = kCases[s];
    HostBags mine;
    gputest::appendBags(mine, c.bags, c.rows, c.alpha, 1, 40, 0.1, rng);
    f.layout.out_offset.push_back(f.out_floats);
    f.layout.out_stride.push_back(c.dim + c.stride_pad);
    f.out_floats += std::size_t{c.bags} * (c.dim + c.stride_pad);
    const std::uint32_t base = f.all.offsets.back();
    for (std::uint32_t b = 0; b < mine.count(); ++b) f.all.offsets.push_back(base + mine.offsets[b + 1]);
    f.all.ids.insert(f.all.ids.end(), mine.ids.begin(), mine.ids.end());
    f.layout.bag_begin.push_back(f.all.count());
    f.per_shard.push_back(std::move(mine));
  }
}

Bags cpuBags(const HostBags& h) { return Bags{h.offsets, h.ids}; }

// Compares outputs float by float; padding columns (sentinels) must match bitwise.
void compareOutputs(const Fixture& f, const std::vector<float>& gpu, const std::vector<float>& cpu, Pooling pooling) {
  std::size_t bitwise_differences = 0;
  for (std::size_t s = 0; s < kShards; ++s) {
    const ShardCase& c = kCases[s];
    const std::uint32_t stride = f.layout.out_stride[s];
    std::size_t bad = 0;
    for (std::size_t j = 0; j < c.bags; ++j) {
      for (std::uint32_t col = 0; col < stride; ++col) {
        const std::size_t at = f.layout.out_offset[s] + j * stride + col;
        const bool same_bits = std::bit_cast<std::uint32_t>(gpu[at]) == std::bit_cast<std::uint32_t>(cpu[at]);
        bitwise_differences += same_bits ? 0 : 1;
        const bool exact = col >= c.dim || (c.type == DeviceWeightType::F32 && pooling == Pooling::Sum);
        if (exact ? !same_bits : !closeRel(gpu[at], cpu[at], 1e-3f, 1e-3f)) ++bad;
      }
    }
    GPU_CHECK_MSG(bad == 0, std::string(pooling == Pooling::Sum ? "Sum" : "Mean") + " forward, shard " +
                                std::to_string(s) + ": " + std::to_string(bad) + " values differ");
  }
  std::printf("forward %s: %zu values not bit-identical to the CPU backend (the design expects 0)\n",
              pooling == Pooling::Sum ? "sum" : "mean", bitwise_differences);
}

void checkForward(Fixture& f, KernelWorkspace& ws, const DeviceArray<std::uint32_t>& offsets,
                  const DeviceArray<std::uint32_t>& ids, Pooling pooling) {
  const float sentinel = std::bit_cast<float>(0x7fc01234u);
  std::vector<float> cpu(f.out_floats, sentinel);
  DeviceArray<float> out(cpu);
  const DeviceBags bags{offsets.p, ids.p, f.all.count(), static_cast<std::uint32_t>(f.all.ids.size())};
  CHECK_OK(forward(f.tables, f.layout, bags, pooling, out.p, ws, nullptr));
  GPU_CHECK_CUDA(cudaDeviceSynchronize());
  for (std::size_t s = 0; s < kShards; ++s) {
    embeddingForward(f.cpu[s], cpuBags(f.per_shard[s]), pooling, cpu.data() + f.layout.out_offset[s],
                     f.layout.out_stride[s]);
  }
  compareOutputs(f, out.read(f.out_floats), cpu, pooling);
}

// Weights and momentum of every shard against the CPU state after one
// backward from the same state; then the CPU takes the GPU's state, so that
// each step is compared on its own (hot rows, summed in chunks, may differ in
// the last bit and must not accumulate into the next step's comparison).
void compareState(Fixture& f, const std::string& what) {
  std::size_t bitwise_differences = 0;
  for (std::size_t s = 0; s < kShards; ++s) {
    const ShardCase& c = kCases[s];
    const std::size_t n = c.rows * c.dim;
    std::vector<std::uint8_t> raw(n * (c.type == DeviceWeightType::F32 ? 4 : 2));
    std::vector<float> momentum(c.rows);
    CHECK_OK(f.tables.downloadRaw(s, std::as_writable_bytes(std::span<std::uint8_t>(raw)), momentum, nullptr));
    std::size_t bad_w = 0, bad_m = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (c.type == DeviceWeightType::F32) {
        float g = 0;
        std::memcpy(&g, raw.data() + 4 * i, 4);
        const float want = f.cpu[s].f32Row(0)[i];
        bitwise_differences += std::bit_cast<std::uint32_t>(g) == std::bit_cast<std::uint32_t>(want) ? 0 : 1;
        bad_w += closeRel(g, want, 1e-3f, 1e-3f) ? 0 : 1;
      } else {
        std::uint16_t g = 0;
        std::memcpy(&g, raw.data() + 2 * i, 2);
        // fp16: the CPU's own bits; bf16: the CPU's fp32 value rounded. Within one ulp.
        const std::uint16_t want =
            c.type == DeviceWeightType::F16 ? f.cpu[s].f16Row(0)[i] : floatToBfloat16(f.cpu[s].f32Row(0)[i]);
        bitwise_differences += g == want ? 0 : 1;
        bad_w += std::abs(ordered(g, 16) - ordered(want, 16)) <= 1 ? 0 : 1;
      }
    }
    for (std::size_t r = 0; r < c.rows; ++r) {
      const float want = f.cpu[s].momentum()[r];
      bitwise_differences += std::bit_cast<std::uint32_t>(momentum[r]) == std::bit_cast<std::uint32_t>(want) ? 0 : 1;
      bad_m += closeRel(momentum[r], want, 1e-3f, 1e-6f) ? 0 : 1;
    }
    GPU_CHECK_MSG(bad_w == 0 && bad_m == 0, what + ", shard " + std::to_string(s) + ": " + std::to_string(bad_w) +
                                                " weights and " + std::to_string(bad_m) + " momentum values differ");
    CHECK_OK(f.tables.download(s, f.cpu[s], nullptr));
  }
  std::printf("%s: %zu weights and momentum values not bit-identical to the CPU backend (hot rows only expected)\n",
              what.c_str(), bitwise_differences);
}

void checkBackward(Fixture& f, KernelWorkspace& ws, const DeviceArray<std::uint32_t>& offsets,
                   const DeviceArray<std::uint32_t>& ids, Pooling pooling, bool pass_count) {
  std::mt19937_64 rng(pooling == Pooling::Sum ? 11 : 12);
  std::vector<float> grad(f.out_floats, 0.0f);
  for (float& g : grad) g = static_cast<float>(gputest::uniform01(rng) * 2.0 - 1.0);
  const DeviceArray<float> dgrad(grad);
  const AdagradConfig config{0.05f, 1e-8f};
  BackwardCounts counts;
  const std::uint32_t n = pass_count ? static_cast<std::uint32_t>(f.all.ids.size()) : 0;  // 0: read back
  const DeviceBags bags{offsets.p, ids.p, f.all.count(), n};
  CHECK_OK(backwardAdagrad(f.tables, f.layout, bags, pooling, dgrad.p, config, ws, nullptr, &counts));
  GPU_CHECK_CUDA(cudaDeviceSynchronize());
  const std::string what = std::string(pooling == Pooling::Sum ? "Sum" : "Mean") + " backward";
  std::uint64_t unique = 0;
  GPU_CHECK(counts.shard_lookups.size() == kShards && counts.shard_unique_rows.size() == kShards);
  for (std::size_t s = 0; s < kShards; ++s) {
    BackwardWorkspace cpu_ws;
    const BackwardStats st =
        embeddingBackwardAdagrad(f.cpu[s], cpuBags(f.per_shard[s]), pooling, grad.data() + f.layout.out_offset[s],
                                 f.layout.out_stride[s], config, cpu_ws);
    if (kCases[s].type == DeviceWeightType::BF16) roundToBf16(f.cpu[s]);  // the storage the GPU has
    GPU_CHECK_MSG(counts.shard_lookups[s] == st.lookups, what + ": lookups of shard " + std::to_string(s));
    GPU_CHECK_MSG(counts.shard_unique_rows[s] == st.unique_rows,
                  what + ": unique rows of shard " + std::to_string(s) + ": " +
                      std::to_string(counts.shard_unique_rows[s]) + " vs " + std::to_string(st.unique_rows));
    unique += st.unique_rows;
  }
  GPU_CHECK(counts.unique_rows == unique);
  GPU_CHECK(counts.lookups == f.all.ids.size());
  compareState(f, what);
}

// ---------------------------------------------------------------- routing

void checkRoute(KernelWorkspace& ws, const std::vector<RouteShard>& shards, bool truncate, const std::string& what) {
  constexpr std::uint64_t kRows = 100000;
  constexpr std::uint32_t kSamples = 777;
  std::mt19937_64 rng(99);
  const gputest::ZipfRows zipf(kRows, 1.05);
  Batch batch;
  for (std::uint32_t i = 0; i < kSamples; ++i) {
    const auto len = static_cast<std::uint32_t>(i % 13 == 0 ? 0 : rng() % 31);
    batch.lengths.push_back(len);
    for (std::uint32_t j = 0; j < len; ++j) batch.ids.push_back(zipf(rng));
  }
  // Truncated: the lengths promise more ids than there are (routeToShard clamps).
  if (truncate) batch.ids.resize(batch.ids.size() - 37);
  const DeviceArray<std::uint32_t> lengths(batch.lengths);
  const DeviceArray<std::uint64_t> ids(batch.ids);
  RoutedIds out;
  CHECK_OK(
      routeIds(lengths.p, ids.p, kSamples, static_cast<std::uint32_t>(batch.ids.size()), shards, out, ws, nullptr));
  GPU_CHECK_CUDA(cudaDeviceSynchronize());
  GPU_CHECK(out.shards() == shards.size() && out.samples() == kSamples);
  const std::vector<std::uint32_t> host_begin(out.host_id_begin.begin(), out.host_id_begin.end());
  GPU_CHECK(host_begin.size() == shards.size() + 1);
  std::vector<std::uint32_t> dev_begin(shards.size() + 1), got_lengths(shards.size() * kSamples);
  GPU_CHECK_CUDA(cudaMemcpy(dev_begin.data(), out.id_begin, dev_begin.size() * 4, cudaMemcpyDeviceToHost));
  GPU_CHECK_CUDA(cudaMemcpy(got_lengths.data(), out.lengths, got_lengths.size() * 4, cudaMemcpyDeviceToHost));
  GPU_CHECK_MSG(dev_begin == host_begin, what + ": host and device id_begin differ");
  std::vector<std::uint32_t> got_ids(host_begin.back());
  if (!got_ids.empty()) GPU_CHECK_CUDA(cudaMemcpy(got_ids.data(), out.ids, got_ids.size() * 4, cudaMemcpyDeviceToHost));
  std::uint32_t at = 0;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    RankShard rs;
    rs.type = shards[k].all_ids ? core::ShardingType::ColumnWise : core::ShardingType::RowWise;
    rs.shard.row_offset = shards[k].row_begin;
    rs.shard.rows = shards[k].all_ids ? kRows : shards[k].rows;
    rs.physical_rows = shards[k].physical_rows;
    ShardBags ref;
    routeToShard(batch, rs, ref);
    GPU_CHECK_MSG(host_begin[k] == at, what + ": id_begin of shard " + std::to_string(k));
    std::size_t bad = 0;
    for (std::uint32_t i = 0; i < kSamples; ++i)
      bad += got_lengths[k * kSamples + i] == ref.offsets[i + 1] - ref.offsets[i] ? 0 : 1;
    const bool ids_equal = host_begin[k] + ref.ids.size() <= got_ids.size() &&
                           std::equal(ref.ids.begin(), ref.ids.end(), got_ids.begin() + host_begin[k]);
    GPU_CHECK_MSG(bad == 0 && ids_equal, what + ", shard " + std::to_string(k) + ": " + std::to_string(bad) +
                                             " lengths differ" + (ids_equal ? "" : ", ids differ"));
    at += static_cast<std::uint32_t>(ref.ids.size());
  }
  GPU_CHECK_MSG(host_begin.back() == at, what + ": total routed ids");
}

void checkRouting(KernelWorkspace& ws) {
  // Row-wise pieces out of order, an empty piece, a capped (folded) piece.
  const std::vector<RouteShard> row_wise = {
      {70000, 30000, 30000, false}, {0, 30000, 30000, false}, {30000, 0, 0, false}, {30000, 40000, 5000, false}};
  const std::vector<RouteShard> all_ids = {{0, 100000, 100000, true}, {0, 100000, 777, true}};
  std::vector<RouteShard> mixed = row_wise;
  mixed.insert(mixed.begin() + 1, all_ids.begin(), all_ids.end());
  checkRoute(ws, row_wise, false, "row-wise routing");
  checkRoute(ws, all_ids, false, "all-ids routing");
  checkRoute(ws, mixed, true, "mixed, truncated routing");
  const std::uint64_t warm = ws.allocations();
  checkRoute(ws, mixed, true, "mixed routing again");
  GPU_CHECK_MSG(ws.allocations() == warm, "routing allocates in steady state");

  const std::vector<RouteShard> overlapping = {{0, 100, 100, false}, {50, 100, 100, false}};
  RoutedIds out;
  const std::vector<std::uint32_t> no_lengths(1, 0);
  const DeviceArray<std::uint32_t> lengths(no_lengths);
  const auto st = routeIds(lengths.p, nullptr, 1, 0, overlapping, out, ws, nullptr);
  GPU_CHECK_MSG(!st.ok() && st.error().kind == core::ErrorKind::InvalidInput, "overlapping row-wise shards accepted");
}

void checkErrors(const Fixture& f, KernelWorkspace& ws) {
  const DeviceShardSpec zero_dim[] = {{10, 0, DeviceWeightType::F32}};
  GPU_CHECK(!DeviceTables::create(zero_dim).ok());
  const DeviceShardSpec too_wide[] = {{10, launch::kMaxDim + 1, DeviceWeightType::F16}};
  GPU_CHECK(!DeviceTables::create(too_wide).ok());
  BatchLayout short_layout = f.layout;
  short_layout.out_stride.pop_back();
  const DeviceBags bags{nullptr, nullptr, f.all.count(), 0};
  float dummy = 0;
  const auto st = forward(f.tables, short_layout, bags, Pooling::Sum, &dummy, ws, nullptr);
  GPU_CHECK(!st.ok() && st.error().kind == core::ErrorKind::InvalidInput);
  BatchLayout narrow = f.layout;
  narrow.out_stride[2] = kCases[2].dim - 1;
  GPU_CHECK(!forward(f.tables, narrow, bags, Pooling::Sum, &dummy, ws, nullptr).ok());
}

void run() {
  Fixture f;
  std::vector<DeviceShardSpec> specs;
  for (const ShardCase& c : kCases) specs.push_back({c.rows, c.dim, c.type});
  auto created = DeviceTables::create(specs);
  CHECK_OK(created);
  f.tables = std::move(*created);
  checkInitialize(f);
  if (gputest::failures() > 0) return;
  buildBatch(f);
  const DeviceArray<std::uint32_t> offsets(f.all.offsets);
  const DeviceArray<std::uint32_t> ids(f.all.ids);
  KernelWorkspace ws;
  checkForward(f, ws, offsets, ids, Pooling::Sum);
  checkForward(f, ws, offsets, ids, Pooling::Mean);
  checkBackward(f, ws, offsets, ids, Pooling::Sum, true);
  checkBackward(f, ws, offsets, ids, Pooling::Mean, false);
  // Warm: another step of the same shapes allocates nothing.
  const std::uint64_t warm = ws.allocations();
  checkForward(f, ws, offsets, ids, Pooling::Sum);
  checkBackward(f, ws, offsets, ids, Pooling::Sum, true);
  GPU_CHECK_MSG(ws.allocations() == warm, "forward/backward allocate in steady state");
  KernelWorkspace route_ws;
  checkRouting(route_ws);
  checkErrors(f, ws);
}

}  // namespace

int main() {
  GPU_SKIP_WITHOUT_DEVICE();
  run();
  return gputest::gpuTestExit();
}
