// The scaling sweep's world sizes: clusters resized with nodes of the same
// shape, the project's own N among the powers of two.
#include <QtTest>
#include <algorithm>

#include "shardscope/core/cluster.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/scaling_sweep.h"

namespace core = shardscope::core;
namespace planner = shardscope::planner;

class TestScalingSweep : public QObject {
  Q_OBJECT

 private slots:
  void scaledClustersKeepTheNodeShape() {
    const core::ClusterSpec h100 = core::defaultProject().cluster;
    const core::ClusterSpec big = core::resizedCluster(h100, 4096);
    QCOMPARE(big.nodes, 4096u / h100.gpus_per_node);
    QCOMPARE(big.gpus_per_node, h100.gpus_per_node);
    const core::ClusterSpec small = core::resizedCluster(h100, 4);
    QCOMPARE(small.nodes, 1u);
    QCOMPARE(small.gpus_per_node, 4u);
    const auto sizes = planner::scalingWorldSizes(core::resizedCluster(h100, 24));
    QVERIFY(std::find(sizes.begin(), sizes.end(), 24u) != sizes.end());
    QVERIFY(std::is_sorted(sizes.begin(), sizes.end()));
  }
};

QTEST_MAIN(TestScalingSweep)
#include "test_scaling_sweep.moc"
