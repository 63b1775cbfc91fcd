#include "shardscope/core/eta.h"

namespace shardscope::core {

std::optional<double> EtaEstimator::update(double now_s, std::uint64_t done, std::uint64_t total) {
  if (total == 0 || done >= total) return std::nullopt;
  if (!started_) {
    if (done == 0) return std::nullopt;
    started_ = true;
    first_s_ = now_s;
    first_done_ = done;
    return std::nullopt;
  }
  if (done < first_done_) {  // the work restarted its count: start over
    first_s_ = now_s;
    first_done_ = done;
    return std::nullopt;
  }
  const double seconds = now_s - first_s_;
  const std::uint64_t units = done - first_done_;
  if (seconds < kMinSeconds || units < kMinUnits) return std::nullopt;
  const double eta = static_cast<double>(total - done) * seconds / static_cast<double>(units);
  if (!(eta <= kMaxSeconds)) return std::nullopt;
  return eta;
}

}  // namespace shardscope::core
