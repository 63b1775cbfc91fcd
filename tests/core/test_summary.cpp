// Summaries print what a planner looks at first.
#include <QtTest>

#include "shardscope/core/presets.h"
#include "shardscope/core/summary.h"

using namespace shardscope::core;

class TestSummary : public QObject {
  Q_OBJECT
 private slots:
  void rankRangesFoldRuns() {
    QCOMPARE(formatRankRanges({5, 0, 1, 2, 3, 7, 8, 3}), std::string("0-3, 5, 7, 8"));
    QCOMPARE(formatRankRanges({}), std::string());
    QCOMPARE(asciiLower("ncclDevKernel_AllReduce"), std::string("nccldevkernel_allreduce"));
  }

  void formatsBytesAndCounts() {
    QCOMPARE(formatBytes(512), std::string("512 B"));
    QCOMPARE(formatBytes(1536), std::string("1.5 KiB"));
    QCOMPARE(formatBytes(80ull << 30), std::string("80.0 GiB"));
    QCOMPARE(formatCount(40000000), std::string("40.0M"));
    QCOMPARE(formatCount(3067956), std::string("3.07M"));
    QCOMPARE(formatCount(155), std::string("155"));
  }

  void modelSummaryListsLargestTablesFirst() {
    const std::string s = formatModelSummary(modelPreset("dcnv2").value());
    QVERIFY2(s.find("tables: 26, embedding weights 97.4 GiB, 214 lookups per sample") != std::string::npos, s.c_str());
    const auto first = s.find("cat_0");
    const auto small = s.find("cat_5");
    QVERIFY(first != std::string::npos && small != std::string::npos && first < small);
  }

  void clusterSummaryShowsTheGrid() {
    const std::string s = formatClusterSummary(clusterPreset("h100x64").value());
    QVERIFY2(s.find("8 nodes x 8 GPUs = 64 GPUs") != std::string::npos, s.c_str());
  }
};

QTEST_APPLESS_MAIN(TestSummary)
#include "test_summary.moc"
