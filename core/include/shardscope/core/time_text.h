// Times as text: timestamps as ShardScope writes them into files and runs
// (ISO 8601 UTC to the second, "2026-12-02T10:00:00Z"), and durations as
// people read them in the desktop's timelines, tooltips and tables.
#pragma once

#include <string>

namespace shardscope::core {

[[nodiscard]] std::string utcNowIso8601();

// A duration (or a time since some start) in the largest of ns, µs, ms and s
// that keeps the number at least 1, to `significant` digits with trailing
// zeros dropped and never an exponent: 850 -> "850 ns", 12'345 -> "12.3 µs",
// 4'560'000 -> "4.56 ms", 1'200'000'000 -> "1.2 s", 999'960 -> "1 ms",
// 3'725e9 -> "3725 s", -66'000 -> "-66 µs", 0 -> "0 s"; "?" when not finite.
[[nodiscard]] std::string formatDurationNs(double ns, int significant = 3);

}  // namespace shardscope::core
