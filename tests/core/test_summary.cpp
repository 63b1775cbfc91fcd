// Summaries print what a planner looks at first.
#include <QtTest>

#include <cmath>

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

  void relativeErrorsPastAThousandPercentReadAsFactors() {
    QCOMPARE(formatRelativeError(0.123), std::string("+12.3%"));
    QCOMPARE(formatRelativeError(-0.45), std::string("-45.0%"));
    QCOMPARE(formatRelativeError(10.0), std::string("+1000.0%"));
    QCOMPARE(formatRelativeError(743.015), std::string("744x"));  // never "74401.5%"
    QCOMPARE(formatRelativeError(11.5), std::string("12.5x"));
    QCOMPARE(formatRelativeError(std::nan("")), std::string("-"));
    QCOMPARE(formatErrorSize(0.123), std::string("12.3%"));
    QCOMPARE(formatErrorSize(743.015), std::string("744x"));
    QCOMPARE(formatErrorSize(-1.0), std::string("-"));
  }

  void fittedConstantsInEngineeringNotationWithTheirError() {
    QCOMPARE(formatWithError(1.234, 0.04), std::string("1.23 \u00b1 0.04"));
    QCOMPARE(formatWithError(2100.0, 35.0), std::string("(2.10 \u00b1 0.04)e3"));
    QCOMPARE(formatWithError(8.5e-7, 1.2e-8), std::string("(850 \u00b1 12)e-9"));
    QCOMPARE(formatWithError(6.5, 0.0), std::string("6.50 \u00b1 ?"));
    QCOMPARE(formatWithError(1.5, 0.001), std::string("1.50 \u00b1 0.001"));  // the error keeps a digit of its own
    QVERIFY(notDetermined(2.0, 3.5));
    QVERIFY(!notDetermined(2.0, 0.5));
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
