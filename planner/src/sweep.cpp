#include "shardscope/planner/sweep.h"

#include <algorithm>

namespace shardscope::planner {

CostModel sweepCostModel(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                         const core::Calibration* calibration, const SweepOptions& options) {
  CostConstants k = CostConstants::from(cluster, calibration);
  k.sync_interval = std::max<std::uint32_t>(1, options.sync_interval);
  k.balance_replica_sync = options.balance_replica_sync;
  return CostModel(model, cluster, k);
}

SweepResult sweep(const core::ModelSpec& model, const core::ClusterSpec& cluster, const core::Calibration* calibration,
                  const core::Constraints& constraints, const SweepOptions& options, const SweepProgress& progress,
                  const std::atomic<bool>* cancel) {
  const CostModel cost = sweepCostModel(model, cluster, calibration, options);
  std::vector<Grid> grids;
  for (auto& g : enumerateGrids(cluster)) {
    if (options.only_group_size && g.group_size != *options.only_group_size) continue;
    if (options.only_layout && g.layout != *options.only_layout) continue;
    grids.push_back(std::move(g));
  }
  SweepResult out;
  for (std::size_t i = 0; i < grids.size(); ++i) {
    if (cancel && cancel->load()) {
      out.cancelled = true;
      break;
    }
    PlannerOptions planner = options.planner;
    if (cancel) planner.cancel = cancel;
    GridResult r = planGrid(cost, grids[i], constraints, planner);
    if (r.cancelled) {
      out.cancelled = true;
      break;
    }
    if (calibration) r.plan.provenance.calibration = calibration->source;
    out.grids.push_back(std::move(r));
    if (progress && !progress(i + 1, grids.size())) {
      out.cancelled = i + 1 < grids.size();
      break;
    }
  }
  // Every plan carries what its prediction was priced from (one copy of the text per grid).
  const std::string inputs = pricingInputsJson(cost);
  for (auto& g : out.grids) g.plan.predicted.inputs_json = inputs;
  std::stable_sort(out.grids.begin(), out.grids.end(), [](const GridResult& a, const GridResult& b) {
    if (a.fits != b.fits) return a.fits;
    return a.step.step_ms < b.step.step_ms;
  });
  return out;
}

}  // namespace shardscope::planner
