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

  void commSplitsRebuildThePlansGroupsForEveryLayout() {
    // What each rank passes to MPI_Comm_split / ncclCommSplit must give back
    // exactly the plan's groups, with communicator rank = group rank.
    for (const RankLayout layout : {RankLayout::Strided, RankLayout::Contiguous})
      for (const std::uint32_t N : {1u, 8u, 12u, 64u})
        for (std::uint32_t M = 1; M <= N; ++M) {
          if (N % M != 0) continue;
          const RankGroups sg = shardingGroups(N, M, layout), rg = replicaGroups(N, M, layout);
          RankGroups rebuilt_s(sg.size(), std::vector<std::uint32_t>(M)),
              rebuilt_r(rg.size(), std::vector<std::uint32_t>(N / M));
          for (std::uint32_t rank = 0; rank < N; ++rank) {
            const auto c = commSplitOf(sg, rg, rank);
            QVERIFY(c.has_value());
            rebuilt_s.at(static_cast<std::size_t>(c->sharding_color)).at(static_cast<std::size_t>(c->sharding_key)) =
                rank;
            rebuilt_r.at(static_cast<std::size_t>(c->replica_color)).at(static_cast<std::size_t>(c->replica_key)) =
                rank;
            // The replica communicator's color is the group rank: replica group i holds member i of each group.
            QCOMPARE(c->replica_color, c->sharding_key);
          }
          QVERIFY(rebuilt_s == sg);
          QVERIFY(rebuilt_r == rg);
        }
    // A rank outside the groups, or in two, has no split.
    const RankGroups sg = {{0, 1}, {2, 3}}, rg = {{0, 2}, {1, 3}};
    QVERIFY(!commSplitOf(sg, rg, 4).has_value());
    QVERIFY(!commSplitOf({{0, 1}, {1, 2}}, rg, 1).has_value());
    QCOMPARE(*commSplitOf(sg, rg, 3), (CommSplit{1, 1, 1, 1}));
  }

  void parsesLayoutNames() {
    QCOMPARE(rankLayoutFromString("strided"), std::optional(RankLayout::Strided));
    QCOMPARE(rankLayoutFromString("contiguous"), std::optional(RankLayout::Contiguous));
    QVERIFY(!rankLayoutFromString("diagonal"));
  }
};

QTEST_APPLESS_MAIN(TestRankLayout)
#include "test_rank_layout.moc"
