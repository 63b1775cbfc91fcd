#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "shardscope/core/time_text.h"

namespace shardscope::app::cli {

namespace {
std::atomic<std::atomic<bool>*> g_cancel_flag{nullptr};  // lock-free: safe to read in a handler
extern "C" void onCancelSignal(int) {
  if (std::atomic<bool>* f = g_cancel_flag.load()) f->store(true);
}
// Seconds as the bar shows them: "0.4s", "12s", "1m05s".
std::string clockText(double seconds) {
  return core::formatDuration(std::chrono::duration<double>(seconds), {.clock = true});
}
}  // namespace

CancelOnSignals::CancelOnSignals(std::atomic<bool>& flag) {
  g_cancel_flag.store(&flag);
  std::signal(SIGINT, onCancelSignal);
  std::signal(SIGTERM, onCancelSignal);
}

CancelOnSignals::~CancelOnSignals() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  g_cancel_flag.store(nullptr);
}

ProgressBar::ProgressBar(std::string title, bool enabled)
    : title_(std::move(title)),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::uint64_t done, std::uint64_t total, std::string_view what) {
  if (!enabled_ || total == 0) return;
  done = std::min(done, total);
  const auto now = std::chrono::steady_clock::now();
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::optional<double> left = eta_.update(elapsed, done, total);
  const std::string eta = left ? clockText(*left) : std::string("-");
  if (tty_) {
    // At most ~20 redraws a second, but always the last one.
    if (drawn_ && done < total && now - last_draw_ < std::chrono::milliseconds(50)) return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\r\033[K%s [%s] %3d%%  %s  elapsed %s  eta %s", title_.c_str(), bar.c_str(),
                 static_cast<int>(fraction * 100), std::string(what).c_str(), clockText(elapsed).c_str(), eta.c_str());
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  const int decile = static_cast<int>(fraction * 10);
  if (decile == last_decile_) return;
  last_decile_ = decile;
  std::fprintf(stderr, "%s: %3d%%  %s  elapsed %s  eta %s\n", title_.c_str(), decile * 10, std::string(what).c_str(),
               clockText(elapsed).c_str(), eta.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && tty_ && drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  drawn_ = false;
}

}  // namespace shardscope::app::cli
