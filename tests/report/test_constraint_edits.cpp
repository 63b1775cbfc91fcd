// The Plan page's constraint edits, without a window: pins, forced and
// forbidden sharding types, and the constraint list one line per requirement.
#include <QStringList>
#include <QtTest>

#include "shardscope/report/constraint_edits.h"

namespace core = shardscope::core;

class TestConstraintEdits : public QObject {
  Q_OBJECT

 private slots:
  // The edits themselves (Qt-free): force and forbid exclude each other, a
  // pin replaces a pin, every requirement is one removable line.
  void constraintEditsKeepForceAndForbidApart() {
    using namespace shardscope::report;
    core::Constraints c = withForbidden({}, "t1", core::ShardingType::RowWise);
    c = withForced(c, "t1", core::ShardingType::RowWise);  // forcing lifts the forbid
    QCOMPARE(c.tables.size(), 1u);
    QVERIFY(c.tables[0].force == core::ShardingType::RowWise);
    QVERIFY(c.tables[0].forbid.empty());
    c = withForbidden(c, "t1", core::ShardingType::RowWise);  // forbidding lifts the force
    QVERIFY(!c.tables[0].force.has_value());
    QVERIFY(c.tables[0].forbid == std::vector{core::ShardingType::RowWise});
    c = withForbidden(c, "t1", core::ShardingType::RowWise);  // no duplicates
    QCOMPARE(c.tables[0].forbid.size(), 1u);
    c = withPin(withPin(c, "t2", 3), "t2", 5);
    QCOMPARE(c.tables.size(), 2u);
    QVERIFY(c.tables[1].pin_ranks == std::vector<std::uint32_t>{5});
    QVERIFY(withoutTable(c, "t2").tables.size() == 1u);
  }
  void everyRequirementIsOneRemovableLine() {
    using namespace shardscope::report;
    core::Constraints c = withPin({}, "t1", 2);
    c = withForced(c, "t1", core::ShardingType::TableWise);
    c = withForbidden(c, "t2", core::ShardingType::DataParallel);
    c.rank_memory_caps.push_back({4, 1ull << 30});
    const std::vector<ConstraintEntry> entries = constraintEntries(c);
    QStringList texts;
    for (const auto& e : entries) texts << QString::fromStdString(e.text);
    QCOMPARE(texts, (QStringList{"t1: pinned to group rank 2", "t1: only table_wise", "t2: no data_parallel",
                                 "group rank 4: memory at most 1.0 GiB"}));
    // Removing t1's pin keeps its force; removing t2's only line drops t2.
    core::Constraints less = without(c, entries[0]);
    QCOMPARE(less.tables.size(), 2u);
    QVERIFY(less.tables[0].pin_ranks.empty() && less.tables[0].force.has_value());
    less = without(less, entries[2]);
    QCOMPARE(less.tables.size(), 1u);
    less = without(less, entries[3]);
    QVERIFY(less.rank_memory_caps.empty());
    QCOMPARE(QString::fromStdString(removeDescription(entries[2])), QString("Remove constraint t2: no data_parallel"));
  }
};

QTEST_MAIN(TestConstraintEdits)
#include "test_constraint_edits.moc"
