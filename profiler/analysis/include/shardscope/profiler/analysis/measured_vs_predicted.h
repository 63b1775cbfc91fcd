// One run's measured step, rank by rank, beside what the cost model predicts
// for the plan it ran: embedding forward and backward, all-to-all, replica
// sync and dense, the error per rank and overall, TorchRec's imbalance
// statistics of measured and predicted embedding load, and the stragglers.
// The desktop's measured-vs-predicted view draws it; definitions in
// docs/analysis.md#measured-vs-predicted.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "shardscope/core/calibration.h"
#include "shardscope/core/device.h"
#include "shardscope/core/result.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::profiler {

// Milliseconds per step of the phases the planner prices.
struct PhaseMs {
  double emb_fwd = 0.0;
  double emb_bwd = 0.0;
  double all_to_all = 0.0;    // the sharding group's all-to-alls (+ data-parallel tables' gradient all-reduce)
  double replica_sync = 0.0;  // weight + optimizer all-reduce across replicas, amortised over the sync interval
  double dense = 0.0;         // dense compute + dense gradient all-reduce
  [[nodiscard]] double embedding() const { return emb_fwd + emb_bwd; }
  [[nodiscard]] double total() const { return emb_fwd + emb_bwd + all_to_all + replica_sync + dense; }
};

// Phase names in PhaseMs order, and a phase by index (0..kPhases-1).
inline constexpr int kPhases = 5;
[[nodiscard]] const char* phaseName(int phase);
[[nodiscard]] double phaseValue(const PhaseMs& p, int phase);

// One rank's measured phases: collectives by span kind (replica sync; the
// dense all-reduce counts as dense; the rest as all-to-all). Without spans
// (tracing off) the step summaries' collective total counts as all-to-all
// and `unsplit` is set.
[[nodiscard]] PhaseMs measuredPhases(const RankAnalysis& rank, bool& unsplit);

struct RankVsPrediction {
  int rank = 0;            // global
  int sharding_group = 0;  // the plan's sharding group holding it
  int group_rank = 0;      // inside its sharding group
  PhaseMs measured;
  PhaseMs predicted;
  double measured_step_ms = 0.0;  // the rank's measured step (wall)
  // Over the phases the run measured (MeasuredVsPredicted::measured_phases):
  double measured_ms = 0.0;
  double predicted_ms = 0.0;
  double error = 0.0;            // measured_ms / predicted_ms - 1 (meaningful only like for like)
  double embedding_error = 0.0;  // the same for embedding compute
  // The rank's share of its sharding group's embedding compute (over the
  // group's measured ranks), measured and predicted: what transfers across devices.
  double measured_share = -1.0;
  double predicted_share = -1.0;
  bool straggler = false;
};

struct MeasuredVsPredicted {
  std::string plan_summary;  // "M=4 R=2 strided"
  std::string constants;     // "default constants" or "calibration <source>"
  // The run's device against the one the prediction is priced for. Absolute
  // times and errors compare only when `devices.absolute`; otherwise the
  // shares, the imbalance statistics and the stragglers do, and
  // `devices.reason` says why in one line.
  core::DeviceComparison devices;
  std::uint32_t sync_interval = 1;
  std::vector<RankVsPrediction> ranks;  // by global rank, measured ranks only
  // Phases the run measured: those with time on some rank (an emulate run
  // measures embedding compute only; it runs no collectives). Errors compare these.
  std::array<bool, kPhases> measured_phases{};
  double mape = -1.0;  // mean |error| over ranks (fraction); < 0 when not like for like
  double embedding_mape = -1.0;
  double share_gap = -1.0;         // mean |measured_share - predicted_share| over ranks (fraction); < 0: none
  int widest_share_gap_rank = -1;  // the rank whose share is furthest from its prediction
  double predicted_step_ms = 0.0;  // the planner's step time for the plan (critical rank + dense + sync)
  double measured_step_ms = 0.0;   // the run's step time (step_time.h)
  // TorchRec's four statistics plus max/mean, over each rank's embedding compute.
  planner::ImbalanceStats measured_imbalance;
  planner::ImbalanceStats predicted_imbalance;
  std::vector<int> stragglers;  // global ranks (RunAnalysis's rule)
  double straggler_threshold_ms = 0.0;
  std::vector<std::string> warnings;
};

// `inputs` must carry the model, cluster and plan the run ran (runInputs,
// with a supplied plan for an import). The plan is priced with `calibration`
// (nullptr: the cluster's defaults) and the run's sync interval (config_json
// sync_interval, else the plan's, else 1). Errors: inputs incomplete, a plan
// that does not fit the model or the run's ranks.
[[nodiscard]] core::Result<MeasuredVsPredicted> measuredVsPredicted(const RunAnalysis& analysis,
                                                                    const RunInputs& inputs,
                                                                    const core::Calibration* calibration);

// The plan priced the way the planner prices it (evaluatePlacement on its
// grid, CostConstants::from(cluster, calibration) with `sync_interval`), and
// the grid-wide costs every rank pays.
struct PricedPlan {
  planner::GridResult result;
  planner::GridCosts grid_costs;
};
[[nodiscard]] core::Result<PricedPlan> pricePlan(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                                 const core::ShardPlan& plan, const core::Calibration* calibration,
                                                 std::uint32_t sync_interval = 1);

}  // namespace shardscope::profiler
