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

}  // namespace shardscope::planner
