// The workbench around the pages: undo/redo of project edits, the
// unsaved-changes prompt, the planning session shared by the pages (chosen
// grid, sync interval, the scaling heatmap) and the status bar.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QCloseEvent>
#include <QHeaderView>
#include <QImage>
#include <QListWidget>
#include <QStandardItemModel>
#include <QTableView>
#include <QLabel>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <qcustomplot.h>

#include "export_page.h"
#include "grid_explorer_page.h"
#include "main_window.h"
#include "plan_page.h"
#include "planning_session.h"
#include "project_document.h"
#include "project_files.h"
#include "screenshot.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/scaling_sweep.h"
#include "shardscope/planner/sweep.h"

using shardscope::app::GridExplorerPage;
using shardscope::app::GridTable;
using shardscope::app::MainWindow;
using shardscope::app::PlanningSession;
namespace core = shardscope::core;
namespace planner = shardscope::planner;

namespace {
constexpr int kTimeoutMs = 180000;
}

class TestWorkbench : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_workbench"));
  }

  void pagesHaveNames() {
    const char* names[] = {"model", "cluster", "grid", "plan", "export", "runs", "measured", "timeline", "collectives"};
    static_assert(std::size(names) == MainWindow::kPageCount);
    for (int i = 0; i < MainWindow::kPageCount; ++i) {
      const auto page = MainWindow::pageFromName(QString::fromLatin1(names[i]));
      QVERIFY(page.has_value());
      QCOMPARE(static_cast<int>(*page), i);
    }
    QVERIFY(!MainWindow::pageFromName(QStringLiteral("overview")).has_value());
  }

  void editsUndoAndRedo() {
    MainWindow window;
    auto* doc = window.document();
    const core::Project before = doc->project();
    core::Project edited = before;
    edited.cluster.nodes = 2;
    doc->edit(edited, QStringLiteral("Set nodes to 2"));
    QVERIFY(doc->isModified());
    QCOMPARE(doc->undoStack()->count(), 1);
    QCOMPARE(doc->undoStack()->undoText(), QString("Set nodes to 2"));
    doc->edit(edited, QStringLiteral("no-op"));  // unchanged: no step
    QCOMPARE(doc->undoStack()->count(), 1);
    doc->undoStack()->undo();
    QVERIFY(doc->project() == before);
    QVERIFY(!doc->isModified());
    doc->undoStack()->redo();
    QCOMPARE(doc->project().cluster.nodes, 2u);
    QVERIFY(doc->isModified());
    // Opening or resetting a project clears the history.
    doc->resetToDefault();
    QCOMPARE(doc->undoStack()->count(), 0);
    QVERIFY(!doc->isModified());
  }

  void choosingAGridIsUndoableAndDoesNotReplan() {
    MainWindow window;
    PlanningSession* session = window.session();
    QVERIFY(session->waitUntilIdle(kTimeoutMs, false));
    const quint64 job = session->currentJobId();
    QSignalSpy replanned(window.document(), &shardscope::app::ProjectDocument::projectChanged);
    session->choose(3);
    const auto& g = session->result().grids[3];
    QCOMPARE(session->chosenIndex(), 3);
    QVERIFY(session->planGrid() == &session->result().grids[3]);
    QCOMPARE(window.document()->project().chosen_group_size, std::optional<std::uint32_t>(g.grid.group_size));
    QCOMPARE(replanned.count(), 0);
    QCOMPARE(session->currentJobId(), job);
    QVERIFY2(window.statusGridText().startsWith("Chosen grid: M = " + QString::number(g.grid.group_size)),
             qPrintable(window.statusGridText()));
    window.document()->undoStack()->undo();
    QCOMPARE(session->chosenIndex(), -1);
    QVERIFY(session->planGrid() == session->result().best());
    QVERIFY2(window.statusGridText().startsWith("Best grid (none chosen)"), qPrintable(window.statusGridText()));
  }

  void unsavedChangesAreAskedAbout() {
    QTemporaryDir dir;
    const QString path = dir.filePath("p.shardscope");
    MainWindow window;
    QVERIFY(window.saveProjectAs(path).ok());
    core::Project edited = window.document()->project();
    edited.model.batch_size_per_gpu = 777;
    window.document()->edit(edited, QStringLiteral("Set batch"));

    window.setUnsavedChangesAnswer(MainWindow::UnsavedAnswer::Cancel);
    QVERIFY(!window.maybeSave());
    QCloseEvent refused;
    QApplication::sendEvent(&window, &refused);
    QVERIFY(!refused.isAccepted());
    QCOMPARE(window.document()->project().model.batch_size_per_gpu, 777u);  // nothing lost

    window.setUnsavedChangesAnswer(MainWindow::UnsavedAnswer::Save);
    QVERIFY(window.maybeSave());
    QVERIFY(!window.document()->isModified());
    auto reloaded = shardscope::app::readProjectFile(path);
    QVERIFY(reloaded.ok());
    QCOMPARE(reloaded->model.batch_size_per_gpu, 777u);

    window.document()->edit(core::defaultProject(), QStringLiteral("Back to default"));
    window.setUnsavedChangesAnswer(MainWindow::UnsavedAnswer::Discard);
    QCloseEvent accepted;
    QApplication::sendEvent(&window, &accepted);
    QVERIFY(accepted.isAccepted());
    // Discarded: the file keeps the saved state.
    QCOMPARE(shardscope::app::readProjectFile(path)->model.batch_size_per_gpu, 777u);
  }

  void syncIntervalAmortisesTheReplicaSync() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    PlanningSession* session = window.session();
    QVERIFY(session->waitUntilIdle(kTimeoutMs, false));
    auto gridOf = [session](std::uint32_t m) -> const planner::GridResult* {
      for (const auto& g : session->result().grids)
        if (g.grid.group_size == m && g.grid.layout == core::RankLayout::Strided) return &g;
      return nullptr;
    };
    auto syncOf = [&](std::uint32_t m) {
      const planner::GridResult* g = gridOf(m);
      return g ? g->step.replica_sync_ms : -1.0;
    };
    const double every_step = syncOf(8);
    QVERIFY(every_step > 0);
    page->setSyncInterval(100);
    QCOMPARE(window.document()->project().sync_interval, 100u);
    QVERIFY(session->waitUntilIdle(kTimeoutMs, false));
    QCOMPARE(session->plannedProject().sync_interval, 100u);
    // The planner balances the sync too, so the plan may change with the
    // interval: the step's sync is its largest rank state's sync over 100 steps.
    const planner::GridResult* g = gridOf(8);
    QVERIFY(g);
    std::uint64_t state = 0;
    for (const auto& r : g->ranks) state = std::max(state, r.state_bytes);
    const core::Project planned = session->plannedProject();
    const planner::CostModel cost =
        planner::sweepCostModel(planned.model, planned.cluster, nullptr, planner::sweepOptionsOf(planned));
    const double expected = cost.replicaSyncMs(state, g->grid, cost.gridCosts(g->grid));
    QVERIFY2(std::abs(syncOf(8) - expected) <= 1e-9 * expected, qPrintable(QString::number(syncOf(8))));
    QVERIFY(syncOf(8) < every_step / 50.0);
    window.document()->undoStack()->undo();
    QCOMPARE(window.document()->project().sync_interval, 1u);
  }

  void theTargetComboReplansForTheChosenTrainer() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    PlanningSession* session = window.session();
    QVERIFY(session->waitUntilIdle(kTimeoutMs, false));
    auto* combo = page->findChild<QComboBox*>(QStringLiteral("planTarget"));
    QVERIFY(combo != nullptr);
    QCOMPARE(window.document()->project().target, core::PlanTarget::TorchRec);  // the default
    QCOMPARE(combo->currentData().toInt(), static_cast<int>(core::PlanTarget::TorchRec));
    for (const auto& g : session->result().grids)
      if (g.fits) QCOMPARE(g.plan.target, core::PlanTarget::TorchRec);
    QVERIFY(window.exportPage()->summaryText().contains(QStringLiteral("Planned for TorchRec")));

    combo->setCurrentIndex(combo->findData(static_cast<int>(core::PlanTarget::ShardScope)));
    QCOMPARE(window.document()->project().target, core::PlanTarget::ShardScope);
    QVERIFY(session->waitUntilIdle(kTimeoutMs, false));
    QCOMPARE(session->plannedProject().target, core::PlanTarget::ShardScope);
    for (const auto& g : session->result().grids)
      if (g.fits) QCOMPARE(g.plan.target, core::PlanTarget::ShardScope);
    QVERIFY(window.exportPage()->snippetText().contains(QStringLiteral("target shardscope")));

    // Undo restores the project and the combo follows it.
    window.document()->undoStack()->undo();
    QCOMPARE(window.document()->project().target, core::PlanTarget::TorchRec);
    QCOMPARE(combo->currentData().toInt(), static_cast<int>(core::PlanTarget::TorchRec));
  }

  void stepSharesAddUpToOneHundred() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    page->setStepShares(true);
    QCustomPlot* plot = page->stepPlot();
    const int bars = page->stepBarCount();
    QVERIFY(bars > 0);
    for (int k = 0; k < bars; ++k) {
      double total = 0;
      for (int p = 0; p < plot->plottableCount(); ++p) {
        auto* series = qobject_cast<QCPBars*>(plot->plottable(p));
        QVERIFY(series != nullptr);
        total += (series->data()->constBegin() + k)->value;
      }
      QVERIFY2(std::abs(total - 100.0) < 1e-6, qPrintable(QString::number(total)));
    }
    page->setStepShares(false);
    const auto* first = qobject_cast<QCPBars*>(plot->plottable(0));
    QVERIFY(first->data()->constBegin()->value < 100.0 || bars == 0);
  }

  void heatmapCoversWorldSizesAndChoosesGrids() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    PlanningSession* session = window.session();
    QVERIFY(session->waitUntilIdle(kTimeoutMs, true));
    const auto& scaling = session->scaling();
    QVERIFY(scaling.error.empty());
    const std::vector<std::uint32_t> sizes = {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
    QVERIFY(scaling.world_sizes == sizes);
    QCOMPARE(scaling.group_sizes.front(), 1u);
    QCOMPARE(scaling.group_sizes.back(), 4096u);
    // Every power-of-two M <= N is planned: sum over N of (log2 N + 1).
    int expected = 0;
    for (std::uint32_t n : sizes) expected += static_cast<int>(std::log2(n)) + 1;
    QCOMPARE(page->heatmapCellCount(), expected);
    // The column of the project's own N agrees with the sweep of the Grid Explorer.
    const std::size_t n64 = 3;
    for (std::size_t mi = 0; mi < scaling.group_sizes.size(); ++mi) {
      const auto* cell = scaling.at(mi, n64);
      if (cell == nullptr) QFAIL("a heatmap cell is missing");
      if (!cell->planned || !cell->fits) continue;
      double best_step = 1e300;
      for (const auto& g : session->result().grids)
        if (g.grid.group_size == cell->group_size && g.fits) best_step = std::min(best_step, g.step.step_ms);
      QVERIFY2(std::abs(cell->step_ms - best_step) <= 1e-9 * best_step,
               qPrintable(QString("M=%1: %2 vs %3").arg(cell->group_size).arg(cell->step_ms).arg(best_step)));
    }
    QVERIFY(scaling.bestPerGpu() > 0);

    // A cell of the project's N chooses that grid.
    const std::size_t m8 = 3;  // M = 8
    QCOMPARE(scaling.group_sizes[m8], 8u);
    page->chooseHeatmapCell(m8, n64);
    QCOMPARE(window.document()->project().chosen_group_size, std::optional<std::uint32_t>(8));
    QCOMPARE(session->result().grids[static_cast<std::size_t>(session->chosenIndex())].grid.group_size, 8u);
    // A cell at another N rescales the cluster as one undoable edit and re-plans.
    const core::ClusterSpec before = window.document()->project().cluster;
    page->chooseHeatmapCell(m8, 6);  // N = 512
    QCOMPARE(window.document()->project().cluster.worldSize(), 512u);
    QCOMPARE(window.document()->project().cluster.gpus_per_node, before.gpus_per_node);
    QCOMPARE(window.document()->project().chosen_group_size, std::optional<std::uint32_t>(8));
    QVERIFY(session->waitUntilIdle(kTimeoutMs, false));
    QCOMPARE(session->result().grids.front().grid.world_size, 512u);
    QCOMPARE(session->planGrid()->grid.group_size, 8u);
    window.document()->undoStack()->undo();
    QVERIFY(window.document()->project().cluster == before);
    // Out-of-range cells are ignored.
    page->chooseHeatmapCell(99, 0);
    page->chooseHeatmapCell(0, 99);
  }

  void gridModelStaysConsistentAcrossSweeps() {
    MainWindow window;
    GridExplorerPage* page = window.gridExplorerPage();
    QAbstractItemModelTester tester(page->gridModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    core::Project p = window.document()->project();
    for (std::uint32_t nodes : {4u, 1u, 0u, 8u}) {
      p.cluster.nodes = nodes;
      window.document()->edit(p, QStringLiteral("nodes"));
      QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
      page->gridTable()->sortByColumn(GridTable::ColStep, Qt::DescendingOrder);
      page->gridTable()->sortByColumn(GridTable::ColRank, Qt::AscendingOrder);
    }
    QCOMPARE(page->gridModel()->rowCount(), 14);
  }

  void clickingATableRowChoosesItsGrid() {
    MainWindow window;
    window.setAttribute(Qt::WA_DontShowOnScreen, true);
    window.resize(1600, 1000);
    window.show();
    window.showPage(MainWindow::Page::GridExplorer);
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    QApplication::processEvents();
    QTableView* table = window.gridExplorerPage()->gridTable();
    const int row = 4;
    const QRect cell = table->visualRect(table->model()->index(row, GridTable::ColStep));
    QVERIFY(cell.isValid());
    QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::NoModifier, cell.center());
    const int grid_index = table->model()->index(row, GridTable::ColRank).data(GridTable::kGridIndexRole).toInt();
    QCOMPARE(window.session()->chosenIndex(), grid_index);
    QVERIFY(window.statusGridText().startsWith("Chosen grid:"));
    // The Plan page follows the choice.
    QVERIFY(window.session()->planGrid() == &window.session()->result().grids[static_cast<std::size_t>(grid_index)]);
  }

  // Every page at 1600x1000 and 1280x800, to PNG under the build directory
  // (look at them: build/<dir>/screenshots/page_<name>_<W>x<H>.png). A
  // render that is one flat colour, or a plot with no data, fails.
  void screenshotOfEveryPage() {
    MainWindow window;
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, true));
    window.session()->choose(0);
    QVERIFY(window.planPage()->waitUntilShown(kTimeoutMs));
    const char* names[] = {"model", "cluster", "grid", "plan", "export", "runs", "measured", "timeline", "collectives"};
    static_assert(std::size(names) == MainWindow::kPageCount);
    // The Measured page needs a run: test_measured_loop screenshots it with one.
    for (int i = 0; i < static_cast<int>(MainWindow::Page::Measured); ++i) {
      window.showPage(static_cast<MainWindow::Page>(i));
      for (const QSize size : {QSize(1600, 1000), QSize(1280, 800)}) {
        const QString path = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_%1_%2x%3.png")
                                 .arg(QLatin1String(names[i]))
                                 .arg(size.width())
                                 .arg(size.height());
        const core::Status saved = shardscope::app::saveScreenshot(window, path, size);
        QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
        const QImage image(path);
        QVERIFY(image.size() == size);
        // Not blank: many distinct colours across the page.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
          for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString("%1: %2 colours").arg(path).arg(colours.size())));
      }
      // Every visible plot on the page holds data.
      for (QCustomPlot* plot : window.pages()->currentWidget()->findChildren<QCustomPlot*>()) {
        if (!plot->isVisibleTo(window.pages()->currentWidget())) continue;
        int points = 0;
        for (int p = 0; p < plot->plottableCount(); ++p) {
          if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(p))) points += bars->dataCount();
          if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(p))) points += map->data()->keySize();
          if (auto* graph = qobject_cast<QCPGraph*>(plot->plottable(p))) points += graph->dataCount();
        }
        QVERIFY2(points > 0, qPrintable(QString("page %1: plot %2 is empty").arg(names[i], plot->objectName())));
      }
    }
  }

  void aProjectKeepsItsChoiceAndSyncInterval() {
    QTemporaryDir dir;
    const QString path = dir.filePath("c.shardscope");
    {
      MainWindow window;
      core::Project p = window.document()->project();
      p.sync_interval = 25;
      window.document()->edit(p, QStringLiteral("sync"));
      window.document()->chooseGrid(16, core::RankLayout::Contiguous);
      QVERIFY(window.saveProjectAs(path).ok());
    }
    MainWindow window;
    QVERIFY(window.openProject(path).ok());
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    QCOMPARE(window.document()->project().sync_interval, 25u);
    const auto* grid = window.session()->planGrid();
    QVERIFY(grid != nullptr);
    QCOMPARE(grid->grid.group_size, 16u);
    QVERIFY(grid->grid.layout == core::RankLayout::Contiguous);
    QVERIFY(window.session()->planGridIsChosen());
  }
};

QTEST_MAIN(TestWorkbench)
#include "test_workbench.moc"
