// A given plan priced next to the optimized plan for the same grid, with the
// project's model, calibration and constraints (what `evaluate` prints).
#include <QtTest>

#include <algorithm>
#include <string>

#include "shardscope/core/json_io.h"
#include "shardscope/core/plan_file.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/plan_comparison.h"

using namespace shardscope;

class TestPlanComparison : public QObject {
  Q_OBJECT

 private slots:
  void aGivenPlanIsPricedNextToTheOptimizedOne() {
    core::Project project = core::defaultProject();
    const core::ShardPlan plan =
        core::loadPlan(std::string(SHARDSCOPE_TEST_DATA_DIR) + "/plans/strided_8x4.json").value();
    const core::ClusterSpec cluster = core::clusterForPlan(project.cluster, plan, false).value();
    const auto compared = planner::evaluatePlan(project, cluster, plan, false);
    QCOMPARE(compared.given.grid.group_size, plan.sharding_group_size);
    QCOMPARE(compared.optimized.grid.group_size, plan.sharding_group_size);
    QVERIFY(compared.given.step.step_ms > 0);
    QCOMPARE(compared.given.unpriced_tables.size(), project.model.tables.size() - plan.tables.size());
    std::uint64_t most = 0;
    for (const auto& r : compared.given.ranks) most = std::max(most, r.memory_bytes);
    QCOMPARE(compared.given.peakMemoryBytes(), most);
  }
};

QTEST_APPLESS_MAIN(TestPlanComparison)
#include "test_plan_comparison.moc"
