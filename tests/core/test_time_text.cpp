// Durations as the desktop writes them for people: the unit that keeps the
// number at least 1, three significant digits by default, never a raw count
// of nanoseconds and never an exponent.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "shardscope/core/time_text.h"

namespace {

// The scaled form of a duration in nanoseconds.
std::string formatDurationNs(double ns, int significant = 3) {
  return shardscope::core::formatDuration(std::chrono::duration<double, std::nano>(ns), {.significant = significant});
}

}  // namespace

class TestTimeText : public QObject {
  Q_OBJECT
 private slots:
  void durationsTakeTheLargestUnitThatKeepsThemAboveOne() {
    QCOMPARE(formatDurationNs(850), std::string("850 ns"));
    QCOMPARE(formatDurationNs(12'345), std::string("12.3 µs"));
    QCOMPARE(formatDurationNs(4'560'000), std::string("4.56 ms"));
    QCOMPARE(formatDurationNs(1'200'000'000), std::string("1.2 s"));
    QCOMPARE(formatDurationNs(1'000), std::string("1 µs"));
  }

  void threeSignificantDigitsWithoutTrailingZeros() {
    QCOMPARE(formatDurationNs(123'456'789), std::string("123 ms"));
    QCOMPARE(formatDurationNs(1'500'000), std::string("1.5 ms"));
    QCOMPARE(formatDurationNs(2'000'000'000), std::string("2 s"));
  }

  void roundingUpToAThousandMovesToTheNextUnit() {
    QCOMPARE(formatDurationNs(999'960), std::string("1 ms"));
    QCOMPARE(formatDurationNs(999.7), std::string("1 µs"));
    QCOMPARE(formatDurationNs(999'499), std::string("999 µs"));
  }

  void longDurationsAreWrittenOutInSeconds() {
    QCOMPARE(formatDurationNs(3'725e9), std::string("3725 s"));
    QCOMPARE(formatDurationNs(12'345.6e9), std::string("12346 s"));
  }

  void moreDigitsWhenAsked() {
    QCOMPARE(formatDurationNs(1'234'567'000, 7), std::string("1.234567 s"));
    QCOMPARE(formatDurationNs(1'200'000'000, 7), std::string("1.2 s"));
  }

  void negativeZeroAndNonFinite() {
    QCOMPARE(formatDurationNs(-66'000), std::string("-66 µs"));
    QCOMPARE(formatDurationNs(0), std::string("0 s"));
    QCOMPARE(formatDurationNs(0.3), std::string("0.3 ns"));
    QCOMPARE(formatDurationNs(std::numeric_limits<double>::infinity()), std::string("?"));
    QCOMPARE(formatDurationNs(std::nan("")), std::string("?"));
  }
};

QTEST_APPLESS_MAIN(TestTimeText)
#include "test_time_text.moc"
