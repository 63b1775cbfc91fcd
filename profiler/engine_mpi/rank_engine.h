// One rank of the distributed engine: its shards, step buffers and
// communicators, and the training step (docs/engine-distributed.md has the
// step and its message layouts). Private to shardscope_engine_mpi.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "distributed_inputs.h"
#include "shardscope/core/hash.h"
#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/rank_stepper.h"
#include "shardscope/profiler/engine/shard_inputs.h"
#include "shardscope/profiler/engine/thread_pool.h"
#include "shardscope/profiler/engine/workload.h"
#include "shardscope/profiler/engine_mpi/distributed.h"
#include "shardscope/profiler/engine_mpi/mpi_groups.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler::mpi_engine {

// The engine's deterministic inputs and weights: one SplitMix64 step per value.
constexpr std::uint64_t mix64(std::uint64_t z) { return core::splitMix64(z); }

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
  std::uint32_t step = 0, input = 0, emb_fwd = 0, emb_bwd = 0, a2a_ids = 0, a2a_pooled = 0, a2a_grads = 0, dense = 0,
                replica_sync = 0, dense_allreduce = 0, dp_allreduce = 0;
  std::uint32_t all_to_all = 0, all_reduce = 0;
  std::uint32_t sharding_group = 0, replica_group = 0, world_group = 0;
  std::vector<std::uint32_t> table;  // per model table
};

struct StepTotals {
  std::int64_t emb_fwd = 0, emb_bwd = 0, dense = 0, comm = 0;
};

class RankEngine final : public RankStepper {
 public:
  RankEngine(const Inputs& in, const DistributedConfig& cfg, MPI_Comm world, GridComms comms,
             std::vector<std::vector<RankShard>> group_shards, std::uint32_t batch, unsigned threads, bool tracing);

  // Allocates and initialises this rank's shards and every step buffer.
  void setup(const std::string& host);

  // One training step. `measured` >= 0: recorded as that step; -1: warm-up.
  void step(std::uint64_t global_step, std::int64_t measured, bool sync) override;

  // Per-(rank, table) totals over the measured steps, into the recorder.
  void writeTableStats() override;

  // Measured counters start from zero after the warm-up.
  void resetCounters() override;

  [[nodiscard]] nlohmann::ordered_json summary() const override;

  TraceRecorder& recorder() override { return rec_; }
  [[nodiscard]] const WorkloadGenerator& workload() const override { return gen_; }

 private:
  // The phases of a step, in order (docs/engine-distributed.md).
  void generateInputs(TraceRecorder* rec, std::uint64_t first);
  void exchangeIds(TraceRecorder* rec, StepTotals& tot);
  void forward(TraceRecorder* rec, StepTotals& tot);
  void exchangePooled(TraceRecorder* rec, StepTotals& tot);
  void denseStep(TraceRecorder* rec, StepTotals& tot, std::uint64_t first);
  void exchangeGradients(TraceRecorder* rec, StepTotals& tot);
  void backward(TraceRecorder* rec, StepTotals& tot);
  void denseAllreduce(TraceRecorder* rec, StepTotals& tot);

  void span(TraceRecorder* rec, int stream, std::uint32_t kind, std::uint32_t name, std::uint32_t table,
            std::int64_t start, std::int64_t end, std::int64_t bytes) const;

  void collective(TraceRecorder* rec, std::uint32_t op, std::uint32_t group, std::int64_t bytes, int peers,
                  std::int64_t start, std::int64_t end, StepTotals& tot) const;

  // An emb_fwd / emb_bwd span of shard k, and its per-shard time.
  void account(TraceRecorder* rec, std::size_t k, std::uint32_t kind, std::int64_t s0, std::int64_t s1,
               std::int64_t bytes, std::int64_t& total, std::vector<std::int64_t>& per_shard);

  // Bytes that cross between ranks (the block a rank sends itself does not).
  [[nodiscard]] std::int64_t peerBytes(const std::vector<int>& send, const std::vector<int>& recv, int elem) const;

  // Per destination group rank, per shard it serves: B lengths, then the ids
  // of those samples that fall in the shard's rows (global ids).
  void packIds();

  void unpackIds();

  // Sums the received partials into each sharded table's B x dim output.
  void combinePooled();

  [[nodiscard]] bool isDataParallel(std::size_t table) const;

  // grad = (pooled - target) / B with a target in [-1, 1) per (sample, table, column).
  void lossGradient(std::uint64_t first);

  // Data-parallel tables: accumulate a dense per-row gradient from the own
  // samples, sum it over the sharding group, then every member applies the
  // same row-wise AdaGrad update (one bag per row), so the copies stay equal.
  void dataParallelBackward(TraceRecorder* rec, StepTotals& tot);

  // Averages weights and momentum of every shard over the replica group:
  // fp32 in place; fp16 through an fp32 buffer, rounded back to nearest even.
  void replicaSync(TraceRecorder* rec, StepTotals& tot);

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

  std::vector<bool> used_;                         // per model table: some shard of the plan
  std::vector<EmbeddingShard> weights_;            // per own shard
  std::vector<std::size_t> served_, dp_;           // own shards: sharded / data-parallel
  std::vector<std::vector<std::size_t>> remote_;   // per group rank: its sharded shards
  std::vector<Batch> batches_;                     // per table: own samples' ids
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

}  // namespace shardscope::profiler::mpi_engine
