#include "measurement_sources.h"

#include "shardscope/profiler/engine/local_cluster.h"
#include "shardscope/profiler/workflow/stored_runs.h"

namespace shardscope::app {

ClusterPage::LocalClusterSource localGpusSource() {
  return []() -> core::Result<ClusterPage::LocalCluster> {
    auto local = profiler::queryLocalCluster();
    if (!local) return local.error();
    return ClusterPage::LocalCluster{std::move(local->cluster), std::move(local->notes)};
  };
}

PlanPage::MeasuredSource storedPlanRunSource() {
  return [](const std::string& store, const core::ShardPlan& plan,
            const std::atomic<bool>* cancel) -> core::Result<std::optional<PlanPage::MeasuredLoad>> {
    auto load = profiler::latestRunOfPlan(store, plan, cancel);
    if (!load) return load.error();
    if (!*load) return std::optional<PlanPage::MeasuredLoad>{};
    profiler::MeasuredPlanLoad& l = **load;
    return std::optional<PlanPage::MeasuredLoad>(
        PlanPage::MeasuredLoad{static_cast<qint64>(l.run), std::move(l.compute_ms), l.device});
  };
}

}  // namespace shardscope::app
