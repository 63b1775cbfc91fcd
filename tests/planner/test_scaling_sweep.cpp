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

  // Nodes of 72 GPUs (an NVL72 rack): world sizes are whole racks or part of
  // one, never a 256-GPU "node" that no rack is.
  void worldSizesAreWholeNodesOfTheClustersShape() {
    core::ClusterSpec rack = core::defaultProject().cluster;
    rack.gpus_per_node = 72;
    rack.nodes = 2;
    rack.network.nics_per_node = 72;
    const auto sizes = planner::scalingWorldSizes(rack);
    const std::vector<std::uint32_t> want = {8, 16, 32, 64, 72, 144, 288, 576, 1152, 2304};
    QCOMPARE(sizes, want);
    for (const std::uint32_t n : sizes) {
      const core::ClusterSpec c = core::resizedCluster(rack, n);
      QVERIFY(c.gpus_per_node <= 72);
      QCOMPARE(c.worldSize(), n);
    }
  }
};

QTEST_MAIN(TestScalingSweep)
#include "test_scaling_sweep.moc"
