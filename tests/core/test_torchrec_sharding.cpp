// TorchRec's shard geometry and placement rules (core/torchrec_sharding.h):
// what a plan for the TorchRec target must look like for TorchRec to run it
// exactly as priced.
#include <QtTest>

#include "shardscope/core/rank_layout.h"
#include "shardscope/core/torchrec_sharding.h"

using namespace shardscope::core;

namespace {
// N = 8 GPUs, 2 per node, M = 4, R = 2, contiguous: group 0 = [0, 1, 2, 3],
// node groups of L = 2 group ranks ({0, 1} and {2, 3}).
ShardPlan planWith(TablePlacement t) {
  ShardPlan p;
  p.world_size = 8;
  p.gpus_per_node = 2;
  p.sharding_group_size = 4;
  p.replicas = 2;
  p.layout = RankLayout::Contiguous;
  p.tables.push_back(std::move(t));
  return p;
}

TablePlacement table(std::uint64_t rows, std::uint32_t dim, ShardingType type, std::vector<Shard> shards) {
  return TablePlacement{"t", rows, dim, type, std::move(shards)};
}

QString problemsOf(const ShardPlan& p) {
  QStringList out;
  for (const auto& x : torchRecLayoutProblems(p)) out << QString::fromStdString(x.path + ": " + x.expectation);
  return out.join('\n');
}
}  // namespace

class TestTorchRecSharding : public QObject {
  Q_OBJECT
 private slots:
  void rowWiseBlocksAreCeilOfRowsOverWays() {
    QCOMPARE(rowWiseBlocks(10, 4), (std::vector<RowBlock>{{0, 3}, {3, 3}, {6, 3}, {9, 1}}));
  }

  void rowWiseBlocksKeepEmptyTrailingBlocks() {
    // TorchRec's own example: 5 rows on 4 ranks -> 2, 2, 1, 0.
    QCOMPARE(rowWiseBlocks(5, 4), (std::vector<RowBlock>{{0, 2}, {2, 2}, {4, 1}, {5, 0}}));
    // 9 rows on 4: ceil = 3, so the fourth block is empty, not 3,2,2,2.
    QCOMPARE(rowWiseBlocks(9, 4), (std::vector<RowBlock>{{0, 3}, {3, 3}, {6, 3}, {9, 0}}));
    const auto b = rowWiseBlocks(3, 8);
    QCOMPARE(b.size(), 8u);
    for (std::size_t k = 0; k < 8; ++k) QCOMPARE(b[k].rows, k < 3 ? 1u : 0u);
  }

  void columnWidthIsSmallestDivisorAtLeast128() {
    QCOMPARE(columnShardWidth(128), 128u);  // cannot split
    QCOMPARE(columnShardWidth(256), 128u);
    QCOMPARE(columnShardWidth(384), 128u);
    QCOMPARE(columnShardWidth(320), 160u);
    QCOMPARE(columnShardWidth(64), 64u);
  }

  void rowWiseInRankOrderWithEmptyBlocksPasses() {
    const auto p = planWith(
        table(5, 16, ShardingType::RowWise, {{0, 0, 2, 0, 16}, {1, 2, 2, 0, 16}, {2, 4, 1, 0, 16}, {3, 5, 0, 0, 16}}));
    QCOMPARE(problemsOf(p), QString());
  }

  void rowWiseNeedsOneShardPerGroupRank() {
    // 5 rows as 2,2,1 on three ranks: TorchRec indexes shard k on rank k for k < M.
    const auto p =
        planWith(table(5, 16, ShardingType::RowWise, {{0, 0, 2, 0, 16}, {1, 2, 2, 0, 16}, {2, 4, 1, 0, 16}}));
    QVERIFY2(problemsOf(p).contains("/tables/0/shards: expected 4 row_wise shards of table \"t\""),
             qPrintable(problemsOf(p)));
  }

  void rowWiseBlocksOnOtherRanksAreRejected() {
    // Blocks 0 and 1 swapped: TorchRec would still put block 0 on rank 0.
    const auto p = planWith(
        table(8, 16, ShardingType::RowWise, {{1, 0, 2, 0, 16}, {0, 2, 2, 0, 16}, {2, 4, 2, 0, 16}, {3, 6, 2, 0, 16}}));
    QVERIFY2(
        problemsOf(p).contains("/tables/0/shards/0: expected block 0 of table \"t\" to be rows [0, 2) on group rank 0"),
        qPrintable(problemsOf(p)));
  }

  void rowWiseBlocksOfOtherSizesAreRejected() {
    // 9 rows as 3,2,2,2 instead of TorchRec's 3,3,3,0.
    const auto p = planWith(
        table(9, 16, ShardingType::RowWise, {{0, 0, 3, 0, 16}, {1, 3, 2, 0, 16}, {2, 5, 2, 0, 16}, {3, 7, 2, 0, 16}}));
    QVERIFY2(problemsOf(p).contains("expected block 1 of table \"t\" to be rows [3, 6) on group rank 1"),
             qPrintable(problemsOf(p)));
  }

  void tableRowWiseIsInOrderOnOneNodeGroup() {
    QCOMPARE(problemsOf(planWith(table(10, 16, ShardingType::TableRowWise, {{2, 0, 5, 0, 16}, {3, 5, 5, 0, 16}}))),
             QString());
    // Reversed inside the node group.
    QVERIFY(problemsOf(planWith(table(10, 16, ShardingType::TableRowWise, {{3, 0, 5, 0, 16}, {2, 5, 5, 0, 16}})))
                .contains("expected block 0 of table \"t\" to be rows [0, 5) on group rank 2"));
    // Spanning two node groups.
    QVERIFY(problemsOf(planWith(table(10, 16, ShardingType::TableRowWise, {{1, 0, 5, 0, 16}, {2, 5, 5, 0, 16}})))
                .contains("expected block 0 of table \"t\" to be rows [0, 5) on group rank 0"));
    // Over all four ranks instead of a node group of two.
    QVERIFY(problemsOf(planWith(table(8, 16, ShardingType::TableRowWise,
                                      {{0, 0, 2, 0, 16}, {1, 2, 2, 0, 16}, {2, 4, 2, 0, 16}, {3, 6, 2, 0, 16}})))
                .contains("expected 2 table_row_wise shards"));
  }

  void gridColumnBlocksEachSitOnANodeGroupInOrder() {
    QCOMPARE(problemsOf(planWith(
                 table(100, 256, ShardingType::GridShard,
                       {{0, 0, 50, 0, 128}, {1, 50, 50, 0, 128}, {2, 0, 50, 128, 128}, {3, 50, 50, 128, 128}}))),
             QString());
    // The second column block's row blocks swapped: TorchRec routes row block j
    // to rank j of the node group and returns wrong embeddings.
    QVERIFY(problemsOf(
                planWith(table(100, 256, ShardingType::GridShard,
                               {{0, 0, 50, 0, 128}, {1, 50, 50, 0, 128}, {3, 0, 50, 128, 128}, {2, 50, 50, 128, 128}})))
                .contains("/tables/0/shards/2: expected block 0 of table \"t\" to be rows [0, 50) on group rank 2"));
    // A column block spanning two node groups.
    QVERIFY(!problemsOf(planWith(table(
                            100, 256, ShardingType::GridShard,
                            {{1, 0, 50, 0, 128}, {2, 50, 50, 0, 128}, {0, 0, 50, 128, 128}, {3, 50, 50, 128, 128}})))
                 .isEmpty());
  }

  void tableWiseIsOneShardAndColumnShardsSpanAllRows() {
    QVERIFY(problemsOf(planWith(table(10, 16, ShardingType::TableWise, {{0, 0, 5, 0, 16}, {0, 5, 5, 0, 16}})))
                .contains("expected one table_wise shard"));
    QCOMPARE(problemsOf(planWith(table(10, 256, ShardingType::ColumnWise, {{0, 0, 10, 0, 128}, {3, 0, 10, 128, 128}}))),
             QString());
    QVERIFY(problemsOf(planWith(table(10, 256, ShardingType::ColumnWise,
                                      {{0, 0, 5, 0, 128}, {1, 5, 5, 0, 128}, {3, 0, 10, 128, 128}})))
                .contains("expected a column_wise shard spanning all 10 rows"));
  }

  void nodeGroupComesFromTheLayout() {
    // The same grid table strided (N = 8, 2 per node, M = 4, R = 2): group 0 is
    // [0, 2, 4, 6], every member on its own node, so L = 1 and a column block
    // of two row blocks cannot be laid out the TorchRec way.
    auto p = planWith(table(100, 256, ShardingType::GridShard,
                            {{0, 0, 50, 0, 128}, {1, 50, 50, 0, 128}, {2, 0, 50, 128, 128}, {3, 50, 50, 128, 128}}));
    p.layout = RankLayout::Strided;
    QCOMPARE(nodeGroupSize(8, 2, 4, RankLayout::Strided), 1u);
    QVERIFY(problemsOf(p).contains("expected 1 grid_shard (columns from 0) shards"));
  }
};

QTEST_APPLESS_MAIN(TestTorchRecSharding)
#include "test_torchrec_sharding.moc"
