// Grid enumeration and node topology of rank groups.
#include <QtTest>

#include "shardscope/core/presets.h"
#include "shardscope/planner/grid.h"

using namespace shardscope;
using namespace shardscope::planner;

class TestGrid : public QObject {
  Q_OBJECT
 private slots:
  void everyDivisorInBothLayouts() {
    const auto grids = enumerateGrids(core::clusterPreset("h100x64").value());
    QCOMPARE(grids.size(), 14u);  // 7 divisors of 64 x 2 layouts
    for (const auto& g : grids) {
      QCOMPARE(g.group_size * g.replicas, 64u);
      QCOMPARE(g.sharding_groups.size(), std::size_t(g.replicas));
      QCOMPARE(g.replica_groups.size(), std::size_t(g.group_size));
      QCOMPARE(g.sharding_groups, core::shardingGroups(64, g.group_size, g.layout));
    }
  }

  void stridedGroupOf8On64SpansEightNodes() {
    const Grid g = makeGrid(64, 8, 8, core::RankLayout::Strided);  // group 0 = 0,8,16,...
    QCOMPARE(g.sharding_topology[0].nodes_spanned, 8u);
    QCOMPARE(g.sharding_topology[0].intra_node_peer_fraction, 0.0);
    QVERIFY(g.replicaSyncIntraNode());  // replica groups [0..7] sit in one node
  }

  void contiguousGroupOf8IsOneNode() {
    const Grid g = makeGrid(64, 8, 8, core::RankLayout::Contiguous);
    QCOMPARE(g.sharding_topology[0].nodes_spanned, 1u);
    QCOMPARE(g.sharding_topology[0].intra_node_peer_fraction, 1.0);
    QVERIFY(!g.replicaSyncIntraNode());
  }

  void mixedGroupReportsPeerFraction() {
    // 16 ranks as M = 4 contiguous on 2-GPU nodes: each member has 1 of 3 peers on its node.
    const Grid g = makeGrid(16, 2, 4, core::RankLayout::Contiguous);
    QCOMPARE(g.sharding_topology[0].max_members_per_node, 2u);
    QVERIFY(std::abs(g.sharding_topology[0].intra_node_peer_fraction - 1.0 / 3.0) < 1e-12);
  }

  void groupSizesAreDivisors() { QCOMPARE(groupSizes(12), (std::vector<std::uint32_t>{1, 2, 3, 4, 6, 12})); }
};

QTEST_APPLESS_MAIN(TestGrid)
#include "test_grid.moc"
