// The table-size histogram's bins: half decades of weight bytes from the
// smallest table's to the largest's, the largest names first.
#include <QtTest>

#include "shardscope/report/table_size_histogram.h"

namespace core = shardscope::core;
namespace report = shardscope::report;

namespace {

// An fp32 table of dim 1 weighing `bytes`.
core::TableSpec tableOf(const char* name, std::uint64_t bytes) {
  core::TableSpec t;
  t.name = name;
  t.rows = bytes / 4;
  t.dim = 1;
  return t;
}

}  // namespace

class TestTableSizeHistogram : public QObject {
  Q_OBJECT

 private slots:
  void exactPowersOfTenStartTheirBin() {
    QCOMPARE(report::binIndexOf(1e6), 12);
    QCOMPARE(report::binIndexOf(999999.0), 11);
    QCOMPARE(report::binIndexOf(0.5), 0);
    QCOMPARE(report::binLowBytes(12), 1e6);
  }

  void binsSpanTheTablesWithEmptyBinsKept() {
    const std::vector<core::TableSpec> tables = {tableOf("a", 1'000'000), tableOf("b", 2'000'000),
                                                 tableOf("c", 1'000'000'000), tableOf("d", 2'000'000'000)};
    const std::vector<report::TableSizeBin> bins = report::tableSizeBins(tables);
    QCOMPARE(bins.size(), std::size_t{7});  // 1 MB .. 3.16 GB
    QCOMPARE(bins.front().low_bytes, 1e6);
    QCOMPARE(bins.front().tables, 2);
    QVERIFY(bins.front().largest == (std::vector<std::size_t>{1, 0}));  // b, then a
    QCOMPARE(bins[1].tables, 0);
    QCOMPARE(bins.back().tables, 2);
    QCOMPARE(bins.back().total_bytes, 3e9);
    QVERIFY(report::tableSizeBins({}).empty());
  }
};

QTEST_MAIN(TestTableSizeHistogram)
#include "test_table_size_histogram.moc"
