// The Grid Explorer: the sweep runs off the GUI thread, fills the table and
// the plots, choosing a grid records it in the project, edits rerun the sweep
// and drop the older result, and malformed projects never crash it.
#include <QElapsedTimer>
#include <QLabel>
#include <QListWidget>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <qcustomplot.h>
#include <QtTest>

#include "grid_explorer_page.h"
#include "step_time_chart.h"
#include "sync_interval_chart.h"
#include "main_window.h"
#include "runs_page.h"
#include "planning_session.h"
#include "project_document.h"
#include "model_page.h"
#include "screenshot.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/grid_result.h"

using shardscope::app::GridExplorerPage;
using shardscope::app::MainWindow;
namespace core = shardscope::core;

namespace {

constexpr int kSweepTimeoutMs = 120000;

// Waits until the page shows the result of its newest run.
bool waitForSweep(GridExplorerPage* page) { return page->session()->waitUntilIdle(kSweepTimeoutMs, false); }

// The window at 1280x800 on the Grid Explorer with its sweep shown; nullptr when it does not show.
GridExplorerPage* showAt1280(MainWindow& window) {
  window.resize(1280, 800);
  window.show();
  if (!QTest::qWaitForWindowExposed(&window)) return nullptr;
  window.showPage(MainWindow::Page::GridExplorer);
  GridExplorerPage* page = window.gridExplorerPage();
  return waitForSweep(page) ? page : nullptr;
}

}  // namespace

class TestGridExplorer : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_grid_explorer"));
  }

  void sidebarSwitchesPages() {
    MainWindow window;
    QCOMPARE(window.sidebar()->count(), MainWindow::kPageCount);
    const QStringList titles = {"Model", "Cluster",  "Grid Explorer", "Plan",       "Export",
                                "Runs",  "Measured", "Timeline",      "Collectives"};
    QCOMPARE(titles.size(), MainWindow::kPageCount);
    for (int i = 0; i < titles.size(); ++i) QCOMPARE(window.sidebar()->item(i)->text(), titles[i]);
    QCOMPARE(window.pages()->currentIndex(), 0);
    window.sidebar()->setCurrentRow(2);
    QCOMPARE(window.pages()->currentWidget(), static_cast<QWidget*>(window.gridExplorerPage()));
    window.showPage(MainWindow::Page::Model);
    QCOMPARE(window.pages()->currentWidget(), static_cast<QWidget*>(window.modelPage()));
    window.showPage(MainWindow::Page::Runs);
    QCOMPARE(window.pages()->currentWidget(), static_cast<QWidget*>(window.runsPage()));
  }

  void sweepsTheDefaultProjectOffTheGuiThread() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    // The constructor returned before anything was planned: the sweep runs
    // from the event loop, off the GUI thread.
    QVERIFY(!page->session()->hasResult());
    QCOMPARE(page->gridModel()->rowCount(), 0);
    QVERIFY(waitForSweep(page));
    const auto& grids = page->result().grids;
    QCOMPARE(static_cast<int>(grids.size()), 14);  // 7 divisors of 64, two layouts
    QCOMPARE(page->gridModel()->rowCount(), 14);
    QCOMPARE(page->gridModel()->columnCount(), static_cast<int>(GridExplorerPage::ColumnCount));
    const int fitting =
        static_cast<int>(std::count_if(grids.begin(), grids.end(), [](const auto& g) { return g.fits; }));
    QVERIFY(fitting > 0);
    QCOMPARE(page->stepBarCount(), fitting);
    QCOMPARE(page->memoryBarCount(), 14);  // every grid; those that do not fit in red
    QVERIFY2(page->messageText().contains("14 grids"), qPrintable(page->messageText()));
  }

  void chartsMarkTheChosenGridAndShowWhatTheSyncIntervalBuys() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    QVERIFY(waitForSweep(page));
    page->setSyncInterval(4);
    QVERIFY(waitForSweep(page));
    const auto& grids = page->result().grids;
    const auto it = std::find_if(grids.begin(), grids.end(), [](const shardscope::planner::GridResult& g) {
      return g.fits && g.grid.replicas > 1 && g.grid.layout == shardscope::core::RankLayout::Strided;
    });
    QVERIFY(it != grids.end());
    window.session()->choose(static_cast<int>(it - grids.begin()));
    const shardscope::planner::GridResult& chosen = *window.session()->planGrid();
    QCOMPARE(chosen.grid.group_size, it->grid.group_size);
    QCOMPARE(chosen.plan.sync_interval, 4u);
    // Every grid chart outlines the chosen grid's bar.
    QCOMPARE(page->chosenMarkers().size(), std::size_t{3});
    for (const QCPItemRect* marker : page->chosenMarkers()) QVERIFY(marker->visible());
    // The imbalance bars stand on 1.0 and reach each grid's max/mean, inside the axis.
    auto* imbalance = qobject_cast<QCPBars*>(page->imbalancePlot()->plottable(0));
    QVERIFY(imbalance != nullptr);
    QCOMPARE(imbalance->baseValue(), 1.0);
    double top = 0;
    for (const auto& g : grids) top = std::max(top, g.imbalance.max_over_mean);
    double drawn_top = 0;
    for (int i = 0; i < imbalance->dataCount(); ++i)
      drawn_top = std::max(drawn_top, imbalance->baseValue() + imbalance->data()->at(i)->value);
    QVERIFY(std::abs(drawn_top - top) < 1e-12);
    QVERIFY(page->imbalancePlot()->yAxis->range().upper >= top);
    QCOMPARE(page->imbalancePlot()->yAxis->range().lower, 1.0);
    // Step time against k = 1, 2, 4, 8, 16 for the shown grid; the project's k apart.
    auto* others = qobject_cast<QCPBars*>(page->syncPlot()->plottable(0));
    auto* current = qobject_cast<QCPBars*>(page->syncPlot()->plottable(1));
    QCOMPARE(others->dataCount(), 4);
    QCOMPARE(current->dataCount(), 1);
    QCOMPARE(current->data()->at(0)->value, chosen.step.step_ms);
    const std::uint32_t ks[] = {1, 2, 8, 16};
    for (int i = 0; i < 4; ++i)
      QCOMPARE(others->data()->at(i)->value, shardscope::planner::stepMsAtSyncInterval(chosen, ks[i]));
    QVERIFY(others->data()->at(0)->value > current->data()->at(0)->value);  // syncing every step costs more
    window.showPage(MainWindow::Page::GridExplorer);
    page->findChild<QTabWidget*>(QStringLiteral("gridSideTabs"))->setCurrentWidget(page->syncPlot());
    QVERIFY(saveScreenshot(window, QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/grid_sync_1280x800.png"),
                           QSize(1280, 800))
                .ok());
  }

  void choosingRowZeroRecordsTheGrid() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    QVERIFY(waitForSweep(page));
    QVERIFY(!window.document()->isModified());
    QSignalSpy chosen(page, &GridExplorerPage::gridChosen);
    page->chooseRow(0);
    QCOMPARE(chosen.count(), 1);
    const auto& best = page->result().grids.front();
    QCOMPARE(window.document()->project().chosen_group_size, std::optional<std::uint32_t>(best.grid.group_size));
    QVERIFY(window.document()->isModified());
    const auto* status = window.findChild<QLabel*>("statusGrid");
    QVERIFY(status != nullptr);
    QVERIFY2(status->text().startsWith(
                 QString("Chosen grid: M = %1 \u00d7 R = %2 (").arg(best.grid.group_size).arg(best.grid.replicas)),
             qPrintable(status->text()));
    QVERIFY2(status->text().contains(QString("%1 ms per step").arg(best.step.step_ms, 0, 'f', 2)),
             qPrintable(status->text()));
    QVERIFY(window.document()->project().chosen_layout.has_value());
    QVERIFY(*window.document()->project().chosen_layout == best.grid.layout);
    QCOMPARE(page->session()->chosenIndex(), 0);
    // Out-of-range rows are ignored.
    page->chooseRow(-1);
    page->chooseRow(1000);
    QCOMPARE(chosen.count(), 1);
  }

  void anEditRerunsAndDropsTheOlderResult() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    // Edit while the first sweep may still run: its result must never be shown.
    QTest::qWait(0);  // the first run starts from the event loop
    const quint64 first = page->currentJobId();
    core::Project edited = window.document()->project();
    edited.cluster.nodes = 4;  // N = 32: 6 divisors, 12 grids
    window.document()->edit(edited);
    QVERIFY(page->isRunning());
    QVERIFY(page->currentJobId() > first);
    QVERIFY(waitForSweep(page));
    QVERIFY(page->shownJobId() > first);
    QCOMPARE(page->gridModel()->rowCount(), 12);
    for (const auto& g : page->result().grids) QCOMPARE(g.grid.world_size, 32u);

    // Several quick edits: one debounced run for the last state.
    for (std::uint32_t nodes : {2u, 3u, 1u}) {
      edited.cluster.nodes = nodes;
      window.document()->edit(edited);
    }
    QVERIFY(waitForSweep(page));
    QCOMPARE(page->gridModel()->rowCount(), 8);  // N = 8: 1, 2, 4, 8
    for (const auto& g : page->result().grids) QCOMPARE(g.grid.world_size, 8u);
  }

  void cancelStopsTheSweep() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    QTest::qWait(0);  // the first run starts from the event loop
    page->cancel();
    QVERIFY(waitForSweep(page));  // cancelled or already done: either way the GUI is back
    QVERIFY(page->result().grids.size() <= 14);
    page->rerun();
    QVERIFY(waitForSweep(page));
    QCOMPARE(page->gridModel()->rowCount(), 14);
  }

  void malformedProjectsNeverCrash() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    QVERIFY(waitForSweep(page));

    core::Project none = window.document()->project();
    none.cluster.nodes = 0;
    window.document()->edit(none);
    QVERIFY(waitForSweep(page));
    QCOMPARE(page->gridModel()->rowCount(), 0);
    QCOMPARE(page->stepBarCount(), 0);
    QVERIFY2(page->messageText().contains("no GPUs"), qPrintable(page->messageText()));
    page->chooseRow(0);  // nothing to choose

    core::Project empty = core::defaultProject();
    empty.model.tables.clear();
    window.document()->edit(empty);
    QVERIFY(waitForSweep(page));
    QCOMPARE(page->gridModel()->rowCount(), 0);

    core::Project tiny = core::defaultProject();
    tiny.cluster.gpu.hbm_bytes = 1;  // nothing fits
    window.document()->edit(tiny);
    QVERIFY(waitForSweep(page));
    QCOMPARE(page->gridModel()->rowCount(), 14);
    QCOMPARE(page->stepBarCount(), 0);
    page->chooseRow(0);  // a grid that does not fit can still be chosen
    QCOMPARE(window.document()->project().chosen_group_size.has_value(), true);
  }

  void destroyingTheWindowMidSweepIsSafe() {
    auto* window = new MainWindow;
    core::Project edited = window->document()->project();
    edited.cluster.nodes = 16;
    window->document()->edit(edited);
    QTest::qWait(200);  // the debounced run has started
    delete window;      // cancels and waits for the runs
  }

  void screenshotOfTheGridExplorer() {
    MainWindow window;
    window.showPage(MainWindow::Page::GridExplorer);
    QVERIFY(waitForSweep(window.gridExplorerPage()));
    for (const QSize size : {QSize(1600, 1000), QSize(1280, 800)}) {
      const QString path = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/grid_explorer_%1x%2.png")
                               .arg(size.width())
                               .arg(size.height());
      const core::Status saved = shardscope::app::saveScreenshot(window, path, size);
      QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
      QVERIFY(QImage(path).size() == size);
    }
  }

  // In the default project the worst fitting grid takes ~400x the best's time:
  // zoomed on the best, the winner's bar is still one you can see and click.
  void theBestGridsBarIsVisibleBesideBarsHundredsOfTimesTaller() {
    MainWindow window;
    GridExplorerPage* page = showAt1280(window);
    QVERIFY(page != nullptr);
    double worst = 0.0;
    for (const auto& g : window.session()->result().grids)
      if (g.fits) worst = std::max(worst, g.step.step_ms);
    QVERIFY(worst > 100.0 * window.session()->result().best()->step.step_ms);
    page->stepPlot()->replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(page->stepPlot()->scale() == shardscope::app::StepTimeChart::Scale::ZoomedOnBest);
    QVERIFY2(page->stepPlot()->bestBarPixels() >= 10.0, qPrintable(QString::number(page->stepPlot()->bestBarPixels())));
    // The answer in one sentence above the charts, as the HTML report's "Why" section says it.
    QVERIFY2(page->decisionText().startsWith(QStringLiteral("Best: M = ")) &&
                 page->decisionText().contains(QStringLiteral("dominates its step")),
             qPrintable(page->decisionText()));
  }

  // The answer's columns, the step and its four parts, need no scrolling at 1280x800.
  void theStepAndItsPartsAreVisibleAt1280() {
    MainWindow window;
    GridExplorerPage* page = showAt1280(window);
    QVERIFY(page != nullptr);
    QCoreApplication::processEvents();
    const QHeaderView* header = page->gridTable()->horizontalHeader();
    const int viewport = page->gridTable()->viewport()->width();
    for (int c : {GridExplorerPage::ColStep, GridExplorerPage::ColEmbedding, GridExplorerPage::ColAllToAll,
                  GridExplorerPage::ColReplicaSync, GridExplorerPage::ColDense}) {
      const int right = header->sectionViewportPosition(c) + header->sectionSize(c);
      QVERIFY2(header->sectionViewportPosition(c) >= 0 && right <= viewport,
               qPrintable(QStringLiteral("column %1 ends at %2 of %3 px").arg(c).arg(right).arg(viewport)));
    }
  }
};

QTEST_MAIN(TestGridExplorer)
#include "tst_grid_explorer.moc"
