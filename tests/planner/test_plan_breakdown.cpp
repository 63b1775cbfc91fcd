// The plan breakdown: every shard priced again adds up to the GridResult's
// rank loads and critical tables; the stacked and matrix views keep every
// millisecond; data-parallel copies count on every rank.
#include <QtTest>
#include <cmath>

#include "shardscope/core/presets.h"
#include "shardscope/planner/plan_breakdown.h"
#include "shardscope/planner/synthetic.h"

using namespace shardscope;
using namespace shardscope::planner;

namespace {

bool near(double a, double b, double rel = 1e-9) {
  return std::abs(a - b) <= rel * std::max({1.0, std::abs(a), std::abs(b)});
}

// A grid of the sweep with its model, as the desktop gets them.
struct Planned {
  core::Project project;
  SweepOptions options;
  SweepResult sweep;
};

Planned planDefault(SweepOptions options = {}, std::optional<std::uint32_t> only_m = std::nullopt) {
  Planned p{core::defaultProject(), options, {}};
  p.options.only_group_size = only_m;
  p.sweep = sweep(p.project.model, p.project.cluster, nullptr, p.project.constraints, p.options);
  return p;
}

PlanBreakdown breakdownOfGrid(const Planned& p, const GridResult& g) {
  const CostModel cost = sweepCostModel(p.project.model, p.project.cluster, nullptr, p.options);
  return breakdownOf(cost, g);
}

}  // namespace

class TestPlanBreakdown : public QObject {
  Q_OBJECT
 private slots:
  void rankSumsEqualTheGridResultsLoads() {
    const Planned p = planDefault();
    QVERIFY(!p.sweep.grids.empty());
    for (const GridResult& g : p.sweep.grids) {
      const PlanBreakdown b = breakdownOfGrid(p, g);
      QCOMPARE(b.group_size, g.grid.group_size);
      QCOMPARE(b.rank_load_ms.size(), g.ranks.size());
      QVERIFY(b.problems.empty());
      for (std::uint32_t r = 0; r < b.group_size; ++r) {
        QVERIFY2(near(b.rank_load_ms[r], g.ranks[r].load_ms), qPrintable(QString("M=%1 rank %2: %3 vs %4")
                                                                             .arg(g.grid.group_size)
                                                                             .arg(r)
                                                                             .arg(b.rank_load_ms[r])
                                                                             .arg(g.ranks[r].load_ms)));
        QCOMPARE(static_cast<std::uint32_t>(b.onRank(r).size()), g.ranks[r].shards);
        double fwd = 0;
        for (const ShardLoad& e : b.onRank(r)) {
          QCOMPARE(e.group_rank, r);
          fwd += e.cost.fwd_ms;
        }
        QVERIFY(near(fwd, g.ranks[r].fwd_ms));
      }
    }
  }

  void syncShareCountsWhenTheSweepBalancesIt() {
    SweepOptions o;
    o.balance_replica_sync = true;
    o.sync_interval = 4;
    const Planned p = planDefault(o, 16u);  // R = 4: the sync share is not zero
    QVERIFY(!p.sweep.grids.empty());
    const GridResult& g = p.sweep.grids.front();
    const PlanBreakdown b = breakdownOfGrid(p, g);
    double sync = 0;
    for (const ShardLoad& e : b.entries) sync += e.cost.sync_ms;
    QVERIFY(sync > 0);
    for (std::uint32_t r = 0; r < b.group_size; ++r) QVERIFY(near(b.rank_load_ms[r], g.ranks[r].load_ms));
  }

  void criticalTablesMatch() {
    const Planned p = planDefault();
    const GridResult& g = p.sweep.grids.front();
    const PlanBreakdown b = breakdownOfGrid(p, g);
    QVERIFY(!g.critical_tables.empty());
    for (const TableLoad& tl : g.critical_tables) {
      const auto it =
          std::find_if(g.plan.tables.begin(), g.plan.tables.end(), [&](const auto& t) { return t.name == tl.table; });
      QVERIFY(it != g.plan.tables.end());
      const auto t = static_cast<std::uint32_t>(it - g.plan.tables.begin());
      QVERIFY(near(b.loadOf(t, g.critical_rank), tl.load_ms));
    }
  }

  void tablesAreSortedByTotalLoad() {
    const Planned p = planDefault();
    const PlanBreakdown b = breakdownOfGrid(p, p.sweep.grids.front());
    QCOMPARE(b.tables_by_load.size(), b.table_load_ms.size());
    double total_tables = 0, total_ranks = 0;
    for (std::size_t i = 0; i < b.tables_by_load.size(); ++i) {
      if (i > 0) QVERIFY(b.table_load_ms[b.tables_by_load[i - 1]] >= b.table_load_ms[b.tables_by_load[i]]);
      total_tables += b.table_load_ms[i];
    }
    for (double l : b.rank_load_ms) total_ranks += l;
    QVERIFY(near(total_tables, total_ranks));
  }

  void dataParallelTablesCountOnEveryRank() {
    core::Project project = core::defaultProject();
    core::TableConstraint c;
    c.table = project.model.tables[5].name;  // 3 rows: cheap to copy everywhere
    c.force = core::ShardingType::DataParallel;
    project.constraints.tables.push_back(c);
    SweepOptions o;
    o.only_group_size = 8;
    const SweepResult s = sweep(project.model, project.cluster, nullptr, project.constraints, o);
    const GridResult& g = s.grids.front();
    const auto it =
        std::find_if(g.plan.tables.begin(), g.plan.tables.end(), [&](const auto& t) { return t.name == c.table; });
    QVERIFY(it != g.plan.tables.end());
    QVERIFY(it->sharding_type == core::ShardingType::DataParallel);
    const auto t = static_cast<std::uint32_t>(it - g.plan.tables.begin());
    const PlanBreakdown b = breakdownOf(sweepCostModel(project.model, project.cluster, nullptr, o), g);
    for (std::uint32_t r = 0; r < 8; ++r) {
      QVERIFY(b.loadOf(t, r) > 0);
      QVERIFY(near(b.rank_load_ms[r], g.ranks[r].load_ms));
    }
  }

  void stackKeepsEveryMillisecond() {
    const Planned p = planDefault();
    const GridResult& g = p.sweep.grids.front();
    const PlanBreakdown b = breakdownOfGrid(p, g);
    const RankLoadStack stack = rankLoadStack(b, shownTables(b, 10));
    QCOMPARE(stack.tables.size(), 10u);
    QCOMPARE(stack.load_ms.size(), 11u);
    QCOMPARE(stack.other_tables, g.plan.tables.size() - 10);
    for (std::size_t s = 0; s < stack.tables.size(); ++s) QCOMPARE(stack.tables[s], b.tables_by_load[s]);
    QCOMPARE(stack.sync_ms.size(), std::size_t{b.group_size});
    double sync = 0;
    for (std::uint32_t r = 0; r < b.group_size; ++r) {
      double sum = 0;
      for (const auto& series : stack.load_ms) sum += series[r];
      // The replica sync is its own segment: the tables' series and it add up to the rank's load.
      QVERIFY(near(sum + stack.sync_ms[r], g.ranks[r].load_ms));
      double table_sync = 0;
      for (const ShardLoad& e : b.onRank(r))
        if (e.table == stack.tables[0]) table_sync += e.cost.sync_ms;
      QVERIFY(near(stack.load_ms[0][r], b.loadOf(stack.tables[0], r) - table_sync));
      sync += stack.sync_ms[r];
    }
    if (g.grid.replicas > 1) QVERIFY(sync > 0);
    // Fewer tables than asked: all shown, "other" empty.
    const RankLoadStack all = rankLoadStack(b, shownTables(b, 1000));
    QCOMPARE(all.tables.size(), g.plan.tables.size());
    QCOMPARE(all.other_tables, 0u);
    for (double v : all.load_ms.back()) QCOMPARE(v, 0.0);
  }

  void matrixHasNanWhereATableHasNothing() {
    const Planned p = planDefault();
    const GridResult& g = p.sweep.grids.front();
    const PlanBreakdown b = breakdownOfGrid(p, g);
    const PlacementMatrix m = placementMatrix(b, shownTables(b, 5));
    QCOMPARE(m.tables.size(), 5u);
    QCOMPARE(m.ranks, g.grid.group_size);
    QCOMPARE(m.columns, g.grid.group_size);
    QCOMPARE(m.ranks_per_column, 1u);
    QCOMPARE(m.load_ms.size(), 5u * g.grid.group_size);
    for (std::size_t row = 0; row < m.tables.size(); ++row) {
      const core::TablePlacement& tp = g.plan.tables[m.tables[row]];
      for (std::uint32_t r = 0; r < m.ranks; ++r) {
        const bool has =
            tp.sharding_type == core::ShardingType::DataParallel ||
            std::any_of(tp.shards.begin(), tp.shards.end(), [r](const auto& s) { return s.group_rank == r; });
        QCOMPARE(!std::isnan(m.at(row, r)), has);
        if (has) QVERIFY(near(m.at(row, r), b.loadOf(m.tables[row], r)));
      }
    }
    QVERIFY(m.max_load_ms > 0);
    QVERIFY(m.min_load_ms > 0 && m.min_load_ms <= m.max_load_ms);
  }

  void shownTablesAreTheHeaviestWithTheAlwaysOnes() {
    const Planned p = planDefault();
    const PlanBreakdown b = breakdownOfGrid(p, p.sweep.grids.front());
    const std::vector<std::uint32_t> plain = shownTables(b, 4);
    QCOMPARE(plain, std::vector<std::uint32_t>(b.tables_by_load.begin(), b.tables_by_load.begin() + 4));
    // A light table asked for takes the place of the lightest of the four, in load order.
    const std::uint32_t light = b.tables_by_load.back();
    const std::uint32_t always[] = {light, light, 9999};  // duplicates and unknown indices are ignored
    const std::vector<std::uint32_t> shown = shownTables(b, 4, always);
    const std::vector<std::uint32_t> expected = {b.tables_by_load[0], b.tables_by_load[1], b.tables_by_load[2], light};
    QCOMPARE(shown, expected);
  }

  void manyRanksAreBinnedKeepingTheLargestLoad() {
    const Planned p = planDefault();  // M = 64 first
    const GridResult& g = p.sweep.grids.front();
    QCOMPARE(g.grid.group_size, 64u);
    const PlanBreakdown b = breakdownOfGrid(p, g);
    const std::vector<std::uint32_t> tables = shownTables(b, 26);
    const PlacementMatrix exact = placementMatrix(b, tables);
    const PlacementMatrix binned = placementMatrix(b, tables, 10);  // 64 ranks in 10 columns: 7 per column
    QCOMPARE(binned.ranks_per_column, 7u);
    QCOMPARE(binned.columns, 10u);
    QCOMPARE(binned.lastRank(9), 63u);
    for (std::size_t row = 0; row < tables.size(); ++row)
      for (std::uint32_t c = 0; c < binned.columns; ++c) {
        double most = std::nan("");
        for (std::uint32_t r = binned.firstRank(c); r <= binned.lastRank(c); ++r) {
          const double v = exact.at(row, r);
          if (!std::isnan(v)) most = std::isnan(most) ? v : std::max(most, v);
        }
        QCOMPARE(std::isnan(binned.at(row, c)), std::isnan(most));
        if (!std::isnan(most)) QCOMPARE(binned.at(row, c), most);
      }
    QCOMPARE(binned.max_load_ms, exact.max_load_ms);
  }

  void syntheticModelsAddUp() {
    for (std::uint64_t seed : {3u, 11u}) {
      const core::ModelSpec model = syntheticModel({150, seed, 256});
      core::ClusterSpec cluster = core::clusterPreset("h100x8").value();
      cluster.nodes = 4;
      const SweepResult s = sweep(model, cluster, nullptr, {}, {});
      for (const GridResult& g : s.grids) {
        const PlanBreakdown b = breakdownOf(sweepCostModel(model, cluster, nullptr, {}), g);
        for (std::uint32_t r = 0; r < b.group_size; ++r) QVERIFY(near(b.rank_load_ms[r], g.ranks[r].load_ms));
      }
    }
  }

  void unknownTablesAreReportedNotPriced() {
    const Planned p = planDefault({}, 8u);
    GridResult g = p.sweep.grids.front();
    g.plan.tables[0].name = "not_in_the_model";
    const PlanBreakdown b = breakdownOfGrid(p, g);
    QCOMPARE(b.problems.size(), 1u);
    QVERIFY(QString::fromStdString(b.problems[0]).contains("not_in_the_model"));
    QCOMPARE(b.table_load_ms[0], 0.0);
  }

  void cancelStopsEarly() {
    const Planned p = planDefault({}, 8u);
    const std::atomic<bool> cancel{true};
    const PlanBreakdown b = breakdownOf(sweepCostModel(p.project.model, p.project.cluster, nullptr, p.options),
                                        p.sweep.grids.front(), &cancel);
    QVERIFY(b.cancelled);
    QVERIFY(b.entries.empty());
  }
};

QTEST_APPLESS_MAIN(TestPlanBreakdown)
#include "test_plan_breakdown.moc"
