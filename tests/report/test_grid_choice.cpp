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
