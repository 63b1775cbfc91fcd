// What the planner says about one grid (M, R, layout): the shard plan, every
// rank's predicted cost and memory, the step time split into its parts,
// imbalance statistics, the lower bound and the gap to it, and every problem
// (memory that does not fit, constraints that cannot be met).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/constraints.h"
#include "shardscope/core/plan.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"

namespace shardscope::planner {

struct RankResult {
  std::uint32_t group_rank = 0;
  double fwd_ms = 0;
  double bwd_ms = 0;
  double served_comm_ms = 0;  // all-to-all bytes this rank serves for its shards
  double load_ms =
      0;  // fwd + bwd + served comm (+ replica-sync share with balance_replica_sync): what the partitioner balances
  double sync_ms = 0;                     // replica weight + optimizer sync, amortised
  std::uint64_t state_bytes = 0;          // embedding weights + optimizer state
  std::uint64_t served_buffer_bytes = 0;  // all-to-all buffers for the shards it serves
  std::uint64_t memory_bytes = 0;         // state + served buffers + own buffers + dense reserve
  std::uint64_t capacity_bytes =
      0;  // usable for state + served buffers (HBM after reserve, own buffers, dense; user caps)
  std::uint32_t shards = 0;
};

// TorchRec's normalised imbalance statistics over per-rank loads (docs/cost-model.md).
struct ImbalanceStats {
  double max_over_mean = 1.0;
  double total_variation = 0.0;
  double total_distance = 0.0;
  double chi_divergence = 0.0;
  double kl_divergence = 0.0;
};

[[nodiscard]] ImbalanceStats imbalanceOf(const std::vector<double>& loads);

struct StepBreakdown {
  double embedding_ms = 0;        // forward + backward embedding compute on the critical rank
  double all_to_all_ms = 0;       // the critical rank's all-to-alls (served + own bytes + latency)
  double replica_sync_ms = 0;     // weight + optimizer all-reduce across replicas (amortised)
  double dense_ms = 0;            // dense compute + the exposed part of the dense all-reduce
  double dense_allreduce_ms = 0;  // full dense all-reduce (partly hidden behind embedding backward)
  double step_ms = 0;
};

struct TableLoad {
  std::string table;
  double load_ms = 0;  // this table's share of the critical rank's load
};

struct GridResult {
  Grid grid;
  std::string algorithm;
  core::ShardPlan plan;
  std::vector<RankResult> ranks;
  StepBreakdown step;
  ImbalanceStats imbalance;
  double max_load_ms = 0;
  double lower_bound_ms = 0;  // on the slowest rank's load: max(mean of cheapest options, largest indivisible piece)
  double gap = 0;             // max_load / lower_bound - 1
  double samples_per_second = 0;
  std::uint32_t critical_rank = 0;
  std::vector<TableLoad> critical_tables;    // the critical rank's tables, heaviest first
  bool fits = true;                          // every rank's memory within its capacity
  bool cancelled = false;                    // stopped before it was planned: nothing else is set
  std::vector<std::string> problems;         // memory and constraint problems, each naming rank/table and numbers
  std::vector<std::string> unpriced_tables;  // model tables the placement leaves out (also in problems)
  std::vector<std::string> critical_path;

  // The largest per-rank memory: embedding state, all-to-all buffers, dense reserve.
  [[nodiscard]] std::uint64_t peakMemoryBytes() const;
};

// Why this grid's plan cannot be written: parts of its prediction that are
// not finite numbers (a cluster or calibration constant at an extreme, e.g.
// a bandwidth of 1e-310 GB/s), named; empty when every number is finite.
[[nodiscard]] std::string unpricedReason(const GridResult& r);

// The step time of `r`'s placement with replicas syncing every `k` steps
// instead of r.plan.sync_interval: the amortised replica sync scales as 1/k,
// nothing else changes (the placement balanced for the planned k is kept).
// What a staleness budget buys, per grid.
[[nodiscard]] double stepMsAtSyncInterval(const GridResult& r, std::uint32_t k);

// Prices a placement (ours or imported) on a grid: every number of a GridResult.
// The plan is written for `target` (its lower bound, when not given, is that target's).
[[nodiscard]] GridResult evaluatePlacement(const CostModel& model, const Grid& grid,
                                           std::vector<core::TablePlacement> tables,
                                           const core::Constraints& constraints, core::PlanTarget target,
                                           std::string algorithm, std::optional<double> lower_bound_ms = std::nullopt);

}  // namespace shardscope::planner
