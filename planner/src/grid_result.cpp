// Pricing a placement: per-rank costs, step breakdown, imbalance, memory
// check and the plan file. The partitioner's result and an imported plan go
// through the same code, so they are compared on equal terms.
#include "shardscope/planner/grid_result.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "shardscope/core/summary.h"
#include "shardscope/core/time_text.h"
#include "shardscope/core/version.h"
#include "shardscope/planner/partitioner.h"

namespace shardscope::planner {

namespace {
std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", v);
  return buf;
}
}  // namespace

ImbalanceStats imbalanceOf(const std::vector<double>& loads) {
  ImbalanceStats s;
  const double k = static_cast<double>(loads.size());
  double total = 0, mx = 0;
  for (double l : loads) {
    total += l;
    mx = std::max(mx, l);
  }
  if (loads.empty() || total <= 0) return s;
  s.max_over_mean = mx / (total / k);
  for (double l : loads) {
    const double p = l / total, d = std::abs(p - 1.0 / k);
    s.total_variation = std::max(s.total_variation, d);
    s.total_distance += d;
    s.chi_divergence += d * d * k;
    if (p > 0) s.kl_divergence += p * std::log(k * p);
  }
  if (k > 1) s.kl_divergence /= std::log(k);
  return s;
}

namespace {

// Which tables make the critical rank slow (a second pass over its shards only).
void criticalTables(const CostModel& model, const Grid& grid, const GridCosts& gc,
                    const std::vector<core::TablePlacement>& tables, const std::map<std::string, std::size_t>& index,
                    GridResult& r) {
  for (const auto& tp : tables) {
    auto it = index.find(tp.name);
    if (it == index.end()) continue;
    double load = 0;
    if (tp.sharding_type == core::ShardingType::DataParallel) {
      load = model.dataParallelCost(it->second, grid, gc).load();
    } else {
      for (const auto& sh : tp.shards)
        if (sh.group_rank == r.critical_rank)
          load += model.shardCost(it->second, sh.row_offset, sh.rows, sh.cols, grid, gc).load();
    }
    if (load > 0) r.critical_tables.push_back({tp.name, load});
  }
  std::sort(r.critical_tables.begin(), r.critical_tables.end(), [](auto& a, auto& b) { return a.load_ms > b.load_ms; });
}

// The plan file trainers read: the grid, the placement and the prediction.
void fillPlanFile(const CostModel& model, const Grid& grid, const GridCosts& gc,
                  std::vector<core::TablePlacement> tables, core::PlanTarget target, GridResult& r) {
  const StepBreakdown& st = r.step;
  const std::uint32_t M = grid.group_size;
  core::ShardPlan& p = r.plan;
  p.model = model.model().name;
  p.world_size = grid.world_size;
  p.gpus_per_node = grid.gpus_per_node;
  p.sharding_group_size = M;
  p.replicas = grid.replicas;
  p.layout = grid.layout;
  p.target = target;
  p.sync_interval = std::max<std::uint32_t>(1, model.constants().sync_interval);
  p.sharding_groups = grid.sharding_groups;
  p.replica_groups = grid.replica_groups;
  p.tables = std::move(tables);
  p.predicted.step_ms = st.step_ms;
  p.predicted.lower_bound_ms = r.lower_bound_ms;
  p.predicted.max_over_mean = r.imbalance.max_over_mean;
  for (const auto& rr : r.ranks)
    p.predicted.ranks.push_back({rr.group_rank, rr.fwd_ms + rr.bwd_ms,
                                 rr.served_comm_ms + gc.a2a_own_ms + gc.a2a_latency_ms + rr.sync_ms, rr.memory_bytes});
  p.provenance.tool = std::string("shardscope ") + core::versionString();
  p.provenance.created = core::utcNowIso8601();
}

}  // namespace

double stepMsAtSyncInterval(const GridResult& r, std::uint32_t k) {
  const double planned = std::max<std::uint32_t>(1, r.plan.sync_interval);
  const double sync = r.step.replica_sync_ms;
  return r.step.step_ms - sync + sync * planned / std::max<std::uint32_t>(1, k);
}

std::string unpricedReason(const GridResult& r) {
  const std::pair<const char*, double> parts[] = {
      {"embedding compute", r.step.embedding_ms},      {"all-to-all", r.step.all_to_all_ms},
      {"replica sync", r.step.replica_sync_ms},        {"dense", r.step.dense_ms},
      {"dense all-reduce", r.step.dense_allreduce_ms}, {"step", r.step.step_ms},
      {"slowest rank's load", r.max_load_ms}};
  std::string bad;
  for (const auto& [name, v] : parts)
    if (!std::isfinite(v)) bad += std::string(bad.empty() ? "" : ", ") + name + " " + (std::isnan(v) ? "NaN" : "inf");
  for (const auto& rank : r.ranks)
    if (!std::isfinite(rank.load_ms) || !std::isfinite(rank.served_comm_ms)) {
      bad += std::string(bad.empty() ? "" : ", ") + "group rank " + std::to_string(rank.group_rank) + "'s load";
      break;
    }
  if (bad.empty()) return {};
  return "grid M = " + std::to_string(r.grid.group_size) + ", R = " + std::to_string(r.grid.replicas) +
         " cannot be priced (" + bad + " ms): a constant of the cluster or the calibration is out of any real range";
}

std::uint64_t GridResult::peakMemoryBytes() const {
  std::uint64_t most = 0;
  for (const auto& r : ranks) most = std::max(most, r.memory_bytes);
  return most;
}

GridResult evaluatePlacement(const CostModel& model, const Grid& grid, std::vector<core::TablePlacement> tables,
                             const core::Constraints& constraints, core::PlanTarget target, std::string algorithm,
                             std::optional<double> lower_bound_ms) {
  GridResult r;
  r.grid = grid;
  r.algorithm = std::move(algorithm);
  const GridCosts gc = model.gridCosts(grid);
  const std::uint32_t M = grid.group_size;
  r.ranks.resize(M);
  for (std::uint32_t i = 0; i < M; ++i) {
    r.ranks[i].group_rank = i;
    r.ranks[i].capacity_bytes = gc.hbm_capacity_bytes;
  }
  for (const auto& cap : constraints.rank_memory_caps) {
    if (cap.group_rank < M) {
      const std::uint64_t usable = cap.bytes > gc.dense_reserve_bytes + gc.buffer_bytes
                                       ? cap.bytes - gc.dense_reserve_bytes - gc.buffer_bytes
                                       : 0;
      r.ranks[cap.group_rank].capacity_bytes = std::min(r.ranks[cap.group_rank].capacity_bytes, usable);
    } else {
      r.problems.push_back("memory cap for group rank " + std::to_string(cap.group_rank) +
                           " cannot be met: the sharding group has ranks 0.." + std::to_string(M - 1));
    }
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t t = 0; t < model.model().tables.size(); ++t) index[model.model().tables[t].name] = t;
  for (const auto& tp : tables) {
    auto it = index.find(tp.name);
    if (it == index.end()) {
      r.problems.push_back("table " + tp.name + " is in the plan but not in the model; ignored");
      continue;
    }
    const std::size_t t = it->second;
    auto add = [&](std::uint32_t rank, const ShardCost& c) {
      RankResult& rr = r.ranks[rank];
      rr.fwd_ms += c.fwd_ms;
      rr.bwd_ms += c.bwd_ms;
      rr.served_comm_ms += c.comm_ms;
      rr.state_bytes += c.memory_bytes;
      rr.served_buffer_bytes += c.buffer_bytes;
      rr.shards += 1;
    };
    if (tp.sharding_type == core::ShardingType::DataParallel) {
      const ShardCost c = model.dataParallelCost(t, grid, gc);
      for (std::uint32_t i = 0; i < M; ++i) add(i, c);
    } else {
      for (const auto& s : tp.shards)
        if (s.group_rank < M) add(s.group_rank, model.shardCost(t, s.row_offset, s.rows, s.cols, grid, gc));
    }
  }
  for (const auto& t : model.model().tables)
    if (std::none_of(tables.begin(), tables.end(), [&](const auto& tp) { return tp.name == t.name; })) {
      r.problems.push_back("table " + t.name + " of the model is not in the plan; its cost is missing");
      r.unpriced_tables.push_back(t.name);
    }
  std::vector<double> loads(M);
  for (std::uint32_t i = 0; i < M; ++i) {
    RankResult& rr = r.ranks[i];
    rr.load_ms = rr.fwd_ms + rr.bwd_ms + rr.served_comm_ms + model.syncShareMs(rr.state_bytes, gc);
    rr.sync_ms = model.replicaSyncMs(rr.state_bytes, grid, gc);
    rr.memory_bytes = rr.state_bytes + rr.served_buffer_bytes + gc.buffer_bytes + gc.dense_reserve_bytes;
    loads[i] = rr.load_ms;
    if (rr.state_bytes + rr.served_buffer_bytes > rr.capacity_bytes) {
      r.fits = false;
      r.problems.push_back(
          "group rank " + std::to_string(i) + " does not fit: embedding state " + core::formatBytes(rr.state_bytes) +
          " + served all-to-all buffers " + core::formatBytes(rr.served_buffer_bytes) + " > usable " +
          core::formatBytes(rr.capacity_bytes) + " (HBM " + core::formatBytes(model.cluster().gpu.hbm_bytes) +
          " less " + std::to_string(static_cast<int>(model.constants().hbm_reserve_fraction * 100)) + "% reserve, " +
          core::formatBytes(gc.buffer_bytes) + " buffers, " + core::formatBytes(gc.dense_reserve_bytes) + " dense)");
    }
  }
  r.critical_rank = static_cast<std::uint32_t>(std::max_element(loads.begin(), loads.end()) - loads.begin());
  r.max_load_ms = r.ranks[r.critical_rank].load_ms;
  // The step waits for the rank with the longest embedding chain (compute +
  // served all-to-all), whatever else the balanced load counts (its sync share).
  const RankResult& crit =
      *std::max_element(r.ranks.begin(), r.ranks.end(), [](const RankResult& a, const RankResult& b) {
        return a.fwd_ms + a.bwd_ms + a.served_comm_ms < b.fwd_ms + b.bwd_ms + b.served_comm_ms;
      });
  r.imbalance = imbalanceOf(loads);
  criticalTables(model, grid, gc, tables, index, r);

  // Step: the critical rank's embedding chain, dense compute, the part of the
  // dense all-reduce not hidden behind embedding backward, replica sync.
  StepBreakdown& st = r.step;
  st.embedding_ms = crit.fwd_ms + crit.bwd_ms;
  st.all_to_all_ms = crit.served_comm_ms + gc.a2a_own_ms + gc.a2a_latency_ms;
  st.dense_allreduce_ms = gc.dense_allreduce_ms;
  const double hidden_window = crit.bwd_ms + st.all_to_all_ms / 3.0;
  st.dense_ms = gc.dense_compute_ms + std::max(0.0, gc.dense_allreduce_ms - hidden_window);
  for (const auto& rr : r.ranks) st.replica_sync_ms = std::max(st.replica_sync_ms, rr.sync_ms);
  st.step_ms = st.embedding_ms + st.all_to_all_ms + st.dense_ms + st.replica_sync_ms;
  r.samples_per_second =
      st.step_ms > 0 ? grid.world_size * static_cast<double>(model.model().batch_size_per_gpu) / (st.step_ms / 1e3) : 0;
  r.lower_bound_ms = lower_bound_ms ? *lower_bound_ms : lowerBoundMs(model, grid, constraints, target);
  // A plan at the bound may sum its loads in another order: rounding, not a gap below 0.
  r.gap = r.lower_bound_ms > 0 ? std::max(0.0, r.max_load_ms / r.lower_bound_ms - 1.0) : 0.0;
  r.critical_path = {
      "ids all-to-all",
      "embedding forward on group rank " + std::to_string(crit.group_rank) + " (" + ms(crit.fwd_ms) + ")",
      "pooled all-to-all",
      "dense forward + backward (" + ms(gc.dense_compute_ms) + ")",
      "gradient all-to-all",
      "embedding backward + fused update (" + ms(crit.bwd_ms) + ")"};
  if (st.replica_sync_ms > 0) r.critical_path.push_back("replica weight sync (" + ms(st.replica_sync_ms) + ")");

  fillPlanFile(model, grid, gc, std::move(tables), target, r);
  return r;
}

}  // namespace shardscope::planner
