// Formulas: docs/cost-model.md. Units: bytes, GB/s = 1e9 B/s, ms.
#include "shardscope/planner/cost_model.h"

#include <algorithm>
#include <cmath>

#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"

namespace shardscope::planner {

namespace {
constexpr double kMsPerSecond = 1e3;

int optimizerStateBytesPerRow(core::Optimizer o, std::uint32_t cols) {
  switch (o) {
    case core::Optimizer::SGD:
      return 0;
    case core::Optimizer::RowWiseAdagrad:
      return 4;  // one fp32 per row
    case core::Optimizer::Adam:
      return static_cast<int>(2 * 4 * cols);  // two fp32 moments per element
  }
  return 0;
}
}  // namespace

double dimPenalty(std::uint32_t cols, double narrow, double mid) {
  if (cols < 64) return narrow;
  if (cols < 128) return mid;
  return 1.0;
}

double dimPenalty(std::uint32_t cols) { return dimPenalty(cols, 1.75, 1.15); }

CostConstants CostConstants::from(const core::ClusterSpec& c, const core::Calibration* cal) {
  CostConstants k;
  k.embedding_bandwidth_gbps = c.gpu.hbm_bandwidth_gbps;
  k.intra_node_bandwidth_gbps = c.intra_node.bandwidth_gbps;
  k.intra_node_latency_us = c.intra_node.latency_us;
  k.inter_node_bandwidth_gbps = c.inter_node.bandwidth_gbps;
  k.inter_node_latency_us = c.inter_node.latency_us;
  k.nics_per_node = c.nicsPerNode();
  k.nvls = c.network.nvls;
  k.sharp = c.network.sharp;
  k.congestion_per_doubling = c.network.congestion_per_doubling;
  if (!cal) return k;
  auto take = [&](const char* name, double& field) {
    if (auto it = cal->coefficients.find(name); it != cal->coefficients.end()) field = it->second.value;
  };
  take("embedding_bandwidth_gbps", k.embedding_bandwidth_gbps);
  take("lookup_overhead_ns", k.lookup_overhead_ns);
  take("backward_lookup_ns", k.backward_lookup_ns);
  take("dim_penalty_narrow", k.dim_penalty_narrow);
  take("dim_penalty_mid", k.dim_penalty_mid);
  take("kernel_overhead_us", k.kernel_overhead_us);
  take("backward_scale", k.backward_scale);
  take("intra_node_bandwidth_gbps", k.intra_node_bandwidth_gbps);
  take("intra_node_latency_us", k.intra_node_latency_us);
  take("inter_node_bandwidth_gbps", k.inter_node_bandwidth_gbps);
  take("inter_node_latency_us", k.inter_node_latency_us);
  take("dense_efficiency", k.dense_efficiency);
  take("all_reduce_intra_node_busbw_gbps", k.all_reduce_intra_fit.busbw_gbps);
  take("all_reduce_intra_node_latency_us", k.all_reduce_intra_fit.latency_us);
  take("all_reduce_inter_node_busbw_gbps", k.all_reduce_inter_fit.busbw_gbps);
  take("all_reduce_inter_node_latency_us", k.all_reduce_inter_fit.latency_us);
  take("all_to_all_intra_node_busbw_gbps", k.all_to_all_intra_fit.busbw_gbps);
  take("all_to_all_intra_node_latency_us", k.all_to_all_intra_fit.latency_us);
  take("all_to_all_inter_node_busbw_gbps", k.all_to_all_inter_fit.busbw_gbps);
  take("all_to_all_inter_node_latency_us", k.all_to_all_inter_fit.latency_us);
  take("cache_bytes", k.cache_bytes);
  take("cache_miss_ns", k.cache_miss_ns);
  return k;
}

std::string pricingInputsJson(const CostModel& model) {
  const CostConstants& k = model.constants();
  nlohmann::ordered_json c;
  c["embedding_bandwidth_gbps"] = k.embedding_bandwidth_gbps;
  c["lookup_overhead_ns"] = k.lookup_overhead_ns;
  c["kernel_overhead_us"] = k.kernel_overhead_us;
  c["backward_scale"] = k.backward_scale;
  c["backward_lookup_ns"] = k.backward_lookup_ns;
  c["dim_penalty_narrow"] = k.dim_penalty_narrow;
  c["dim_penalty_mid"] = k.dim_penalty_mid;
  c["cache_bytes"] = k.cache_bytes;
  c["cache_miss_ns"] = k.cache_miss_ns;
  c["intra_node_bandwidth_gbps"] = k.intra_node_bandwidth_gbps;
  c["intra_node_latency_us"] = k.intra_node_latency_us;
  c["inter_node_bandwidth_gbps"] = k.inter_node_bandwidth_gbps;
  c["inter_node_latency_us"] = k.inter_node_latency_us;
  const std::pair<const char*, const CollectiveFit*> fits[] = {{"all_reduce_intra_node", &k.all_reduce_intra_fit},
                                                               {"all_reduce_inter_node", &k.all_reduce_inter_fit},
                                                               {"all_to_all_intra_node", &k.all_to_all_intra_fit},
                                                               {"all_to_all_inter_node", &k.all_to_all_inter_fit}};
  for (const auto& [name, fit] : fits) {
    if (fit->busbw_gbps <= 0) continue;
    c[std::string(name) + "_busbw_gbps"] = fit->busbw_gbps;
    c[std::string(name) + "_latency_us"] = fit->latency_us;
  }
  c["dense_efficiency"] = k.dense_efficiency;
  c["hbm_reserve_fraction"] = k.hbm_reserve_fraction;
  c["balance_replica_sync"] = k.balance_replica_sync;
  c["index_bytes"] = k.index_bytes;
  c["output_bytes"] = k.output_bytes;
  nlohmann::ordered_json j;
  j["sync_interval"] = std::max<std::uint32_t>(1, k.sync_interval);
  j["batch_size_per_gpu"] = model.model().batch_size_per_gpu;
  j["constants"] = std::move(c);
  j["model"] = core::toJson(model.model());
  j["cluster"] = core::toJson(model.cluster());
  return j.dump();
}

double cacheLines(double row_bytes) { return std::ceil(row_bytes / 64.0); }

CacheMissShare cacheMissShare(const AccessProfile& profile, std::uint64_t row_offset, std::uint64_t rows,
                              double row_bytes, double cache_bytes, double draws) {
  if (cache_bytes <= 0 || row_bytes <= 0 || rows == 0) return {};
  const double resident = std::floor(cache_bytes / row_bytes);
  if (resident >= static_cast<double>(rows)) return {};
  const std::uint64_t hot_end = row_offset + static_cast<std::uint64_t>(resident);
  const std::uint64_t end = row_offset + rows;
  CacheMissShare share;
  if (const double m = profile.mass(row_offset, end); m > 0)
    share.ids = std::clamp(1.0 - profile.mass(row_offset, hot_end) / m, 0.0, 1.0);
  if (const double u = profile.expectedUniqueRows(row_offset, end, draws); u > 0)
    share.unique_rows = std::clamp(1.0 - profile.expectedUniqueRows(row_offset, hot_end, draws) / u, 0.0, 1.0);
  return share;
}

CostModel::CostModel(const core::ModelSpec& model, const core::ClusterSpec& cluster, CostConstants constants)
    : model_(model), cluster_(cluster), k_(constants) {
  profiles_.reserve(model_.tables.size());
  for (const auto& t : model_.tables) profiles_.emplace_back(t.access, t.rows);
}

void CostModel::addCacheMisses(ShardCost& c, std::size_t table, std::uint64_t row_offset, std::uint64_t rows,
                               std::uint32_t cols, double draws) const {
  if (k_.cache_bytes <= 0 || k_.cache_miss_ns <= 0) return;
  const double row_bytes = static_cast<double>(cols) * core::dtypeBytes(model_.tables[table].dtype);
  const CacheMissShare miss = cacheMissShare(profiles_[table], row_offset, rows, row_bytes, k_.cache_bytes, draws);
  const double lines = cacheLines(row_bytes);
  c.fwd_ms += c.ids * miss.ids * lines * k_.cache_miss_ns / 1e6;
  c.bwd_ms += c.unique_rows * miss.unique_rows * lines * k_.cache_miss_ns / 1e6;
}

double CostModel::bytesMs(double bytes, std::uint32_t cols) const {
  return dimPenalty(cols, k_.dim_penalty_narrow, k_.dim_penalty_mid) * bytes / (k_.embedding_bandwidth_gbps * 1e9) *
         kMsPerSecond;
}

GridCosts CostModel::gridCosts(const Grid& grid) const {
  GridCosts gc;
  const double B = model_.batch_size_per_gpu;
  const CollectivePricer pricer = collectives();
  // What every rank sends and receives for its own B samples: ids out, pooled
  // embeddings in (fwd), their gradients out (bwd). Served bytes are per shard.
  double lookups = 0.0, dims = 0.0, state_bytes = 0.0;
  for (std::size_t t = 0; t < model_.tables.size(); ++t) {
    lookups += model_.tables[t].pooling.mean;
    dims += model_.tables[t].dim;
    state_bytes += static_cast<double>(stateBytes(t, model_.tables[t].rows, model_.tables[t].dim));
  }
  const double own_bytes = B * lookups * k_.index_bytes + 2.0 * B * dims * k_.output_bytes;
  // All-to-all inside the sharding group (three per step: ids, pooled fwd,
  // grads bwd). A rank's bytes are counted sent + received; links are full
  // duplex, so NCCL's time per buffer byte covers two of them (CPU ranks copy
  // both through memory: one each).
  const CollectivePrice a2a = pricer.allToAll(shapeOf(grid.worstShardingTopology(), grid.group_size), own_bytes / 3.0);
  gc.seconds_per_byte_group = a2a.ms_per_byte / kMsPerSecond / allToAllDuplex(cluster_.gpu.device);
  gc.a2a_latency_ms = 3.0 * a2a.latency_ms;
  gc.a2a_own_ms = own_bytes * gc.seconds_per_byte_group * kMsPerSecond;
  // Replica sync: all-reduce of each rank's weights and optimizer state over
  // its replica group, the algorithm chosen at a rank's mean share of the state.
  if (grid.replicas > 1) {
    const CollectivePrice sync = pricer.allReduce(shapeOf(grid.worstReplicaTopology(), grid.replicas),
                                                  state_bytes / std::max<std::uint32_t>(1, grid.group_size));
    gc.seconds_per_byte_replica = sync.ms_per_byte / kMsPerSecond;
    gc.replica_latency_ms = sync.latency_ms;
  }
  // Dense part: compute on B samples, gradient all-reduce over all N GPUs.
  gc.dense_compute_ms =
      model_.dense.flops_per_sample * B / (cluster_.gpu.peak_dense_tflops * 1e12 * k_.dense_efficiency) * kMsPerSecond;
  if (grid.world_size > 1) {
    const double bytes = static_cast<double>(model_.dense.parameters) * 4.0;
    gc.dense_allreduce = pricer.allReduce(worldShape(grid), bytes);
    gc.dense_allreduce_ms = gc.dense_allreduce.ms(bytes);
  }
  // Memory every rank needs besides embedding state: the KJT and all-to-all
  // buffers of its own samples (ids out, pooled outputs and gradients in; what
  // it serves is counted per shard), and dense weights, grads and optimizer.
  gc.buffer_bytes = core::toByteCount(own_bytes);
  gc.dense_reserve_bytes = model_.dense.parameters * 4ull * 6ull;
  const double usable = static_cast<double>(cluster_.gpu.hbm_bytes) * (1.0 - k_.hbm_reserve_fraction);
  const double left = usable - static_cast<double>(gc.dense_reserve_bytes) - static_cast<double>(gc.buffer_bytes);
  gc.hbm_capacity_bytes = core::toByteCount(left);
  return gc;
}

double allToAllDuplex(core::DeviceClass device) { return device == core::DeviceClass::Cpu ? 1.0 : 2.0; }

CollectivePricer CostModel::collectives() const {
  return CollectivePricer(k_, cluster_.gpus_per_node, cluster_.gpu.device);
}

std::uint64_t stateBytesOf(const core::TableSpec& table, core::Optimizer optimizer, std::uint64_t rows,
                           std::uint32_t cols) {
  return rows * (static_cast<std::uint64_t>(cols) * core::dtypeBytes(table.dtype) +
                 static_cast<std::uint64_t>(optimizerStateBytesPerRow(optimizer, cols)));
}

std::uint64_t CostModel::stateBytes(std::size_t table, std::uint64_t rows, std::uint32_t cols) const {
  return stateBytesOf(model_.tables[table], model_.optimizer, rows, cols);
}

ShardCost CostModel::shardCost(std::size_t table, std::uint64_t row_offset, std::uint64_t rows, std::uint32_t cols,
                               const Grid& grid, const GridCosts& gc) const {
  const auto& t = model_.tables[table];
  const double samples = static_cast<double>(grid.group_size) * model_.batch_size_per_gpu;  // M x B
  const double draws = samples * t.pooling.mean;  // ids of the whole group for this table
  ShardCost c;
  const bool whole_rows = row_offset == 0 && rows == t.rows;
  c.ids = whole_rows ? draws : draws * profiles_[table].mass(row_offset, row_offset + rows);
  c.unique_rows = profiles_[table].expectedUniqueRows(row_offset, row_offset + rows, draws);
  const double row_bytes = std::max<std::uint32_t>(cols, 32) * core::dtypeBytes(t.dtype);
  const double state_row_bytes = optimizerStateBytesPerRow(model_.optimizer, cols);
  // Forward: read ids, gather rows, write pooled (partial) outputs for every sample.
  const double fwd_bytes = c.ids * k_.index_bytes + c.ids * row_bytes + samples * cols * k_.output_bytes;
  // Backward: read ids and output gradients per id, then read+write each
  // touched row and its optimizer state once (FBGEMM's fused update).
  const double bwd_bytes =
      c.ids * k_.index_bytes + c.ids * cols * k_.output_bytes + c.unique_rows * 2.0 * (row_bytes + state_row_bytes);
  const double overhead_ms = k_.kernel_overhead_us / 1e3 + c.ids * k_.lookup_overhead_ns / 1e6;
  c.fwd_ms = bytesMs(fwd_bytes, cols) + overhead_ms;
  c.bwd_ms = k_.backward_scale * bytesMs(bwd_bytes, cols) + overhead_ms + c.ids * k_.backward_lookup_ns / 1e6;
  addCacheMisses(c, table, row_offset, rows, cols, draws);
  // Served all-to-all bytes: ids in, pooled outputs out (fwd), gradients in (bwd).
  const double served = c.ids * k_.index_bytes + 2.0 * samples * cols * k_.output_bytes;
  c.comm_ms = served * gc.seconds_per_byte_group * kMsPerSecond;
  c.memory_bytes = stateBytes(table, rows, cols);
  c.buffer_bytes = core::toByteCount(c.ids * k_.index_bytes + samples * cols * k_.output_bytes);
  c.sync_ms = syncShareMs(c.memory_bytes, gc);
  return c;
}

ShardCost CostModel::dataParallelCost(std::size_t table, const Grid& grid, const GridCosts& gc) const {
  const auto& t = model_.tables[table];
  const double samples = model_.batch_size_per_gpu;
  const double draws = samples * t.pooling.mean;
  ShardCost c;
  c.ids = draws;
  c.unique_rows = profiles_[table].expectedUniqueRows(0, t.rows, draws);
  const double row_bytes = std::max<std::uint32_t>(t.dim, 32) * core::dtypeBytes(t.dtype);
  const double state_row_bytes = optimizerStateBytesPerRow(model_.optimizer, t.dim);
  const double fwd_bytes = draws * k_.index_bytes + draws * row_bytes + samples * t.dim * k_.output_bytes;
  const double bwd_bytes =
      draws * k_.index_bytes + draws * t.dim * k_.output_bytes + c.unique_rows * 2.0 * (row_bytes + state_row_bytes);
  const double overhead_ms = k_.kernel_overhead_us / 1e3 + draws * k_.lookup_overhead_ns / 1e6;
  c.fwd_ms = bytesMs(fwd_bytes, t.dim) + overhead_ms;
  c.bwd_ms = k_.backward_scale * bytesMs(bwd_bytes, t.dim) + overhead_ms + draws * k_.backward_lookup_ns / 1e6;
  addCacheMisses(c, table, 0, t.rows, t.dim, draws);
  // Dense gradient all-reduce of the whole table inside the sharding group (DDP).
  if (grid.group_size > 1) {
    const double bytes = static_cast<double>(t.rows) * t.dim * 4.0;
    c.comm_ms = collectives().allReduce(shapeOf(grid.worstShardingTopology(), grid.group_size), bytes).ms(bytes);
  }
  c.memory_bytes = stateBytes(table, t.rows, t.dim);
  c.sync_ms = syncShareMs(c.memory_bytes, gc);
  return c;
}

double CostModel::syncShareMs(std::uint64_t state_bytes, const GridCosts& gc) const {
  if (!k_.balance_replica_sync) return 0.0;
  return static_cast<double>(state_bytes) * gc.seconds_per_byte_replica * kMsPerSecond /
         std::max<std::uint32_t>(1, k_.sync_interval);
}

double CostModel::replicaSyncMs(std::uint64_t bytes, const Grid& grid, const GridCosts& gc) const {
  if (grid.replicas <= 1 || bytes == 0) return 0.0;
  const double ms = static_cast<double>(bytes) * gc.seconds_per_byte_replica * kMsPerSecond + gc.replica_latency_ms;
  return ms / std::max<std::uint32_t>(1, k_.sync_interval);
}

}  // namespace shardscope::planner
