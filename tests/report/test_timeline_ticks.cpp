// The timeline's time ruler without a window: tick steps of 1, 2 and 5 times
// a power of ten at least the asked pixels apart, ticks counted from the
// run's first span, and labels with enough digits to tell neighbours apart.
#include <QtTest>
#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/report/timeline_ticks.h"

using shardscope::report::TimeTick;
using shardscope::report::timeTicks;
using shardscope::report::timeTickStep;

namespace {

std::vector<std::string> labels(const std::vector<TimeTick>& ticks) {
  std::vector<std::string> out;
  for (const TimeTick& t : ticks) out.push_back(t.label);
  return out;
}

}  // namespace

class TestTimelineTicks : public QObject {
  Q_OBJECT
 private slots:
  void stepsAreOneTwoOrFiveTimesAPowerOfTen() {
    // 1 ms over 900 px, ticks 90 px apart: 100 µs exactly.
    QCOMPARE(timeTickStep(1'000'000, 900, 90), std::int64_t{100'000});
    // A hair more than 100 µs a tick: the next step is 200 µs.
    QCOMPARE(timeTickStep(1'000'001, 900, 90), std::int64_t{200'000});
    QCOMPARE(timeTickStep(3'000'000, 900, 90), std::int64_t{500'000});
    QCOMPARE(timeTickStep(6'000'000, 900, 90), std::int64_t{1'000'000});
    // Never below a nanosecond, and no division by a zero width.
    QCOMPARE(timeTickStep(3, 900, 90), std::int64_t{1});
    QCOMPARE(timeTickStep(0, 0, 90), std::int64_t{1});
    QCOMPARE(timeTickStep(1'000, 0, 90), std::int64_t{100'000});
  }

  void ticksAreCountedFromTheRunsStart() {
    // The window starts 250 ns into the run; ticks every 100 ns from the run's start.
    const std::vector<TimeTick> ticks = timeTicks(1'250, 1'500, 1'000, 100);
    QCOMPARE(ticks.size(), std::size_t{4});
    QCOMPARE(ticks.front().t_ns, std::int64_t{1'200});  // the last one at or before the window's start
    QCOMPARE(ticks.back().t_ns, std::int64_t{1'500});
    QCOMPARE(labels(ticks), (std::vector<std::string>{"200 ns", "300 ns", "400 ns", "500 ns"}));
    // A window before the run's first span counts back (floor, not truncation).
    const std::vector<TimeTick> before = timeTicks(850, 1'000, 1'000, 100);
    QCOMPARE(before.front().t_ns, std::int64_t{800});
    QCOMPARE(labels(before), (std::vector<std::string>{"-200 ns", "-100 ns", "0 s"}));
    QVERIFY(timeTicks(0, 100, 0, 0).empty());
  }

  void labelsTellNeighboursApartFarIntoTheRun() {
    // 1 µs ticks 1.234567 s into the run need seven digits.
    const std::vector<TimeTick> ticks = timeTicks(1'234'567'000, 1'234'568'000, 0, 1'000);
    QCOMPARE(labels(ticks), (std::vector<std::string>{"1.234567 s", "1.234568 s"}));
    // Near the start three digits do.
    QCOMPARE(labels(timeTicks(0, 2'000'000, 0, 1'000'000)), (std::vector<std::string>{"0 s", "1 ms", "2 ms"}));
  }
};

QTEST_APPLESS_MAIN(TestTimelineTicks)
#include "test_timeline_ticks.moc"
