// A plan someone runs (ours, or a trainer's imported TorchRec plan) next to
// what the optimizer finds for the same grid, target and cost model: what
// `evaluate` prints and what the baseline checks against TorchRec's own
// planner compare.
#pragma once

#include "shardscope/core/cluster.h"
#include "shardscope/core/constraints.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/project.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/planner/partitioner.h"

namespace shardscope::planner {

struct PlanComparison {
  GridResult given;      // the plan as written, priced
  GridResult optimized;  // planGrid on the plan's grid, for the plan's target
  // optimized / given step time (< 1: ours is faster).
  [[nodiscard]] double stepRatio() const {
    return given.step.step_ms > 0 ? optimized.step.step_ms / given.step.step_ms : 1.0;
  }
};

// `options.target` is taken from the plan; the rest (algorithm, caps) from `options`.
[[nodiscard]] PlanComparison compareWithOptimized(const CostModel& model, const core::ShardPlan& plan,
                                                  const core::Constraints& constraints, PlannerOptions options = {});

// Prices `plan` on `cluster` with the project's model, calibration and
// constraints, next to the optimized plan for the same grid and target;
// `balance_compute` balances compute and all-to-all only (the sync priced, not balanced).
[[nodiscard]] PlanComparison evaluatePlan(const core::Project& project, const core::ClusterSpec& cluster,
                                          const core::ShardPlan& plan, bool balance_compute);

}  // namespace shardscope::planner
