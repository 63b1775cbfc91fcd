// The run the Measured, Timeline and Collectives pages show: the store's
// newest complete run until the user picks one, so a page opened on a store
// never says "No run shown" while the store has runs.
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include "collectives_page.h"
#include "job_tracker.h"
#include "main_window.h"
#include "measured_page.h"
#include "project_files.h"
#include "runs_page.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "timeline_page.h"

namespace shardscope::app {

namespace st = core::store;

void MainWindow::selectRun(qint64 run) {
  current_run_ = run;
  run_chosen_ = run > 0;
  run_store_ = storePath();
  followCurrentRun(currentPage());
}

void MainWindow::trackShownRuns() {
  // What each page shows, for waitUntilRunShown: a run whose view arrived (a failure counts as shown too: it says why).
  connect(measured_page_, &MeasuredPage::runShown, this, [this](qint64 run, const QString&) { measured_shown_ = run; });
  connect(timeline_page_, &TimelinePage::runShown, this, [this](qint64 run, const QString&) { timeline_shown_ = run; });
  connect(collectives_page_, &CollectivesPage::runShown, this,
          [this](qint64 run, const QString&) { collectives_shown_ = run; });
  connect(runs_page_, &RunsPage::listed, this, [this] { store_listed_ = true; });
  connect(runs_page_, &RunsPage::failed, this, [this] { store_listed_ = true; });
}

void MainWindow::findNewestRun() {
  const QString store = storePath();
  if (store != run_store_) {
    // Another store: its own newest run, whatever was picked in the last one.
    current_run_ = 0;
    run_chosen_ = false;
    run_store_ = store;
  }
  if (run_chosen_ || store.isEmpty()) return;
  run_jobs_->start(
      [path = localPath(store)](JobContext&) -> core::Result<qint64> {
        auto opened = st::openStore(path, st::OpenMode::ReadOnly);
        if (!opened) return opened.error();
        auto newest = profiler::newestCompleteRun(*opened);
        if (!newest) return newest.error();
        return *newest ? static_cast<qint64>(**newest) : qint64{0};
      },
      [this, store](qint64 newest) {
        if (run_chosen_ || store != storePath() || newest == current_run_) return;
        current_run_ = newest;
        followCurrentRun(currentPage());
      });
}

void MainWindow::followCurrentRun(Page page) {
  if (current_run_ <= 0) return;
  auto follow = [this](auto* shown) {
    if (shown->run() == current_run_) return;
    shown->setStorePath(storePath());
    shown->showRun(current_run_);
  };
  if (page == Page::Measured) follow(measured_page_);
  if (page == Page::Timeline) follow(timeline_page_);
  if (page == Page::Collectives) follow(collectives_page_);
}

bool MainWindow::waitUntilRunShown(int timeout_ms) {
  const Page page = currentPage();
  if (page != Page::Measured && page != Page::Timeline && page != Page::Collectives) return true;
  if (storePath().isEmpty()) return true;
  QElapsedTimer clock;
  clock.start();
  // The newest run is found off the GUI thread: wait for it first (a store without runs has none to show).
  while (current_run_ <= 0 && (run_jobs_->isRunning() || !store_listed_) && clock.elapsed() < timeout_ms) {
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  if (current_run_ <= 0) return true;
  followCurrentRun(page);
  bool shown = false;
  QEventLoop loop;
  const auto done = [&](qint64 run, const QString&) {
    if (run != current_run_) return;
    shown = true;
    loop.quit();
  };
  QMetaObject::Connection c;
  if (page == Page::Measured) c = connect(measured_page_, &MeasuredPage::runShown, &loop, done);
  if (page == Page::Timeline) c = connect(timeline_page_, &TimelinePage::runShown, &loop, done);
  if (page == Page::Collectives) c = connect(collectives_page_, &CollectivesPage::runShown, &loop, done);
  const qint64 already = page == Page::Measured   ? measured_shown_
                         : page == Page::Timeline ? timeline_shown_
                                                  : collectives_shown_;
  if (already == current_run_) return true;
  QTimer::singleShot(std::max<qint64>(1, timeout_ms - clock.elapsed()), &loop, &QEventLoop::quit);
  loop.exec();
  disconnect(c);
  if (shown && page == Page::Timeline) {
    // Its first window of spans is painted after the overview: wait for that too.
    QEventLoop paint;
    connect(timeline_page_, &TimelinePage::windowShown, &paint, &QEventLoop::quit);
    QTimer::singleShot(std::max<qint64>(1, timeout_ms - clock.elapsed()), &paint, &QEventLoop::quit);
    paint.exec();
  }
  return shown;
}

}  // namespace shardscope::app
