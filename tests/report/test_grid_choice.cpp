// A project's grid in a sweep: the chosen grid (the better layout when none
// was chosen), edits that change only the choice, peak memory and fit.
#include <QtTest>

#include "shardscope/core/presets.h"
#include "shardscope/report/grid_choice.h"

namespace core = shardscope::core;
namespace planner = shardscope::planner;
namespace report = shardscope::report;

namespace {

planner::GridResult gridOf(std::uint32_t m, core::RankLayout layout, bool fits) {
  planner::GridResult g;
  g.grid.group_size = m;
  g.grid.layout = layout;
  g.fits = fits;
  return g;
}

}  // namespace

class TestGridChoice : public QObject {
  Q_OBJECT

 private slots:
  void theChoiceNamesTheBetterRankedLayout() {
    planner::SweepResult sweep;
    sweep.grids = {gridOf(8, core::RankLayout::Contiguous, true), gridOf(8, core::RankLayout::Strided, true),
                   gridOf(16, core::RankLayout::Strided, false)};
    core::Project p = core::defaultProject();
    QCOMPARE(report::chosenIndex(sweep, p), -1);
    p.chosen_group_size = 8;
    QCOMPARE(report::chosenIndex(sweep, p), 0);
    p.chosen_layout = core::RankLayout::Strided;
    QCOMPARE(report::chosenIndex(sweep, p), 1);
    p.chosen_group_size = 32;
    QCOMPARE(report::chosenIndex(sweep, p), -1);
    QCOMPARE(report::fittingCount(sweep), std::size_t{2});
  }

  void onlyTheChoiceLeavesThePlanningInputAlone() {
    const core::Project p = core::defaultProject();
    core::Project chosen = p;
    chosen.chosen_group_size = 8;
    chosen.chosen_layout = core::RankLayout::Strided;
    QVERIFY(report::samePlanningInput(p, chosen));
    chosen.sync_interval = 4;
    QVERIFY(!report::samePlanningInput(p, chosen));
  }

  void aCalibrationChangesTheFiguresItsConstantsPrice() {
    QVERIFY(!report::calibratedFigures(nullptr).any());
    core::Calibration embedding;
    embedding.coefficients["embedding_bandwidth_gbps"] = {2000.0, 10.0};
    const auto e = report::calibratedFigures(&embedding);
    QVERIFY(e.embedding && !e.all_to_all && !e.replica_sync && !e.dense && e.any());
    core::Calibration network;
    network.coefficients["inter_node_bandwidth_gbps"] = {40.0, 1.0};
    const auto n = report::calibratedFigures(&network);
    QVERIFY(!n.embedding && n.all_to_all && n.replica_sync && n.dense);
    core::Calibration dense;
    dense.coefficients["dense_efficiency"] = {0.5, 0.01};
    const auto d = report::calibratedFigures(&dense);
    QVERIFY(!d.embedding && !d.all_to_all && d.dense);
  }

  void slowdownIsTheStepRatioAgainstTheBestFittingGrid() {
    planner::SweepResult sweep;
    sweep.grids = {gridOf(8, core::RankLayout::Strided, true), gridOf(4, core::RankLayout::Strided, true)};
    sweep.grids[0].step.step_ms = 2.0;
    sweep.grids[1].step.step_ms = 5.0;
    QCOMPARE(report::slowdownAgainstBest(sweep, sweep.grids[0]), 1.0);
    QCOMPARE(report::slowdownAgainstBest(sweep, sweep.grids[1]), 2.5);
    sweep.grids[0].fits = false;  // nothing fits first: no best to compare with
    QCOMPARE(report::slowdownAgainstBest(sweep, sweep.grids[1]), 1.0);
  }

  void peakMemoryIsTheFullestRank() {
    planner::GridResult g;
    g.ranks.resize(3);
    g.ranks[1].memory_bytes = 7;
    g.ranks[2].memory_bytes = 5;
    QCOMPARE(report::peakMemory(g), std::uint64_t{7});
  }
};

QTEST_MAIN(TestGridChoice)
#include "test_grid_choice.moc"
