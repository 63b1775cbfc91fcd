// Rank layouts must match TorchRec's DMPCollection (docs/ARCHITECTURE.md).
#include <QtTest>

#include <algorithm>
#include <set>

#include "shardscope/core/rank_layout.h"

using namespace shardscope::core;

class TestRankLayout : public QObject {
  Q_OBJECT
 private slots:
  void stridedGroupsFollowDmpCollection() {
    // N = 8, M = 4, R = 2: groups [0,2,4,6] and [1,3,5,7]; replica groups [0,1], [2,3], ...
    const auto s = shardingGroups(8, 4, RankLayout::Strided);
    QCOMPARE(s, (RankGroups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
    QCOMPARE(replicaGroups(8, 4, RankLayout::Strided), (RankGroups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  }

  void contiguousGroupsAreBlocks() {
    QCOMPARE(shardingGroups(8, 4, RankLayout::Contiguous), (RankGroups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
    QCOMPARE(replicaGroups(8, 4, RankLayout::Contiguous), (RankGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  }

  void nodeGroupSizeIsTheLargestBlockOfConsecutiveMembersOnOneNode() {
    // Strided, R <= GPUs per node: G / R members of a group share a node.
    QCOMPARE(nodeGroupSize(64, 8, 16, RankLayout::Strided), 2u);  // R = 4
    QCOMPARE(nodeGroupSize(16, 8, 8, RankLayout::Strided), 4u);   // R = 2: [0,2,4,6 | 8,10,12,14]
    QCOMPARE(nodeGroupSize(8, 8, 8, RankLayout::Strided), 8u);    // R = 1: one node
    QCOMPARE(nodeGroupSize(64, 8, 64, RankLayout::Strided), 8u);  // R = 1: the nodes themselves
    QCOMPARE(nodeGroupSize(128, 8, 8, RankLayout::Strided), 1u);  // R = 16 > G: every member on its own node
    // Contiguous: the nodes, or the whole group when it fits in one.
    QCOMPARE(nodeGroupSize(64, 8, 16, RankLayout::Contiguous), 8u);
    QCOMPARE(nodeGroupSize(64, 8, 4, RankLayout::Contiguous), 4u);
    // R = 3 does not divide G = 8: nodes hold 3, 3 and 2 members of group 0, so
    // no block of 2, 4 or 8 stays on one node.
    QCOMPARE(nodeGroupSize(24, 8, 8, RankLayout::Strided), 1u);
    // Fewer GPUs than a node.
    QCOMPARE(nodeGroupSize(4, 8, 4, RankLayout::Strided), 4u);
  }

  void nodeGroupBlocksNeverSpanNodes() {
    for (std::uint32_t n : {8u, 24u, 64u, 96u, 128u})
      for (std::uint32_t g : {2u, 4u, 8u})
        for (std::uint32_t m = 1; m <= n; ++m) {
          if (n % m || (n > g && n % g)) continue;
          for (auto layout : {RankLayout::Strided, RankLayout::Contiguous}) {
            const std::uint32_t L = nodeGroupSize(n, g, m, layout);
            QVERIFY(L >= 1 && m % L == 0);
            for (const auto& grp : shardingGroups(n, m, layout))
              for (std::uint32_t i = 0; i < m; ++i) QCOMPARE(grp[i] / g, grp[i / L * L] / g);
          }
        }
  }

  void groupsPartitionTheRanksForEveryDivisor() {
    for (std::uint32_t n : {1u, 8u, 12u, 64u, 96u}) {
      for (std::uint32_t m = 1; m <= n; ++m) {
        if (n % m) continue;
        for (auto layout : {RankLayout::Strided, RankLayout::Contiguous}) {
          const auto s = shardingGroups(n, m, layout);
          const auto r = replicaGroups(n, m, layout);
          QCOMPARE(s.size(), std::size_t(n / m));
          QCOMPARE(r.size(), std::size_t(m));
          std::set<std::uint32_t> seen;
          for (const auto& g : s)
            for (auto x : g) QVERIFY(seen.insert(x).second);
          QCOMPARE(seen.size(), std::size_t(n));
          // Replica group i holds member i of every sharding group.
          for (std::uint32_t i = 0; i < m; ++i)
            for (std::uint32_t g = 0; g < n / m; ++g) QCOMPARE(r[i][g], s[g][i]);
        }
      }
    }
  }

  void stridedReplicaSyncStaysInsideANodeWhenReplicasFit() {
    // R = 4 <= 8 GPUs per node: each replica group lies inside one node.
    for (const auto& g : replicaGroups(64, 16, RankLayout::Strided)) QCOMPARE(g.front() / 8, g.back() / 8);
  }

  void parsesLayoutNames() {
    QCOMPARE(rankLayoutFromString("strided"), std::optional(RankLayout::Strided));
    QCOMPARE(rankLayoutFromString("contiguous"), std::optional(RankLayout::Contiguous));
    QVERIFY(!rankLayoutFromString("diagonal"));
  }
};

QTEST_APPLESS_MAIN(TestRankLayout)
#include "test_rank_layout.moc"
