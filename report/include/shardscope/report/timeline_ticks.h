// The timeline's time ruler without a window: ticks at 1, 2 and 5 times a
// power of ten nanoseconds, at least a given number of pixels apart, each
// labelled with the time since the run's first span in as many digits as
// tell it from its neighbours far into the run ("1.234567 s", "1.234568 s").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::report {

struct TimeTick {
  std::int64_t t_ns = 0;  // on the run's clock
  std::string label;      // the time since the origin (core::formatDuration)
};

// The step between ticks for `span_ns` drawn over `width_px` pixels, ticks at
// least `min_px` apart: 1, 2 or 5 times a power of ten nanoseconds, at least 1 ns.
[[nodiscard]] std::int64_t timeTickStep(std::int64_t span_ns, int width_px, int min_px);

// A tick every `step_ns` (> 0) counted from `origin_ns`, from the last one at
// or before `t0_ns` up to `t1_ns`; the caller leaves out those it cannot draw.
[[nodiscard]] std::vector<TimeTick> timeTicks(std::int64_t t0_ns, std::int64_t t1_ns, std::int64_t origin_ns,
                                              std::int64_t step_ns);

}  // namespace shardscope::report
