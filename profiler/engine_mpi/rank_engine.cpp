#include "rank_engine.h"

#include <cstring>
#include <span>
#include <stdexcept>
#include <utility>

#include "mpi_util.h"

namespace shardscope::profiler::mpi_engine {

using namespace mpi_util;

namespace {

std::string hex64(std::uint64_t v) {
  char buf[17];
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    buf[i] = kDigits[v & 0xF];
    v >>= 4;
  }
  buf[16] = '\0';
  return buf;
}

}  // namespace

RankEngine::RankEngine(const Inputs& in, const DistributedConfig& cfg, MPI_Comm world, GridComms comms,
                       std::vector<std::vector<RankShard>> group_shards, std::uint32_t batch, unsigned threads,
                       bool tracing)
    : in_(in),
      cfg_(cfg),
      world_(world),
      comms_(std::move(comms)),
      group_shards_(std::move(group_shards)),
      rank_(rankOf(world)),
      n_(sizeOf(world)),
      m_(sizeOf(comms_.sharding)),
      r_(sizeOf(comms_.replica)),
      me_(rankOf(comms_.sharding)),
      batch_(batch),
      pool_(threads),
      gen_(in.model, cfg.seed),
      dense_(in.model.dense.flops_per_sample * batch),
      rec_(tracing) {
  adagrad_.learning_rate = cfg.learning_rate;
}

void RankEngine::setup(const std::string& host) {
  const std::size_t tables = in_.model.tables.size();
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  used_.assign(tables, false);
  for (const auto& g : group_shards_)
    for (const RankShard& s : g) used_[s.table] = true;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const RankShard& rs = mine[k];
    const core::TableSpec& spec = in_.model.tables[rs.table];
    EmbeddingShard shard(rs.physical_rows, rs.shard.cols,
                         spec.dtype == core::DType::FP32 ? WeightType::F32 : WeightType::F16);
    shard.initialize(cfg_.seed, rs.shard.row_offset, rs.shard.col_offset);
    weights_.push_back(std::move(shard));
    (rs.dataParallel() ? dp_ : served_).push_back(k);
  }
  remote_.resize(static_cast<std::size_t>(m_));
  for (std::size_t d = 0; d < remote_.size(); ++d)
    for (std::size_t k = 0; k < group_shards_[d].size(); ++k)
      if (!group_shards_[d][k].dataParallel()) remote_[d].push_back(k);

  batches_.resize(tables);
  pooled_.resize(tables);
  grad_.resize(tables);
  for (std::size_t t = 0; t < tables; ++t) {
    if (!used_[t]) continue;
    pooled_[t].resize(std::size_t{batch_} * in_.model.tables[t].dim);
    grad_[t].resize(pooled_[t].size());
  }
  served_batch_.resize(served_.size());
  served_bags_.resize(served_.size());
  served_out_.resize(served_.size());
  served_grad_.resize(served_.size());
  for (std::size_t i = 0; i < served_.size(); ++i) {
    const std::size_t cols = mine[served_[i]].shard.cols;
    served_out_[i].resize(std::size_t{batch_} * static_cast<std::size_t>(m_) * cols);
    served_grad_[i].resize(served_out_[i].size());
  }
  dp_bags_.resize(dp_.size());
  dp_offset_.resize(dp_.size());
  std::size_t dp_floats = 0;
  for (std::size_t j = 0; j < dp_.size(); ++j) {
    const RankShard& rs = mine[dp_[j]];
    dp_offset_[j] = dp_floats;
    dp_floats += rs.physical_rows * (std::size_t{rs.shard.cols} + 1);  // gradient rows, then a count per row
  }
  dp_grad_.resize(dp_floats);
  dense_params_.assign(static_cast<std::size_t>(in_.model.dense.parameters), 0.0f);

  // Pooled all-to-all: to source s, B x cols of every shard served; from
  // owner d, B x cols of each of its sharded shards. Gradients go the other way.
  const auto ms = static_cast<std::size_t>(m_);
  pooled_send_.assign(ms, 0);
  pooled_recv_.assign(ms, 0);
  std::size_t served_cols = 0;
  for (std::size_t k : served_) served_cols += mine[k].shard.cols;
  for (std::size_t d = 0; d < ms; ++d) {
    std::size_t cols = 0;
    for (std::size_t k : remote_[d]) cols += group_shards_[d][k].shard.cols;
    pooled_send_[d] = countOf(served_cols * batch_, "pooled all-to-all");
    pooled_recv_[d] = countOf(cols * batch_, "pooled all-to-all");
  }
  displacements(pooled_send_, pooled_send_displs_);
  displacements(pooled_recv_, pooled_recv_displs_);
  pooled_send_buf_.resize(served_cols * batch_ * ms);
  pooled_recv_buf_.resize(static_cast<std::size_t>(pooled_recv_displs_.back() + pooled_recv_.back()));
  id_send_counts_.assign(ms, 0);
  id_recv_counts_.assign(ms, 0);

  names_.step = rec_.name(span_kind::kStep);
  names_.input = rec_.name(span_kind::kInput);
  names_.emb_fwd = rec_.name(span_kind::kEmbFwd);
  names_.emb_bwd = rec_.name(span_kind::kEmbBwd);
  names_.a2a_ids = rec_.name(span_kind::kA2aIds);
  names_.a2a_pooled = rec_.name(span_kind::kA2aPooled);
  names_.a2a_grads = rec_.name(span_kind::kA2aGrads);
  names_.dense = rec_.name(span_kind::kDense);
  names_.replica_sync = rec_.name(span_kind::kReplicaSync);
  names_.dense_allreduce = rec_.name(span_kind::kDenseAllreduce);
  names_.dp_allreduce = rec_.name(span_kind::kDpAllreduce);
  names_.all_to_all = rec_.name("all_to_all");
  names_.all_reduce = rec_.name("all_reduce");
  const auto& plan = in_.plan;
  names_.sharding_group = rec_.name(joinRanks(plan.sharding_groups[static_cast<std::size_t>(comms_.sharding_group)]));
  names_.replica_group = rec_.name(joinRanks(plan.replica_groups[static_cast<std::size_t>(comms_.replica_group)]));
  std::vector<std::uint32_t> all(static_cast<std::size_t>(n_));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint32_t>(i);
  names_.world_group = rec_.name(joinRanks(all));
  names_.table.resize(tables);
  for (std::size_t t = 0; t < tables; ++t) names_.table[t] = rec_.name(in_.model.tables[t].name);
  rec_.rankInfo({rank_, host, -1, comms_.sharding_group, comms_.replica_group});
  fwd_ns_.assign(mine.size(), 0);
  bwd_ns_.assign(mine.size(), 0);
  lookups_.assign(mine.size(), 0);
  unique_.assign(mine.size(), 0);
}

void RankEngine::step(std::uint64_t global_step, std::int64_t measured, bool sync) {
  TraceRecorder* rec = measured >= 0 ? &rec_ : nullptr;
  step_ = measured;
  StepTotals tot;
  const std::int64_t step_start = traceNowNs();
  const std::uint64_t first =
      firstSampleOf(global_step, static_cast<std::uint32_t>(n_), static_cast<std::uint32_t>(rank_), batch_);
  generateInputs(rec, first);
  exchangeIds(rec, tot);
  forward(rec, tot);
  exchangePooled(rec, tot);
  denseStep(rec, tot, first);
  exchangeGradients(rec, tot);
  backward(rec, tot);
  if (!dp_.empty()) dataParallelBackward(rec, tot);
  denseAllreduce(rec, tot);
  if (sync && r_ > 1) replicaSync(rec, tot);

  const std::int64_t step_end = traceNowNs();
  if (rec != nullptr) {
    span(rec, kComputeStream, names_.step, names_.step, 0, step_start, step_end, 0);
    rec->stepSummary({measured, rank_, tot.emb_fwd, tot.emb_bwd, tot.dense, tot.comm, 0, step_end - step_start});
    step_ns_.push_back(step_end - step_start);
  }
}

// input: this rank's samples per table, bucketed by the shard that serves them.
void RankEngine::generateInputs(TraceRecorder* rec, std::uint64_t first) {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  const std::int64_t t0 = traceNowNs();
  std::int64_t generated = 0;
  for (std::size_t t = 0; t < batches_.size(); ++t) {
    if (!used_[t]) continue;
    batches_[t] = gen_.batch(t, first, batch_);
    generated += static_cast<std::int64_t>(batches_[t].ids.size());
  }
  packIds();
  for (std::size_t j = 0; j < dp_.size(); ++j) routeToShard(batches_[mine[dp_[j]].table], mine[dp_[j]], dp_bags_[j]);
  span(rec, kComputeStream, names_.input, names_.input, 0, t0, traceNowNs(), generated);
}

// a2a_ids: counts, then ids; unpacked into one batch of M x B samples per served shard.
void RankEngine::exchangeIds(TraceRecorder* rec, StepTotals& tot) {
  const std::int64_t t0 = traceNowNs();
  MPI_Alltoall(id_send_counts_.data(), 1, MPI_INT, id_recv_counts_.data(), 1, MPI_INT, comms_.sharding);
  displacements(id_send_counts_, id_send_displs_);
  displacements(id_recv_counts_, id_recv_displs_);
  id_recv_buf_.resize(static_cast<std::size_t>(id_recv_displs_.back() + id_recv_counts_.back()));
  MPI_Alltoallv(id_send_buf_.data(), id_send_counts_.data(), id_send_displs_.data(), MPI_UINT64_T, id_recv_buf_.data(),
                id_recv_counts_.data(), id_recv_displs_.data(), MPI_UINT64_T, comms_.sharding);
  const std::int64_t ids_mpi_end = traceNowNs();
  unpackIds();
  const std::int64_t t1 = traceNowNs();
  const std::int64_t id_bytes = peerBytes(id_send_counts_, id_recv_counts_, 8) + 8 * (m_ - 1);
  span(rec, kCommStream, names_.a2a_ids, names_.all_to_all, 0, t0, t1, id_bytes);
  collective(rec, names_.all_to_all, names_.sharding_group, id_bytes, m_ - 1, t0, ids_mpi_end, tot);
}

// lookups: every served shard over the M x B received bags; data-parallel tables over the own B.
void RankEngine::forward(TraceRecorder* rec, StepTotals& tot) {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  for (std::size_t i = 0; i < served_.size(); ++i) {
    const std::size_t k = served_[i];
    const std::int64_t s0 = traceNowNs();
    embeddingForward(weights_[k], served_bags_[i].view(), Pooling::Sum, served_out_[i].data(), mine[k].shard.cols,
                     &pool_);
    const std::int64_t s1 = traceNowNs();
    account(rec, k, names_.emb_fwd, s0, s1, static_cast<std::int64_t>(served_bags_[i].lookups()), tot.emb_fwd, fwd_ns_);
    lookups_[k] += static_cast<std::int64_t>(served_bags_[i].lookups());
  }
  for (std::size_t j = 0; j < dp_.size(); ++j) {
    const std::size_t k = dp_[j];
    const std::size_t t = mine[k].table;
    const std::int64_t s0 = traceNowNs();
    embeddingForward(weights_[k], dp_bags_[j].view(), Pooling::Sum, pooled_[t].data(), in_.model.tables[t].dim, &pool_);
    const std::int64_t s1 = traceNowNs();
    account(rec, k, names_.emb_fwd, s0, s1, static_cast<std::int64_t>(dp_bags_[j].lookups()), tot.emb_fwd, fwd_ns_);
    lookups_[k] += static_cast<std::int64_t>(dp_bags_[j].lookups());
  }
}

// a2a_pooled: partial (row-wise) or column slices (column-wise) back to the sample owners, summed there.
void RankEngine::exchangePooled(TraceRecorder* rec, StepTotals& tot) {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  const auto ms = static_cast<std::size_t>(m_);
  const std::int64_t t0 = traceNowNs();
  for (std::size_t s = 0; s < ms; ++s) {
    float* out = pooled_send_buf_.data() + pooled_send_displs_[s];
    for (std::size_t i = 0; i < served_.size(); ++i) {
      const std::size_t block = std::size_t{batch_} * mine[served_[i]].shard.cols;
      std::memcpy(out, served_out_[i].data() + s * block, block * sizeof(float));
      out += block;
    }
  }
  const std::int64_t pooled_mpi = traceNowNs();
  MPI_Alltoallv(pooled_send_buf_.data(), pooled_send_.data(), pooled_send_displs_.data(), MPI_FLOAT,
                pooled_recv_buf_.data(), pooled_recv_.data(), pooled_recv_displs_.data(), MPI_FLOAT, comms_.sharding);
  const std::int64_t pooled_mpi_end = traceNowNs();
  combinePooled();
  const std::int64_t t1 = traceNowNs();
  const std::int64_t pooled_bytes = peerBytes(pooled_send_, pooled_recv_, 4);
  span(rec, kCommStream, names_.a2a_pooled, names_.all_to_all, 0, t0, t1, pooled_bytes);
  collective(rec, names_.all_to_all, names_.sharding_group, pooled_bytes, m_ - 1, pooled_mpi, pooled_mpi_end, tot);
}

// dense: the stand-in GEMMs, then d(loss)/d(pooled) of a squared error against per-sample targets.
void RankEngine::denseStep(TraceRecorder* rec, StepTotals& tot, std::uint64_t first) {
  const std::int64_t t0 = traceNowNs();
  dense_.run(pool_);
  lossGradient(first);
  const std::int64_t t1 = traceNowNs();
  span(rec, kComputeStream, names_.dense, names_.dense, 0, t0, t1, static_cast<std::int64_t>(dense_.flops() / 1000));
  tot.dense += t1 - t0;
}

// a2a_grads: each owner's B x cols gradient slices to the shards' holders.
void RankEngine::exchangeGradients(TraceRecorder* rec, StepTotals& tot) {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  const auto ms = static_cast<std::size_t>(m_);
  const std::int64_t t0 = traceNowNs();
  for (std::size_t d = 0; d < ms; ++d) {
    float* out = pooled_recv_buf_.data() + pooled_recv_displs_[d];  // same layout as the pooled receive
    for (std::size_t k : remote_[d]) {
      const RankShard& rs = group_shards_[d][k];
      const std::size_t dim = in_.model.tables[rs.table].dim;
      const float* g = grad_[rs.table].data() + rs.shard.col_offset;
      for (std::uint32_t b = 0; b < batch_; ++b, out += rs.shard.cols)
        std::memcpy(out, g + b * dim, rs.shard.cols * sizeof(float));
    }
  }
  const std::int64_t grads_mpi = traceNowNs();
  MPI_Alltoallv(pooled_recv_buf_.data(), pooled_recv_.data(), pooled_recv_displs_.data(), MPI_FLOAT,
                pooled_send_buf_.data(), pooled_send_.data(), pooled_send_displs_.data(), MPI_FLOAT, comms_.sharding);
  const std::int64_t grads_mpi_end = traceNowNs();
  for (std::size_t s = 0; s < ms; ++s) {
    const float* in = pooled_send_buf_.data() + pooled_send_displs_[s];
    for (std::size_t i = 0; i < served_.size(); ++i) {
      const std::size_t block = std::size_t{batch_} * mine[served_[i]].shard.cols;
      std::memcpy(served_grad_[i].data() + s * block, in, block * sizeof(float));
      in += block;
    }
  }
  const std::int64_t t1 = traceNowNs();
  const std::int64_t pooled_bytes = peerBytes(pooled_send_, pooled_recv_, 4);
  span(rec, kCommStream, names_.a2a_grads, names_.all_to_all, 0, t0, t1, pooled_bytes);
  collective(rec, names_.all_to_all, names_.sharding_group, pooled_bytes, m_ - 1, grads_mpi, grads_mpi_end, tot);
}

// backward + fused row-wise AdaGrad on every served shard.
void RankEngine::backward(TraceRecorder* rec, StepTotals& tot) {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  for (std::size_t i = 0; i < served_.size(); ++i) {
    const std::size_t k = served_[i];
    const std::int64_t s0 = traceNowNs();
    const BackwardStats st =
        embeddingBackwardAdagrad(weights_[k], served_bags_[i].view(), Pooling::Sum, served_grad_[i].data(),
                                 mine[k].shard.cols, adagrad_, workspace_, &pool_);
    const std::int64_t s1 = traceNowNs();
    account(rec, k, names_.emb_bwd, s0, s1, static_cast<std::int64_t>(st.unique_rows), tot.emb_bwd, bwd_ns_);
    unique_[k] += static_cast<std::int64_t>(st.unique_rows);
  }
}

// dense all-reduce over the world (the MLP's gradients), chunked.
void RankEngine::denseAllreduce(TraceRecorder* rec, StepTotals& tot) {
  if (n_ > 1 && !dense_params_.empty()) {
    const std::int64_t t0 = traceNowNs();
    allreduceFloats(dense_params_.data(), dense_params_.size(), world_);
    const std::int64_t t1 = traceNowNs();
    const auto bytes = static_cast<std::int64_t>(dense_params_.size() * sizeof(float));
    span(rec, kCommStream, names_.dense_allreduce, names_.all_reduce, 0, t0, t1, bytes);
    collective(rec, names_.all_reduce, names_.world_group, bytes, n_ - 1, t0, t1, tot);
  }
}

void RankEngine::writeTableStats() {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  for (std::size_t k = 0; k < mine.size(); ++k)
    rec_.tableStat(rank_, names_.table[mine[k].table], lookups_[k], unique_[k], fwd_ns_[k] + bwd_ns_[k]);
}

void RankEngine::resetCounters() {
  std::fill(fwd_ns_.begin(), fwd_ns_.end(), 0);
  std::fill(bwd_ns_.begin(), bwd_ns_.end(), 0);
  std::fill(lookups_.begin(), lookups_.end(), 0);
  std::fill(unique_.begin(), unique_.end(), 0);
}

nlohmann::ordered_json RankEngine::summary() const {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  nlohmann::ordered_json j;
  j["rank"] = rank_;
  j["sharding_group"] = comms_.sharding_group;
  j["replica_group"] = comms_.replica_group;
  j["group_rank"] = me_;
  double total = 0;
  for (std::int64_t ns : step_ns_) total += static_cast<double>(ns);
  j["mean_step_ms"] = step_ns_.empty() ? 0.0 : total / static_cast<double>(step_ns_.size()) / 1e6;
  nlohmann::ordered_json shards = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const RankShard& rs = mine[k];
    shards.push_back({{"table", in_.model.tables[rs.table].name},
                      {"sharding_type", core::toString(rs.type)},
                      {"row_offset", rs.shard.row_offset},
                      {"col_offset", rs.shard.col_offset},
                      {"rows", rs.shard.rows},
                      {"cols", rs.shard.cols},
                      {"physical_rows", rs.physical_rows},
                      {"digest", hex64(weights_[k].digest())}});
  }
  j["shards"] = std::move(shards);
  j["dense_checksum"] = static_cast<double>(dense_.sink());
  return j;
}

void RankEngine::span(TraceRecorder* rec, int stream, std::uint32_t kind, std::uint32_t name, std::uint32_t table,
                      std::int64_t start, std::int64_t end, std::int64_t bytes) const {
  if (rec == nullptr) return;
  TraceRecorder::SpanRec s;
  s.rank = rank_;
  s.stream = stream;
  s.kind = kind;
  s.name = name;
  s.table = table;
  s.start_ns = start;
  s.end_ns = end;
  s.step = step_;
  s.bytes = bytes;
  rec->span(s);
}

void RankEngine::collective(TraceRecorder* rec, std::uint32_t op, std::uint32_t group, std::int64_t bytes, int peers,
                            std::int64_t start, std::int64_t end, StepTotals& tot) const {
  tot.comm += end - start;
  if (rec == nullptr) return;
  rec->collective({rank_, step_, op, group, bytes, peers, start, end});
}

void RankEngine::account(TraceRecorder* rec, std::size_t k, std::uint32_t kind, std::int64_t s0, std::int64_t s1,
                         std::int64_t bytes, std::int64_t& total, std::vector<std::int64_t>& per_shard) {
  const std::uint32_t table = names_.table[group_shards_[static_cast<std::size_t>(me_)][k].table];
  span(rec, kComputeStream, kind, table, table, s0, s1, bytes);
  total += s1 - s0;
  if (rec != nullptr) per_shard[k] += s1 - s0;
}

std::int64_t RankEngine::peerBytes(const std::vector<int>& send, const std::vector<int>& recv, int elem) const {
  std::int64_t n = 0;
  for (std::size_t d = 0; d < send.size(); ++d)
    if (static_cast<int>(d) != me_) n += static_cast<std::int64_t>(send[d]) + recv[d];
  return n * elem;
}

void RankEngine::packIds() {
  id_send_buf_.clear();
  std::size_t start = 0;
  for (std::size_t d = 0; d < remote_.size(); ++d) {
    for (std::size_t k : remote_[d]) {
      const RankShard& rs = group_shards_[d][k];
      const Batch& b = batches_[rs.table];
      const std::uint64_t lo = rs.shard.row_offset, rows = rs.shard.rows;
      const std::size_t len_at = id_send_buf_.size();
      id_send_buf_.resize(len_at + batch_);
      std::size_t pos = 0;
      for (std::uint32_t s = 0; s < batch_; ++s) {
        std::uint64_t n = 0;
        const std::size_t end = pos + b.lengths[s];
        for (; pos < end; ++pos) {
          const std::uint64_t id = b.ids[pos];
          if (id - lo < rows) {  // unsigned: ids below the range wrap and fail too
            id_send_buf_.push_back(id);
            ++n;
          }
        }
        id_send_buf_[len_at + s] = n;
      }
    }
    id_send_counts_[d] = countOf(id_send_buf_.size() - start, "ids all-to-all");
    start = id_send_buf_.size();
  }
}

void RankEngine::unpackIds() {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  for (Batch& b : served_batch_) {
    b.lengths.clear();
    b.ids.clear();
  }
  for (std::size_t s = 0; s < remote_.size(); ++s) {
    const std::uint64_t* p = id_recv_buf_.data() + id_recv_displs_[s];
    const std::uint64_t* const end = p + id_recv_counts_[s];
    for (std::size_t i = 0; i < served_.size(); ++i) {
      if (end - p < static_cast<std::ptrdiff_t>(batch_)) throw std::runtime_error("ids all-to-all: short message");
      Batch& b = served_batch_[i];
      std::uint64_t total = 0;
      for (std::uint32_t j = 0; j < batch_; ++j) {
        b.lengths.push_back(static_cast<std::uint32_t>(p[j]));
        total += p[j];
      }
      p += batch_;
      if (static_cast<std::uint64_t>(end - p) < total) throw std::runtime_error("ids all-to-all: short message");
      b.ids.insert(b.ids.end(), p, p + total);
      p += total;
    }
    if (p != end) throw std::runtime_error("ids all-to-all: message longer than its lengths say");
  }
  for (std::size_t i = 0; i < served_.size(); ++i) routeToShard(served_batch_[i], mine[served_[i]], served_bags_[i]);
}

void RankEngine::combinePooled() {
  for (std::size_t t = 0; t < pooled_.size(); ++t)
    if (used_[t] && !isDataParallel(t)) std::fill(pooled_[t].begin(), pooled_[t].end(), 0.0f);
  for (std::size_t d = 0; d < remote_.size(); ++d) {
    const float* in = pooled_recv_buf_.data() + pooled_recv_displs_[d];
    for (std::size_t k : remote_[d]) {
      const RankShard& rs = group_shards_[d][k];
      const std::size_t dim = in_.model.tables[rs.table].dim;
      float* out = pooled_[rs.table].data() + rs.shard.col_offset;
      for (std::uint32_t b = 0; b < batch_; ++b, in += rs.shard.cols)
        for (std::uint32_t c = 0; c < rs.shard.cols; ++c) out[b * dim + c] += in[c];
    }
  }
}

bool RankEngine::isDataParallel(std::size_t table) const {
  for (const RankShard& s : group_shards_[static_cast<std::size_t>(me_)])
    if (s.table == table) return s.dataParallel();
  return false;
}

void RankEngine::lossGradient(std::uint64_t first) {
  const float inv_b = 1.0f / static_cast<float>(batch_);
  for (std::size_t t = 0; t < pooled_.size(); ++t) {
    if (!used_[t]) continue;
    const std::size_t dim = in_.model.tables[t].dim;
    for (std::uint32_t b = 0; b < batch_; ++b) {
      const std::uint64_t key = mix64(cfg_.seed ^ mix64((first + b) * 0x100000001B3ULL + t));
      for (std::size_t c = 0; c < dim; ++c) {
        const float target = static_cast<float>(static_cast<double>(mix64(key + c) >> 40) / 8388608.0 - 1.0);
        grad_[t][b * dim + c] = (pooled_[t][b * dim + c] - target) * inv_b;
      }
    }
  }
}

void RankEngine::dataParallelBackward(TraceRecorder* rec, StepTotals& tot) {
  const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
  std::fill(dp_grad_.begin(), dp_grad_.end(), 0.0f);
  for (std::size_t j = 0; j < dp_.size(); ++j) {
    const std::size_t k = dp_[j];
    const RankShard& rs = mine[k];
    const std::size_t cols = rs.shard.cols, dim = in_.model.tables[rs.table].dim;
    const std::int64_t s0 = traceNowNs();
    float* g = dp_grad_.data() + dp_offset_[j];
    float* count = g + rs.physical_rows * cols;
    const Bags bags = dp_bags_[j].view();
    const std::vector<float>& go = grad_[rs.table];
    for (std::size_t b = 0; b < bags.count(); ++b)
      for (std::uint32_t i = bags.offsets[b]; i < bags.offsets[b + 1]; ++i) {
        const std::uint32_t row = bags.ids[i];
        for (std::size_t c = 0; c < cols; ++c) g[row * cols + c] += go[b * dim + c];
        count[row] += 1.0f;
      }
    const std::int64_t s1 = traceNowNs();
    account(rec, k, names_.emb_bwd, s0, s1, 0, tot.emb_bwd, bwd_ns_);
  }
  if (m_ > 1) {
    const std::int64_t t0 = traceNowNs();
    allreduceFloats(dp_grad_.data(), dp_grad_.size(), comms_.sharding);
    const std::int64_t t1 = traceNowNs();
    const auto bytes = static_cast<std::int64_t>(dp_grad_.size() * sizeof(float));
    span(rec, kCommStream, names_.dp_allreduce, names_.all_reduce, 0, t0, t1, bytes);
    collective(rec, names_.all_reduce, names_.sharding_group, bytes, m_ - 1, t0, t1, tot);
  }
  for (std::size_t j = 0; j < dp_.size(); ++j) {
    const std::size_t k = dp_[j];
    const RankShard& rs = mine[k];
    const std::int64_t s0 = traceNowNs();
    const float* g = dp_grad_.data() + dp_offset_[j];
    const float* count = g + rs.physical_rows * rs.shard.cols;
    dp_update_offsets_.resize(rs.physical_rows + 1);
    dp_update_ids_.clear();
    dp_update_offsets_[0] = 0;
    for (std::uint64_t r = 0; r < rs.physical_rows; ++r) {
      if (count[r] > 0) dp_update_ids_.push_back(static_cast<std::uint32_t>(r));
      dp_update_offsets_[r + 1] = static_cast<std::uint32_t>(dp_update_ids_.size());
    }
    const BackwardStats st = embeddingBackwardAdagrad(weights_[k], Bags{dp_update_offsets_, dp_update_ids_},
                                                      Pooling::Sum, g, rs.shard.cols, adagrad_, workspace_, &pool_);
    const std::int64_t s1 = traceNowNs();
    account(rec, k, names_.emb_bwd, s0, s1, static_cast<std::int64_t>(st.unique_rows), tot.emb_bwd, bwd_ns_);
    unique_[k] += static_cast<std::int64_t>(st.unique_rows);
  }
}

void RankEngine::replicaSync(TraceRecorder* rec, StepTotals& tot) {
  const std::int64_t t0 = traceNowNs();
  const float inv_r = 1.0f / static_cast<float>(r_);
  std::int64_t bytes = 0;
  for (EmbeddingShard& w : weights_) {
    if (w.type() == WeightType::F32) {
      const std::span<std::byte> raw = w.weightBytes();
      float* f = reinterpret_cast<float*>(raw.data());
      const std::size_t n = raw.size() / sizeof(float);
      allreduceFloats(f, n, comms_.replica);
      for (std::size_t i = 0; i < n; ++i) f[i] *= inv_r;
      bytes += static_cast<std::int64_t>(n * sizeof(float));
    } else {
      const std::span<std::byte> raw = w.weightBytes();
      auto* h = reinterpret_cast<std::uint16_t*>(raw.data());
      const std::size_t n = raw.size() / sizeof(std::uint16_t);
      for (std::size_t off = 0; off < n; off += kAllreduceChunk) {
        const std::size_t len = std::min(kAllreduceChunk, n - off);
        sync_buf_.resize(len);
        for (std::size_t i = 0; i < len; ++i) sync_buf_[i] = halfToFloat(h[off + i]);
        allreduceFloats(sync_buf_.data(), len, comms_.replica);
        for (std::size_t i = 0; i < len; ++i) h[off + i] = floatToHalf(sync_buf_[i] * inv_r);
      }
      bytes += static_cast<std::int64_t>(n * sizeof(float));
    }
    const std::span<float> mom = w.momentum();
    allreduceFloats(mom.data(), mom.size(), comms_.replica);
    for (float& v : mom) v *= inv_r;
    bytes += static_cast<std::int64_t>(mom.size() * sizeof(float));
  }
  const std::int64_t t1 = traceNowNs();
  span(rec, kCommStream, names_.replica_sync, names_.all_reduce, 0, t0, t1, bytes);
  collective(rec, names_.all_reduce, names_.replica_group, bytes, r_ - 1, t0, t1, tot);
}

}  // namespace shardscope::profiler::mpi_engine
