// The Timeline page's bars, offscreen, on a generated run of --spans spans
// over --ranks ranks (default 10M, 64):
//   first paint of the whole run after opening it (bar < 1 s);
//   each frame of a scripted 200-step zoom/pan session, from the gesture to
//     the painted answer for exactly that window, store query included
//     (bar: p99 < 33 ms);
//   the longest time the GUI thread was busy (an event-loop probe; bar <= 50 ms);
//   peak RSS while showing the run (bar < 500 MB).
// Baseline, in the same process: the same session on a small run (4 ranks,
// about 100k spans), so the figures read as ratios too. The stores are
// generated once by a child process (so its memory does not count) into
// --dir (default /tmp) with their far-zoom summaries, and reused.
// Usage: bench_timeline [--ranks R] [--spans N] [--frames F] [--dir D]
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QWheelEvent>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "latency_probe.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/timeline_window.h"
#include "timeline_fixture.h"
#include "timeline_page.h"
#include "timeline_view.h"

namespace app = shardscope::app;
namespace st = shardscope::core::store;
using shardscope::bench::LatencyProbe;
using shardscope::bench::waitFor;

namespace {

double peakRssMb() {
  QFile f(QStringLiteral("/proc/self/status"));
  if (!f.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : f.readAll().split('\n')) {
    if (line.startsWith("VmHWM:")) return line.mid(6).trimmed().split(' ').front().toDouble() / 1024.0;
  }
  return -1;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

shardscope::testing::TimelineRunShape shapeFor(int ranks, long long spans) {
  shardscope::testing::TimelineRunShape shape;
  shape.ranks = ranks;
  shape.tables = 60;
  const long long per_step = static_cast<long long>(ranks) * (2 * shape.tables + 8);
  shape.steps = static_cast<int>(std::max(1LL, spans / per_step));
  return shape;
}

// Child: writes the run and its summaries.
int generate(const QString& path, int ranks, long long spans) {
  QFile::remove(path);
  QElapsedTimer t;
  t.start();
  auto facts = shardscope::testing::writeTimelineRun(path.toStdString(), shapeFor(ranks, spans));
  if (!facts) {
    std::fprintf(stderr, "generate: %s\n", facts.error().message.c_str());
    return 1;
  }
  const double write_s = static_cast<double>(t.restart()) / 1e3;
  auto store = st::openStore(path.toStdString(), st::OpenMode::ReadWrite);
  if (!store) return 1;
  if (auto s = shardscope::profiler::buildTimelineSummaries(*store, facts->run); !s) {
    std::fprintf(stderr, "summaries: %s\n", s.error().message.c_str());
    return 1;
  }
  std::printf("generated %lld spans over %d ranks in %.1f s; summaries in %.1f s\n",
              static_cast<long long>(facts->spans), ranks, write_s, static_cast<double>(t.elapsed()) / 1e3);
  return 0;
}

struct Figures {
  double first_paint_ms = 0;
  std::vector<double> frames_ms;
  std::vector<double> queries_ms;
  std::vector<double> paints_ms;
  double max_gap_ms = 0;
  long long spans = 0;
};

std::vector<double>* g_paints = nullptr;  // paint times of the current session

// Times every paint of the view's viewport; `painted` counts them.
class PaintClock : public QObject {
 public:
  int painted = 0;
  int at_answer = 0;  // `painted` when the last answer arrived

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Paint) return false;
    QElapsedTimer t;
    t.start();
    static_cast<QWidget*>(watched)->removeEventFilter(this);  // paint once, through the widget itself
    QApplication::sendEvent(watched, event);
    watched->installEventFilter(this);
    if (g_paints) g_paints->push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    ++painted;
    return true;
  }
};
PaintClock* g_clock = nullptr;

// Returns once the answer for the view's current window is on screen: it
// arrived and the view painted after it (the paint its arrival scheduled).
bool waitPainted(app::TimelinePage& page) {
  const bool answered = waitFor(
      [&page] {
        const auto* w = page.view()->shownWindow();
        const auto [t0, t1] = page.view()->window();
        return w && w->t0_ns == t0 && w->t1_ns == t1;
      },
      60'000);
  return answered && waitFor([] { return g_clock->painted > g_clock->at_answer; }, 60'000);
}

bool session(const QString& path, int frames, Figures& out) {
  LatencyProbe probe;
  g_paints = &out.paints_ms;
  app::TimelinePage page;
  PaintClock clock_filter;
  g_clock = &clock_filter;
  page.view()->viewport()->installEventFilter(&clock_filter);
  QObject::connect(&page, &app::TimelinePage::windowShown, &clock_filter,
                   [&clock_filter] { clock_filter.at_answer = clock_filter.painted; });
  page.resize(1280, 800);
  page.show();
  page.setStorePath(path);
  probe.start();
  QElapsedTimer clock;
  clock.start();
  page.showRun(1);
  if (!waitPainted(page)) return false;
  out.first_paint_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
  out.spans = page.view()->shownWindow()->span_count;
  app::TimelineView* view = page.view();
  std::mt19937 rng(7);
  const int width = view->dataWidth();
  for (int i = 0; i < frames; ++i) {
    const int x = std::uniform_int_distribution<int>(0, width - 1)(rng);
    clock.restart();
    switch (i % 10) {
      case 0:
      case 1:
      case 2:
      case 3:
        view->zoomAt(1.6, x);
        break;  // in towards a random point
      case 4:
      case 5:
        view->panPixels(std::uniform_int_distribution<int>(-300, 300)(rng));
        break;
      case 6:
      case 7:
        view->zoomAt(1.0 / 1.5, x);
        break;
      case 8:
        view->panPixels(-150);
        break;
      default:
        view->zoomAt(i % 40 == 9 ? 0.05 : 1.3, x);
        break;  // now and then far out
    }
    if (!waitPainted(page)) return false;
    out.frames_ms.push_back(static_cast<double>(clock.nsecsElapsed()) / 1e6);
    out.queries_ms.push_back(static_cast<double>(page.lastQueryUs()) / 1e3);
    if (qEnvironmentVariableIsSet("SHARDSCOPE_BENCH_SLOW") && out.frames_ms.back() > 33) {
      const auto [t0, t1] = view->window();
      std::fprintf(stderr, "slow frame %d: %.1f ms (query %.1f ms, window %.3f ms, level %d)\n", i,
                   out.frames_ms.back(), out.queries_ms.back(), static_cast<double>(t1 - t0) / 1e6,
                   view->shownWindow()->summary_level);
    }
  }
  probe.stop();
  out.max_gap_ms = probe.maxGapMs();
  return true;
}

void print(const char* name, const Figures& f) {
  std::printf(
      "%-9s spans %10lld  first paint %7.1f ms  frame p50 %6.1f p99 %6.1f max %6.1f ms  "
      "query p50 %6.1f p99 %6.1f ms  paint p50 %5.1f p99 %5.1f ms  GUI max block %5.1f ms\n",
      name, f.spans, f.first_paint_ms, quantile(f.frames_ms, 0.5), quantile(f.frames_ms, 0.99),
      quantile(f.frames_ms, 1.0), quantile(f.queries_ms, 0.5), quantile(f.queries_ms, 0.99), quantile(f.paints_ms, 0.5),
      quantile(f.paints_ms, 0.99), f.max_gap_ms);
}

}  // namespace

int main(int argc, char* argv[]) {
  int ranks = 64;
  long long spans = 10'000'000;
  int frames = 200;
  QString dir = QStringLiteral("/tmp");
  QString generate_to;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--ranks")
      ranks = std::atoi(argv[i + 1]);
    else if (a == "--spans")
      spans = std::atoll(argv[i + 1]);
    else if (a == "--frames")
      frames = std::atoi(argv[i + 1]);
    else if (a == "--dir")
      dir = QString::fromLocal8Bit(argv[i + 1]);
    else if (a == "--generate")
      generate_to = QString::fromLocal8Bit(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_timeline [--ranks R] [--spans N] [--frames F] [--dir D]\n");
      return 2;
    }
  }
  if (!generate_to.isEmpty()) return generate(generate_to, ranks, spans);
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication application(argc, argv);
  const auto storeFor = [&dir](int r, long long n) {
    return dir + QStringLiteral("/shardscope-bench-timeline-%1x%2.sqlite").arg(r).arg(n);
  };
  const QString big = storeFor(ranks, spans);
  const QString small = storeFor(4, 100'000);
  for (const auto& [path, r, n] : {std::tuple{small, 4, 100'000LL}, std::tuple{big, ranks, spans}}) {
    if (QFile::exists(path)) continue;
    const int rc = QProcess::execute(QString::fromLocal8Bit(argv[0]),
                                     {QStringLiteral("--generate"), path, QStringLiteral("--ranks"), QString::number(r),
                                      QStringLiteral("--spans"), QString::number(n)});
    if (rc != 0) return 1;
  }
  Figures base;
  Figures full;
  if (!session(small, frames, base) || !session(big, frames, full)) {
    std::fprintf(stderr, "bench_timeline: a window was not answered within 60 s\n");
    return 1;
  }
  print("baseline", base);
  print("run", full);
  std::printf("ratios run/baseline: first paint %.2f, frame p99 %.2f; peak RSS %.0f MB\n",
              full.first_paint_ms / std::max(base.first_paint_ms, 1e-3),
              quantile(full.frames_ms, 0.99) / std::max(quantile(base.frames_ms, 0.99), 1e-3), peakRssMb());
  std::printf("bars: first paint < 1000 ms: %s; frame p99 < 33 ms: %s; GUI block <= 50 ms: %s; RSS < 500 MB: %s\n",
              full.first_paint_ms < 1000 ? "yes" : "NO", quantile(full.frames_ms, 0.99) < 33 ? "yes" : "NO",
              std::max(full.max_gap_ms, base.max_gap_ms) <= 50 ? "yes" : "NO", peakRssMb() < 500 ? "yes" : "NO");
  return 0;
}
