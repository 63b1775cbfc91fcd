// The table-size histogram's bins: factors of 4 of weight bytes, so every
// KiB, MiB and GiB starts a bin, from the smallest table's bin to the
// largest's, the largest names first.
#include <QtTest>
#include <cstdint>
#include <string>

#include "shardscope/report/table_size_histogram.h"

namespace core = shardscope::core;
namespace report = shardscope::report;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

// An fp32 table of dim 1 weighing `bytes`, named t<index>.
core::TableSpec tableOf(std::size_t index, std::uint64_t bytes) {
  core::TableSpec t;
  t.name = std::to_string(index);
  t.name.insert(0, 1, 't');
  t.rows = bytes / 4;
  t.dim = 1;
  return t;
}

}  // namespace

class TestTableSizeHistogram : public QObject {
  Q_OBJECT

 private slots:
  void binEdgesArePowersOfFour() {
    QCOMPARE(report::binIndexOf(0), 0);
    QCOMPARE(report::binIndexOf(1), 0);
    QCOMPARE(report::binIndexOf(3), 0);
    QCOMPARE(report::binIndexOf(4), 1);
    QCOMPARE(report::binIndexOf(kMiB - 1), 9);
    QCOMPARE(report::binIndexOf(kMiB), 10);
    QCOMPARE(report::binIndexOf(4 * kMiB - 1), 10);
    QCOMPARE(report::binIndexOf(4 * kMiB), 11);
    QCOMPARE(report::binIndexOf(UINT64_MAX), 31);
    for (int k = 0; k < 31; ++k) QCOMPARE(report::binLowBytes(k + 1), 4.0 * report::binLowBytes(k));
  }

  void everyBinaryUnitStartsABin() {
    // 1 KiB, 1 MiB, 1 GiB, 1 TiB, 1 PiB: the labelled ticks fall on bin edges.
    double unit = 1.0;
    for (int u = 0; u <= 5; ++u, unit *= 1024.0) {
      QCOMPARE(report::binLowBytes(u * report::kBinsPerBinaryUnit), unit);
      QCOMPARE(report::binIndexOf(static_cast<std::uint64_t>(unit)), u * report::kBinsPerBinaryUnit);
    }
  }

  void binsSpanTheTablesWithEmptyBinsKept() {
    const std::vector<core::TableSpec> tables = {tableOf(0, 1 * kMiB), tableOf(1, 2 * kMiB), tableOf(2, 1 * kGiB),
                                                 tableOf(3, 2 * kGiB)};
    const std::vector<report::TableSizeBin> bins = report::tableSizeBins(tables);
    QCOMPARE(bins.size(), std::size_t{6});  // 1 MiB .. 4 GiB
    QCOMPARE(bins.front().index, 10);
    QCOMPARE(bins.front().low_bytes, static_cast<double>(kMiB));
    QCOMPARE(bins.front().high_bytes, static_cast<double>(4 * kMiB));
    QCOMPARE(bins.front().tables, 2);
    QVERIFY(bins.front().largest == (std::vector<std::size_t>{1, 0}));  // 2 MiB, then 1 MiB
    for (std::size_t i = 1; i + 1 < bins.size(); ++i) {
      QCOMPARE(bins[i].tables, 0);
      QCOMPARE(bins[i].low_bytes, bins[i - 1].high_bytes);  // no gaps between bins
    }
    QCOMPARE(bins.back().low_bytes, static_cast<double>(kGiB));
    QCOMPARE(bins.back().tables, 2);
    QCOMPARE(bins.back().total_bytes, 3.0 * kGiB);
    QVERIFY(report::tableSizeBins({}).empty());
  }

  void eachTableIsInExactlyOneBin() {
    // Sizes on, just below and just above edges, from 4 bytes to 64 GiB.
    std::vector<core::TableSpec> tables;
    for (std::uint64_t bytes = 4; bytes <= 64 * kGiB; bytes *= 4) {
      for (std::uint64_t b : {bytes, bytes + 4, bytes * 2, bytes * 4 - 4}) {
        tables.push_back(tableOf(tables.size(), b));
      }
    }
    const std::vector<report::TableSizeBin> bins = report::tableSizeBins(tables);
    int counted = 0;
    for (const report::TableSizeBin& b : bins) counted += b.tables;
    QCOMPARE(counted, static_cast<int>(tables.size()));
    for (const core::TableSpec& t : tables) {
      const auto bytes = static_cast<double>(t.weightBytes());
      int holding = 0;
      for (const report::TableSizeBin& b : bins) holding += b.low_bytes <= bytes && bytes < b.high_bytes ? 1 : 0;
      QVERIFY2(holding == 1, t.name.c_str());
    }
  }

  void largestTablesAreNamedFirstAndAtMostEight() {
    std::vector<core::TableSpec> tables;
    for (std::uint64_t i = 0; i < 12; ++i) tables.push_back(tableOf(i, (16 + i) * kMiB));
    const std::vector<report::TableSizeBin> bins = report::tableSizeBins(tables);
    QCOMPARE(bins.size(), std::size_t{1});  // 16 MiB .. 64 MiB
    QCOMPARE(bins.front().tables, 12);
    QCOMPARE(bins.front().largest.size(), report::kMaxNamesPerBin);
    QCOMPARE(bins.front().largest.front(), std::size_t{11});
    QCOMPARE(bins.front().largest.back(), std::size_t{4});
  }
};

QTEST_MAIN(TestTableSizeHistogram)
#include "test_table_size_histogram.moc"
