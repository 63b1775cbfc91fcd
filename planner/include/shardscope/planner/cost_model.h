// The cost model: predicted time of one embedding shard on a GPU (forward,
// backward with the fused optimizer update), the bytes it moves through the
// sharding group's all-to-alls, its memory, and the grid-wide collectives
// (replica weight sync, dense all-reduce). Every formula is in
// docs/cost-model.md; every constant comes from the ClusterSpec, a
// Calibration, or a documented default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/planner/access_profile.h"
#include "shardscope/planner/collectives.h"
#include "shardscope/planner/grid.h"

namespace shardscope::planner {

struct CostConstants {
  double embedding_bandwidth_gbps = 0;  // default: the GPU's HBM bandwidth (TorchRec prices lookups at HBM speed)
  double lookup_overhead_ns = 0.0;      // per looked-up id
  double kernel_overhead_us = 2.0;      // per shard and pass
  double backward_scale = 1.0;          // multiplier on the backward byte model
  double backward_lookup_ns = 0.0;      // per looked-up id, backward only (deduplication: sorting ids by row)
  double dim_penalty_narrow = 1.75;     // per-byte multiplier below 64 columns (TorchRec's)
  double dim_penalty_mid = 1.15;        // ... from 64 to 127 columns (TorchRec's)
  // A cache that keeps a shard's hottest rows resident (row order is
  // popularity order) and the extra time of each 64-byte line of a looked-up
  // row (forward) or an updated row (backward) outside them. 0: not modelled
  // (the default; a calibration fitted on CPUs sets both, docs/cost-model.md).
  double cache_bytes = 0.0;
  double cache_miss_ns = 0.0;
  double intra_node_bandwidth_gbps = 0;
  double intra_node_latency_us = 0;
  double inter_node_bandwidth_gbps = 0;  // one NIC (a rail)
  double inter_node_latency_us = 0;
  std::uint32_t nics_per_node = 0;  // 0: one per GPU
  bool nvls = false;
  bool sharp = false;
  double congestion_per_doubling = 0.0;
  // Per-op, per-link fits of measured calls (a calibration's
  // `{op}_{intra|inter}_node_busbw_gbps` and `..._latency_us`).
  CollectiveFit all_reduce_intra_fit, all_reduce_inter_fit, all_to_all_intra_fit, all_to_all_inter_fit;
  double dense_efficiency = 0.5;       // achieved share of peak dense TFLOP/s
  double hbm_reserve_fraction = 0.15;  // TorchRec keeps 15% of HBM free
  std::uint32_t sync_interval = 1;     // replica weight sync every k steps (TorchRec default 1)
  // Count each shard's share of the replica sync in the load the partitioner
  // balances (the step-time objective, the default; it changes nothing with one
  // replica). Off: load = compute + all-to-all only.
  bool balance_replica_sync = true;
  int index_bytes = 8;   // int64 ids
  int output_bytes = 4;  // fp32 pooled embeddings and their gradients

  // Cluster values, overridden by any coefficient the calibration carries.
  static CostConstants from(const core::ClusterSpec& cluster, const core::Calibration* calibration);
};

// Bytes of a rank (sent + received) one NCCL-tests all-to-all byte covers:
// 2 on GPUs (links are full duplex), 1 on CPU ranks (both directions are
// copies through the same memory).
[[nodiscard]] double allToAllDuplex(core::DeviceClass device);

// Cost of one shard (rows [row_offset, row_offset+rows) x cols columns of a
// table) on the rank that holds it, for one training step.
struct ShardCost {
  double fwd_ms = 0;
  double bwd_ms = 0;               // backward + fused optimizer update
  double comm_ms = 0;              // all-to-all bytes this shard makes its rank serve (ids in, pooled out, grads in)
  double ids = 0;                  // ids it looks up per step
  double unique_rows = 0;          // distinct rows it touches per step
  std::uint64_t memory_bytes = 0;  // weights + optimizer state
  std::uint64_t buffer_bytes = 0;  // all-to-all buffers for what it serves (ids in, pooled outputs out)
  double sync_ms = 0;              // its replica-sync share (bandwidth part, amortised), when balance_replica_sync
  // What the partitioner balances: everything this shard adds to its rank's step.
  [[nodiscard]] double load() const { return fwd_ms + bwd_ms + comm_ms + sync_ms; }
};

// Costs every rank pays regardless of placement.
struct GridCosts {
  double a2a_latency_ms = 0;  // three all-to-alls (ids, pooled fwd, grads bwd): latency part
  double a2a_own_ms = 0;      // bytes a rank sends/receives for its own samples
  double dense_compute_ms = 0;
  double dense_allreduce_ms = 0;
  CollectivePrice dense_allreduce;      // its algorithm and terms
  double seconds_per_byte_group = 0;    // effective all-to-all time per byte inside a sharding group
  double seconds_per_byte_replica = 0;  // ring all-reduce time per byte across replicas
  double replica_latency_ms = 0;
  std::uint64_t buffer_bytes = 0;  // all-to-all and KJT buffers every rank needs for its own samples
  std::uint64_t dense_reserve_bytes = 0;
  std::uint64_t hbm_capacity_bytes = 0;  // usable per rank: HBM x (1 - reserve) - dense reserve - buffers
};

// Weights + optimizer state of `rows` x `cols` of a table: what a shard keeps in HBM
// (CostModel::stateBytes without building a cost model).
[[nodiscard]] std::uint64_t stateBytesOf(const core::TableSpec& table, core::Optimizer optimizer, std::uint64_t rows,
                                         std::uint32_t cols);

class CostModel {
 public:
  CostModel(const core::ModelSpec& model, const core::ClusterSpec& cluster, CostConstants constants);

  [[nodiscard]] const CostConstants& constants() const { return k_; }
  [[nodiscard]] const core::ModelSpec& model() const { return model_; }
  [[nodiscard]] const core::ClusterSpec& cluster() const { return cluster_; }
  [[nodiscard]] const AccessProfile& access(std::size_t table) const { return profiles_[table]; }

  [[nodiscard]] GridCosts gridCosts(const Grid& grid) const;
  // The collective model of this cluster and these constants (collectives.h).
  [[nodiscard]] CollectivePricer collectives() const;

  // A model-parallel shard: serves the ids of all M x B samples of its group
  // that fall in its rows.
  [[nodiscard]] ShardCost shardCost(std::size_t table, std::uint64_t row_offset, std::uint64_t rows, std::uint32_t cols,
                                    const Grid& grid, const GridCosts& gc) const;
  // A data-parallel copy: each rank looks up its own B samples; the table's
  // gradients are all-reduced inside the sharding group.
  [[nodiscard]] ShardCost dataParallelCost(std::size_t table, const Grid& grid, const GridCosts& gc) const;
  // Ring all-reduce of `bytes` across the R replicas, amortised over the sync interval.
  [[nodiscard]] double replicaSyncMs(std::uint64_t bytes, const Grid& grid, const GridCosts& gc) const;
  // The bandwidth part of the replica sync for `state_bytes` (0 with one replica).
  [[nodiscard]] double syncShareMs(std::uint64_t state_bytes, const GridCosts& gc) const;
  // Bytes of weights + optimizer state for rows x cols of a table.
  [[nodiscard]] std::uint64_t stateBytes(std::size_t table, std::uint64_t rows, std::uint32_t cols) const;

 private:
  double bytesMs(double bytes, std::uint32_t cols) const;
  void addCacheMisses(ShardCost& c, std::size_t table, std::uint64_t row_offset, std::uint64_t rows, std::uint32_t cols,
                      double draws) const;

  core::ModelSpec model_;
  core::ClusterSpec cluster_;
  CostConstants k_;
  std::vector<AccessProfile> profiles_;
};

// Share of a shard's looked-up ids and of its distinct rows per step that
// fall outside the rows a cache of `cache_bytes` holds: its hottest
// floor(cache_bytes / row_bytes) rows, [row_offset, row_offset + resident).
// `draws` ids are drawn from the whole table per step.
struct CacheMissShare {
  double ids = 0.0;
  double unique_rows = 0.0;
};
// 64-byte cache lines of a row of `row_bytes` (what a miss costs, in units of cache_miss_ns).
[[nodiscard]] double cacheLines(double row_bytes);
[[nodiscard]] CacheMissShare cacheMissShare(const AccessProfile& profile, std::uint64_t row_offset, std::uint64_t rows,
                                            double row_bytes, double cache_bytes, double draws);

// What a prediction of `model` depends on, as compact JSON (plan.json's
// `predicted.inputs`): the model and cluster inline, every cost constant,
// the sync interval and the batch per GPU.
[[nodiscard]] std::string pricingInputsJson(const CostModel& model);

// TorchRec's dim penalty on narrow rows: 1.75 below 64, 1.15 below 128
// (the defaults); with constants, a calibration's values.
[[nodiscard]] double dimPenalty(std::uint32_t cols);
[[nodiscard]] double dimPenalty(std::uint32_t cols, double narrow, double mid);

}  // namespace shardscope::planner
