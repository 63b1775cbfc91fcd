// A progress bar on stderr for long CLI work (engine runs): redrawn in place
// on a terminal, one line per 10% otherwise (logs, CI), nothing with --quiet.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "shardscope/core/eta.h"

namespace shardscope::app::cli {

// While it lives, Ctrl-C (SIGINT) and SIGTERM set `flag` instead of killing
// the process, so long work can stop cleanly; the default handlers come back
// when it goes. The handler is process-wide: one at a time.
class CancelOnSignals {
 public:
  explicit CancelOnSignals(std::atomic<bool>& flag);
  ~CancelOnSignals();
  CancelOnSignals(const CancelOnSignals&) = delete;
  CancelOnSignals& operator=(const CancelOnSignals&) = delete;
};

class ProgressBar {
 public:
  ProgressBar(std::string title, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::uint64_t done, std::uint64_t total, std::string_view what = {});
  // Clears the bar (terminal) so that what follows starts on a clean line.
  void finish();

 private:
  std::string title_;
  bool enabled_ = false;
  bool tty_ = false;
  bool drawn_ = false;
  int last_decile_ = -1;
  core::EtaEstimator eta_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace shardscope::app::cli
