// Times as text: timestamps as ShardScope writes them into files and runs
// (ISO 8601 UTC to the second, "2026-12-02T10:00:00Z"), and durations as
// people read them in the desktop's timelines, tooltips and tables and in
// the command line's progress bars.
#pragma once

#include <chrono>
#include <string>

namespace shardscope::core {

[[nodiscard]] std::string utcNowIso8601();

// How formatDuration writes a duration.
struct DurationFormat {
  // Scaled (the default): in the largest of ns, µs, ms and s that keeps the
  // number at least 1, to `significant` digits with trailing zeros dropped
  // and never an exponent. Clock: as progress bars show it and
  // parseDuration (units.h) reads it back: "0.4s" below 10 s, "12s" below a
  // minute, "1m05s" past it; "?" for a negative one.
  bool clock = false;
  int significant = 3;
};

// The one duration formatter (a duration or a time since some start):
// 850 ns -> "850 ns", 12'345 ns -> "12.3 µs", 4.56 ms -> "4.56 ms", 1.2 s ->
// "1.2 s", 999'960 ns -> "1 ms", 3725 s -> "3725 s", -66 µs -> "-66 µs",
// 0 -> "0 s"; {.clock = true} 65.2 s -> "1m05s". "?" when not finite.
[[nodiscard]] std::string formatDuration(std::chrono::duration<double, std::nano> duration,
                                         const DurationFormat& format = {});

}  // namespace shardscope::core
