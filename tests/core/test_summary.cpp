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
    QCOMPARE(formatBytes(0), std::string("0 B"));
    QCOMPARE(formatBytes(std::nan("")), std::string("?"));
    QCOMPARE(formatBytes(std::ldexp(1.0, 62)), std::string("4.0 EiB"));
    QCOMPARE(formatBytes(std::ldexp(1.0, 70)), std::string("1024.0 EiB"));  // EiB is the last unit
    QCOMPARE(formatCount(40000000), std::string("40.0M"));
    QCOMPARE(formatCount(3067956), std::string("3.07M"));
    QCOMPARE(formatCount(155), std::string("155"));
  }

  void bytesInTheFormsCallersAskFor() {
    // Exact powers of two as axis ticks and bin edges read: whole binary units.
    const BytesFormat whole{.decimals = 0};
    QCOMPARE(formatBytes(1, whole), std::string("1 B"));
    QCOMPARE(formatBytes(512, whole), std::string("512 B"));
    QCOMPARE(formatBytes(1 << 10, whole), std::string("1 KiB"));
    QCOMPARE(formatBytes(1 << 22, whole), std::string("4 MiB"));
    QCOMPARE(formatBytes(std::ldexp(1.0, 34), whole), std::string("16 GiB"));
    QCOMPARE(formatBytes(std::ldexp(1.0, 48), whole), std::string("256 TiB"));
    QCOMPARE(formatBytes(std::ldexp(1.0, 50), whole), std::string("1 PiB"));
    QCOMPARE(formatBytes(std::ldexp(1.0, 69), whole), std::string("512 EiB"));
    // Message sizes: a decimal only below 10 of the unit.
    const BytesFormat short_form{.whole_from_ten = true};
    QCOMPARE(formatBytes(1536, short_form), std::string("1.5 KiB"));
    QCOMPARE(formatBytes(12 << 10, short_form), std::string("12 KiB"));
    QCOMPARE(formatBytes(3.8 * (1 << 20), short_form), std::string("3.8 MiB"));
    QCOMPARE(formatBytes(256 << 20, short_form), std::string("256 MiB"));
    QCOMPARE(formatBytes(100.4, short_form), std::string("100 B"));
    // One unit for a figure or a column.
    const BytesFormat gib{.unit = ByteUnit::GiB};
    QCOMPARE(formatBytes(1 << 28, gib), std::string("0.2 GiB"));  // 0.25: printf's rounding
    QCOMPARE(formatBytes(80ull << 30, {.unit = ByteUnit::GiB, .unit_name = false}), std::string("80.0"));
    QCOMPARE(formatBytes(80ull << 30, {.unit = ByteUnit::GiB, .trim_zeros = true}), std::string("80 GiB"));
    QCOMPARE(formatBytes(79.6 * (1ull << 30), {.unit = ByteUnit::GiB, .trim_zeros = true}), std::string("79.6 GiB"));
    QCOMPARE(formatBytes(1ull << 40, {.unit = ByteUnit::GiB, .decimals = 2, .unit_name = false, .digit_groups = true}),
             std::string("1,024.00"));
    QCOMPARE(formatBytes(-1.5 * (1 << 30), gib), std::string("-1.5 GiB"));
  }

  void digitGroupsOfTheWholePart() {
    QCOMPARE(groupDigits("0"), std::string("0"));
    QCOMPARE(groupDigits("999"), std::string("999"));
    QCOMPARE(groupDigits("1000"), std::string("1,000"));
    QCOMPARE(groupDigits("1234567"), std::string("1,234,567"));
    QCOMPARE(groupDigits("-1024.00"), std::string("-1,024.00"));
    QCOMPARE(groupDigits("123456.7890"), std::string("123,456.7890"));
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
};

QTEST_APPLESS_MAIN(TestSummary)
#include "test_summary.moc"
