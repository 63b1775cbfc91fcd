// Host-side internals of the CUDA embedding kernels, shared by
// embedding_cuda.cpp (tables, owned buffers) and embedding_cuda_ops.cpp
// (forward, backward, routing). Private to shardscope_cuda.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embedding_launch.h"
#include "shardscope/profiler/cuda/embedding_cuda.h"

namespace shardscope::profiler::cuda {

// "what: cudaErrorName (description)", an i/o error (the device failed).
[[nodiscard]] core::Error cudaFailure(std::string_view what, cudaError_t e);
[[nodiscard]] core::Error invalidInput(std::string message);
[[nodiscard]] core::Status cudaCall(cudaError_t e, std::string_view what);

// Switches to `device` for its lifetime (destructors free memory on the device that owns it).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard();

 private:
  int previous_ = -1;
};

// Device (or pinned host) memory that only grows: by at least half again, so
// that a slowly rising demand settles after a few steps. Growing waits for
// `stream` first, because work already queued may still use the old block.
struct GrowingBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  bool pinned = false;  // cudaMallocHost instead of cudaMalloc
  void release() noexcept;
};
[[nodiscard]] core::Status grow(GrowingBuffer& buffer, std::size_t bytes, std::string_view what, cudaStream_t stream,
                                std::uint64_t& allocations);

struct KernelWorkspace::Impl {
  int device = -1;
  std::uint32_t multiprocessors = 0;
  std::uint64_t allocations = 0;

  // Shard descriptors, one array per operation so that a forward and a
  // backward on the same workspace each keep theirs; re-uploaded only when
  // they change (asynchronously, from pageable memory the copy stages at once).
  struct Descriptors {
    GrowingBuffer device;
    std::vector<detail::ShardDesc> host;
    std::vector<detail::ShardDesc> uploaded;
  };
  Descriptors forward, backward;

  GrowingBuffer keys[2], bags[2], starts, long_rows, counters, chunk_counts, chunk_begin, partials, stats, temp;
  GrowingBuffer lookups_host{nullptr, 0, true};  // offsets[bags] when the caller does not say

  GrowingBuffer route_desc, sample_begin, dest, cursor;
  std::vector<detail::RouteDesc> route_host, route_uploaded;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();
  [[nodiscard]] std::uint64_t deviceBytes() const;
};

// Private members of the public classes, for the operations.
struct KernelAccess {
  static KernelWorkspace::Impl& impl(KernelWorkspace& w) {
    if (!w.impl_) w.impl_ = std::make_unique<KernelWorkspace::Impl>();  // a moved-from workspace starts afresh
    return *w.impl_;
  }
  static unsigned char* weights(const DeviceTables& t) { return t.weights_; }
  static float* momentum(const DeviceTables& t) { return t.momentum_; }
  static std::size_t weightOffset(const DeviceTables& t, std::size_t s) { return t.weight_offsets_[s]; }
  static std::uint32_t* hostIdBegin(RoutedIds& r) { return r.host_id_begin_; }

  // The pinned statistics of `counts`, grown to hold `shards` shards.
  [[nodiscard]] static core::Status prepareCounts(BackwardCounts& counts, std::size_t shards, cudaStream_t stream,
                                                  std::uint32_t*& pinned);
  // The host callback (cudaHostFn_t) that copies the pinned statistics into the fields.
  static void publishCounts(void* counts);
  // `out`'s buffers grown for `shards` x `samples` and `ids` ids.
  [[nodiscard]] static core::Status prepareRouted(RoutedIds& out, std::size_t shards, std::uint32_t samples,
                                                  std::uint64_t ids, cudaStream_t stream);
};

// The workspace bound to the current device (which must be the tables').
[[nodiscard]] core::Result<KernelWorkspace::Impl*> bindWorkspace(KernelWorkspace& workspace, int tables_device);

// Uploads `d.host` to `d.device` unless it equals what is there already.
[[nodiscard]] core::Status uploadDescriptors(KernelWorkspace::Impl& ws, KernelWorkspace::Impl::Descriptors& d,
                                             cudaStream_t stream);

}  // namespace shardscope::profiler::cuda
