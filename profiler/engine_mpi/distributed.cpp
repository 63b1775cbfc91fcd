// The distributed engine: one MPI process per rank of a plan. Rank 0 reads
// the inputs and broadcasts them, every rank builds its communicators and
// shards, runs warm-up and measured steps (docs/engine-distributed.md has the
// step and the message layouts), and at the end rank 0 collects every rank's
// trace, aligns the clocks and writes one run.
#include "shardscope/profiler/engine_mpi/distributed.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "shardscope/core/hash.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/time_text.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/trace/engine_run_config.h"
#include "shardscope/profiler/trace/engine_trace.h"
#include "shardscope/profiler/engine_mpi/mpi_groups.h"
#include "shardscope/profiler/engine/shard_inputs.h"
#include "shardscope/profiler/engine/thread_pool.h"
#include "shardscope/profiler/engine/workload.h"
#include "mpi_util.h"

namespace shardscope::profiler {

namespace {

using namespace mpi_util;

constexpr int kTagClock = 0x5301;
constexpr int kClockRounds = 16;

// ---- host facts --------------------------------------------------------------

// The engine's deterministic inputs and weights: one SplitMix64 step per value.
constexpr std::uint64_t mix64(std::uint64_t z) { return core::splitMix64(z); }

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

// ---- inputs ------------------------------------------------------------------

struct Inputs {
  core::ModelSpec model;
  core::ClusterSpec cluster;
  core::ShardPlan plan;
  std::string model_json, cluster_json, plan_json;
  std::string plan_source;
};

// Rank 0 only: reads (or plans) the inputs and renders them as JSON text.
core::Result<Inputs> loadOnRoot(const DistributedConfig& c) {
  Inputs in;
  auto model = core::loadModelByNameOrFile(c.model);
  if (!model) return model.error();
  auto cluster = core::loadClusterByNameOrFile(c.cluster);
  if (!cluster) return cluster.error();
  in.model = std::move(model).value();
  in.cluster = std::move(cluster).value();
  if (c.grid > 0) {
    const std::uint32_t n = in.cluster.worldSize();
    if (n == 0 || n % c.grid != 0) {
      std::ostringstream m;
      m << "--grid " << c.grid << ": expected a divisor of the cluster's " << n << " GPUs (" << c.cluster << ")";
      return core::Error{m.str()};
    }
    planner::SweepOptions options;
    options.only_group_size = c.grid;
    options.sync_interval = std::max<std::uint32_t>(1, c.sync_interval);
    const planner::SweepResult r = planner::sweep(in.model, in.cluster, nullptr, core::Constraints{}, options);
    if (r.grids.empty()) return core::Error{"--grid: the planner returned no grid"};
    const planner::GridResult* g = r.best() != nullptr ? r.best() : &r.grids.front();
    if (!g->fits)
      std::cerr << "warning: the planned grid M=" << c.grid << " does not fit the cluster's memory; running it anyway\n";
    in.plan = g->plan;
    in.plan_source = std::string("<planned for --grid ") += std::to_string(c.grid) + ">";
  } else {
    auto plan = core::loadPlan(c.plan);
    if (!plan) return plan.error();
    in.plan = std::move(plan).value();
    in.plan_source = c.plan;
    if (in.cluster.worldSize() != in.plan.world_size)
      std::cerr << "warning: cluster " << in.cluster.name << " has " << in.cluster.worldSize()
                << " GPUs, the plan " << in.plan.world_size << "; the run records both as given\n";
  }
  in.model_json = core::toJson(in.model).dump();
  in.cluster_json = core::toJson(in.cluster).dump();
  in.plan_json = core::toJson(in.plan).dump();
  return in;
}

// Every rank: the inputs as rank 0 read them (one source of truth, so that a
// file that differs between nodes cannot make ranks disagree).
core::Result<Inputs> broadcastInputs(MPI_Comm world, const DistributedConfig& c) {
  Inputs in;
  std::string error;
  if (rankOf(world) == 0) {
    auto r = loadOnRoot(c);
    if (r) in = std::move(r).value();
    else error = r.error().message;
  }
  bcastString(world, error, 0);
  if (!error.empty()) return core::Error{error};
  bcastString(world, in.model_json, 0);
  bcastString(world, in.cluster_json, 0);
  bcastString(world, in.plan_json, 0);
  bcastString(world, in.plan_source, 0);
  auto mj = core::parseJsonText(in.model_json, c.model);
  if (!mj) return mj.error();
  auto model = core::modelFromJson(*mj, c.model);
  if (!model) return model.error();
  auto cj = core::parseJsonText(in.cluster_json, c.cluster);
  if (!cj) return cj.error();
  auto cluster = core::clusterFromJson(*cj, c.cluster);
  if (!cluster) return cluster.error();
  auto pj = core::parseJsonText(in.plan_json, in.plan_source);
  if (!pj) return pj.error();
  auto plan = core::planFromJson(*pj, in.plan_source);
  if (!plan) return plan.error();
  in.model = std::move(model).value();
  in.cluster = std::move(cluster).value();
  in.plan = std::move(plan).value();
  return in;
}

// ---- the dense stand-in ------------------------------------------------------

// Square sgemm C = A x B repeated to the model's dense FLOPs per step: 128 x
// 128 blocks (three fit in L2) when there is enough work, one smaller square
// otherwise. Not a model of the MLP, just its cost.
class DenseStandIn {
 public:
  explicit DenseStandIn(double flops) {
    if (!(flops > 0)) return;
    constexpr double kBlockFlops = 2.0 * 128 * 128 * 128;
    if (flops >= kBlockFlops) {
      n_ = 128;
      reps_ = static_cast<std::uint64_t>(std::llround(flops / kBlockFlops));
    } else {
      n_ = std::max<std::size_t>(4, static_cast<std::size_t>(std::llround(std::cbrt(flops / 2))));
      reps_ = 1;
    }
    a_.resize(n_ * n_);
    b_.resize(n_ * n_);
    c_.resize(n_ * n_);
    for (std::size_t i = 0; i < a_.size(); ++i) {
      a_[i] = static_cast<float>(static_cast<double>(mix64(i) >> 40) / 16777216.0 - 0.5);
      b_[i] = static_cast<float>(static_cast<double>(mix64(i + a_.size()) >> 40) / 16777216.0 - 0.5);
    }
  }
  [[nodiscard]] double flops() const { return 2.0 * static_cast<double>(n_ * n_ * n_) * static_cast<double>(reps_); }

  void run(ThreadPool& pool) {
    const std::size_t n = n_;
    for (std::uint64_t r = 0; r < reps_; ++r) {
      pool.parallelFor(n, 8, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          float* __restrict c = c_.data() + i * n;
          std::fill(c, c + n, 0.0f);
          for (std::size_t k = 0; k < n; ++k) {
            const float aik = a_[i * n + k];
            const float* __restrict b = b_.data() + k * n;
            for (std::size_t j = 0; j < n; ++j) c[j] += aik * b[j];
          }
        }
      });
      sink_ += c_[r % c_.size()];
    }
  }
  [[nodiscard]] float sink() const { return sink_; }

 private:
  std::size_t n_ = 0;
  std::uint64_t reps_ = 0;
  std::vector<float> a_, b_, c_;
  float sink_ = 0;
};

// ---- one rank ------------------------------------------------------------------

struct Names {
  std::uint32_t step = 0, input = 0, emb_fwd = 0, emb_bwd = 0, a2a_ids = 0, a2a_pooled = 0, a2a_grads = 0,
                dense = 0, replica_sync = 0, dense_allreduce = 0, dp_allreduce = 0;
  std::uint32_t all_to_all = 0, all_reduce = 0;
  std::uint32_t sharding_group = 0, replica_group = 0, world_group = 0;
  std::vector<std::uint32_t> table;  // per model table
};

struct StepTotals {
  std::int64_t emb_fwd = 0, emb_bwd = 0, dense = 0, comm = 0;
};

class RankEngine {
 public:
  RankEngine(const Inputs& in, const DistributedConfig& cfg, MPI_Comm world, GridComms comms,
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

  // Allocates and initialises this rank's shards and every step buffer.
  void setup(const std::string& host) {
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

  // One training step. `measured` >= 0: recorded as that step; -1: warm-up.
  void step(std::uint64_t global_step, std::int64_t measured, bool sync) {
    TraceRecorder* rec = measured >= 0 ? &rec_ : nullptr;
    step_ = measured;
    StepTotals tot;
    const std::int64_t step_start = traceNowNs();
    const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
    const auto ms = static_cast<std::size_t>(m_);

    // input: this rank's samples per table, bucketed by the shard that serves them.
    std::int64_t t0 = traceNowNs();
    const std::uint64_t first = firstSampleOf(global_step, static_cast<std::uint32_t>(n_),
                                              static_cast<std::uint32_t>(rank_), batch_);
    std::int64_t generated = 0;
    for (std::size_t t = 0; t < batches_.size(); ++t) {
      if (!used_[t]) continue;
      batches_[t] = gen_.batch(t, first, batch_);
      generated += static_cast<std::int64_t>(batches_[t].ids.size());
    }
    packIds();
    for (std::size_t j = 0; j < dp_.size(); ++j) routeToShard(batches_[mine[dp_[j]].table], mine[dp_[j]], dp_bags_[j]);
    span(rec, kComputeStream, names_.input, names_.input, 0, t0, traceNowNs(), generated);

    // a2a_ids: counts, then ids; unpacked into one batch of M x B samples per served shard.
    t0 = traceNowNs();
    MPI_Alltoall(id_send_counts_.data(), 1, MPI_INT, id_recv_counts_.data(), 1, MPI_INT, comms_.sharding);
    displacements(id_send_counts_, id_send_displs_);
    displacements(id_recv_counts_, id_recv_displs_);
    id_recv_buf_.resize(static_cast<std::size_t>(id_recv_displs_.back() + id_recv_counts_.back()));
    MPI_Alltoallv(id_send_buf_.data(), id_send_counts_.data(), id_send_displs_.data(), MPI_UINT64_T,
                  id_recv_buf_.data(), id_recv_counts_.data(), id_recv_displs_.data(), MPI_UINT64_T,
                  comms_.sharding);
    const std::int64_t ids_mpi_end = traceNowNs();
    unpackIds();
    std::int64_t t1 = traceNowNs();
    const std::int64_t id_bytes = peerBytes(id_send_counts_, id_recv_counts_, 8) + 8 * (m_ - 1);
    span(rec, kCommStream, names_.a2a_ids, names_.all_to_all, 0, t0, t1, id_bytes);
    collective(rec, names_.all_to_all, names_.sharding_group, id_bytes, m_ - 1, t0, ids_mpi_end, tot);

    // lookups: every served shard over the M x B received bags; data-parallel tables over the own B.
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
      embeddingForward(weights_[k], dp_bags_[j].view(), Pooling::Sum, pooled_[t].data(), in_.model.tables[t].dim,
                       &pool_);
      const std::int64_t s1 = traceNowNs();
      account(rec, k, names_.emb_fwd, s0, s1, static_cast<std::int64_t>(dp_bags_[j].lookups()), tot.emb_fwd, fwd_ns_);
      lookups_[k] += static_cast<std::int64_t>(dp_bags_[j].lookups());
    }

    // a2a_pooled: partial (row-wise) or column slices (column-wise) back to the sample owners, summed there.
    t0 = traceNowNs();
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
                  pooled_recv_buf_.data(), pooled_recv_.data(), pooled_recv_displs_.data(), MPI_FLOAT,
                  comms_.sharding);
    const std::int64_t pooled_mpi_end = traceNowNs();
    combinePooled();
    t1 = traceNowNs();
    const std::int64_t pooled_bytes = peerBytes(pooled_send_, pooled_recv_, 4);
    span(rec, kCommStream, names_.a2a_pooled, names_.all_to_all, 0, t0, t1, pooled_bytes);
    collective(rec, names_.all_to_all, names_.sharding_group, pooled_bytes, m_ - 1, pooled_mpi, pooled_mpi_end, tot);

    // dense: the stand-in GEMMs, then d(loss)/d(pooled) of a squared error against per-sample targets.
    t0 = traceNowNs();
    dense_.run(pool_);
    lossGradient(first);
    t1 = traceNowNs();
    span(rec, kComputeStream, names_.dense, names_.dense, 0, t0, t1, static_cast<std::int64_t>(dense_.flops() / 1000));
    tot.dense += t1 - t0;

    // a2a_grads: each owner's B x cols gradient slices to the shards' holders.
    t0 = traceNowNs();
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
                  pooled_send_buf_.data(), pooled_send_.data(), pooled_send_displs_.data(), MPI_FLOAT,
                  comms_.sharding);
    const std::int64_t grads_mpi_end = traceNowNs();
    for (std::size_t s = 0; s < ms; ++s) {
      const float* in = pooled_send_buf_.data() + pooled_send_displs_[s];
      for (std::size_t i = 0; i < served_.size(); ++i) {
        const std::size_t block = std::size_t{batch_} * mine[served_[i]].shard.cols;
        std::memcpy(served_grad_[i].data() + s * block, in, block * sizeof(float));
        in += block;
      }
    }
    t1 = traceNowNs();
    span(rec, kCommStream, names_.a2a_grads, names_.all_to_all, 0, t0, t1, pooled_bytes);
    collective(rec, names_.all_to_all, names_.sharding_group, pooled_bytes, m_ - 1, grads_mpi, grads_mpi_end, tot);

    // backward + fused row-wise AdaGrad on every served shard.
    for (std::size_t i = 0; i < served_.size(); ++i) {
      const std::size_t k = served_[i];
      const std::int64_t s0 = traceNowNs();
      const BackwardStats st = embeddingBackwardAdagrad(weights_[k], served_bags_[i].view(), Pooling::Sum,
                                                        served_grad_[i].data(), mine[k].shard.cols, adagrad_,
                                                        workspace_, &pool_);
      const std::int64_t s1 = traceNowNs();
      account(rec, k, names_.emb_bwd, s0, s1, static_cast<std::int64_t>(st.unique_rows), tot.emb_bwd, bwd_ns_);
      unique_[k] += static_cast<std::int64_t>(st.unique_rows);
    }
    if (!dp_.empty()) dataParallelBackward(rec, tot);

    // dense all-reduce over the world (the MLP's gradients), chunked.
    if (n_ > 1 && !dense_params_.empty()) {
      t0 = traceNowNs();
      allreduceFloats(dense_params_.data(), dense_params_.size(), world_);
      t1 = traceNowNs();
      const auto bytes = static_cast<std::int64_t>(dense_params_.size() * sizeof(float));
      span(rec, kCommStream, names_.dense_allreduce, names_.all_reduce, 0, t0, t1, bytes);
      collective(rec, names_.all_reduce, names_.world_group, bytes, n_ - 1, t0, t1, tot);
    }

    if (sync && r_ > 1) replicaSync(rec, tot);

    const std::int64_t step_end = traceNowNs();
    if (rec != nullptr) {
      span(rec, kComputeStream, names_.step, names_.step, 0, step_start, step_end, 0);
      rec->stepSummary({measured, rank_, tot.emb_fwd, tot.emb_bwd, tot.dense, tot.comm, 0, step_end - step_start});
      step_ns_.push_back(step_end - step_start);
    }
  }

  // Per-(rank, table) totals over the measured steps, into the recorder.
  void writeTableStats() {
    const auto& mine = group_shards_[static_cast<std::size_t>(me_)];
    for (std::size_t k = 0; k < mine.size(); ++k)
      rec_.tableStat(rank_, names_.table[mine[k].table], lookups_[k], unique_[k], fwd_ns_[k] + bwd_ns_[k]);
  }

  // Measured counters start from zero after the warm-up.
  void resetCounters() {
    std::fill(fwd_ns_.begin(), fwd_ns_.end(), 0);
    std::fill(bwd_ns_.begin(), bwd_ns_.end(), 0);
    std::fill(lookups_.begin(), lookups_.end(), 0);
    std::fill(unique_.begin(), unique_.end(), 0);
  }

  [[nodiscard]] nlohmann::ordered_json summary() const {
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

  TraceRecorder& recorder() { return rec_; }

 private:
  void span(TraceRecorder* rec, int stream, std::uint32_t kind, std::uint32_t name, std::uint32_t table,
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

  void collective(TraceRecorder* rec, std::uint32_t op, std::uint32_t group, std::int64_t bytes, int peers,
                  std::int64_t start, std::int64_t end, StepTotals& tot) const {
    tot.comm += end - start;
    if (rec == nullptr) return;
    rec->collective({rank_, step_, op, group, bytes, peers, start, end});
  }

  // An emb_fwd / emb_bwd span of shard k, and its per-shard time.
  void account(TraceRecorder* rec, std::size_t k, std::uint32_t kind, std::int64_t s0, std::int64_t s1,
               std::int64_t bytes, std::int64_t& total, std::vector<std::int64_t>& per_shard) {
    const std::uint32_t table = names_.table[group_shards_[static_cast<std::size_t>(me_)][k].table];
    span(rec, kComputeStream, kind, table, table, s0, s1, bytes);
    total += s1 - s0;
    if (rec != nullptr) per_shard[k] += s1 - s0;
  }

  // Bytes that cross between ranks (the block a rank sends itself does not).
  [[nodiscard]] std::int64_t peerBytes(const std::vector<int>& send, const std::vector<int>& recv, int elem) const {
    std::int64_t n = 0;
    for (std::size_t d = 0; d < send.size(); ++d)
      if (static_cast<int>(d) != me_) n += static_cast<std::int64_t>(send[d]) + recv[d];
    return n * elem;
  }

  // Per destination group rank, per shard it serves: B lengths, then the ids
  // of those samples that fall in the shard's rows (global ids).
  void packIds() {
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

  void unpackIds() {
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

  // Sums the received partials into each sharded table's B x dim output.
  void combinePooled() {
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

  [[nodiscard]] bool isDataParallel(std::size_t table) const {
    for (const RankShard& s : group_shards_[static_cast<std::size_t>(me_)])
      if (s.table == table) return s.dataParallel();
    return false;
  }

  // grad = (pooled - target) / B with a target in [-1, 1) per (sample, table, column).
  void lossGradient(std::uint64_t first) {
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

  // Data-parallel tables: accumulate a dense per-row gradient from the own
  // samples, sum it over the sharding group, then every member applies the
  // same row-wise AdaGrad update (one bag per row), so the copies stay equal.
  void dataParallelBackward(TraceRecorder* rec, StepTotals& tot) {
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

  // Averages weights and momentum of every shard over the replica group:
  // fp32 in place; fp16 through an fp32 buffer, rounded back to nearest even.
  void replicaSync(TraceRecorder* rec, StepTotals& tot) {
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

  const Inputs& in_;
  const DistributedConfig& cfg_;
  MPI_Comm world_;
  GridComms comms_;
  std::vector<std::vector<RankShard>> group_shards_;  // per group rank
  int rank_, n_, m_, r_, me_;
  std::uint32_t batch_;
  ThreadPool pool_;
  WorkloadGenerator gen_;
  DenseStandIn dense_;
  TraceRecorder rec_;
  AdagradConfig adagrad_;
  BackwardWorkspace workspace_;
  Names names_;
  std::int64_t step_ = -1;

  std::vector<bool> used_;                       // per model table: some shard of the plan
  std::vector<EmbeddingShard> weights_;          // per own shard
  std::vector<std::size_t> served_, dp_;         // own shards: sharded / data-parallel
  std::vector<std::vector<std::size_t>> remote_; // per group rank: its sharded shards
  std::vector<Batch> batches_;                   // per table: own samples' ids
  std::vector<std::vector<float>> pooled_, grad_;  // per table: B x dim
  std::vector<Batch> served_batch_;
  std::vector<ShardBags> served_bags_, dp_bags_;
  std::vector<std::vector<float>> served_out_, served_grad_;  // M x B x cols
  std::vector<std::size_t> dp_offset_;
  std::vector<float> dp_grad_, dense_params_, sync_buf_;
  std::vector<std::uint32_t> dp_update_offsets_, dp_update_ids_;
  std::vector<std::uint64_t> id_send_buf_, id_recv_buf_;
  std::vector<int> id_send_counts_, id_recv_counts_, id_send_displs_, id_recv_displs_;
  std::vector<float> pooled_send_buf_, pooled_recv_buf_;
  std::vector<int> pooled_send_, pooled_recv_, pooled_send_displs_, pooled_recv_displs_;
  std::vector<std::int64_t> fwd_ns_, bwd_ns_, lookups_, unique_, step_ns_;
};

// Offsets of every rank's steady clock from rank 0's (rank i's clock minus
// rank 0's), from the ping-pong of least round-trip time. Rank 0 gets them all.
std::vector<std::int64_t> clockOffsets(MPI_Comm world) {
  const int n = sizeOf(world), me = rankOf(world);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(n), 0);
  MPI_Barrier(world);
  if (me == 0) {
    for (int peer = 1; peer < n; ++peer) {
      std::int64_t best_rtt = INT64_MAX, offset = 0;
      for (int round = 0; round < kClockRounds; ++round) {
        const std::int64_t t0 = traceNowNs();
        MPI_Send(&t0, 1, MPI_INT64_T, peer, kTagClock, world);
        std::int64_t theirs = 0;
        MPI_Recv(&theirs, 1, MPI_INT64_T, peer, kTagClock, world, MPI_STATUS_IGNORE);
        const std::int64_t t1 = traceNowNs();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          offset = theirs - (t0 + (t1 - t0) / 2);
        }
      }
      offsets[static_cast<std::size_t>(peer)] = offset;
    }
  } else {
    for (int round = 0; round < kClockRounds; ++round) {
      std::int64_t t = 0;
      MPI_Recv(&t, 1, MPI_INT64_T, 0, kTagClock, world, MPI_STATUS_IGNORE);
      t = traceNowNs();
      MPI_Send(&t, 1, MPI_INT64_T, 0, kTagClock, world);
    }
  }
  return offsets;
}

std::string configJson(const Inputs& in, const DistributedConfig& c, std::uint32_t batch, unsigned threads,
                       std::uint64_t budget, const std::vector<std::vector<RankShard>>& group_shards,
                       const std::vector<std::string>& hosts) {
  EngineRunConfig r;
  r.mode = "mpi";
  r.steps = c.steps;
  r.warmup = c.warmup;
  r.seed = c.seed;
  r.threads = threads;
  r.batch_size_per_gpu = batch;
  r.sync_interval = c.sync_interval;
  r.learning_rate = c.learning_rate;
  r.eps = AdagradConfig{}.eps;
  r.tracing = c.tracing;
  r.sharding_group_size = in.plan.sharding_group_size;
  r.replicas = in.plan.replicas;
  r.groups_measured = in.plan.replicas;
  r.ranks_measured.resize(in.plan.world_size);
  for (std::uint32_t i = 0; i < in.plan.world_size; ++i) r.ranks_measured[i] = i;
  r.world_size = in.plan.world_size;
  r.memory_budget_bytes = budget;
  for (std::size_t g = 0; g < group_shards.size(); ++g)
    for (const RankShard& s : group_shards[g])
      if (s.capped())
        r.capped.push_back({in.model.tables[s.table].name, static_cast<std::uint32_t>(g), s.shard.row_offset,
                            s.shard.col_offset, s.shard.rows, s.physical_rows});
  r.host = hosts.empty() ? std::string() : hosts.front();
  r.hosts = hosts;
  r.cpu = cpuName();
  return engineRunConfigJson(r);
}

// Ranks sharing this node (for the default thread count and memory budget).
int ranksOnNode(MPI_Comm world) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rankOf(world), MPI_INFO_NULL, &node);
  const int n = node == MPI_COMM_NULL ? 1 : sizeOf(node);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return std::max(1, n);
}

// Every rank's host name, on every rank.
std::vector<std::string> allHosts(MPI_Comm world, const std::string& mine) {
  constexpr int kLen = 256;
  std::vector<char> all(static_cast<std::size_t>(sizeOf(world)) * kLen, '\0');
  char buf[kLen] = {};
  std::strncpy(buf, mine.c_str(), kLen - 1);
  MPI_Allgather(buf, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, world);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < all.size(); i += kLen) out.emplace_back(all.data() + i);
  return out;
}

DistributedOutcome invalid(std::string message) {
  return {DistributedStatus::InvalidInput, std::move(message), 0};
}

}  // namespace

DistributedOutcome runDistributed(MPI_Comm world, const DistributedConfig& config, const std::atomic<bool>& cancel,
                                  std::ostream& out) {
  const int rank = rankOf(world), n = sizeOf(world);
  if (config.steps == 0) return invalid("--steps: expected at least 1 measured step");
  if (config.sync_interval == 0) return invalid("--sync-interval: expected at least 1");

  auto inputs = broadcastInputs(world, config);
  if (!inputs) return invalid(inputs.error().message);
  const Inputs& in = *inputs;
  if (in.plan.world_size != static_cast<std::uint32_t>(n)) {
    std::ostringstream m;
    m << in.plan_source << ": the plan is for world_size " << in.plan.world_size << " ranks (M=" << in.plan.sharding_group_size
      << " x R=" << in.plan.replicas << ") but MPI started " << n << " processes; launch with mpirun -np "
      << in.plan.world_size;
    return invalid(m.str());
  }
  const std::uint32_t batch = config.batch > 0 ? config.batch : in.model.batch_size_per_gpu;
  if (batch == 0) return invalid("--batch: expected at least 1 sample per rank");

  // Setup: communicators, shards (capped to a budget every rank agrees on, so
  // the copies a replica group averages have the same rows), buffers.
  const int local_ranks = ranksOnNode(world);
  const unsigned threads =
      config.threads > 0 ? config.threads
                         : std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(local_ranks));
  unsigned long long budget =
      config.memory_budget_bytes > 0 ? config.memory_budget_bytes : autoMemoryBudgetBytes() / static_cast<unsigned>(local_ranks);
  MPI_Allreduce(MPI_IN_PLACE, &budget, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, world);

  auto comms = makeGridComms(world, in.plan);
  if (!comms) return invalid(in.plan_source + ": " + comms.error().message);

  std::vector<std::vector<RankShard>> group_shards;
  std::string error;
  for (std::uint32_t g = 0; g < in.plan.sharding_group_size && error.empty(); ++g) {
    auto s = shardsOfRank(in.model, in.plan, g);
    if (!s) {
      error = in.plan_source + ": " + s.error().message;
      break;
    }
    applyMemoryBudget(*s, in.model, budget);
    group_shards.push_back(std::move(s).value());
  }
  if (!error.empty()) return invalid(error);  // the same on every rank: the plan is shared

  const std::string host = hostName();
  const std::vector<std::string> hosts = allHosts(world, host);
  std::optional<RankEngine> engine;
  try {
    engine.emplace(in, config, world, std::move(comms).value(), group_shards, batch, threads, config.tracing);
    engine->setup(host);
  } catch (const std::bad_alloc&) {
    error = std::string("rank ") += std::to_string(rank) + ": out of memory allocating shards and buffers (budget " +
                                    std::to_string(budget) + " bytes per process)";
  } catch (const std::exception& e) {
    error = std::string("rank ") += std::to_string(rank) + ": " + e.what();
  }
  error = agreeOnError(world, error);
  if (!error.empty()) return {DistributedStatus::Failed, error, 0};

  // Rank 0 begins the run before the first step, so a watcher sees it running.
  std::optional<core::store::RunWriter> writer;
  std::string begin_error;
  long long run_id = 0;
  if (rank == 0) {
    core::store::RunHeader header;
    header.kind = core::store::RunKind::Mpi;
    if (config.label.empty()) {
      std::ostringstream l;
      l << "mpi " << in.model.name << " M=" << in.plan.sharding_group_size << " R=" << in.plan.replicas;
      header.label = l.str();
    } else {
      header.label = config.label;
    }
    header.modelJson = in.model_json;
    header.clusterJson = in.cluster_json;
    header.planJson = in.plan_json;
    header.configJson = configJson(in, config, batch, threads, budget, group_shards, hosts);
    auto w = core::store::RunWriter::begin(config.store, header);
    if (w) {
      writer.emplace(std::move(w).value());
      run_id = static_cast<long long>(writer->run());
      out << "run " << run_id << std::endl;
    } else {
      begin_error = w.error().message;
    }
  }
  bcastString(world, begin_error, 0);
  if (!begin_error.empty()) return {DistributedStatus::Failed, begin_error, 0};
  MPI_Bcast(&run_id, 1, MPI_LONG_LONG, 0, world);

  // The steps. Ranks agree at every boundary whether to go on.
  const std::uint64_t total = std::uint64_t{config.warmup} + config.steps;
  bool cancelled = false;
  std::uint64_t measured_done = 0;
  for (std::uint64_t s = 0; s < total; ++s) {
    int stop = cancel.load() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, world);
    if (stop != 0) {
      cancelled = true;
      break;
    }
    const bool warm = s < config.warmup;
    const std::int64_t measured = warm ? -1 : static_cast<std::int64_t>(s - config.warmup);
    // Warm-up syncs once at its end (the sync path gets warmed, measuring starts
    // from agreeing replicas); measured step i syncs when (i + 1) % K == 0.
    const bool sync = warm ? s + 1 == config.warmup : (measured + 1) % config.sync_interval == 0;
    try {
      if (!warm && measured == 0) engine->resetCounters();
      engine->step(s, measured, sync);
    } catch (const std::exception& e) {
      std::cerr << "rank " << rank << ": step " << s << ": " << e.what() << "; aborting the job\n";
      if (writer) (void)writer->fail(std::string("rank 0: ") + e.what());
      MPI_Abort(world, 3);
    }
    if (!warm) ++measured_done;
    if (rank == 0 && config.progress) out << "progress " << (s + 1) << ' ' << total << std::endl;
  }
  if (measured_done > 0) engine->writeTableStats();

  // Collect: clocks aligned to rank 0's, then every rank's rows and summary.
  const std::vector<std::int64_t> offsets = clockOffsets(world);
  const std::string summary_text = engine->summary().dump();
  std::string flush_error;
  nlohmann::ordered_json ranks_json = nlohmann::ordered_json::array();
  if (rank == 0) {
    if (auto f = engine->recorder().flush(*writer); !f) flush_error = f.error().message;
    ranks_json.push_back(nlohmann::ordered_json::parse(summary_text));
    for (int peer = 1; peer < n; ++peer) {
      const std::vector<std::byte> bytes = recvBytes(world, peer);
      const std::vector<std::byte> summary = recvBytes(world, peer);
      ranks_json.push_back(nlohmann::ordered_json::parse(
          std::string(reinterpret_cast<const char*>(summary.data()), summary.size())));
      auto rec = TraceRecorder::deserialize(bytes);
      if (!rec) {
        if (flush_error.empty()) flush_error = std::string("rank ") += std::to_string(peer) + "'s trace: " + rec.error().message;
        continue;
      }
      rec->shift(-offsets[static_cast<std::size_t>(peer)]);
      if (auto f = rec->flush(*writer); !f && flush_error.empty()) flush_error = f.error().message;
    }
  } else {
    const std::vector<std::byte> bytes = engine->recorder().serialize();
    sendBytes(world, bytes.data(), bytes.size(), 0);
    sendBytes(world, summary_text.data(), summary_text.size(), 0);
  }

  DistributedOutcome outcome{DistributedStatus::Complete, {}, run_id};
  if (rank == 0) {
    if (!flush_error.empty()) {
      outcome = {DistributedStatus::Failed, "writing the run: " + flush_error, run_id};
      (void)writer->fail(outcome.message);
    } else if (cancelled) {
      outcome = {DistributedStatus::Cancelled, "cancelled", run_id};
      if (auto f = writer->fail("cancelled"); !f) outcome.message += " (and marking the run failed: " + f.error().message + ")";
    } else if (auto f = writer->finish(); !f) {
      outcome = {DistributedStatus::Failed, "finishing the run: " + f.error().message, run_id};
    }
    if (!config.summary_json.empty()) {
      nlohmann::ordered_json j;
      j["schema"] = "shardscope.engine-summary/1";
      j["run"] = run_id;
      j["status"] = outcome.status == DistributedStatus::Complete ? "complete"
                    : outcome.status == DistributedStatus::Cancelled ? "cancelled" : "failed";
      j["world_size"] = n;
      j["sharding_group_size"] = in.plan.sharding_group_size;
      j["replicas"] = in.plan.replicas;
      j["layout"] = core::toString(in.plan.layout);
      j["steps"] = config.steps;
      j["warmup"] = config.warmup;
      j["sync_interval"] = config.sync_interval;
      j["batch_size_per_gpu"] = batch;
      j["ranks"] = std::move(ranks_json);
      if (auto w = core::writeJsonFile(config.summary_json, j); !w && outcome.status == DistributedStatus::Complete)
        outcome = {DistributedStatus::Failed, w.error().message, run_id};
    }
  }
  int status = static_cast<int>(outcome.status);
  MPI_Bcast(&status, 1, MPI_INT, 0, world);
  outcome.status = static_cast<DistributedStatus>(status);
  bcastString(world, outcome.message, 0);
  return outcome;
}

}  // namespace shardscope::profiler
