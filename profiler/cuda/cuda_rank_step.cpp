// The phases of a GPU engine step (docs/engine-cuda.md#step) and their
// timing: CUDA events around every phase, read once the step has finished.
#include <algorithm>
#include <cstring>

#include "cuda_rank.h"
#include "shardscope/profiler/cuda/cupti_tracer.h"

namespace shardscope::profiler::cuda {

namespace {
ncclDataType_t ncclWeightType(DeviceWeightType t) {
  return t == DeviceWeightType::F32 ? ncclFloat32 : (t == DeviceWeightType::F16 ? ncclFloat16 : ncclBfloat16);
}

// Bytes that cross between ranks: every block not to or from `me`.
std::int64_t peerBytes(const std::vector<A2aPart>& send, const std::vector<A2aPart>& recv, std::uint32_t me,
                       std::size_t elem) {
  std::size_t n = 0;
  for (const A2aPart& p : send)
    if (p.peer != me) n += p.count;
  for (const A2aPart& p : recv)
    if (p.peer != me) n += p.count;
  return static_cast<std::int64_t>(n * elem);
}
}  // namespace

core::Status CudaRank::beginPhase(Phase p) {
  while (event_pool_.size() < events_used_ + 2) {
    cudaEvent_t e = nullptr;
    SS_CUDA(cudaEventCreate(&e), "cudaEventCreate");
    event_pool_.push_back(e);
  }
  marks_.push_back({p, event_pool_[events_used_], event_pool_[events_used_ + 1], 0, false, 0, 0});
  events_used_ += 2;
  SS_CUDA(cudaEventRecord(marks_.back().begin, stream_), "cudaEventRecord");
  // Pushed once nothing here can fail any more, so that every push meets its pop in endPhase.
  nvtxPush(phaseKind(p));  // NVTX range per phase: CUPTI's markers, and Nsight Systems' rows for a user's own capture
  if (hooks_.push != nullptr) hooks_.push(hooks_.ctx, externalId(grid_.rank(), step_, p));
  return core::Ok{};
}

core::Status CudaRank::endPhase(Phase p, std::int64_t bytes, bool collective, std::uint32_t group, int peers) {
  if (hooks_.pop != nullptr) hooks_.pop(hooks_.ctx);
  nvtxPop();
  PhaseMark& m = marks_.back();
  if (m.phase != p) return core::Error{"engine phases out of order", core::ErrorKind::Internal};
  m.bytes = bytes;
  m.collective = collective;
  m.group = group;
  m.peers = peers;
  SS_CUDA(cudaEventRecord(m.end, stream_), "cudaEventRecord");
  return core::Ok{};
}

// input: this rank's ids per table (host generator, one copy to the device),
// routed on the device to the shards that serve them, packed per destination.
core::Status CudaRank::generateAndRoute(std::uint64_t first) {
  SS_TRY(beginPhase(Phase::Input));
  const std::uint32_t B = cfg_.batch;
  const auto& mine = group_shards_[grid_.groupRank()];
  std::size_t lengths = 0, ids = 0;
  input_pool_.parallelFor(model_.tables.size(), 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t)
      if (layout_.table_used[t]) batches_[t] = gen_.batch(t, first, B);
  });
  for (std::size_t t = 0; t < model_.tables.size(); ++t) {
    if (!layout_.table_used[t]) continue;
    length_at_[t] = lengths;
    id_at_[t] = ids;
    id_count_[t] = batches_[t].ids.size();
    lengths += B;
    ids += batches_[t].ids.size();
  }
  SS_TRY(host_lengths_.reserve(lengths, "input lengths"));
  SS_TRY(host_ids_.reserve(ids, "input ids"));
  SS_TRY(dev_lengths_.reserve(lengths, "input lengths"));
  SS_TRY(dev_ids_.reserve(ids, "input ids"));
  for (std::size_t t = 0; t < model_.tables.size(); ++t) {
    if (!layout_.table_used[t]) continue;
    std::memcpy(host_lengths_.get() + length_at_[t], batches_[t].lengths.data(), B * sizeof(std::uint32_t));
    std::memcpy(host_ids_.get() + id_at_[t], batches_[t].ids.data(), id_count_[t] * sizeof(std::uint64_t));
  }
  SS_CUDA(cudaMemcpyAsync(dev_lengths_.get(), host_lengths_.get(), lengths * sizeof(std::uint32_t),
                          cudaMemcpyHostToDevice, stream_),
          "input lengths: cudaMemcpyAsync");
  SS_CUDA(
      cudaMemcpyAsync(dev_ids_.get(), host_ids_.get(), ids * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_),
      "input ids: cudaMemcpyAsync");

  // Route every (sharded table, column block) to its shards, every data-parallel table to the own copy.
  std::vector<RouteShard> shards;
  for (std::size_t g = 0; g < layout_.route_groups.size(); ++g) {
    const auto& group = layout_.route_groups[g];
    const std::size_t t = group.table;
    shards.clear();
    for (const auto& target : group.targets) {
      const RankShard& rs = group_shards_[target.group_rank][target.shard];
      const bool whole_rows = rs.shard.row_offset == 0 && rs.shard.rows == model_.tables[t].rows;
      shards.push_back({rs.shard.row_offset, rs.shard.rows, rs.physical_rows, whole_rows});
    }
    SS_TRY(routeIds(dev_lengths_.get() + length_at_[t], dev_ids_.get() + id_at_[t], B,
                    static_cast<std::uint32_t>(id_count_[t]), shards, routed_[g], route_ws_, stream_));
  }
  for (std::size_t j = 0; j < layout_.dp.size(); ++j) {
    const RankShard& rs = mine[layout_.dp[j]];
    const RouteShard own{0, rs.shard.rows, rs.physical_rows, true};
    SS_TRY(routeIds(dev_lengths_.get() + length_at_[rs.table], dev_ids_.get() + id_at_[rs.table], B,
                    static_cast<std::uint32_t>(id_count_[rs.table]), std::span<const RouteShard>(&own, 1),
                    dp_routed_[j], route_ws_, stream_));
  }
  SS_TRY(waitStream("routing"));

  // Pack: per destination d, per shard of d, B lengths then its ids.
  const std::size_t M = layout_.group_size;
  send_blocks_.assign(M, {});
  std::size_t arena = 0;
  for (std::uint32_t d = 0; d < M; ++d)
    for (const auto& [g, q] : layout_.route_of[d]) {
      const auto& begin = routed_[g].host_id_begin;
      const std::size_t n = begin[q + 1] - begin[q];
      send_blocks_[d].push_back({arena, arena + B, n});
      arena += B + n;
    }
  SS_TRY(send_arena_.reserve(arena, "id send buffer"));
  for (std::uint32_t d = 0; d < M; ++d)
    for (std::size_t n = 0; n < layout_.route_of[d].size(); ++n) {
      const auto [g, q] = layout_.route_of[d][n];
      const RoutedBlock& b = send_blocks_[d][n];
      SS_CUDA(cudaMemcpyAsync(send_arena_.get() + b.length_offset, routed_[g].lengths + q * B,
                              B * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream_),
              "pack lengths: cudaMemcpyAsync");
      if (b.ids > 0)
        SS_CUDA(cudaMemcpyAsync(send_arena_.get() + b.id_offset, routed_[g].ids + routed_[g].host_id_begin[q],
                                b.ids * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream_),
                "pack ids: cudaMemcpyAsync");
    }

  // Data-parallel bags, concatenated in own-shard order.
  std::size_t dp_ids = 0;
  for (std::size_t j = 0; j < layout_.dp.size(); ++j) dp_ids += dp_routed_[j].host_id_begin[1];
  SS_TRY(dp_ids_.reserve(dp_ids, "data-parallel ids"));
  std::size_t at = 0;
  for (std::size_t j = 0; j < layout_.dp.size(); ++j) {
    const RoutedIds& r = dp_routed_[j];
    SS_CUDA(cudaMemcpyAsync(dp_lengths_.get() + j * B, r.lengths, B * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice,
                            stream_),
            "data-parallel lengths: cudaMemcpyAsync");
    if (r.host_id_begin[1] > 0)
      SS_CUDA(cudaMemcpyAsync(dp_ids_.get() + at, r.ids, r.host_id_begin[1] * sizeof(std::uint32_t),
                              cudaMemcpyDeviceToDevice, stream_),
              "data-parallel ids: cudaMemcpyAsync");
    at += r.host_id_begin[1];
    step_shard_lookups_[layout_.dp[j]] = r.host_id_begin[1];
  }
  SS_TRY(lengthsToOffsets(dp_lengths_.get(), static_cast<std::uint32_t>(layout_.dp.size() * B), dp_offsets_.get(),
                          scan_, stream_));
  step_lookups_ = static_cast<std::int64_t>(dp_ids);
  dp_id_total_ = static_cast<std::uint32_t>(dp_ids);
  return endPhase(Phase::Input, static_cast<std::int64_t>(ids));
}

// a2a_ids: the id counts, then lengths and ids, into one CSR of (served shard, source, sample) bags.
core::Status CudaRank::exchangeIds() {
  SS_TRY(beginPhase(Phase::A2aIds));
  const std::uint32_t M = layout_.group_size, me = layout_.me;
  const std::size_t S = layout_.served.size();
  std::vector<A2aPart> count_send, count_recv;
  std::size_t c = 0;
  for (std::uint32_t d = 0; d < M; ++d) {
    count_send.push_back({d, c, send_blocks_[d].size()});
    for (const RoutedBlock& b : send_blocks_[d]) host_counts_.get()[c++] = static_cast<std::uint32_t>(b.ids);
  }
  for (std::uint32_t s = 0; s < M; ++s) count_recv.push_back({s, s * S, S});
  std::uint32_t* recv_host = host_counts_.get() + c;
  SS_CUDA(cudaMemcpyAsync(counts_send_.get(), host_counts_.get(), c * sizeof(std::uint32_t), cudaMemcpyHostToDevice,
                          stream_),
          "id counts: cudaMemcpyAsync");
  SS_TRY(allToAllV(counts_send_.get(), count_send, counts_recv_.get(), count_recv, ncclUint32, grid_.sharding(), me,
                   stream_));
  SS_CUDA(
      cudaMemcpyAsync(recv_host, counts_recv_.get(), M * S * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream_),
      "id counts: cudaMemcpyAsync");
  SS_TRY(waitStream("id counts"));
  std::vector<std::vector<std::uint32_t>> recv_ids(M, std::vector<std::uint32_t>(S));
  for (std::uint32_t s = 0; s < M; ++s)
    for (std::size_t i = 0; i < S; ++i) recv_ids[s][i] = recv_host[s * S + i];
  const IdExchange x = makeIdExchange(layout_, send_blocks_, recv_ids);
  SS_TRY(served_ids_.reserve(x.recv_id_total, "served ids"));
  SS_TRY(allToAllV(send_arena_.get(), x.length_send, served_lengths_.get(), x.length_recv, ncclUint32, grid_.sharding(),
                   me, stream_));
  SS_TRY(
      allToAllV(send_arena_.get(), x.id_send, served_ids_.get(), x.id_recv, ncclUint32, grid_.sharding(), me, stream_));
  SS_TRY(lengthsToOffsets(served_lengths_.get(), static_cast<std::uint32_t>(S * M * cfg_.batch), served_offsets_.get(),
                          scan_, stream_));
  step_lookups_ += static_cast<std::int64_t>(x.recv_id_total);
  served_id_total_ = static_cast<std::uint32_t>(x.recv_id_total);
  // Per served shard, the lookups it serves this step (for the per-table shares of the batched launch).
  for (std::size_t i = 0; i < S; ++i) {
    std::int64_t n = 0;
    for (std::uint32_t s = 0; s < M; ++s) n += recv_ids[s][i];
    step_shard_lookups_[layout_.served[i]] = n;
  }
  const std::int64_t bytes = peerBytes(x.length_send, x.length_recv, me, 4) + peerBytes(x.id_send, x.id_recv, me, 4) +
                             peerBytes(count_send, count_recv, me, 4);
  return endPhase(Phase::A2aIds, bytes, true, names_.sharding, static_cast<int>(M) - 1);
}

// emb_fwd: one batched launch over the served shards, one over the data-parallel ones.
core::Status CudaRank::forward() {
  SS_TRY(beginPhase(Phase::EmbFwd));
  const std::uint32_t B = cfg_.batch, M = layout_.group_size;
  const auto S = static_cast<std::uint32_t>(layout_.served.size()), D = static_cast<std::uint32_t>(layout_.dp.size());
  if (S > 0) {
    const DeviceBags bags{served_offsets_.get(), served_ids_.get(), S * M * B, served_id_total_};
    SS_TRY(cuda::forward(tables_, served_layout_, bags, Pooling::Sum, served_out_.get(), served_ws_, stream_));
  }
  if (D > 0) {
    const DeviceBags bags{dp_offsets_.get(), dp_ids_.get(), D * B, dp_id_total_};
    SS_TRY(cuda::forward(tables_, dp_layout_, bags, Pooling::Sum, pooled_.get(), dp_ws_, stream_));
  }
  return endPhase(Phase::EmbFwd, step_lookups_);
}

// a2a_pooled: partial (row-wise) or column slices (column-wise) back to the sample owners, summed there.
core::Status CudaRank::exchangePooled() {
  SS_TRY(beginPhase(Phase::A2aPooled));
  SS_TRY(allToAllV(served_out_.get(), layout_.pooled_send, pooled_recv_.get(), layout_.pooled_recv, ncclFloat32,
                   grid_.sharding(), layout_.me, stream_));
  SS_TRY(combinePooled(pooled_recv_.get(), pooled_.get(), combine_args_, stream_));
  return endPhase(Phase::A2aPooled, peerBytes(layout_.pooled_send, layout_.pooled_recv, layout_.me, 4), true,
                  names_.sharding, static_cast<int>(layout_.group_size) - 1);
}

// dense: the stand-in GEMMs, then d(loss)/d(pooled) against the CPU engine's per-sample targets.
core::Status CudaRank::denseStep(std::uint64_t first) {
  SS_TRY(beginPhase(Phase::Dense));
  if (dense_n_ > 0)
    SS_TRY(denseStandIn(dense_a_.get(), dense_b_.get(), dense_c_.get(), dense_n_, dense_reps_, stream_));
  LossArgs args = loss_args_;
  args.first_sample = first;
  SS_TRY(lossGradient(pooled_.get(), grad_.get(), args, stream_));
  const double flops = 2.0 * dense_n_ * dense_n_ * static_cast<double>(dense_n_) * static_cast<double>(dense_reps_);
  return endPhase(Phase::Dense, static_cast<std::int64_t>(flops / 1000));
}

// a2a_grads: each owner's B x cols gradient slices to the shards' holders (the pooled blocks reversed).
core::Status CudaRank::exchangeGradients() {
  SS_TRY(beginPhase(Phase::A2aGrads));
  const std::uint32_t B = cfg_.batch;
  for (const CombineBlock& b : layout_.combine) {
    const std::uint32_t dim = model_.tables[b.table].dim;
    SS_CUDA(cudaMemcpy2DAsync(grad_send_.get() + b.source_offset, b.cols * sizeof(float),
                              grad_.get() + layout_.table_offset[b.table] + b.col_offset, dim * sizeof(float),
                              b.cols * sizeof(float), B, cudaMemcpyDeviceToDevice, stream_),
            "gradient blocks: cudaMemcpy2DAsync");
  }
  SS_TRY(allToAllV(grad_send_.get(), layout_.pooled_recv, served_grad_.get(), layout_.pooled_send, ncclFloat32,
                   grid_.sharding(), layout_.me, stream_));
  return endPhase(Phase::A2aGrads, peerBytes(layout_.pooled_send, layout_.pooled_recv, layout_.me, 4), true,
                  names_.sharding, static_cast<int>(layout_.group_size) - 1);
}

// emb_bwd: one batched backward + fused row-wise AdaGrad over the served shards.
core::Status CudaRank::backward() {
  if (layout_.served.empty()) return core::Ok{};
  SS_TRY(beginPhase(Phase::EmbBwd));
  const auto S = static_cast<std::uint32_t>(layout_.served.size());
  const DeviceBags bags{served_offsets_.get(), served_ids_.get(), S * layout_.group_size * cfg_.batch,
                        served_id_total_};
  SS_TRY(backwardAdagrad(tables_, served_layout_, bags, Pooling::Sum, served_grad_.get(), cfg_.adagrad, served_ws_,
                         stream_, &counts_[0]));
  return endPhase(Phase::EmbBwd, 0);
}

// Data-parallel tables: dense row gradients from the own samples, summed over
// the sharding group, then every member applies the same update (identity bags).
core::Status CudaRank::dataParallelBackward() {
  if (layout_.dp.empty()) return core::Ok{};
  const std::uint32_t B = cfg_.batch;
  const auto& mine = group_shards_[grid_.groupRank()];
  SS_TRY(beginPhase(Phase::EmbBwd));
  SS_CUDA(cudaMemsetAsync(dp_grad_.get(), 0, std::max<std::size_t>(dp_grad_floats_, 1) * sizeof(float), stream_),
          "data-parallel gradients: cudaMemsetAsync");
  for (std::size_t j = 0; j < layout_.dp.size(); ++j) {
    const RankShard& rs = mine[layout_.dp[j]];
    SS_TRY(accumulateRowGradients(dp_offsets_.get() + j * B, dp_ids_.get(), B,
                                  grad_.get() + layout_.table_offset[rs.table], model_.tables[rs.table].dim,
                                  rs.shard.cols, dp_grad_.get() + dp_grad_offset_[j], stream_));
  }
  SS_TRY(endPhase(Phase::EmbBwd, 0));
  if (layout_.group_size > 1) {
    SS_TRY(beginPhase(Phase::DpAllreduce));
    SS_TRY(allReduce(dp_grad_.get(), dp_grad_floats_, ncclFloat32, ncclSum, grid_.sharding(), stream_));
    SS_TRY(endPhase(Phase::DpAllreduce, static_cast<std::int64_t>(dp_grad_floats_ * sizeof(float)), true,
                    names_.sharding, static_cast<int>(layout_.group_size) - 1));
  }
  SS_TRY(beginPhase(Phase::EmbBwd));
  std::uint32_t rows = 0;
  for (std::size_t j : layout_.dp) rows += static_cast<std::uint32_t>(mine[j].physical_rows);
  const DeviceBags bags{identity_offsets_.get(), identity_ids_.get(), rows, rows};
  SS_TRY(backwardAdagrad(tables_, dp_update_layout_, bags, Pooling::Sum, dp_grad_.get(), cfg_.adagrad, dp_update_ws_,
                         stream_, &counts_[1]));
  return endPhase(Phase::EmbBwd, 0);
}

// dense_allreduce: the MLP's gradients over the world.
core::Status CudaRank::denseAllreduce() {
  const auto params = static_cast<std::size_t>(model_.dense.parameters);
  if (grid_.worldSize() < 2 || params == 0) return core::Ok{};
  SS_TRY(beginPhase(Phase::DenseAllreduce));
  SS_TRY(allReduce(dense_params_.get(), params, ncclFloat32, ncclSum, grid_.world(), stream_));
  return endPhase(Phase::DenseAllreduce, static_cast<std::int64_t>(params * sizeof(float)), true, names_.world,
                  static_cast<int>(grid_.worldSize()) - 1);
}

// replica_sync: weights and momentum averaged over the replica group (NCCL's average, in the weights' type).
core::Status CudaRank::replicaSync() {
  SS_TRY(beginPhase(Phase::ReplicaSync));
  std::int64_t bytes = 0;
  for (std::size_t k = 0; k < tables_.count(); ++k) {
    const DeviceShardSpec& s = tables_.spec(k);
    const std::size_t n = tables_.weightBytes(k) / elementBytes(s.type);
    SS_TRY(allReduce(tables_.weights(k), n, ncclWeightType(s.type), ncclAvg, grid_.replica(), stream_));
    SS_TRY(allReduce(tables_.momentum(k), s.rows, ncclFloat32, ncclAvg, grid_.replica(), stream_));
    bytes += static_cast<std::int64_t>(tables_.weightBytes(k) + s.rows * sizeof(float));
  }
  return endPhase(Phase::ReplicaSync, bytes, true, names_.replica, static_cast<int>(grid_.replicas()) - 1);
}

// Spans from the phase events; per-table time is the batched launches'
// share by lookups (one launch serves every table), unique rows the kernel's own count per shard.
core::Status CudaRank::recordStep(std::int64_t host_start) {
  std::int64_t fwd = 0, bwd = 0, dense = 0, comm = 0, end_ns = 0;
  const auto rank = static_cast<int>(grid_.rank());
  for (const PhaseMark& m : marks_) {
    float a = 0, b = 0;
    SS_CUDA(cudaEventElapsedTime(&a, step_begin_, m.begin), "cudaEventElapsedTime");
    SS_CUDA(cudaEventElapsedTime(&b, step_begin_, m.end), "cudaEventElapsedTime");
    const std::int64_t s0 = host_start + static_cast<std::int64_t>(static_cast<double>(a) * 1e6);
    const std::int64_t s1 = host_start + static_cast<std::int64_t>(static_cast<double>(b) * 1e6);
    end_ns = std::max(end_ns, s1);
    const std::int64_t d = s1 - s0;
    if (m.phase == Phase::EmbFwd) fwd += d;
    if (m.phase == Phase::EmbBwd) bwd += d;
    if (m.phase == Phase::Dense) dense += d;
    if (m.collective) comm += d;
    if (step_ < 0) continue;
    const auto kind = names_.phase[static_cast<std::uint32_t>(m.phase)];
    const std::uint32_t name =
        m.collective ? (m.phase == Phase::A2aIds || m.phase == Phase::A2aPooled || m.phase == Phase::A2aGrads
                            ? names_.all_to_all
                            : names_.all_reduce)
                     : (m.phase == Phase::EmbFwd || m.phase == Phase::EmbBwd ? names_.tbe : kind);
    rec_.span({rank, m.collective ? kCommStream : kComputeStream, kind, name, 0, s0, s1, step_, m.bytes});
    if (m.collective) {
      TraceRecorder::CollectiveRec c{rank, step_, name, m.group, m.bytes, m.peers, s0, s1};
      if (m.phase == Phase::ReplicaSync) {  // by phase: the groups' rank lists can coincide (N = 1)
        c.process_group = names_.pg_replica;
        c.seq = seq_replica_++;
      } else if (m.phase == Phase::DenseAllreduce) {
        c.process_group = names_.pg_world;
        c.seq = seq_world_++;
      } else {
        c.process_group = names_.pg_sharding;
        c.seq = seq_sharding_++;
      }
      rec_.collective(c);
    }
  }
  last_step_ms_ = static_cast<double>(end_ns - host_start) / 1e6;
  if (step_ < 0) return core::Ok{};
  rec_.span({rank, kComputeStream, names_.step, names_.step, 0, host_start, end_ns, step_, 0});
  rec_.stepSummary({step_, rank, fwd, bwd, dense, comm, 0, end_ns - host_start});
  // Shares of the batched launches by this step's lookups per shard.
  std::int64_t total = 0;
  for (std::int64_t n : step_shard_lookups_) total += n;
  for (std::size_t k = 0; k < step_shard_lookups_.size(); ++k) lookups_[k] += step_shard_lookups_[k];
  for (std::size_t k = 0; k < step_shard_lookups_.size() && total > 0; ++k) {
    const double share = static_cast<double>(step_shard_lookups_[k]) / static_cast<double>(total);
    fwd_ns_[k] = static_cast<std::int64_t>(share * static_cast<double>(fwd)) + fwd_ns_[k];
    bwd_ns_[k] = static_cast<std::int64_t>(share * static_cast<double>(bwd)) + bwd_ns_[k];
  }
  // Distinct rows the served shards' backward updated, per shard (the kernel counts them). Data-parallel
  // shards run their update over every row (identity bags), so no count of theirs says what was looked up.
  const auto& unique = counts_[0].shard_unique_rows;
  for (std::size_t k = 0; k < unique.size() && k < unique_.size(); ++k)
    unique_[k] += static_cast<std::int64_t>(unique[k]);
  return core::Ok{};
}

void CudaRank::writeTableStats() {
  const auto& mine = group_shards_[grid_.groupRank()];
  for (std::size_t k = 0; k < mine.size(); ++k)
    rec_.tableStat(static_cast<int>(grid_.rank()), names_.table[mine[k].table], lookups_[k], unique_[k],
                   fwd_ns_[k] + bwd_ns_[k]);
}

void CudaRank::resetCounters() {
  std::fill(fwd_ns_.begin(), fwd_ns_.end(), 0);
  std::fill(bwd_ns_.begin(), bwd_ns_.end(), 0);
  std::fill(lookups_.begin(), lookups_.end(), 0);
  std::fill(unique_.begin(), unique_.end(), 0);
}

core::Result<std::vector<std::uint64_t>> CudaRank::digests() const {
  std::vector<std::uint64_t> out;
  for (std::size_t k = 0; k < tables_.count(); ++k) {
    const DeviceShardSpec& s = tables_.spec(k);
    if (s.type == DeviceWeightType::BF16) {
      out.push_back(0);
      continue;
    }
    EmbeddingShard host(s.rows, s.dim, s.type == DeviceWeightType::F32 ? WeightType::F32 : WeightType::F16);
    SS_TRY(tables_.download(k, host));
    out.push_back(host.digest());
  }
  return out;
}

}  // namespace shardscope::profiler::cuda
