#include "shardscope/core/time_text.h"

#include "shardscope/core/summary.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace shardscope::core {

std::string utcNowIso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

std::string clockText(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds < 10) return formatf("%.1fs", seconds);
  const long s = std::lround(seconds);
  if (seconds < 60) return std::to_string(s) + "s";
  return std::to_string(s / 60) + "m" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + "s";
}

std::string scaledText(double ns, int significant) {
  if (!std::isfinite(ns)) return "?";
  const int digits = std::clamp(significant, 1, 17);
  struct Unit {
    double ns;
    const char* name;
  };
  static constexpr std::array<Unit, 4> kUnits = {{{1.0, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}}};
  const double a = std::abs(ns);
  // Anything that rounds to nothing at a nanosecond's precision reads as zero, not "1e-05 ns".
  if (a < 0.5 * std::pow(10.0, 1 - digits)) return "0 s";
  std::size_t u = 0;
  while (u + 1 < kUnits.size() && a >= kUnits[u + 1].ns) ++u;
  double v = ns / kUnits[u].ns;
  // 999.96 µs rounds to 1000 at 3 digits: that is 1 ms.
  const double step = std::pow(10.0, std::floor(std::log10(std::abs(v))) + 1 - digits);
  if (u + 1 < kUnits.size() && std::round(std::abs(v) / step) * step >= 1000.0) {
    ++u;
    v = ns / kUnits[u].ns;
  }
  // Whole digits beyond `significant` (thousands of seconds) are written out rather than as an exponent.
  const int whole = std::abs(v) >= 1.0 ? static_cast<int>(std::floor(std::log10(std::abs(v)))) + 1 : 1;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g %s", std::max(digits, whole), v, kUnits[u].name);
  return buf;
}

}  // namespace

std::string formatDuration(std::chrono::duration<double, std::nano> duration, const DurationFormat& format) {
  return format.clock ? clockText(std::chrono::duration<double>(duration).count())
                      : scaledText(duration.count(), format.significant);
}

}  // namespace shardscope::core
