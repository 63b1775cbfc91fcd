#include "shardscope/planner/plan_comparison.h"

namespace shardscope::planner {

PlanComparison compareWithOptimized(const CostModel& model, const core::ShardPlan& plan,
                                    const core::Constraints& constraints, PlannerOptions options) {
  const Grid grid = makeGrid(plan.world_size, plan.gpus_per_node, plan.sharding_group_size, plan.layout);
  options.target = plan.target;
  PlanComparison c;
  c.given = evaluatePlacement(model, grid, plan.tables, constraints, plan.target, "given plan");
  c.optimized = planGrid(model, grid, constraints, options);
  return c;
}

PlanComparison evaluatePlan(const core::Project& project, const core::ClusterSpec& cluster, const core::ShardPlan& plan,
                            bool balance_compute) {
  const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
  CostConstants k = CostConstants::from(cluster, cal);
  k.balance_replica_sync = !balance_compute;
  const CostModel cost(project.model, cluster, k);
  return compareWithOptimized(cost, plan, project.constraints);
}

}  // namespace shardscope::planner
