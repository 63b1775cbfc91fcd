#include "shardscope/report/timeline_ticks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "shardscope/core/time_text.h"

namespace shardscope::report {

namespace {

std::int64_t floorDiv(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

}  // namespace

std::int64_t timeTickStep(std::int64_t span_ns, int width_px, int min_px) {
  const double raw = static_cast<double>(span_ns) * min_px / std::max(1, width_px);
  double step = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (step * m >= raw) {
      step *= m;
      break;
    }
  }
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(step));
}

std::vector<TimeTick> timeTicks(std::int64_t t0_ns, std::int64_t t1_ns, std::int64_t origin_ns, std::int64_t step_ns) {
  std::vector<TimeTick> ticks;
  if (step_ns <= 0) return ticks;
  for (std::int64_t k = floorDiv(t0_ns - origin_ns, step_ns);; ++k) {
    const std::int64_t t = origin_ns + k * step_ns;
    if (t > t1_ns) break;
    // Enough digits to tell a tick from its neighbours far into the run (1.234567 s, 1.234568 s).
    const std::int64_t since = t - origin_ns;
    const int digits = since == 0 ? 3
                                  : static_cast<int>(std::ceil(std::log10(std::abs(static_cast<double>(since)) /
                                                                          static_cast<double>(step_ns)))) +
                                        1;
    ticks.push_back({t, core::formatDuration(std::chrono::nanoseconds(since), {.significant = std::max(3, digits)})});
  }
  return ticks;
}

}  // namespace shardscope::report
