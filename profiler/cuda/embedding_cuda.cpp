// Host side of the CUDA embedding kernels, part 1: the device tables, the
// objects that own device or pinned memory, and the shared helpers. The
// operations are in embedding_cuda_ops.cpp, the kernels in embedding_cuda.cu.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

#include "embedding_cuda_internal.h"
#include "shardscope/profiler/cuda/embedding_cuda.h"

namespace shardscope::profiler::cuda {

// ---------------------------------------------------------------- helpers

core::Error cudaFailure(std::string_view what, cudaError_t e) {
  return core::Error{std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")",
                     core::ErrorKind::Io};
}

core::Error invalidInput(std::string message) { return core::Error{std::move(message), core::ErrorKind::InvalidInput}; }

core::Status cudaCall(cudaError_t e, std::string_view what) {
  if (e != cudaSuccess) return cudaFailure(what, e);
  return core::Ok{};
}

DeviceGuard::DeviceGuard(int device) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != device && cudaSetDevice(device) == cudaSuccess) {
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

void GrowingBuffer::release() noexcept {
  if (ptr != nullptr) {
    if (pinned) {
      (void)cudaFreeHost(ptr);
    } else {
      (void)cudaFree(ptr);
    }
  }
  ptr = nullptr;
  bytes = 0;
}

core::Status grow(GrowingBuffer& buffer, std::size_t bytes, std::string_view what, cudaStream_t stream,
                  std::uint64_t& allocations) {
  if (bytes <= buffer.bytes && buffer.ptr != nullptr) return core::Ok{};
  if (buffer.ptr != nullptr) {
    if (const auto s = cudaCall(cudaStreamSynchronize(stream), std::string(what) + ": cudaStreamSynchronize"); !s)
      return s;
  }
  const std::size_t wanted = std::max({bytes, buffer.bytes + buffer.bytes / 2, std::size_t{256}});
  const std::size_t rounded = (wanted + 255) / 256 * 256;
  buffer.release();
  void* p = nullptr;
  const cudaError_t e = buffer.pinned ? cudaMallocHost(&p, rounded) : cudaMalloc(&p, rounded);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaFailure(std::string(buffer.pinned ? "cudaMallocHost (" : "cudaMalloc (") + std::string(what) + ", " +
                           std::to_string(rounded) + " bytes)",
                       e);
  }
  buffer.ptr = p;
  buffer.bytes = rounded;
  ++allocations;
  return core::Ok{};
}

std::uint16_t floatToBfloat16(float f) {
  const auto x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  // Adding 0x7fff plus the kept part's lowest bit rounds to nearest even; a
  // carry into the exponent gives the next binade or infinity, as it should.
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float bfloat16ToFloat(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

namespace {

core::Status checkShard(const DeviceTables& t, std::size_t shard) {
  if (shard >= t.count())
    return invalidInput("device table shard " + std::to_string(shard) + " out of range (" + std::to_string(t.count()) +
                        " shards)");
  return core::Ok{};
}

std::string shardName(std::size_t shard) { return "device table shard " + std::to_string(shard); }

}  // namespace

// ---------------------------------------------------------------- DeviceTables

DeviceTables::DeviceTables(DeviceTables&& other) noexcept { *this = std::move(other); }

DeviceTables& DeviceTables::operator=(DeviceTables&& other) noexcept {
  if (this == &other) return *this;
  release();
  specs_ = std::move(other.specs_);
  weight_offsets_ = std::move(other.weight_offsets_);
  pitch_ = std::move(other.pitch_);
  row_base_ = std::move(other.row_base_);
  weights_ = std::exchange(other.weights_, nullptr);
  momentum_ = std::exchange(other.momentum_, nullptr);
  weight_bytes_ = std::exchange(other.weight_bytes_, 0);
  momentum_bytes_ = std::exchange(other.momentum_bytes_, 0);
  total_rows_ = std::exchange(other.total_rows_, 0);
  max_dim_ = std::exchange(other.max_dim_, 0);
  device_ = other.device_;
  other.specs_.clear();
  return *this;
}

DeviceTables::~DeviceTables() { release(); }

void DeviceTables::release() noexcept {
  if (weights_ != nullptr || momentum_ != nullptr) {
    const DeviceGuard guard(device_);
    if (weights_ != nullptr) (void)cudaFree(weights_);
    if (momentum_ != nullptr) (void)cudaFree(momentum_);
  }
  weights_ = nullptr;
  momentum_ = nullptr;
}

core::Result<DeviceTables> DeviceTables::create(std::span<const DeviceShardSpec> shards) {
  DeviceTables t;
  std::size_t offset = 0;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const DeviceShardSpec& spec = shards[s];
    if (!dimSupported(spec.dim))
      return invalidInput(shardName(s) + ": dim " + std::to_string(spec.dim) + " outside [1, " +
                          std::to_string(launch::kMaxDim) + "]");
    if (spec.rows > std::numeric_limits<std::uint32_t>::max() - t.total_rows_)
      return invalidInput("device tables: more than 2^32 - 1 rows in all (shard " + std::to_string(s) + " has " +
                          std::to_string(spec.rows) + ")");
    offset = (offset + launch::kShardAlignBytes - 1) / launch::kShardAlignBytes * launch::kShardAlignBytes;
    t.specs_.push_back(spec);
    t.weight_offsets_.push_back(offset);
    t.pitch_.push_back(rowPitchBytes(spec.dim, spec.type));
    t.row_base_.push_back(t.total_rows_);
    offset += static_cast<std::size_t>(spec.rows) * t.pitch_.back();
    t.total_rows_ += spec.rows;
    t.max_dim_ = std::max(t.max_dim_, spec.dim);
  }
  if (const auto s = cudaCall(cudaGetDevice(&t.device_), "device tables: cudaGetDevice"); !s) return s.error();
  t.weight_bytes_ = offset;
  t.momentum_bytes_ = static_cast<std::size_t>(t.total_rows_) * sizeof(float);
  const auto allocate = [](void** p, std::size_t bytes, const char* what) -> core::Status {
    if (bytes == 0) return core::Ok{};
    if (const cudaError_t e = cudaMalloc(p, bytes); e != cudaSuccess) {
      (void)cudaGetLastError();
      return cudaFailure(std::string("cudaMalloc (") + what + ", " + std::to_string(bytes) + " bytes)", e);
    }
    return cudaCall(cudaMemset(*p, 0, bytes), std::string("cudaMemset (") + what + ")");
  };
  void* w = nullptr;
  void* m = nullptr;
  if (auto s = allocate(&w, t.weight_bytes_, "embedding weights"); !s) return s.error();
  t.weights_ = static_cast<unsigned char*>(w);
  if (auto s = allocate(&m, t.momentum_bytes_, "embedding momentum"); !s) return s.error();
  t.momentum_ = static_cast<float*>(m);
  // The zeroing ran on the legacy stream: finish it before any other stream uses the tables.
  if (auto s = cudaCall(cudaDeviceSynchronize(), "device tables: cudaDeviceSynchronize"); !s) return s.error();
  return t;
}

void* DeviceTables::weights(std::size_t shard) const { return weights_ + weight_offsets_[shard]; }

std::size_t DeviceTables::weightBytes(std::size_t shard) const {
  return static_cast<std::size_t>(specs_[shard].rows) * pitch_[shard];
}

float* DeviceTables::momentum(std::size_t shard) const { return momentum_ + row_base_[shard]; }

core::Status DeviceTables::initialize(std::size_t shard, std::uint64_t seed, std::uint64_t row_offset,
                                      std::uint32_t col_offset, cudaStream_t stream) {
  if (auto s = checkShard(*this, shard); !s) return s;
  const DeviceShardSpec& spec = specs_[shard];
  if (spec.rows == 0) return core::Ok{};
  int sms = 0;
  if (auto s = cudaCall(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_),
                        "initialize: cudaDeviceGetAttribute");
      !s)
    return s;
  detail::InitializeArgs args;
  args.weights = weights_ + weight_offsets_[shard];
  args.pitch = pitch_[shard];
  args.rows = spec.rows;
  args.dim = spec.dim;
  args.type = static_cast<std::uint32_t>(spec.type);
  args.seed = seed;
  args.row_offset = row_offset;
  args.col_offset = col_offset;
  args.grid = initializeLaunch(spec.rows, static_cast<std::uint32_t>(sms));
  if (const detail::LaunchError e = detail::launchInitialize(args, stream); e.failed())
    return cudaFailure(shardName(shard) + ": " + e.what, e.error);
  return cudaCall(cudaMemsetAsync(momentum(shard), 0, spec.rows * sizeof(float), stream),
                  shardName(shard) + ": cudaMemsetAsync (momentum)");
}

core::Status DeviceTables::uploadRaw(std::size_t shard, std::span<const std::byte> weights,
                                     std::span<const float> momentum_values, cudaStream_t stream) {
  if (auto s = checkShard(*this, shard); !s) return s;
  const DeviceShardSpec& spec = specs_[shard];
  const std::size_t row_bytes = std::size_t{spec.dim} * elementBytes(spec.type);
  if (!weights.empty() && weights.size() != spec.rows * row_bytes)
    return invalidInput(shardName(shard) + ": upload of " + std::to_string(weights.size()) +
                        " weight bytes, expected " + std::to_string(spec.rows * row_bytes));
  if (!momentum_values.empty() && momentum_values.size() != spec.rows)
    return invalidInput(shardName(shard) + ": upload of " + std::to_string(momentum_values.size()) +
                        " momentum values, expected " + std::to_string(spec.rows));
  if (spec.rows == 0) return core::Ok{};
  if (!weights.empty()) {
    if (auto s = cudaCall(cudaMemcpy2DAsync(weights_ + weight_offsets_[shard], pitch_[shard], weights.data(), row_bytes,
                                            row_bytes, spec.rows, cudaMemcpyHostToDevice, stream),
                          shardName(shard) + ": cudaMemcpy2DAsync (weights to the device)");
        !s)
      return s;
  }
  if (!momentum_values.empty()) {
    if (auto s = cudaCall(cudaMemcpyAsync(momentum(shard), momentum_values.data(), spec.rows * sizeof(float),
                                          cudaMemcpyHostToDevice, stream),
                          shardName(shard) + ": cudaMemcpyAsync (momentum to the device)");
        !s)
      return s;
  }
  return cudaCall(cudaStreamSynchronize(stream), shardName(shard) + ": upload: cudaStreamSynchronize");
}

core::Status DeviceTables::downloadRaw(std::size_t shard, std::span<std::byte> weights,
                                       std::span<float> momentum_values, cudaStream_t stream) const {
  if (auto s = checkShard(*this, shard); !s) return s;
  const DeviceShardSpec& spec = specs_[shard];
  const std::size_t row_bytes = std::size_t{spec.dim} * elementBytes(spec.type);
  if (!weights.empty() && weights.size() != spec.rows * row_bytes)
    return invalidInput(shardName(shard) + ": download into " + std::to_string(weights.size()) +
                        " weight bytes, expected " + std::to_string(spec.rows * row_bytes));
  if (!momentum_values.empty() && momentum_values.size() != spec.rows)
    return invalidInput(shardName(shard) + ": download into " + std::to_string(momentum_values.size()) +
                        " momentum values, expected " + std::to_string(spec.rows));
  if (spec.rows == 0) return core::Ok{};
  if (!weights.empty()) {
    if (auto s = cudaCall(cudaMemcpy2DAsync(weights.data(), row_bytes, weights_ + weight_offsets_[shard], pitch_[shard],
                                            row_bytes, spec.rows, cudaMemcpyDeviceToHost, stream),
                          shardName(shard) + ": cudaMemcpy2DAsync (weights to the host)");
        !s)
      return s;
  }
  if (!momentum_values.empty()) {
    if (auto s = cudaCall(cudaMemcpyAsync(momentum_values.data(), momentum(shard), spec.rows * sizeof(float),
                                          cudaMemcpyDeviceToHost, stream),
                          shardName(shard) + ": cudaMemcpyAsync (momentum to the host)");
        !s)
      return s;
  }
  return cudaCall(cudaStreamSynchronize(stream), shardName(shard) + ": download: cudaStreamSynchronize");
}

core::Status DeviceTables::upload(std::size_t shard, const EmbeddingShard& host, cudaStream_t stream) {
  if (auto s = checkShard(*this, shard); !s) return s;
  const DeviceShardSpec& spec = specs_[shard];
  if (host.rows() != spec.rows || host.dim() != spec.dim)
    return invalidInput(shardName(shard) + ": upload of a " + std::to_string(host.rows()) + " x " +
                        std::to_string(host.dim()) + " host shard into " + std::to_string(spec.rows) + " x " +
                        std::to_string(spec.dim));
  const bool host_f32 = host.type() == WeightType::F32;
  if (spec.type == DeviceWeightType::BF16 && host_f32) {
    const auto values = std::span<const float>(host.f32Row(0), static_cast<std::size_t>(spec.rows) * spec.dim);
    std::vector<std::uint16_t> bits(values.size());
    std::transform(values.begin(), values.end(), bits.begin(), floatToBfloat16);
    return uploadRaw(shard, std::as_bytes(std::span<const std::uint16_t>(bits)), host.momentum(), stream);
  }
  if ((spec.type == DeviceWeightType::F32) != host_f32 || spec.type == DeviceWeightType::BF16)
    return invalidInput(shardName(shard) + ": cannot upload a " + (host_f32 ? "fp32" : "fp16") + " host shard into " +
                        weightTypeName(spec.type));
  return uploadRaw(shard, host.weightBytes(), host.momentum(), stream);
}

core::Status DeviceTables::download(std::size_t shard, EmbeddingShard& host, cudaStream_t stream) const {
  if (auto s = checkShard(*this, shard); !s) return s;
  const DeviceShardSpec& spec = specs_[shard];
  if (host.rows() != spec.rows || host.dim() != spec.dim)
    return invalidInput(shardName(shard) + ": download of " + std::to_string(spec.rows) + " x " +
                        std::to_string(spec.dim) + " into a " + std::to_string(host.rows()) + " x " +
                        std::to_string(host.dim()) + " host shard");
  const bool host_f32 = host.type() == WeightType::F32;
  const bool same = (spec.type == DeviceWeightType::F32) == host_f32 && spec.type != DeviceWeightType::BF16;
  if (same) return downloadRaw(shard, host.weightBytes(), host.momentum(), stream);
  if (!host_f32)
    return invalidInput(shardName(shard) + ": cannot download " + weightTypeName(spec.type) +
                        " into an fp16 host shard");
  // A 16-bit device shard widened (exactly) into an fp32 host shard.
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(spec.rows) * spec.dim);
  if (auto s = downloadRaw(shard, std::as_writable_bytes(std::span<std::uint16_t>(bits)), host.momentum(), stream); !s)
    return s;
  float* out = host.f32Row(0);
  const bool bf16 = spec.type == DeviceWeightType::BF16;
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = bf16 ? bfloat16ToFloat(bits[i]) : halfToFloat(bits[i]);
  return core::Ok{};
}

// ---------------------------------------------------------------- workspace

KernelWorkspace::Impl::~Impl() {
  if (device < 0) return;
  const DeviceGuard guard(device);
  for (GrowingBuffer* b : {&forward.device, &backward.device, &keys[0], &keys[1], &bags[0], &bags[1], &starts,
                           &long_rows, &counters, &chunk_counts, &chunk_begin, &partials, &stats, &temp, &lookups_host,
                           &route_desc, &sample_begin, &dest, &cursor})
    b->release();
}

std::uint64_t KernelWorkspace::Impl::deviceBytes() const {
  std::uint64_t n = 0;
  for (const GrowingBuffer* b :
       {&forward.device, &backward.device, &keys[0], &keys[1], &bags[0], &bags[1], &starts, &long_rows, &counters,
        &chunk_counts, &chunk_begin, &partials, &stats, &temp, &route_desc, &sample_begin, &dest, &cursor})
    n += b->bytes;
  return n;
}

KernelWorkspace::KernelWorkspace() : impl_(std::make_unique<Impl>()) {}
KernelWorkspace::KernelWorkspace(KernelWorkspace&& other) noexcept = default;
KernelWorkspace& KernelWorkspace::operator=(KernelWorkspace&& other) noexcept = default;
KernelWorkspace::~KernelWorkspace() = default;

std::uint64_t KernelWorkspace::deviceBytes() const { return impl_ ? impl_->deviceBytes() : 0; }
std::uint64_t KernelWorkspace::allocations() const { return impl_ ? impl_->allocations : 0; }

core::Result<KernelWorkspace::Impl*> bindWorkspace(KernelWorkspace& workspace, int tables_device) {
  int device = -1;
  if (auto s = cudaCall(cudaGetDevice(&device), "cudaGetDevice"); !s) return s.error();
  if (device != tables_device)
    return invalidInput("the current device is " + std::to_string(device) + " but the tables are on device " +
                        std::to_string(tables_device));
  KernelWorkspace::Impl& ws = KernelAccess::impl(workspace);
  if (ws.device >= 0 && ws.device != device)
    return invalidInput("kernel workspace of device " + std::to_string(ws.device) + " used on device " +
                        std::to_string(device));
  if (ws.device < 0) {
    int sms = 0;
    if (auto s = cudaCall(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                          "cudaDeviceGetAttribute (multiprocessors)");
        !s)
      return s.error();
    ws.device = device;
    ws.multiprocessors = static_cast<std::uint32_t>(std::max(sms, 1));
  }
  return &ws;
}

core::Status uploadDescriptors(KernelWorkspace::Impl& ws, KernelWorkspace::Impl::Descriptors& d, cudaStream_t stream) {
  const std::size_t bytes = d.host.size() * sizeof(detail::ShardDesc);
  if (bytes == 0) return core::Ok{};
  const bool same = d.device.ptr != nullptr && d.uploaded.size() == d.host.size() &&
                    std::memcmp(d.uploaded.data(), d.host.data(), bytes) == 0;
  if (same) return core::Ok{};
  if (auto s = grow(d.device, bytes, "shard descriptors", stream, ws.allocations); !s) return s;
  if (auto s = cudaCall(cudaMemcpyAsync(d.device.ptr, d.host.data(), bytes, cudaMemcpyHostToDevice, stream),
                        "cudaMemcpyAsync (shard descriptors)");
      !s)
    return s;
  d.uploaded = d.host;
  return core::Ok{};
}

// ---------------------------------------------------------------- BackwardCounts

BackwardCounts::BackwardCounts(BackwardCounts&& other) noexcept { *this = std::move(other); }

BackwardCounts& BackwardCounts::operator=(BackwardCounts&& other) noexcept {
  if (this == &other) return *this;
  if (pinned_ != nullptr) (void)cudaFreeHost(pinned_);
  lookups = std::exchange(other.lookups, 0);
  unique_rows = std::exchange(other.unique_rows, 0);
  shard_lookups = std::move(other.shard_lookups);
  shard_unique_rows = std::move(other.shard_unique_rows);
  pinned_ = std::exchange(other.pinned_, nullptr);
  capacity_ = std::exchange(other.capacity_, 0);
  return *this;
}

BackwardCounts::~BackwardCounts() {
  if (pinned_ != nullptr) (void)cudaFreeHost(pinned_);
}

core::Status KernelAccess::prepareCounts(BackwardCounts& counts, std::size_t shards, cudaStream_t stream,
                                         std::uint32_t*& pinned) {
  const std::size_t entries = 2 * shards + 2;
  // An earlier call's callback may still be due to fill this object: let it run first.
  if (entries > counts.capacity_ || counts.shard_lookups.size() != shards) {
    if (auto s = cudaCall(cudaStreamSynchronize(stream), "backward counts: cudaStreamSynchronize"); !s) return s;
  }
  if (entries > counts.capacity_) {
    if (counts.pinned_ != nullptr) (void)cudaFreeHost(counts.pinned_);
    counts.pinned_ = nullptr;
    counts.capacity_ = 0;
    void* p = nullptr;
    if (auto s = cudaCall(cudaMallocHost(&p, entries * sizeof(std::uint32_t)), "cudaMallocHost (backward counts)"); !s)
      return s;
    counts.pinned_ = static_cast<std::uint32_t*>(p);
    counts.capacity_ = entries;
  }
  counts.shard_lookups.resize(shards);
  counts.shard_unique_rows.resize(shards);
  pinned = counts.pinned_;
  return core::Ok{};
}

void KernelAccess::publishCounts(void* data) {
  auto& c = *static_cast<BackwardCounts*>(data);
  const std::size_t S = c.shard_lookups.size();
  const std::uint32_t* p = c.pinned_;
  c.unique_rows = p[0];
  c.lookups = 0;
  for (std::size_t s = 0; s < S; ++s) {
    c.shard_lookups[s] = p[1 + s];
    c.shard_unique_rows[s] = p[1 + S + s + 1] - p[1 + S + s];
    c.lookups += p[1 + s];
  }
}

// ---------------------------------------------------------------- RoutedIds

RoutedIds::RoutedIds(RoutedIds&& other) noexcept { *this = std::move(other); }

RoutedIds& RoutedIds::operator=(RoutedIds&& other) noexcept {
  if (this == &other) return *this;
  release();
  lengths_ = std::exchange(other.lengths_, nullptr);
  ids_ = std::exchange(other.ids_, nullptr);
  id_begin_ = std::exchange(other.id_begin_, nullptr);
  host_id_begin_ = std::exchange(other.host_id_begin_, nullptr);
  lengths_capacity_ = std::exchange(other.lengths_capacity_, 0);
  ids_capacity_ = std::exchange(other.ids_capacity_, 0);
  shards_capacity_ = std::exchange(other.shards_capacity_, 0);
  host_capacity_ = std::exchange(other.host_capacity_, 0);
  shards_ = std::exchange(other.shards_, 0);
  samples_ = std::exchange(other.samples_, 0);
  device_ = other.device_;
  refreshViews();
  other.refreshViews();
  return *this;
}

RoutedIds::~RoutedIds() { release(); }

void RoutedIds::release() noexcept {
  if (lengths_ != nullptr || ids_ != nullptr || id_begin_ != nullptr) {
    const DeviceGuard guard(device_);
    for (std::uint32_t* p : {lengths_, ids_, id_begin_})
      if (p != nullptr) (void)cudaFree(p);
  }
  if (host_id_begin_ != nullptr) (void)cudaFreeHost(host_id_begin_);
  lengths_ = ids_ = id_begin_ = host_id_begin_ = nullptr;
  lengths_capacity_ = ids_capacity_ = shards_capacity_ = host_capacity_ = 0;
  shards_ = 0;
  samples_ = 0;
  refreshViews();
}

void RoutedIds::refreshViews() noexcept {
  lengths = lengths_;
  ids = ids_;
  id_begin = id_begin_;
  host_id_begin = host_id_begin_ == nullptr ? std::span<const std::uint32_t>()
                                            : std::span<const std::uint32_t>(host_id_begin_, shards_ + 1);
}

std::uint64_t RoutedIds::deviceBytes() const {
  return (lengths_capacity_ + ids_capacity_ + shards_capacity_) * sizeof(std::uint32_t);
}

core::Status KernelAccess::prepareRouted(RoutedIds& out, std::size_t shards, std::uint32_t samples, std::uint64_t ids,
                                         cudaStream_t stream) {
  int device = 0;
  if (auto s = cudaCall(cudaGetDevice(&device), "cudaGetDevice"); !s) return s;
  if (out.lengths_ != nullptr && out.device_ != device)
    return invalidInput("routed ids of device " + std::to_string(out.device_) + " reused on device " +
                        std::to_string(device));
  out.device_ = device;
  // Each array as a GrowingBuffer for the growth rule, handed back to the raw members.
  const auto regrow = [&](std::uint32_t*& member, std::size_t& capacity, std::size_t entries, bool pinned,
                          const char* what) -> core::Status {
    if (entries <= capacity && member != nullptr) return core::Ok{};
    GrowingBuffer b{member, capacity * sizeof(std::uint32_t), pinned};
    std::uint64_t allocations = 0;
    auto s = grow(b, entries * sizeof(std::uint32_t), what, stream, allocations);
    member = static_cast<std::uint32_t*>(b.ptr);
    capacity = b.bytes / sizeof(std::uint32_t);
    return s;
  };
  const std::size_t cells = shards * std::size_t{samples} + 1;
  if (auto s = regrow(out.lengths_, out.lengths_capacity_, cells, false, "routed lengths"); !s) return s;
  if (auto s = regrow(out.ids_, out.ids_capacity_, std::max<std::uint64_t>(ids, 1), false, "routed ids"); !s) return s;
  if (auto s = regrow(out.id_begin_, out.shards_capacity_, shards + 1, false, "routed id_begin"); !s) return s;
  if (auto s = regrow(out.host_id_begin_, out.host_capacity_, shards + 1, true, "routed id_begin (host)"); !s) return s;
  out.shards_ = shards;
  out.samples_ = samples;
  out.refreshViews();
  return core::Ok{};
}

}  // namespace shardscope::profiler::cuda
