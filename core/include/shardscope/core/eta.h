// The remaining time of long work, for progress bars: estimated from the
// rate since the first unit of progress (so start-up before it does not
// count), and not shown until there is enough to go on.
#pragma once

#include <cstdint>
#include <optional>

namespace shardscope::core {

class EtaEstimator {
 public:
  // Seconds left at time `now_s` (any monotonic clock, in seconds) with
  // `done` of `total` units finished. Nothing until kMinSeconds and
  // kMinUnits of progress have passed since the first unit, nor when the
  // estimate is beyond kMaxSeconds (a rate too uncertain to print).
  [[nodiscard]] std::optional<double> update(double now_s, std::uint64_t done, std::uint64_t total);

  static constexpr double kMinSeconds = 2.0;
  static constexpr std::uint64_t kMinUnits = 2;
  static constexpr double kMaxSeconds = 30.0 * 24 * 3600;

 private:
  bool started_ = false;
  double first_s_ = 0;
  std::uint64_t first_done_ = 0;
};

}  // namespace shardscope::core
