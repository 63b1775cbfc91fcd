#include "cuda_rank.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <thread>

namespace shardscope::profiler::cuda {

core::Error cudaError(const std::string& what, cudaError_t e) {
  return core::Error{what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")", core::ErrorKind::Io};
}

template <typename T>
core::Status DeviceArray<T>::reserve(std::size_t n, const char* what) {
  if (n <= n_ && p_ != nullptr) return core::Ok{};
  if (p_ != nullptr) cudaFree(p_);
  p_ = nullptr;
  n_ = 0;
  const std::size_t want = std::max<std::size_t>(n, 1);
  if (const cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&p_), want * sizeof(T)); e != cudaSuccess)
    return cudaError(std::string(what) + ": cudaMalloc of " + std::to_string(want * sizeof(T)) + " bytes", e);
  n_ = want;
  return core::Ok{};
}

template <typename T>
core::Status PinnedArray<T>::reserve(std::size_t n, const char* what) {
  if (n <= n_ && p_ != nullptr) return core::Ok{};
  if (p_ != nullptr) cudaFreeHost(p_);
  p_ = nullptr;
  n_ = 0;
  const std::size_t want = std::max<std::size_t>(n + n / 4, 16);  // room to grow without reallocating each step
  if (const cudaError_t e = cudaMallocHost(reinterpret_cast<void**>(&p_), want * sizeof(T)); e != cudaSuccess)
    return cudaError(std::string(what) + ": cudaMallocHost of " + std::to_string(want * sizeof(T)) + " bytes", e);
  n_ = want;
  return core::Ok{};
}

template class DeviceArray<float>;
template class DeviceArray<std::uint32_t>;
template class DeviceArray<std::uint64_t>;
template class PinnedArray<std::uint32_t>;
template class PinnedArray<std::uint64_t>;

const char* phaseKind(Phase p) {
  switch (p) {
    case Phase::Input:
      return span_kind::kInput.data();
    case Phase::A2aIds:
      return span_kind::kA2aIds.data();
    case Phase::EmbFwd:
      return span_kind::kEmbFwd.data();
    case Phase::A2aPooled:
      return span_kind::kA2aPooled.data();
    case Phase::Dense:
      return span_kind::kDense.data();
    case Phase::A2aGrads:
      return span_kind::kA2aGrads.data();
    case Phase::EmbBwd:
      return span_kind::kEmbBwd.data();
    case Phase::DpAllreduce:
      return span_kind::kDpAllreduce.data();
    case Phase::DenseAllreduce:
      return span_kind::kDenseAllreduce.data();
    case Phase::ReplicaSync:
      return span_kind::kReplicaSync.data();
  }
  return "";
}

namespace {

DeviceWeightType deviceType(core::DType t) {
  switch (t) {
    case core::DType::FP32:
      return DeviceWeightType::F32;
    case core::DType::BF16:
      return DeviceWeightType::BF16;
    default:
      return DeviceWeightType::F16;  // fp16 and int8 tables run as fp16, as on the CPU
  }
}

}  // namespace

CudaRank::CudaRank(const core::ModelSpec& model, const core::ShardPlan& plan,
                   std::vector<std::vector<RankShard>> group_shards, NcclGrid grid, int device,
                   const CudaRankConfig& config, const WorkloadGenerator& workload)
    : model_(model),
      plan_(plan),
      group_shards_(std::move(group_shards)),
      grid_(std::move(grid)),
      device_(device),
      cfg_(config),
      gen_(workload),
      rec_(config.tracing),
      input_pool_(config.input_threads) {}

CudaRank::~CudaRank() {
  cudaSetDevice(device_);
  for (cudaEvent_t e : event_pool_) cudaEventDestroy(e);
  if (step_begin_ != nullptr) cudaEventDestroy(step_begin_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

core::Status CudaRank::setup(const std::string& host) {
  SS_CUDA(cudaSetDevice(device_), "cudaSetDevice(" + std::to_string(device_) + ")");
  SS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  SS_CUDA(cudaEventCreate(&step_begin_), "cudaEventCreate");
  layout_ = makeExchangeLayout(model_, group_shards_, grid_.groupRank(), cfg_.batch);
  const auto& mine = group_shards_[grid_.groupRank()];
  std::vector<DeviceShardSpec> specs;
  for (const RankShard& rs : mine)
    specs.push_back({rs.physical_rows, rs.shard.cols, deviceType(model_.tables[rs.table].dtype)});
  auto tables = DeviceTables::create(specs);
  if (!tables) return tables.error();
  tables_ = std::move(*tables);
  for (std::size_t k = 0; k < mine.size(); ++k)
    SS_TRY(tables_.initialize(k, cfg_.seed, mine[k].shard.row_offset, mine[k].shard.col_offset, stream_));
  SS_TRY(setupBuffers());
  setupNames(host);
  SS_CUDA(cudaStreamSynchronize(stream_), "setup: cudaStreamSynchronize");
  return core::Ok{};
}

core::Status CudaRank::setupBuffers() {
  const std::size_t M = layout_.group_size, B = cfg_.batch, S = layout_.served.size(), D = layout_.dp.size();
  const auto& mine = group_shards_[grid_.groupRank()];
  batches_.resize(model_.tables.size());
  routed_.resize(layout_.route_groups.size());
  dp_routed_.resize(layout_.dp.size());
  length_at_.assign(model_.tables.size(), 0);
  id_at_.assign(model_.tables.size(), 0);
  id_count_.assign(model_.tables.size(), 0);
  SS_TRY(served_out_.reserve(layout_.served_out_floats, "pooled outputs"));
  SS_TRY(served_grad_.reserve(layout_.served_out_floats, "pooled gradients"));
  SS_TRY(pooled_recv_.reserve(layout_.pooled_recv_floats, "pooled receive buffer"));
  SS_TRY(grad_send_.reserve(layout_.pooled_recv_floats, "gradient send buffer"));
  SS_TRY(pooled_.reserve(layout_.pooled_floats, "pooled embeddings"));
  SS_TRY(grad_.reserve(layout_.pooled_floats, "embedding gradients"));
  SS_TRY(served_lengths_.reserve(S * M * B, "served bag lengths"));
  SS_TRY(served_offsets_.reserve(S * M * B + 1, "served bag offsets"));
  SS_TRY(dp_lengths_.reserve(D * B, "data-parallel bag lengths"));
  SS_TRY(dp_offsets_.reserve(D * B + 1, "data-parallel bag offsets"));
  std::size_t remote_total = 0;
  for (const auto& r : layout_.remote) remote_total += r.size();
  SS_TRY(counts_send_.reserve(remote_total, "id counts"));
  SS_TRY(counts_recv_.reserve(M * S, "id counts"));
  SS_TRY(host_counts_.reserve(remote_total + M * S, "id counts"));

  // Data-parallel tables: dense row gradients and identity bags over their rows.
  served_layout_ = {layout_.served_bag_begin, layout_.served_out_offset, layout_.out_stride};
  dp_layout_ = {layout_.dp_bag_begin, layout_.dp_out_offset, layout_.out_stride};
  dp_update_layout_.bag_begin.assign(mine.size() + 1, 0);
  dp_update_layout_.out_offset.assign(mine.size(), 0);
  dp_update_layout_.out_stride = layout_.out_stride;
  dp_grad_offset_.clear();
  std::size_t rows = 0;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    if (mine[k].dataParallel()) {
      dp_grad_offset_.push_back(dp_grad_floats_);
      dp_update_layout_.out_offset[k] = dp_grad_floats_;
      dp_grad_floats_ += mine[k].physical_rows * mine[k].shard.cols;
      rows += mine[k].physical_rows;
    }
    dp_update_layout_.bag_begin[k + 1] = static_cast<std::uint32_t>(rows);
  }
  SS_TRY(dp_grad_.reserve(dp_grad_floats_, "data-parallel row gradients"));
  SS_TRY(identity_offsets_.reserve(rows + 1, "identity bags"));
  SS_TRY(identity_ids_.reserve(rows, "identity bags"));
  SS_TRY(fillIota(identity_offsets_.get(), static_cast<std::uint32_t>(rows + 1), stream_));
  std::size_t at = 0;
  for (std::size_t j = 0; j < D; ++j) {
    const auto p = static_cast<std::uint32_t>(mine[layout_.dp[j]].physical_rows);
    SS_TRY(fillIota(identity_ids_.get() + at, p, stream_));
    at += p;
  }

  // Dense parameters (all-reduced every step) and the stand-in's matrices.
  const auto params = static_cast<std::size_t>(model_.dense.parameters);
  SS_TRY(dense_params_.reserve(params, "dense parameters"));
  SS_CUDA(cudaMemsetAsync(dense_params_.get(), 0, std::max<std::size_t>(params, 1) * sizeof(float), stream_),
          "dense parameters: cudaMemsetAsync");
  const double flops = model_.dense.flops_per_sample * static_cast<double>(B);
  constexpr double kGemmFlops = 2.0 * 1024 * 1024 * 1024;
  if (flops > 0) {
    dense_n_ = flops >= kGemmFlops ? 1024u : std::max(4u, static_cast<std::uint32_t>(std::cbrt(flops / 2)));
    dense_reps_ = flops >= kGemmFlops ? static_cast<std::uint64_t>(std::llround(flops / kGemmFlops)) : 1;
    const std::size_t nn = std::size_t{dense_n_} * dense_n_;
    SS_TRY(dense_a_.reserve(nn, "dense stand-in"));
    SS_TRY(dense_b_.reserve(nn, "dense stand-in"));
    SS_TRY(dense_c_.reserve(nn, "dense stand-in"));
    SS_CUDA(cudaMemsetAsync(dense_a_.get(), 0, nn * sizeof(float), stream_), "dense stand-in: cudaMemsetAsync");
    SS_CUDA(cudaMemsetAsync(dense_b_.get(), 0, nn * sizeof(float), stream_), "dense stand-in: cudaMemsetAsync");
  }

  SS_TRY(setupDescriptors());
  fwd_ns_.assign(mine.size(), 0);
  bwd_ns_.assign(mine.size(), 0);
  lookups_.assign(mine.size(), 0);
  unique_.assign(mine.size(), 0);
  step_shard_lookups_.assign(mine.size(), 0);
  counts_.resize(2);
  return core::Ok{};
}

// The combine and loss kernels' per-table descriptors, on the device once.
core::Status CudaRank::setupDescriptors() {
  // Combine descriptors: per sharded table, its received blocks in owner order.
  std::vector<std::uint64_t> out_offset, source;
  std::vector<std::uint32_t> dims, begin{0}, col, cols;
  for (std::size_t t = 0; t < model_.tables.size(); ++t) {
    bool any = false;
    for (const CombineBlock& b : layout_.combine) {
      if (b.table != t) continue;
      any = true;
      source.push_back(b.source_offset);
      col.push_back(b.col_offset);
      cols.push_back(b.cols);
    }
    if (!any) continue;
    out_offset.push_back(layout_.table_offset[t]);
    dims.push_back(model_.tables[t].dim);
    begin.push_back(static_cast<std::uint32_t>(source.size()));
  }
  const auto upload = [this](auto& dev, const auto& host, const char* what) -> core::Status {
    SS_TRY(dev.reserve(host.size(), what));
    if (!host.empty())
      SS_CUDA(cudaMemcpyAsync(dev.get(), host.data(), host.size() * sizeof(host[0]), cudaMemcpyHostToDevice, stream_),
              std::string(what) + ": cudaMemcpyAsync");
    SS_CUDA(cudaStreamSynchronize(stream_), std::string(what) + ": cudaStreamSynchronize");
    return core::Ok{};
  };
  SS_TRY(upload(combine_out_offset_, out_offset, "combine descriptors"));
  SS_TRY(upload(combine_dims_, dims, "combine descriptors"));
  SS_TRY(upload(combine_begin_, begin, "combine descriptors"));
  SS_TRY(upload(combine_source_, source, "combine descriptors"));
  SS_TRY(upload(combine_col_, col, "combine descriptors"));
  SS_TRY(upload(combine_cols_, cols, "combine descriptors"));
  combine_args_ = {combine_out_offset_.get(),
                   combine_dims_.get(),
                   combine_begin_.get(),
                   combine_source_.get(),
                   combine_col_.get(),
                   combine_cols_.get(),
                   static_cast<std::uint32_t>(dims.size()),
                   cfg_.batch,
                   dims.empty() ? 0u : *std::max_element(dims.begin(), dims.end())};

  // Loss descriptors: every used table.
  std::vector<std::uint64_t> loss_offset;
  std::vector<std::uint32_t> loss_dims, loss_table;
  for (std::size_t t = 0; t < model_.tables.size(); ++t) {
    if (!layout_.table_used[t]) continue;
    loss_offset.push_back(layout_.table_offset[t]);
    loss_dims.push_back(model_.tables[t].dim);
    loss_table.push_back(static_cast<std::uint32_t>(t));
  }
  SS_TRY(upload(loss_offset_, loss_offset, "loss descriptors"));
  SS_TRY(upload(loss_dims_, loss_dims, "loss descriptors"));
  SS_TRY(upload(loss_table_, loss_table, "loss descriptors"));
  loss_args_ = {loss_offset_.get(), loss_dims_.get(),
                loss_table_.get(),  static_cast<std::uint32_t>(loss_dims.size()),
                cfg_.batch,         loss_dims.empty() ? 0u : *std::max_element(loss_dims.begin(), loss_dims.end()),
                cfg_.seed,          0};
  return core::Ok{};
}

void CudaRank::setupNames(const std::string& host) {
  names_.step = rec_.name(span_kind::kStep);
  names_.all_to_all = rec_.name("all_to_all");
  names_.all_reduce = rec_.name("all_reduce");
  names_.tbe = rec_.name("tbe");
  names_.pg_sharding = rec_.name("sharding");  // NcclGrid's communicator names
  names_.pg_replica = rec_.name("replica");
  names_.pg_world = rec_.name("world");
  names_.phase.assign(kPhaseCount, 0);
  for (std::uint32_t p = 1; p < kPhaseCount; ++p) names_.phase[p] = rec_.name(phaseKind(static_cast<Phase>(p)));
  names_.sharding = rec_.name(joinRanks(plan_.sharding_groups[grid_.shardingGroup()]));
  names_.replica = rec_.name(joinRanks(plan_.replica_groups[grid_.replicaGroup()]));
  std::vector<std::uint32_t> all(plan_.world_size);
  std::iota(all.begin(), all.end(), 0u);
  names_.world = rec_.name(joinRanks(all));
  names_.table.resize(model_.tables.size());
  for (std::size_t t = 0; t < model_.tables.size(); ++t) names_.table[t] = rec_.name(model_.tables[t].name);
  rec_.rankInfo({static_cast<int>(grid_.rank()), host, device_, static_cast<int>(grid_.shardingGroup()),
                 static_cast<int>(grid_.replicaGroup())});
}

core::Status CudaRank::waitStream(const char* what) {
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaSuccess) return core::Ok{};
    if (e != cudaErrorNotReady) return cudaError(std::string(what) + ": the stream", e);
    if (cfg_.peer_failed != nullptr && cfg_.peer_failed->load()) {
      grid_.abort();  // the owner aborts its own communicators: kernels waiting for a failed peer end
      return core::Error{std::string(what) + ": another rank failed; this rank's communicators were aborted",
                         core::ErrorKind::Io};
    }
    std::this_thread::yield();
  }
}

core::Status CudaRank::step(std::uint64_t global_step, std::int64_t measured, bool sync) {
  step_ = measured;
  marks_.clear();
  events_used_ = 0;
  SS_CUDA(cudaSetDevice(device_), "cudaSetDevice");
  SS_TRY(waitStream("step start"));
  const std::int64_t host_start = traceNowNs();
  SS_CUDA(cudaEventRecord(step_begin_, stream_), "cudaEventRecord");
  const std::uint64_t first = firstSampleOf(global_step, grid_.worldSize(), grid_.rank(), cfg_.batch);
  SS_TRY(generateAndRoute(first));
  SS_TRY(exchangeIds());
  SS_TRY(forward());
  SS_TRY(exchangePooled());
  SS_TRY(denseStep(first));
  SS_TRY(exchangeGradients());
  SS_TRY(backward());
  SS_TRY(dataParallelBackward());
  SS_TRY(denseAllreduce());
  if (sync && grid_.replicas() > 1) SS_TRY(replicaSync());
  SS_TRY(waitStream("step end"));
  return recordStep(host_start);
}

}  // namespace shardscope::profiler::cuda
