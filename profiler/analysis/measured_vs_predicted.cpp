// Measured vs predicted per rank and phase (docs/analysis.md#measured-vs-predicted).
#include "shardscope/profiler/analysis/measured_vs_predicted.h"

#include <algorithm>
#include <cmath>

#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/profiler/trace/trace_recorder.h"
#include "shardscope/profiler/trace/run_device.h"
#include "analysis_common.h"

namespace shardscope::profiler {

namespace {

using namespace analysis_detail;

// What the planner predicts for one group rank: its shards' compute, the
// all-to-alls it pays (served + own bytes + latency), its replica sync, and
// dense compute plus the part of the dense all-reduce its backward does not hide.
PhaseMs predictedPhases(const planner::RankResult& rr, const planner::GridCosts& gc) {
  PhaseMs p;
  p.emb_fwd = rr.fwd_ms;
  p.emb_bwd = rr.bwd_ms;
  p.all_to_all = rr.served_comm_ms + gc.a2a_own_ms + gc.a2a_latency_ms;
  p.replica_sync = rr.sync_ms;
  const double hidden_window = rr.bwd_ms + p.all_to_all / 3.0;
  p.dense = gc.dense_compute_ms + std::max(0.0, gc.dense_allreduce_ms - hidden_window);
  return p;
}

double relativeError(double measured, double predicted) { return predicted > 0.0 ? measured / predicted - 1.0 : 0.0; }

int shardingGroupOf(const core::ShardPlan& plan, int global_rank) {
  for (std::size_t g = 0; g < plan.sharding_groups.size(); ++g)
    for (const std::uint32_t r : plan.sharding_groups[g])
      if (static_cast<int>(r) == global_rank) return static_cast<int>(g);
  return -1;
}

// Each rank's share of its group's embedding compute, measured and predicted, and the mean and widest gap.
void compareShares(const std::vector<double>& measured, const std::vector<double>& predicted,
                   const std::vector<int>& groups, MeasuredVsPredicted& out) {
  const std::vector<double> m = sharesWithinGroups(measured, groups);
  const std::vector<double> p = sharesWithinGroups(predicted, groups);
  double sum = 0.0, widest = -1.0;
  int n = 0;
  for (std::size_t i = 0; i < out.ranks.size(); ++i) {
    RankVsPrediction& v = out.ranks[i];
    v.measured_share = m[i];
    v.predicted_share = p[i];
    if (m[i] < 0 || p[i] < 0) continue;
    const double gap = std::abs(m[i] - p[i]);
    sum += gap;
    ++n;
    if (gap > widest) {
      widest = gap;
      out.widest_share_gap_rank = v.rank;
    }
  }
  if (n > 0) out.share_gap = sum / n;
}

std::uint32_t runSyncInterval(const RunInputs& inputs) {
  const std::uint32_t k = inputs.config.sync_interval;
  if (k >= 1) return std::min<std::uint32_t>(k, 1'000'000);
  return inputs.plan && inputs.plan->sync_interval >= 1 ? inputs.plan->sync_interval : 1;
}

}  // namespace

PhaseMs measuredPhases(const RankAnalysis& r, bool& unsplit) {
  PhaseMs p;
  p.emb_fwd = r.emb_fwd_ms;
  p.emb_bwd = r.emb_bwd_ms;
  p.dense = r.dense_ms;
  double by_kind = 0.0;
  for (const auto& c : r.comm) {
    by_kind += c.ms;
    if (c.kind == span_kind::kReplicaSync)
      p.replica_sync += c.ms;
    else if (c.kind == span_kind::kDenseAllreduce)
      p.dense += c.ms;
    else
      p.all_to_all += c.ms;
  }
  if (r.comm.empty() && r.comm_ms > 0.0) {
    p.all_to_all = r.comm_ms;
    unsplit = true;
  } else if (r.comm_ms > by_kind) {
    unsplit = unsplit || r.comm_ms - by_kind > 1e-3 * std::max(1.0, r.comm_ms);
  }
  return p;
}

const char* phaseName(int phase) {
  static const char* const names[kPhases] = {"embedding fwd", "embedding bwd", "all-to-all", "replica sync", "dense"};
  return phase >= 0 && phase < kPhases ? names[phase] : "";
}

double phaseValue(const PhaseMs& p, int phase) {
  switch (phase) {
    case 0:
      return p.emb_fwd;
    case 1:
      return p.emb_bwd;
    case 2:
      return p.all_to_all;
    case 3:
      return p.replica_sync;
    case 4:
      return p.dense;
    default:
      return 0.0;
  }
}

core::Result<PricedPlan> pricePlan(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                   const core::ShardPlan& plan, const core::Calibration* calibration,
                                   std::uint32_t sync_interval) {
  if (plan.sharding_group_size == 0 || plan.world_size == 0 || plan.world_size % plan.sharding_group_size != 0)
    return core::Error{"plan: sharding group size " + std::to_string(plan.sharding_group_size) +
                       " does not divide world size " + std::to_string(plan.world_size)};
  const std::uint32_t gpn = plan.gpus_per_node ? plan.gpus_per_node : std::max<std::uint32_t>(1, cluster.gpus_per_node);
  const planner::Grid grid = planner::makeGrid(plan.world_size, gpn, plan.sharding_group_size, plan.layout);
  auto constants = planner::CostConstants::from(cluster, calibration);
  constants.sync_interval = std::max<std::uint32_t>(1, sync_interval);
  const planner::CostModel cm(model, cluster, constants);
  PricedPlan out;
  out.grid_costs = cm.gridCosts(grid);
  out.result = planner::evaluatePlacement(cm, grid, plan.tables, core::Constraints{}, plan.target, "measured plan");
  return out;
}

core::Result<MeasuredVsPredicted> measuredVsPredicted(const RunAnalysis& analysis, const RunInputs& inputs,
                                                      const core::Calibration* calibration) {
  if (!inputs.model || !inputs.cluster || !inputs.plan) {
    std::string missing = !inputs.plan ? "plan" : !inputs.model ? "model" : "cluster";
    return core::Error{"run " + std::to_string(static_cast<std::int64_t>(analysis.run.id)) + " has no " + missing +
                       " to predict from" +
                       (isImportedRun(analysis.run) ? ": an imported run is compared with a plan you choose" : "")};
  }
  const core::ShardPlan& plan = *inputs.plan;
  MeasuredVsPredicted out;
  out.sync_interval = runSyncInterval(inputs);
  auto priced = pricePlan(*inputs.model, *inputs.cluster, plan, calibration, out.sync_interval);
  if (!priced) return priced.error();
  out.plan_summary = "M=" + std::to_string(plan.sharding_group_size) + " R=" + std::to_string(plan.replicas) + " " +
                     std::string(core::toString(plan.layout));
  out.constants = calibration ? "calibration " + calibration->source : "default constants";
  out.predicted_step_ms = priced->result.step.step_ms;
  for (const auto& p : priced->result.problems) out.warnings.push_back("plan: " + p);

  out.devices = core::compareDevices(runDevice(inputs.config), *inputs.cluster, calibration);
  std::vector<double> measured_load, predicted_load;
  std::vector<int> groups;
  bool unsplit = false;
  double error_sum = 0.0, embedding_error_sum = 0.0;
  for (const auto& r : analysis.ranks) {
    const int gr = groupRankOf(plan, r.rank);
    if (gr < 0 || static_cast<std::size_t>(gr) >= priced->result.ranks.size()) {
      out.warnings.push_back("rank " + std::to_string(r.rank) + " is not in the plan's " +
                             std::to_string(plan.world_size) + " ranks: not compared");
      continue;
    }
    RankVsPrediction v;
    v.rank = r.rank;
    v.sharding_group = shardingGroupOf(plan, r.rank);
    v.group_rank = gr;
    v.measured = measuredPhases(r, unsplit);
    v.predicted = predictedPhases(priced->result.ranks[static_cast<std::size_t>(gr)], priced->grid_costs);
    v.measured_step_ms = r.step_ms;
    v.embedding_error = relativeError(v.measured.embedding(), v.predicted.embedding());
    v.straggler = r.straggler;
    for (int p = 0; p < kPhases; ++p) out.measured_phases[p] = out.measured_phases[p] || phaseValue(v.measured, p) > 0;
    embedding_error_sum += std::abs(v.embedding_error);
    measured_load.push_back(v.measured.embedding());
    predicted_load.push_back(v.predicted.embedding());
    groups.push_back(v.sharding_group);
    out.ranks.push_back(v);
  }
  for (auto& v : out.ranks) {
    for (int p = 0; p < kPhases; ++p)
      if (out.measured_phases[p]) {
        v.measured_ms += phaseValue(v.measured, p);
        v.predicted_ms += phaseValue(v.predicted, p);
      }
    v.error = relativeError(v.measured_ms, v.predicted_ms);
    error_sum += std::abs(v.error);
  }
  if (out.ranks.empty()) return core::Error{"no measured rank of the run is in the plan"};
  const auto n = static_cast<double>(out.ranks.size());
  if (out.devices.absolute) {
    out.mape = error_sum / n;
    out.embedding_mape = embedding_error_sum / n;
  }
  compareShares(measured_load, predicted_load, groups, out);
  // The run's one step time (step_time.h), as the Runs page and report show it.
  out.measured_step_ms = analysis.step_time_ms;
  out.measured_imbalance = planner::imbalanceOf(measured_load);
  out.predicted_imbalance = planner::imbalanceOf(predicted_load);
  out.stragglers = analysis.stragglers;
  out.straggler_threshold_ms = analysis.straggler_threshold_ms;
  if (unsplit)
    out.warnings.push_back(
        "collectives are not all split by kind (no spans for some): the unsplit time counts as all-to-all");
  return out;
}

}  // namespace shardscope::profiler
