// How the scaling heatmap words weak scaling, without a window: the column
// labels, what they say in full, and a cell's hover text.
#include <QtTest>
#include <string>

#include "shardscope/report/weak_scaling_text.h"
#include "weak_scaling_fixture.h"

namespace planner = shardscope::planner;
using shardscope::report::scalingCellDescription;
using shardscope::report::stepPhaseLabel;
using shardscope::report::weakScalingDescription;
using shardscope::report::weakScalingLabel;
using shardscope::test::threeWorldSizes;

namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestWeakScalingText : public QObject {
  Q_OBJECT

 private slots:
  void labelsAreShort() {
    QCOMPARE(std::string(stepPhaseLabel(planner::StepPhase::Embedding)), std::string("emb"));
    QCOMPARE(std::string(stepPhaseLabel(planner::StepPhase::AllToAll)), std::string("a2a"));
    QCOMPARE(std::string(stepPhaseLabel(planner::StepPhase::ReplicaSync)), std::string("sync"));
    QCOMPARE(std::string(stepPhaseLabel(planner::StepPhase::Dense)), std::string("dense"));
    QCOMPARE(std::string(stepPhaseLabel(planner::StepPhase::Memory)), std::string("memory"));
  }

  void aColumnIsLabelledWithItsCauseOnlyWhereItDropped() {
    const planner::ScalingResult r = threeWorldSizes();
    const auto points = r.weakScaling();
    QCOMPARE(points.size(), std::size_t{3});
    QCOMPARE(weakScalingLabel(points[0]), std::string("memory"));  // nothing fits
    QCOMPARE(weakScalingLabel(points[1]), std::string());          // the first that fits: nothing to drop from
    QVERIFY(points[2].drop);
    QCOMPARE(weakScalingLabel(points[2]), std::string("sync"));
  }

  void theDescriptionSaysHowMuchLessAndWhatGrew() {
    const planner::ScalingResult r = threeWorldSizes();
    const auto points = r.weakScaling();
    QCOMPARE(weakScalingDescription(points, 0), std::string("N = 8: no grid fits in HBM (memory)"));
    const std::string fits = weakScalingDescription(points, 1);
    QVERIFY2(has(fits, "N = 16: best M = 8 \u00d7 R = 2 (strided)") && has(fits, "100% of the best world size") &&
                 !has(fits, "grew"),
             fits.c_str());
    // 2.25 ms -> 4.25 ms per step: 47% less throughput per GPU, the sync grew 2 ms.
    const std::string drop = weakScalingDescription(points, 2);
    QVERIFY2(has(drop, "47% less throughput per GPU than at N = 16") &&
                 has(drop, "replica sync grew most (+2.00 ms per step)"),
             drop.c_str());
    QCOMPARE(weakScalingDescription(points, 3), std::string());
  }

  void aCellGivesItsStepByPhase() {
    const planner::ScalingResult r = threeWorldSizes();
    const std::string cell = scalingCellDescription(r.cells[2], r.bestPerGpu());
    for (const char* part :
         {"N = 32, M = 8 \u00d7 R = 4 (strided)", "step 4.25 ms", "embedding 1.00 ms", "all-to-all 0.50 ms",
          "replica sync 2.50 ms", "dense 0.25 ms", "samples/s per GPU", "53% of the best cell"})
      QVERIFY2(has(cell, part), (std::string(part) + " not in: " + cell).c_str());
    QVERIFY(has(scalingCellDescription(r.cells[0], r.bestPerGpu()), "does not fit in HBM"));
  }
};

QTEST_MAIN(TestWeakScalingText)
#include "test_weak_scaling_text.moc"
