// Sizes, durations and whole numbers as both programs read them from a
// command line: what is accepted, what each suffix means, and that malformed
// or overflowing text is refused rather than misread.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <limits>

#include "shardscope/core/eta.h"
#include "shardscope/core/time_text.h"
#include "shardscope/core/units.h"

using namespace shardscope::core;
using namespace std::chrono_literals;

class TestUnits : public QObject {
  Q_OBJECT
 private slots:
  void wholeNumbersAreDigitsOnlyWithinTheirRange() {
    QCOMPARE(parseWholeNumber("0"), std::optional<std::uint64_t>(0));
    QCOMPARE(parseWholeNumber("42", 1, 100), std::optional<std::uint64_t>(42));
    QCOMPARE(parseWholeNumber("007"), std::optional<std::uint64_t>(7));
    QCOMPARE(parseWholeNumber("18446744073709551615"), std::optional<std::uint64_t>(UINT64_MAX));
    QVERIFY(!parseWholeNumber("0", 1, 100));
    QVERIFY(!parseWholeNumber("101", 1, 100));
  }

  void malformedWholeNumbersAreRefused() {
    for (const char* bad : {"", " 1", "1 ", "+1", "-1", "1.0", "1e3", "0x10", "12a", "1,000", "18446744073709551616",
                            "99999999999999999999999"})
      QVERIFY2(!parseWholeNumber(bad), bad);
  }

  void sizesTakeBinarySuffixes() {
    QCOMPARE(parseSize("1048576"), std::optional<std::uint64_t>(1048576));
    QCOMPARE(parseSize("512B"), std::optional<std::uint64_t>(512));
    QCOMPARE(parseSize("4K"), std::optional<std::uint64_t>(4096));
    QCOMPARE(parseSize("4KiB"), std::optional<std::uint64_t>(4096));
    QCOMPARE(parseSize("512M"), std::optional<std::uint64_t>(512ull << 20));
    QCOMPARE(parseSize("512MiB"), std::optional<std::uint64_t>(512ull << 20));
    QCOMPARE(parseSize("6G"), std::optional<std::uint64_t>(6ull << 30));
    QCOMPARE(parseSize("64GiB"), std::optional<std::uint64_t>(64ull << 30));
    QCOMPARE(parseSize("2T"), std::optional<std::uint64_t>(2ull << 40));
    QCOMPARE(parseSize("2TiB"), std::optional<std::uint64_t>(2ull << 40));
    QCOMPARE(parseSize("0"), std::optional<std::uint64_t>(0));  // a size; callers needing > 0 check
  }

  void malformedSizesAreRefused() {
    for (const char* bad : {"", "G", "lots", "-1G", "+1G", " 6G", "6G ", "6 G", "1.5G", "1.5GB", "6g", "512m", "512MB",
                            "6GB", "6Gi", "6iB", "6GiBs", "0x10", "6P"})
      QVERIFY2(!parseSize(bad), bad);
  }

  void sizesPast64BitsAreRefused() {
    QCOMPARE(parseSize("16777215T"), std::optional<std::uint64_t>(16777215ull << 40));
    QVERIFY(!parseSize("16777216T"));
    QVERIFY(!parseSize("18446744073709551616"));
    QVERIFY(!parseSize("17179869184G"));
  }

  void durationsTakeUnitsLargestFirst() {
    QCOMPARE(parseDuration("250ms"), std::optional<std::chrono::nanoseconds>(250ms));
    QCOMPARE(parseDuration("1.5s"), std::optional<std::chrono::nanoseconds>(1500ms));
    QCOMPARE(parseDuration("0.4s"), std::optional<std::chrono::nanoseconds>(400ms));
    QCOMPARE(parseDuration("1m05s"), std::optional<std::chrono::nanoseconds>(65s));
    QCOMPARE(parseDuration("1h30m"), std::optional<std::chrono::nanoseconds>(90min));
    QCOMPARE(parseDuration("2h3m4s5ms6us7ns"),
             std::optional<std::chrono::nanoseconds>(2h + 3min + 4s + 5ms + 6us + 7ns));
    QCOMPARE(parseDuration("0s"), std::optional<std::chrono::nanoseconds>(0ns));
  }

  void malformedDurationsAreRefused() {
    for (const char* bad :
         {"",       "5",     "s",    "ms", "-1s", "+1s",  " 1s",  "1s ",  "1 s",   "1.s",         ".5s",
          "1.5.2s", "1e3ms", "1sec", "1d", "1S",  "5s1m", "1s1s", "1m1m", "1ms1s", "99999999999h"})
      QVERIFY2(!parseDuration(bad), bad);
  }

  void formattedDurationsReadBack() {
    const auto clock = [](double seconds) {
      return formatDuration(std::chrono::duration<double>(seconds), {.clock = true});
    };
    QCOMPARE(clock(0.42), std::string("0.4s"));
    QCOMPARE(clock(12.4), std::string("12s"));
    QCOMPARE(clock(65.2), std::string("1m05s"));
    QCOMPARE(clock(-1.0), std::string("?"));
    QCOMPARE(clock(std::numeric_limits<double>::infinity()), std::string("?"));
    QCOMPARE(clock(std::nan("")), std::string("?"));
    for (const double s : {0.4, 12.0, 65.0, 3599.0})
      QCOMPARE(parseDuration(clock(s)),
               std::optional<std::chrono::nanoseconds>(std::chrono::nanoseconds(std::llround(s * 1e9))));
  }

  void etaIsSaneFromTheFirstSeconds() {
    using shardscope::core::EtaEstimator;
    EtaEstimator e;
    // Start-up took 30 s before the first step of 100000: no "35 days left".
    QVERIFY(!e.update(30.0, 0, 100000));
    QVERIFY(!e.update(30.0, 1, 100000));
    QVERIFY(!e.update(30.5, 2, 100000));  // too soon to tell
    QVERIFY(!e.update(31.9, 3, 100000));
    // 2 s for 20 steps since the first: 0.1 s a step, start-up excluded.
    const auto left = e.update(32.0, 21, 100000);
    QVERIFY(left.has_value());
    QVERIFY(std::abs(*left - (100000 - 21) * 0.1) < 1e-6);
    // Done, or an estimate beyond any sense (1 unit in 3 s of 10^12): nothing.
    QVERIFY(!e.update(40.0, 100000, 100000));
    EtaEstimator slow;
    QVERIFY(!slow.update(0.0, 1, 1000000000000));
    QVERIFY(!slow.update(3.0, 3, 1000000000000));
    // A count that goes back (the work restarted) starts the estimate over.
    EtaEstimator again;
    QVERIFY(!again.update(0.0, 50, 100));
    QVERIFY(!again.update(1.0, 5, 100));
    QVERIFY(!again.update(2.5, 10, 100));
    QVERIFY(again.update(3.0, 15, 100).has_value());
  }
};

QTEST_APPLESS_MAIN(TestUnits)
#include "test_units.moc"
