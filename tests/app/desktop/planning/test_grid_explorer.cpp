// The Grid Explorer: the sweep runs off the GUI thread, fills the table and
// the plots, the scaling heatmap shows its weak-scaling reading, choosing a
// grid records it in the project, edits rerun the sweep and drop the older
// result, and malformed projects never crash it.
#include <QElapsedTimer>
#include <QHelpEvent>
#include <QLabel>
#include <QListWidget>
#include <QPointer>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QToolTip>
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
#include "scaling_annotations.h"
#include "screenshot.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/planner/scaling_sweep.h"
#include "shardscope/report/weak_scaling_text.h"

using shardscope::app::GridExplorerPage;
using shardscope::app::GridTable;
using shardscope::app::MainWindow;
using shardscope::app::ScalingAnnotations;
namespace core = shardscope::core;
namespace planner = shardscope::planner;

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

// The production-scale synthetic model on 4,096 H100: too big for the small world sizes.
core::Project productionProject() {
  core::Project p = core::defaultProject();
  p.model = core::modelPreset("production_synthetic").value();
  p.cluster = core::clusterPreset("h100x4096").value();
  p.chosen_group_size.reset();
  p.chosen_layout.reset();
  return p;
}

// The window at `size` on the Grid Explorer with the sweep and the heatmap shown and laid out.
GridExplorerPage* showWithHeatmap(MainWindow& window, QSize size) {
  window.resize(size);
  if (!window.isVisible()) {
    window.show();
    if (!QTest::qWaitForWindowExposed(&window)) return nullptr;
  }
  window.showPage(MainWindow::Page::GridExplorer);
  if (!window.session()->waitUntilIdle(kSweepTimeoutMs, true)) return nullptr;
  GridExplorerPage* page = window.gridExplorerPage();
  QCoreApplication::processEvents();
  page->heatmapPlot()->replot(QCustomPlot::rpImmediateRefresh);
  page->heatmapPlot()->replot(QCustomPlot::rpImmediateRefresh);  // a margin the labels asked for
  return page;
}

// The outlines are weakScaling()'s best cells, each column's label its cause
// ("memory" where nothing fits); counts what was found.
struct AnnotationCount {
  int marked = 0;
  int drops = 0;
  int nothing_fits = 0;
};
AnnotationCount checkAnnotations(const planner::ScalingResult& scaling, const ScalingAnnotations& notes) {
  AnnotationCount count;
  const std::vector<planner::WeakScalingPoint> points = scaling.weakScaling();
  const std::size_t cols = scaling.world_sizes.size();
  [&] {
    QCOMPARE(points.size(), cols);
    for (std::size_t ni = 0; ni < cols; ++ni) {
      const planner::WeakScalingPoint& p = points[ni];
      QString expected;
      if (p.best == nullptr) {
        expected = QStringLiteral("memory");
        ++count.nothing_fits;
      } else {
        QVERIFY(static_cast<std::size_t>(count.marked) < notes.bestMarkers().size());
        const QCPItemRect* marker = notes.bestMarkers()[static_cast<std::size_t>(count.marked++)];
        const auto cell = static_cast<std::size_t>(p.best - scaling.cells.data());
        const QPointF centre = (marker->topLeft->coords() + marker->bottomRight->coords()) / 2.0;
        QCOMPARE(centre.x(), static_cast<double>(cell % cols));
        QCOMPARE(centre.y(), static_cast<double>(cell / cols));
        if (p.drop) {
          expected = QString::fromUtf8(shardscope::report::stepPhaseLabel(p.cause).data());
          ++count.drops;
        }
      }
      QCOMPARE(notes.labelOver(ni), expected);
    }
    QCOMPARE(static_cast<std::size_t>(count.marked), notes.bestMarkers().size());
  }();
  return count;
}

// Every drop label lies inside the plot, above the cells, and clear of the others.
void checkLabelsReadable(const GridExplorerPage& page) {
  const QCustomPlot* plot = page.heatmapPlot();
  const QRectF cells = plot->axisRect()->rect();
  const std::vector<QRectF> rects = page.scalingAnnotations()->labelRects();
  QVERIFY(!rects.empty());
  for (std::size_t i = 0; i < rects.size(); ++i) {
    const QRectF& r = rects[i];
    const QString where = QStringLiteral("label %1 at (%2, %3, %4 x %5) in %6 x %7, cells from y %8")
                              .arg(i)
                              .arg(r.x())
                              .arg(r.y())
                              .arg(r.width())
                              .arg(r.height())
                              .arg(plot->width())
                              .arg(plot->height())
                              .arg(cells.top());
    QVERIFY2(r.left() >= 0 && r.top() >= 0 && r.right() <= plot->width(), qPrintable(where));
    QVERIFY2(r.bottom() <= cells.top() + 0.5, qPrintable(where));
    for (std::size_t j = i + 1; j < rects.size(); ++j)
      QVERIFY2(!r.intersects(rects[j]), qPrintable(where + QStringLiteral(" overlaps label %1").arg(j)));
  }
}

}  // namespace

class TestGridExplorer : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_grid_explorer"));
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
    QCOMPARE(page->gridModel()->columnCount(), static_cast<int>(GridTable::ColumnCount));
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
    // The debounced sweep (or the scaling sweep after it) is running when the window goes.
    QTRY_VERIFY_WITH_TIMEOUT(window->session()->isRunning() || window->session()->isScalingRunning(), 5000);
    QPointer<shardscope::app::PlanningSession> session = window->session();
    delete window;  // cancels and waits for the runs
    QVERIFY(session.isNull());
  }

  void screenshotOfTheGridExplorer() {
    MainWindow window;
    window.showPage(MainWindow::Page::GridExplorer);
    QVERIFY(window.session()->waitUntilIdle(kSweepTimeoutMs, true));  // the heatmap too
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

  // The heatmap read as weak scaling: each world size's best grid is outlined,
  // a drop in throughput per GPU names the phase that grew, hovering says it all.
  void heatmapMarksEachWorldSizesBestGridAndWhatDropped() {
    MainWindow window;
    GridExplorerPage* page = showWithHeatmap(window, QSize(1280, 800));
    QVERIFY(page != nullptr);
    const planner::ScalingResult& scaling = window.session()->scaling();
    const ScalingAnnotations* notes = page->scalingAnnotations();
    const AnnotationCount count = checkAnnotations(scaling, *notes);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(count.marked, static_cast<int>(scaling.world_sizes.size()));  // DCNv2 fits at every size
    QVERIFY(count.drops > 0);
    checkLabelsReadable(*page);
    QVERIFY2(page->findChild<QLabel*>(QStringLiteral("heatmapStatus"))->text().contains(QStringLiteral("Outlined")),
             qPrintable(page->findChild<QLabel*>(QStringLiteral("heatmapStatus"))->text()));

    // Hovering the best cell of N = 64 gives its grid, step by phase and throughput.
    const std::vector<planner::WeakScalingPoint> points = scaling.weakScaling();
    const auto n64 = static_cast<std::size_t>(std::find(scaling.world_sizes.begin(), scaling.world_sizes.end(), 64u) -
                                              scaling.world_sizes.begin());
    QVERIFY(n64 < points.size() && points[n64].best != nullptr);
    const planner::ScalingCell& best = *points[n64].best;
    const auto row = static_cast<std::size_t>(points[n64].best - scaling.cells.data()) / scaling.world_sizes.size();
    const QCustomPlot* plot = page->heatmapPlot();
    const QPointF centre(plot->xAxis->coordToPixel(static_cast<double>(n64)),
                         plot->yAxis->coordToPixel(static_cast<double>(row)));
    const QString tip = notes->toolTipAt(centre);
    for (const QString& part :
         {QStringLiteral("N = 64, M = %1 × R = %2 (%3)")
              .arg(best.group_size)
              .arg(64 / best.group_size)
              .arg(QString::fromLatin1(core::toString(best.layout))),
          QStringLiteral("embedding"), QStringLiteral("all-to-all"), QStringLiteral("replica sync"),
          QStringLiteral("dense"), QStringLiteral("samples/s per GPU"), QStringLiteral("best grid at N = 64")})
      QVERIFY2(tip.contains(part), qPrintable(part + QStringLiteral(" not in: ") + tip));
    // ... as the tooltip the plot shows there.
    QHelpEvent hover(QEvent::ToolTip, centre.toPoint(), page->heatmapPlot()->mapToGlobal(centre.toPoint()));
    QCoreApplication::sendEvent(page->heatmapPlot(), &hover);
    QCOMPARE(QToolTip::text(), notes->toolTipAt(centre.toPoint()));
    // A drop label's hover names the phase in full and how much it grew.
    for (std::size_t ni = 1; ni < points.size(); ++ni) {
      if (!points[ni].drop || points[ni].best == nullptr) continue;
      const QPointF above(plot->xAxis->coordToPixel(static_cast<double>(ni)), plot->axisRect()->top() - 4);
      const QString cause = notes->toolTipAt(above);
      QVERIFY2(cause.contains(QString::fromUtf8(planner::toString(points[ni].cause).data())) &&
                   cause.contains(QStringLiteral("grew most")) && cause.contains(QStringLiteral("ms per step")),
               qPrintable(cause));
      break;
    }
  }

  // Where the small world sizes cannot hold the model, their columns say memory,
  // and the labels stay readable at the window's default size and at 1280x800.
  void heatmapSaysMemoryWhereNothingFits() {
    MainWindow window;
    window.document()->reset(productionProject());
    for (const QSize size : {QSize(1400, 900), QSize(1280, 800)}) {
      GridExplorerPage* page = showWithHeatmap(window, size);
      QVERIFY(page != nullptr);
      const AnnotationCount count = checkAnnotations(window.session()->scaling(), *page->scalingAnnotations());
      if (QTest::currentTestFailed()) return;
      QVERIFY(count.nothing_fits > 0);
      QVERIFY(count.marked > 0);
      QVERIFY(page->scalingAnnotations()->labelOver(0) == QStringLiteral("memory"));
      QVERIFY2(page->scalingAnnotations()
                   ->toolTipAt(QPointF(page->heatmapPlot()->xAxis->coordToPixel(0.0),
                                       page->heatmapPlot()->axisRect()->top() - 4))
                   .contains(QStringLiteral("no grid fits")),
               "the memory label's hover");
      checkLabelsReadable(*page);
      if (QTest::currentTestFailed()) return;
    }
    for (const QSize size : {QSize(1400, 900), QSize(1280, 800)}) {
      const QString path = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/grid_explorer_production_%1x%2.png")
                               .arg(size.width())
                               .arg(size.height());
      QVERIFY(shardscope::app::saveScreenshot(window, path, size).ok());
    }
  }

  // The answer's columns, the step and its four parts, need no scrolling at 1280x800.
  void theStepAndItsPartsAreVisibleAt1280() {
    MainWindow window;
    GridExplorerPage* page = showAt1280(window);
    QVERIFY(page != nullptr);
    QCoreApplication::processEvents();
    const QHeaderView* header = page->gridTable()->horizontalHeader();
    const int viewport = page->gridTable()->viewport()->width();
    for (int c : {GridTable::ColStep, GridTable::ColEmbedding, GridTable::ColAllToAll, GridTable::ColReplicaSync,
                  GridTable::ColDense}) {
      const int right = header->sectionViewportPosition(c) + header->sectionSize(c);
      QVERIFY2(header->sectionViewportPosition(c) >= 0 && right <= viewport,
               qPrintable(QStringLiteral("column %1 ends at %2 of %3 px").arg(c).arg(right).arg(viewport)));
    }
  }
};

QTEST_MAIN(TestGridExplorer)
#include "test_grid_explorer.moc"
