// The measured loop's responsiveness bar, offscreen: from opening a project
// to seeing a finished 4-rank emulate run's measured-vs-predicted view, the
// GUI thread never blocks more than 50 ms. An event-loop probe (a 2 ms timer;
// the longest gap between its firings is the longest time the GUI thread was
// busy) runs while the project is opened, planned, profiled from the Profile
// dialog (4 CPU ranks, emulate), and the run's view is shown, then while it
// is calibrated from the run and re-planned. Baseline: the same probe on an
// idle event loop, in the same process.
// Usage: bench_measured_loop [--steps S] [--batch B]
#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "latency_probe.h"
#include "main_window.h"
#include "measured_page.h"
#include "planning_session.h"
#include "profile_dialog.h"
#include "project_document.h"
#include "shardscope/core/json_io.h"

namespace app = shardscope::app;
namespace core = shardscope::core;

namespace {

using shardscope::bench::LatencyProbe;
using shardscope::bench::waitFor;

void spin(int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) QApplication::processEvents(QEventLoop::AllEvents, 5);
}

}  // namespace

int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication qapp(argc, argv);
  int steps = 20;
  int batch = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc)
      steps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--batch" && i + 1 < argc)
      batch = std::max(0, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: bench_measured_loop [--steps S] [--batch B]\n");
      return 2;
    }
  }
  QTemporaryDir dir;
  const std::string data = SHARDSCOPE_TEST_DATA_DIR;
  core::Project project;
  project.name = "bench: tiny engine model on 4 CPU ranks";
  project.model = core::loadModel(data + "/engine/tiny_model.json").value();
  project.cluster = core::loadCluster(data + "/engine/cpu4.json").value();
  const QString path = dir.filePath(QStringLiteral("bench.shardscope"));
  if (!core::writeJsonFile(path.toStdString(), core::toJson(project))) return 1;

  LatencyProbe probe;
  probe.start();
  spin(1000);
  probe.stop();
  const double idle_max = probe.maxGapMs();

  app::MainWindow window;
  window.setAttribute(Qt::WA_DontShowOnScreen, true);
  window.resize(1600, 1000);
  window.show();
  QElapsedTimer total;
  total.start();
  probe.start();
  if (!window.document()->open(path).ok()) return 1;
  if (!window.session()->waitUntilIdle(120000, false)) return 1;
  window.findChild<QAction*>(QStringLiteral("actionProfile"))->trigger();
  auto* dialog = window.findChild<app::ProfileDialog*>();
  if (dialog == nullptr) return 1;
  dialog->stepsBox()->setValue(steps);
  dialog->threadsBox()->setValue(1);
  if (batch > 0) dialog->batchBox()->setValue(batch);
  QSignalSpy shown(window.measuredPage(), &app::MeasuredPage::runShown);
  dialog->start();
  if (!waitFor([&] { return !shown.isEmpty(); }, 300000)) return 1;
  spin(300);  // the view painted
  const double loop_s = static_cast<double>(total.elapsed()) / 1000.0;
  const double loop_max = probe.maxGapMs();
  const double loop_p99 = probe.quantileMs(0.99);
  const std::size_t loop_samples = probe.samples();

  probe.start();
  QSignalSpy calibrated(window.measuredPage(), &app::MeasuredPage::calibrated);
  window.measuredPage()->calibrate();
  if (!waitFor([&] { return !calibrated.isEmpty(); }, 300000)) return 1;
  if (!window.session()->waitUntilIdle(120000, true)) return 1;
  spin(300);
  probe.stop();
  const bool ok = calibrated.front().at(0).toString().isEmpty() && shown.front().at(1).toString().isEmpty();

  std::printf(
      "(a) open a project -> plan -> profile (4-rank emulate, %d steps) -> measured-vs-predicted shown (%.1f s):\n",
      steps, loop_s);
  std::printf("    longest GUI-thread gap %.1f ms, p99 %.1f ms over %zu probe ticks   (bar <= 50 ms: %s)\n", loop_max,
              loop_p99, loop_samples, loop_max <= 50 ? "PASS" : "FAIL");
  std::printf("(b) calibrate from the run -> re-plan (Grid Explorer and heatmap): longest gap %.1f ms, p99 %.1f ms\n",
              probe.maxGapMs(), probe.quantileMs(0.99));
  std::printf("    baseline, idle event loop: longest gap %.1f ms; ratios %.1fx and %.1fx\n", idle_max,
              loop_max / std::max(idle_max, 1e-3), probe.maxGapMs() / std::max(idle_max, 1e-3));
  return ok ? 0 : 1;
}
