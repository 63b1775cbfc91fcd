// How often a job's progress goes out: a running job reports at most one
// step a kProgressInterval (20 a second), a new stage always; each client
// that watches the job then gets at most one progress message per job and
// interval (ClientSession coalesces them), so a fast engine cannot flood a
// slow client.
#pragma once

#include <chrono>

namespace shardscope::profiler {

inline constexpr std::chrono::milliseconds kProgressInterval{50};

class ProgressThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  // Whether a report may go out at `now`: `always` (a stage that begins) or
  // kProgressInterval since the last one that went out.
  [[nodiscard]] bool admit(bool always, Clock::time_point now = Clock::now()) {
    if (!always && now - last_ < kProgressInterval) return false;
    last_ = now;
    return true;
  }

 private:
  Clock::time_point last_{};
};

}  // namespace shardscope::profiler
