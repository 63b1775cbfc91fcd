// TorchRec's shard geometry.
#include <QtTest>

#include "shardscope/planner/sharding.h"

using namespace shardscope::planner;

class TestShardingGeometry : public QObject {
  Q_OBJECT
 private slots:
  void rowWiseBlocksAreCeilOfRowsOverWays() {
    const auto b = rowWiseBlocks(10, 4);  // 3,3,3,1
    QCOMPARE(b.size(), 4u);
    QCOMPARE(b[0].rows, 3u);
    QCOMPARE(b[3].offset, 9u);
    QCOMPARE(b[3].rows, 1u);
  }

  void rowWiseSkipsEmptyBlocks() {
    const auto b = rowWiseBlocks(3, 8);
    QCOMPARE(b.size(), 3u);
    for (const auto& x : b) QCOMPARE(x.rows, 1u);
  }

  void columnWidthIsSmallestDivisorAtLeast128() {
    QCOMPARE(columnShardWidth(128), 128u);  // cannot split
    QCOMPARE(columnShardWidth(256), 128u);
    QCOMPARE(columnShardWidth(384), 128u);
    QCOMPARE(columnShardWidth(320), 160u);
    QCOMPARE(columnShardWidth(64), 64u);
  }
};

QTEST_APPLESS_MAIN(TestShardingGeometry)
#include "test_sharding_geometry.moc"
