// Host side of the CUDA embedding kernels, part 2: forward, backward + fused
// AdaGrad and id routing. Each call checks its inputs, fills the shard
// descriptors (uploaded only when they change), grows the workspace's
// scratch when needed and enqueues the launches of embedding_cuda.cu.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "embedding_cuda_internal.h"
#include "shardscope/profiler/cuda/embedding_cuda.h"

namespace shardscope::profiler::cuda {

namespace {

constexpr std::uint64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();

core::Status checkLayout(const DeviceTables& tables, const BatchLayout& layout, const DeviceBags& bags,
                         const std::string& op) {
  const std::size_t S = tables.count();
  if (layout.bag_begin.size() != S + 1 || layout.out_offset.size() != S || layout.out_stride.size() != S)
    return invalidInput(op + ": the batch layout describes " +
                        std::to_string(layout.bag_begin.empty() ? 0 : layout.bag_begin.size() - 1) + " shards (" +
                        std::to_string(layout.out_offset.size()) + " output offsets, " +
                        std::to_string(layout.out_stride.size()) + " strides), the tables have " + std::to_string(S));
  if (layout.bag_begin.front() != 0 || layout.bag_begin.back() != bags.bags)
    return invalidInput(op + ": the batch layout's bags run from " + std::to_string(layout.bag_begin.front()) + " to " +
                        std::to_string(layout.bag_begin.back()) + ", expected 0 to " + std::to_string(bags.bags));
  for (std::size_t s = 0; s < S; ++s) {
    if (layout.bag_begin[s + 1] < layout.bag_begin[s])
      return invalidInput(op + ": the batch layout's bag_begin decreases at shard " + std::to_string(s));
    if (layout.bag_begin[s + 1] > layout.bag_begin[s] && layout.out_stride[s] < tables.spec(s).dim)
      return invalidInput(op + ": shard " + std::to_string(s) + " has output stride " +
                          std::to_string(layout.out_stride[s]) + " below its dim " +
                          std::to_string(tables.spec(s).dim));
  }
  if (bags.bags > 0 && bags.offsets == nullptr) return invalidInput(op + ": no bag offsets");
  return core::Ok{};
}

// The descriptor fields every operation uses.
void fillShards(const DeviceTables& tables, const BatchLayout& layout, std::vector<detail::ShardDesc>& out) {
  out.assign(tables.count(), detail::ShardDesc{});
  for (std::size_t s = 0; s < tables.count(); ++s) {
    detail::ShardDesc& d = out[s];
    const DeviceShardSpec& spec = tables.spec(s);
    d.weights = KernelAccess::weights(tables) + KernelAccess::weightOffset(tables, s);
    d.pitch = tables.rowPitch(s);
    d.out_offset = layout.out_offset[s];
    d.dim = spec.dim;
    d.type = static_cast<std::uint32_t>(spec.type);
    d.row_base = static_cast<std::uint32_t>(tables.rowBase(s));
    d.rows = static_cast<std::uint32_t>(spec.rows);
    d.bag_begin = layout.bag_begin[s];
    d.bags = layout.bag_begin[s + 1] - layout.bag_begin[s];
    d.out_stride = layout.out_stride[s];
  }
}

core::Error launchFailure(const std::string& op, const detail::LaunchError& e) {
  return cudaFailure(op + ": " + e.what, e.error);
}

// The lookups of `bags` when the caller left ids_count 0: offsets[bags], read back.
core::Result<std::uint32_t> lookupCount(const DeviceBags& bags, KernelWorkspace::Impl& ws, cudaStream_t stream) {
  if (bags.ids_count > 0 || bags.bags == 0) return bags.ids_count;
  if (auto s = grow(ws.lookups_host, sizeof(std::uint32_t), "lookup count (host)", stream, ws.allocations); !s)
    return s.error();
  auto* host = static_cast<std::uint32_t*>(ws.lookups_host.ptr);
  if (auto s = cudaCall(
          cudaMemcpyAsync(host, bags.offsets + bags.bags, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream),
          "backwardAdagrad: cudaMemcpyAsync (lookup count)");
      !s)
    return s.error();
  if (auto s = cudaCall(cudaStreamSynchronize(stream), "backwardAdagrad: cudaStreamSynchronize (lookup count)"); !s)
    return s.error();
  return *host;
}

}  // namespace

core::Status forward(const DeviceTables& tables, const BatchLayout& layout, const DeviceBags& bags, Pooling pooling,
                     float* out, KernelWorkspace& workspace, cudaStream_t stream) {
  const std::string op = "embedding forward";
  if (auto s = checkLayout(tables, layout, bags, op); !s) return s;
  if (bags.bags == 0) return core::Ok{};
  if (out == nullptr) return invalidInput(op + ": no output buffer");
  auto bound = bindWorkspace(workspace, tables.device());
  if (!bound) return bound.error();
  KernelWorkspace::Impl& ws = **bound;

  std::vector<detail::ShardDesc>& shards = ws.forward.host;
  fillShards(tables, layout, shards);
  const bool out_aligned = reinterpret_cast<std::uintptr_t>(out) % launch::kVectorBytes == 0;
  std::uint64_t items = 0;
  for (detail::ShardDesc& d : shards) {
    const ForwardShardLaunch f = forwardShardLaunch(d.dim, static_cast<DeviceWeightType>(d.type));
    d.threads_log2 = static_cast<std::uint32_t>(std::countr_zero(f.threads_per_bag));
    d.vectors = f.vectors;
    d.item_begin = static_cast<std::uint32_t>(std::min(items, kMaxU32));
    items += forwardWarpItems(d.bags, f);
    d.vector_store = out_aligned && d.out_offset % 4 == 0 && d.out_stride % 4 == 0 ? 1 : 0;
  }
  if (items > kMaxU32) return invalidInput(op + ": more than 2^32 - 1 warp work items");
  if (auto s = uploadDescriptors(ws, ws.forward, stream); !s) return s;

  detail::ForwardArgs a;
  a.shards = static_cast<const detail::ShardDesc*>(ws.forward.device.ptr);
  a.shard_count = static_cast<std::uint32_t>(shards.size());
  a.items = static_cast<std::uint32_t>(items);
  a.offsets = bags.offsets;
  a.ids = bags.ids;
  a.out = out;
  a.mean = pooling == Pooling::Mean;
  a.grid = forwardLaunch(items, ws.multiprocessors);
  if (const detail::LaunchError e = detail::launchForward(a, stream); e.failed()) return launchFailure(op, e);
  return core::Ok{};
}

core::Status backwardAdagrad(DeviceTables& tables, const BatchLayout& layout, const DeviceBags& bags, Pooling pooling,
                             const float* grad, const AdagradConfig& config, KernelWorkspace& workspace,
                             cudaStream_t stream, BackwardCounts* counts) {
  const std::string op = "embedding backward";
  if (auto s = checkLayout(tables, layout, bags, op); !s) return s;
  auto bound = bindWorkspace(workspace, tables.device());
  if (!bound) return bound.error();
  KernelWorkspace::Impl& ws = **bound;
  auto counted = lookupCount(bags, ws, stream);
  if (!counted) return counted.error();
  const std::uint32_t n = bags.bags == 0 ? 0 : *counted;
  if (n > 0 && (bags.ids == nullptr || grad == nullptr)) return invalidInput(op + ": no ids or no gradients");
  if (n == 0 && counts == nullptr) return core::Ok{};

  const std::size_t S = tables.count();
  fillShards(tables, layout, ws.backward.host);
  if (auto s = uploadDescriptors(ws, ws.backward, stream); !s) return s;

  const int end_bit = sortEndBit(tables.totalRows());
  const auto long_rows = static_cast<std::uint32_t>(longRowBound(n));
  const std::size_t pair_bytes = std::size_t{std::max(n, 1u)} * sizeof(std::uint32_t);
  const std::size_t chunk_bytes = (std::size_t{long_rows} + 1) * sizeof(std::uint32_t);
  const std::size_t partial_bytes =
      std::max<std::size_t>(longChunkBound(n) * tables.maxDim() * sizeof(float), sizeof(float));
  std::size_t temp_bytes = 0;
  if (n > 0) {
    if (const detail::LaunchError e = detail::backwardTempBytes(n, end_bit, long_rows, temp_bytes); e.failed())
      return launchFailure(op, e);
  }
  struct Need {
    GrowingBuffer* buffer;
    std::size_t bytes;
    const char* what;
  };
  const Need needs[] = {{&ws.keys[0], pair_bytes, "backward sort keys"},
                        {&ws.keys[1], pair_bytes, "backward sort keys"},
                        {&ws.bags[0], pair_bytes, "backward sort values"},
                        {&ws.bags[1], pair_bytes, "backward sort values"},
                        {&ws.starts, pair_bytes, "backward row segments"},
                        {&ws.long_rows, chunk_bytes, "backward hot rows"},
                        {&ws.counters, 2 * sizeof(std::uint32_t), "backward counters"},
                        {&ws.chunk_counts, chunk_bytes, "backward hot row chunk counts"},
                        {&ws.chunk_begin, chunk_bytes, "backward hot row chunks"},
                        {&ws.partials, partial_bytes, "backward hot row partial sums"},
                        {&ws.stats, (2 * S + 2) * sizeof(std::uint32_t), "backward statistics"},
                        {&ws.temp, std::max<std::size_t>(temp_bytes, 1), "CUB temporary storage"}};
  for (const Need& need : needs)
    if (auto s = grow(*need.buffer, need.bytes, need.what, stream, ws.allocations); !s) return s;
  std::uint32_t* host_stats = nullptr;
  if (counts != nullptr) {
    if (auto s = KernelAccess::prepareCounts(*counts, S, stream, host_stats); !s) return s;
  }

  detail::BackwardArgs a;
  a.shards = static_cast<const detail::ShardDesc*>(ws.backward.device.ptr);
  a.shard_count = static_cast<std::uint32_t>(S);
  a.bags = bags.bags;
  a.lookups = n;
  a.long_row_bound = long_rows;
  a.offsets = bags.offsets;
  a.ids = bags.ids;
  a.grad = grad;
  a.momentum = KernelAccess::momentum(tables);
  a.mean = pooling == Pooling::Mean;
  a.learning_rate = config.learning_rate;
  a.eps = config.eps;
  a.end_bit = end_bit;
  a.max_dim = tables.maxDim();
  a.keys = keysLaunch(bags.bags, ws.multiprocessors);
  a.update = updateLaunch(n, a.max_dim, ws.multiprocessors);
  a.chunk_count = chunkCountLaunch(n, ws.multiprocessors);
  a.chunk_sum = chunkSumLaunch(n, ws.multiprocessors);
  a.long_update = longUpdateLaunch(n, a.max_dim, ws.multiprocessors);
  a.stats = statsLaunch();
  for (int i = 0; i < 2; ++i) {
    a.scratch.keys[i] = static_cast<std::uint32_t*>(ws.keys[i].ptr);
    a.scratch.bags[i] = static_cast<std::uint32_t*>(ws.bags[i].ptr);
  }
  a.scratch.starts = static_cast<std::uint32_t*>(ws.starts.ptr);
  a.scratch.long_rows = static_cast<std::uint32_t*>(ws.long_rows.ptr);
  a.scratch.counters = static_cast<std::uint32_t*>(ws.counters.ptr);
  a.scratch.chunk_counts = static_cast<std::uint32_t*>(ws.chunk_counts.ptr);
  a.scratch.chunk_begin = static_cast<std::uint32_t*>(ws.chunk_begin.ptr);
  a.scratch.partials = static_cast<float*>(ws.partials.ptr);
  a.scratch.stats = static_cast<std::uint32_t*>(ws.stats.ptr);
  a.scratch.temp = ws.temp.ptr;
  a.scratch.temp_bytes = ws.temp.bytes;
  a.host_stats = host_stats;
  if (const detail::LaunchError e = detail::launchBackward(a, stream); e.failed()) return launchFailure(op, e);
  if (counts != nullptr) {
    if (auto s = cudaCall(cudaLaunchHostFunc(stream, KernelAccess::publishCounts, counts),
                          op + ": cudaLaunchHostFunc (counts)");
        !s)
      return s;
  }
  return core::Ok{};
}

namespace {

// Row-wise shards (non-empty, sorted by first row, disjoint) then the all-ids shards.
core::Result<std::uint32_t> routeDescriptors(std::span<const RouteShard> shards, std::vector<detail::RouteDesc>& out) {
  out.clear();
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const RouteShard& r = shards[k];
    if (r.all_ids || r.rows == 0) continue;
    if (r.row_begin > std::numeric_limits<std::uint64_t>::max() - r.rows)
      return invalidInput("routeIds: shard " + std::to_string(k) + "'s rows overflow 64 bits");
    out.push_back({r.row_begin, r.rows, std::max<std::uint64_t>(r.physical_rows, 1), static_cast<std::uint32_t>(k)});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.row_begin < y.row_begin; });
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i - 1].row_begin + out[i - 1].rows > out[i].row_begin)
      return invalidInput("routeIds: row-wise shards " + std::to_string(out[i - 1].shard) + " and " +
                          std::to_string(out[i].shard) + " overlap");
  }
  const auto row_wise = static_cast<std::uint32_t>(out.size());
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const RouteShard& r = shards[k];
    if (r.all_ids)
      out.push_back({r.row_begin, r.rows, std::max<std::uint64_t>(r.physical_rows, 1), static_cast<std::uint32_t>(k)});
  }
  return row_wise;
}

}  // namespace

core::Status routeIds(const std::uint32_t* lengths, const std::uint64_t* ids, std::uint32_t samples,
                      std::uint32_t id_count, std::span<const RouteShard> shards, RoutedIds& out,
                      KernelWorkspace& workspace, cudaStream_t stream) {
  const std::string op = "routeIds";
  if (samples > 0 && lengths == nullptr) return invalidInput(op + ": no lengths");
  if (id_count > 0 && ids == nullptr) return invalidInput(op + ": no ids");
  int device = 0;
  if (auto s = cudaCall(cudaGetDevice(&device), op + ": cudaGetDevice"); !s) return s;
  auto bound = bindWorkspace(workspace, device);
  if (!bound) return bound.error();
  KernelWorkspace::Impl& ws = **bound;

  auto row_wise = routeDescriptors(shards, ws.route_host);
  if (!row_wise) return row_wise.error();
  const auto all_ids = static_cast<std::uint32_t>(ws.route_host.size()) - *row_wise;
  const std::size_t S = shards.size();
  const std::uint64_t cells = std::uint64_t{S} * samples;
  const std::uint64_t out_ids = std::uint64_t{id_count} * (all_ids + (*row_wise > 0 ? 1 : 0));
  if (out_ids > kMaxU32) return invalidInput(op + ": " + std::to_string(out_ids) + " routed ids, more than 2^32 - 1");

  // The descriptors: re-uploaded only when they change.
  const std::size_t desc_bytes = ws.route_host.size() * sizeof(detail::RouteDesc);
  if (desc_bytes > 0 && (ws.route_uploaded.size() != ws.route_host.size() || ws.route_desc.ptr == nullptr ||
                         std::memcmp(ws.route_uploaded.data(), ws.route_host.data(), desc_bytes) != 0)) {
    if (auto s = grow(ws.route_desc, desc_bytes, "route descriptors", stream, ws.allocations); !s) return s;
    if (auto s = cudaCall(
            cudaMemcpyAsync(ws.route_desc.ptr, ws.route_host.data(), desc_bytes, cudaMemcpyHostToDevice, stream),
            op + ": cudaMemcpyAsync (descriptors)");
        !s)
      return s;
    ws.route_uploaded = ws.route_host;
  }
  std::size_t temp_bytes = 0;
  if (const detail::LaunchError e = detail::routeTempBytes(samples, cells, temp_bytes); e.failed())
    return launchFailure(op, e);
  if (auto s =
          grow(ws.sample_begin, std::size_t{std::max(samples, 1u)} * 4, "route sample offsets", stream, ws.allocations);
      !s)
    return s;
  if (auto s = grow(ws.dest, std::size_t{std::max(id_count, 1u)} * 4, "route destinations", stream, ws.allocations); !s)
    return s;
  if (auto s = grow(ws.cursor, (cells + 1) * 4, "route cursors", stream, ws.allocations); !s) return s;
  if (auto s = grow(ws.temp, std::max<std::size_t>(temp_bytes, 1), "CUB temporary storage", stream, ws.allocations); !s)
    return s;
  if (auto s = KernelAccess::prepareRouted(out, S, samples, out_ids, stream); !s) return s;

  detail::RouteArgs a;
  a.lengths_in = lengths;
  a.ids_in = ids;
  a.samples = samples;
  a.id_count = id_count;
  a.shard_count = static_cast<std::uint32_t>(S);
  const auto* desc = static_cast<const detail::RouteDesc*>(ws.route_desc.ptr);
  a.row_wise = desc;
  a.row_wise_count = *row_wise;
  a.all_ids = desc == nullptr ? nullptr : desc + *row_wise;
  a.all_ids_count = all_ids;
  a.sample_begin = static_cast<std::uint32_t*>(ws.sample_begin.ptr);
  a.dest = static_cast<std::uint32_t*>(ws.dest.ptr);
  a.cursor = static_cast<std::uint32_t*>(ws.cursor.ptr);
  a.temp = ws.temp.ptr;
  a.temp_bytes = ws.temp.bytes;
  a.lengths_out = out.lengths;
  a.ids_out = out.ids;
  a.id_begin = out.id_begin;
  a.host_id_begin = KernelAccess::hostIdBegin(out);
  a.grid = routeLaunch(samples, ws.multiprocessors);
  if (const detail::LaunchError e = detail::launchRoute(a, stream); e.failed()) return launchFailure(op, e);
  return core::Ok{};
}

}  // namespace shardscope::profiler::cuda
