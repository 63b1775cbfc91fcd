// The desktop benches' event-loop latency probe: a 2 ms timer on the GUI
// thread; the longest gap between its firings is the longest time the GUI
// thread was busy. And waitFor, the benches' way to wait in the event loop.
#pragma once

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

namespace shardscope::bench {

// Runs the event loop until `done` or `timeout_ms`; false on timeout.
template <class Done>
bool waitFor(Done done, int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeout_ms) return false;
    QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents | QEventLoop::AllEvents, 5);
  }
  return true;
}

class LatencyProbe : public QObject {
 public:
  LatencyProbe() {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(2);
    connect(&timer_, &QTimer::timeout, this, [this] {
      const qint64 now = clock_.nsecsElapsed();
      if (last_ >= 0) gaps_.push_back(static_cast<double>(now - last_) / 1e6);
      if (last_ >= 0 && qEnvironmentVariableIsSet("SHARDSCOPE_BENCH_GAPS") && now - last_ > 30000000)
        std::fprintf(stderr, "GAP %.1f ms\n", static_cast<double>(now - last_) / 1e6);
      last_ = now;
    });
  }
  void start() {
    gaps_.clear();
    last_ = -1;
    clock_.start();
    timer_.start();
  }
  void stop() { timer_.stop(); }
  [[nodiscard]] double maxGapMs() const { return gaps_.empty() ? 0 : *std::max_element(gaps_.begin(), gaps_.end()); }
  [[nodiscard]] double quantileMs(double q) const {
    if (gaps_.empty()) return 0;
    std::vector<double> s = gaps_;
    std::sort(s.begin(), s.end());
    return s[static_cast<std::size_t>(q * static_cast<double>(s.size() - 1))];
  }
  [[nodiscard]] std::size_t samples() const { return gaps_.size(); }
  // The longest gap since the previous mark, for --phases.
  double markMaxSince() {
    double worst = 0;
    for (std::size_t i = mark_; i < gaps_.size(); ++i) worst = std::max(worst, gaps_[i]);
    mark_ = gaps_.size();
    return worst;
  }

 private:
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 last_ = -1;
  std::vector<double> gaps_;
  std::size_t mark_ = 0;
};

}  // namespace shardscope::bench
