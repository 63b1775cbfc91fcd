// The Plan page on a real document and planning session with the default
// project (DCNv2, 26 tables, 64 H100): the bars add up to each rank's load,
// the heatmap and tables have the grid's shape, hover texts name the table,
// pinning / forbidding through the context menu's functions re-plans as
// asked, constraints are listed, removable and undoable, big plans are
// priced off the GUI thread and stale results are dropped, and the charts
// render while the page is hidden.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QImage>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QUndoStack>
#include <QtTest>
#include <cmath>
#include <memory>

#include "main_window.h"
#include "placement_heatmap.h"
#include "plan_page.h"
#include "planning_session.h"
#include "project_document.h"
#include "rank_load_chart.h"
#include "rank_load_model.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/grid.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/planner/plan_breakdown.h"
#include "shardscope/planner/scaling_sweep.h"
#include "shardscope/report/constraint_edits.h"
#include "shardscope/core/torchrec_sharding.h"
#include "table_load_model.h"

using shardscope::app::PlacementHeatmap;
using shardscope::app::PlanningSession;
using shardscope::app::PlanPage;
using shardscope::app::ProjectDocument;
using shardscope::app::RankLoadChart;
using shardscope::app::RankLoadModel;
using shardscope::app::TableLoadModel;
using shardscope::report::PlanSnapshot;
namespace core = shardscope::core;
namespace planner = shardscope::planner;

namespace {

constexpr int kTimeoutMs = 120000;

bool near(double a, double b, double rel = 1e-6) {
  return std::abs(a - b) <= rel * std::max({1e-12, std::abs(a), std::abs(b)});
}

// A document, its session and the page, as the main window wires them.
struct Fixture {
  ProjectDocument document;
  PlanningSession session{&document};
  PlanPage page{&session};
  bool settle() { return session.waitUntilIdle(kTimeoutMs, false) && page.waitUntilShown(kTimeoutMs); }
};

const core::TablePlacement* placementOf(const PlanSnapshot& s, const std::string& table) {
  const int i = s.tableIndex(table);
  return i < 0 ? nullptr : &s.grid.plan.tables[static_cast<std::size_t>(i)];
}

// A table of the shown plan that has shards and some of them off `rank`.
std::string tableNotOnlyOn(const PlanSnapshot& s, std::uint32_t rank) {
  for (const auto& t : s.grid.plan.tables) {
    if (t.sharding_type == core::ShardingType::DataParallel || t.shards.empty() || t.rows > 100000) continue;
    if (std::any_of(t.shards.begin(), t.shards.end(), [rank](const auto& sh) { return sh.group_rank != rank; }))
      return t.name;
  }
  return {};
}

QStringList listTexts(const QListWidget* list) {
  QStringList out;
  for (int i = 0; i < list->count(); ++i) out << list->item(i)->text();
  return out;
}

QAction* actionWithData(QMenu* menu, const QVariant& data) {
  for (QAction* a : menu->actions())
    if (a->data() == data) return a;
  return nullptr;
}

QAction* actionWithText(QMenu* menu, const QString& text) {
  for (QAction* a : menu->actions())
    if (a->text() == text) return a;
  return nullptr;
}

}  // namespace

class TestPlanPage : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_plan_page"));
  }

  void theMainWindowsPageShowsTheSessionsGrid() {
    shardscope::app::MainWindow window;
    PlanPage* page = window.planPage();
    QVERIFY(page != nullptr);
    QCOMPARE(page->objectName(), QStringLiteral("planPage"));
    QVERIFY(page->snapshot() == nullptr);  // nothing planned before the event loop runs
    QVERIFY(page->waitUntilShown(kTimeoutMs));
    QVERIFY(page->snapshot() != nullptr);
    QCOMPARE(page->snapshot()->groupSize(), window.session()->planGrid()->grid.group_size);
    QCOMPARE(page->rankLoadPlot(), static_cast<QCustomPlot*>(page->rankLoadChart()));
    QCOMPARE(page->placementPlot(), static_cast<QCustomPlot*>(page->placementHeatmap()));
  }

  // The rank table's load columns, replica sync included, need no scrolling at 1280x800.
  void theSyncColumnIsVisibleAt1280() {
    shardscope::app::MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showPage(shardscope::app::MainWindow::Page::Plan);
    PlanPage* page = window.planPage();
    QVERIFY(page->waitUntilShown(kTimeoutMs));
    QCoreApplication::processEvents();
    const QHeaderView* header = page->rankTable()->horizontalHeader();
    const int viewport = page->rankTable()->viewport()->width();
    for (int c : {RankLoadModel::Fwd, RankLoadModel::Bwd, RankLoadModel::Comm, RankLoadModel::Sync}) {
      const int left = header->sectionViewportPosition(c);
      QVERIFY2(left >= 0 && left + header->sectionSize(c) <= viewport,
               qPrintable(QStringLiteral("column %1 at %2..%3 of %4 px")
                              .arg(c)
                              .arg(left)
                              .arg(left + header->sectionSize(c))
                              .arg(viewport)));
    }
  }

  void everyItemModelPassesTheTester() {
    Fixture f;
    using Mode = QAbstractItemModelTester::FailureReportingMode;
    // Attached before the first plan: they watch every reset and change from here on.
    QAbstractItemModelTester ranks(f.page.rankModel(), Mode::QtTest);
    QAbstractItemModelTester tables(f.page.tableModel(), Mode::QtTest);
    QAbstractItemModelTester rank_view(f.page.rankTable()->model(), Mode::QtTest);
    QAbstractItemModelTester table_view(f.page.tableList()->model(), Mode::QtTest);
    QAbstractItemModelTester critical(f.page.criticalTables()->model(), Mode::QtTest);
    QAbstractItemModelTester constraints(f.page.constraintList()->model(), Mode::QtTest);
    QVERIFY(f.settle());
    QVERIFY(f.page.rankModel()->rowCount() > 0);
    const std::string table = f.page.snapshot()->grid.plan.tables.front().name;
    f.page.forbidShardingType(QString::fromStdString(table),
                              core::ShardingType::DataParallel);  // constraint column changes
    QVERIFY(f.settle());
    f.page.tableList()->sortByColumn(TableLoadModel::Constraint, Qt::AscendingOrder);
    f.page.rankTable()->sortByColumn(RankLoadModel::Load, Qt::DescendingOrder);
    QCOMPARE(f.page.tableModel()->rowCount(), 26);
  }

  void barsHaveOneStackPerRankSummingToItsLoad() {
    Fixture f;
    QVERIFY(f.settle());
    const planner::GridResult* grid = f.session.planGrid();
    QVERIFY(grid != nullptr);
    const std::uint32_t M = grid->grid.group_size;
    QCOMPARE(f.page.snapshot()->groupSize(), M);
    RankLoadChart* chart = f.page.rankLoadChart();
    QCOMPARE(chart->rankCount(), static_cast<int>(M));
    std::vector<double> totals(M, 0.0);
    int drawn = 0;
    for (QCPBars* bars : chart->series()) {
      if (bars->dataCount() == 0) continue;
      ++drawn;
      QCOMPARE(bars->dataCount(), static_cast<int>(M));
      for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) {
        const long rank = std::lround(it->key);
        QVERIFY(rank >= 0 && rank < static_cast<long>(M));
        totals[static_cast<std::size_t>(rank)] += it->value;
      }
    }
    QCOMPARE(drawn, 11);  // the 10 heaviest of 26 tables and "other"
    for (std::uint32_t r = 0; r < M; ++r)
      QVERIFY2(near(totals[r], grid->ranks[r].load_ms),
               qPrintable(QString("rank %1: bars %2, load %3").arg(r).arg(totals[r]).arg(grid->ranks[r].load_ms)));
    // The legend names the heaviest table first.
    QCOMPARE(chart->series().front()->name(),
             QString::fromStdString(grid->plan.tables[f.page.snapshot()->breakdown.tables_by_load.front()].name));
  }

  void heatmapIsTablesByRanks() {
    Fixture f;
    QVERIFY(f.settle());
    const std::uint32_t M = f.session.planGrid()->grid.group_size;
    PlacementHeatmap* heatmap = f.page.placementHeatmap();
    QCOMPARE(heatmap->columnCount(), static_cast<int>(M));
    QCOMPARE(heatmap->rowCount(), 26);  // fewer than 40: every table
    QCOMPARE(heatmap->colorMap()->data()->keySize(), static_cast<int>(M));
    QCOMPARE(heatmap->colorMap()->data()->valueSize(), 26);
    QVERIFY2(heatmap->titleText().contains("26 tables"), qPrintable(heatmap->titleText()));
    // Rows heaviest first; a cell is blank exactly where the table has nothing.
    const PlanSnapshot& s = *f.page.snapshot();
    QCOMPARE(*heatmap->tableOfRow(0), s.breakdown.tables_by_load.front());
    const auto& top = s.grid.plan.tables[*heatmap->tableOfRow(0)];
    for (std::uint32_t r = 0; r < M; ++r) {
      const bool has =
          top.sharding_type == core::ShardingType::DataParallel ||
          std::any_of(top.shards.begin(), top.shards.end(), [r](const auto& sh) { return sh.group_rank == r; });
      QCOMPARE(!std::isnan(heatmap->colorMap()->data()->cell(static_cast<int>(r), 0)), has);
    }
  }

  void rankTableListsEveryRankSortable() {
    Fixture f;
    QVERIFY(f.settle());
    const planner::GridResult* grid = f.session.planGrid();
    QCOMPARE(f.page.rankModel()->rowCount(), static_cast<int>(grid->grid.group_size));
    QCOMPARE(f.page.rankModel()->columnCount(), static_cast<int>(RankLoadModel::ColumnCount));
    f.page.rankTable()->sortByColumn(RankLoadModel::Load, Qt::DescendingOrder);
    const QAbstractItemModel* view = f.page.rankTable()->model();
    QCOMPARE(view->index(0, RankLoadModel::GroupRank).data().toString(), QString::number(grid->critical_rank));
    QCOMPARE(view->index(0, RankLoadModel::Load).data().toString(), QString::number(grid->max_load_ms, 'f', 3));
  }

  void headerAndImbalanceDescribeTheGrid() {
    Fixture f;
    QVERIFY(f.settle());
    const planner::GridResult* grid = f.session.planGrid();
    const QString header = f.page.headerText();
    QVERIFY2(header.startsWith("Best grid (none chosen)"), qPrintable(header));
    QVERIFY2(header.contains(QString("M = %1 \u00d7 R = %2").arg(grid->grid.group_size).arg(grid->grid.replicas)),
             qPrintable(header));
    QVERIFY2(header.contains(QString("step %1 ms").arg(grid->step.step_ms, 0, 'f', 3)), qPrintable(header));
    QVERIFY2(header.contains(QString::fromStdString(grid->algorithm)), qPrintable(header));
    QVERIFY2(f.page.imbalanceText().contains(QString("max/mean %1").arg(grid->imbalance.max_over_mean, 0, 'f', 3)),
             qPrintable(f.page.imbalanceText()));
    QTableWidget* critical = f.page.criticalTables();
    QVERIFY(critical->rowCount() > 0);
    QCOMPARE(critical->item(0, 0)->text(), QString::fromStdString(grid->critical_tables.front().table));

    // Choosing a grid: the header says so.
    f.document.chooseGrid(8u, core::RankLayout::Strided);
    QVERIFY(f.page.waitUntilShown(kTimeoutMs));
    QVERIFY2(f.page.headerText().startsWith("Chosen grid: M = 8 \u00d7 R = 8 (strided)"),
             qPrintable(f.page.headerText()));
    QCOMPARE(f.page.rankLoadChart()->rankCount(), 8);
  }

  void hoverTextNamesTheTableUnderThePointer() {
    Fixture f;
    QVERIFY(f.settle());
    const PlanSnapshot& s = *f.page.snapshot();
    RankLoadChart* chart = f.page.rankLoadChart();
    const std::uint32_t rank = s.grid.critical_rank;
    // The bottom segment with any load on the slowest rank.
    double base = 0;
    std::size_t series = 0;
    while (series < s.stack.tables.size() && s.stack.load_ms[series][rank] <= 0) ++series;
    QVERIFY(series < s.stack.tables.size());
    for (std::size_t i = 0; i < series; ++i) base += s.stack.load_ms[i][rank];
    const double middle = base + s.stack.load_ms[series][rank] / 2;
    const QString name = QString::fromStdString(s.grid.plan.tables[s.stack.tables[series]].name);
    const QString text = chart->hoverText(rank, middle);
    QVERIFY2(text.startsWith(name + " on group rank " + QString::number(rank)), qPrintable(text));
    QVERIFY2(text.contains("fwd ") && text.contains("comm "), qPrintable(text));
    // The same point through pixels, as the mouse finds it.
    chart->resize(900, 400);
    chart->replot();
    const QPointF pixel(chart->xAxis->coordToPixel(rank), chart->yAxis->coordToPixel(middle));
    const auto hit = chart->hitAtPixel(pixel);
    QVERIFY(hit.has_value());
    QCOMPARE(hit->group_rank, rank);
    QVERIFY(hit->table.has_value());
    QCOMPARE(*hit->table, s.stack.tables[series]);
    // Above the stack and between bars: nothing.
    QVERIFY(chart->hoverText(rank, s.breakdown.rank_load_ms[rank] * 1.05).isEmpty());
    QVERIFY(chart->hoverText(rank + 0.5, middle).isEmpty());

    // The heatmap cell of the heaviest table on a rank that holds it.
    PlacementHeatmap* heatmap = f.page.placementHeatmap();
    const auto& top = s.grid.plan.tables[*heatmap->tableOfRow(0)];
    const std::uint32_t holder = top.shards.empty() ? 0 : top.shards.front().group_rank;
    const QString cell = heatmap->hoverText(0, holder);
    QVERIFY2(cell.startsWith(QString::fromStdString(top.name) + " on group rank " + QString::number(holder)),
             qPrintable(cell));
    QVERIFY2(cell.contains(QString::fromLatin1(core::toString(top.sharding_type))), qPrintable(cell));
  }

  void pinningMovesEveryShardAndListsTheConstraint() {
    Fixture f;
    QVERIFY(f.settle());
    // M = 64: the menu offers the least-loaded rank and a dialog for any other.
    const auto& loads = f.page.snapshot()->breakdown.rank_load_ms;
    const auto target = static_cast<std::uint32_t>(std::min_element(loads.begin(), loads.end()) - loads.begin());
    const std::string table = tableNotOnlyOn(*f.page.snapshot(), target);
    QVERIFY(!table.empty());
    const QString name = QString::fromStdString(table);
    std::unique_ptr<QMenu> menu(f.page.tableMenu(name));
    auto* pin = menu->findChild<QMenu*>("pinMenu");
    QVERIFY(pin != nullptr);
    QVERIFY(pin->isEnabled());
    QCOMPARE(pin->actions().size(), 2);
    QAction* action = pin->actions().front();
    QCOMPARE(action->data().toUInt(), target);
    action->trigger();
    const QString pinned = QString("%1: pinned to group rank %2").arg(name).arg(target);
    QCOMPARE(f.document.undoStack()->undoText(), QString("Pin %1 to group rank %2").arg(name).arg(target));
    QVERIFY(f.settle());

    const core::TablePlacement* placed = placementOf(*f.page.snapshot(), table);
    QVERIFY(placed != nullptr);
    QVERIFY(!placed->shards.empty());
    for (const auto& sh : placed->shards) QCOMPARE(sh.group_rank, target);
    QCOMPARE(listTexts(f.page.constraintList()), QStringList{pinned});
    QCOMPARE(
        f.page.tableModel()->index(f.page.snapshot()->tableIndex(table), TableLoadModel::Constraint).data().toString(),
        QString("pinned to group rank %1").arg(target));

    // Remove it (the button acts on the selected line): gone from project and list.
    f.page.constraintList()->setCurrentRow(0);
    auto* remove = f.page.findChild<QPushButton*>("removeConstraint");
    QVERIFY(remove != nullptr && remove->isEnabled());
    remove->click();
    QVERIFY(f.document.project().constraints.empty());
    QCOMPARE(f.page.constraintList()->count(), 0);
    QVERIFY(f.settle());

    // Undo brings it back, listed, and the plan honours it again.
    f.document.undoStack()->undo();
    QCOMPARE(listTexts(f.page.constraintList()), QStringList{pinned});
    QVERIFY(f.settle());
    const core::TablePlacement* again = placementOf(*f.page.snapshot(), table);
    QVERIFY(again != nullptr);
    for (const auto& sh : again->shards) QCOMPARE(sh.group_rank, target);
    // Undo once more: the project as it started.
    f.document.undoStack()->undo();
    QVERIFY(f.document.project().constraints.empty());
  }

  void aSmallGroupListsEveryRankInThePinMenu() {
    Fixture f;
    QVERIFY(f.settle());
    f.document.chooseGrid(8u, core::RankLayout::Strided);
    QVERIFY(f.page.waitUntilShown(kTimeoutMs));
    const std::string table = tableNotOnlyOn(*f.page.snapshot(), 3);
    QVERIFY(!table.empty());
    std::unique_ptr<QMenu> menu(f.page.tableMenu(QString::fromStdString(table)));
    auto* pin = menu->findChild<QMenu*>("pinMenu");
    QCOMPARE(pin->actions().size(), 8);
    QAction* rank3 = actionWithData(pin, QVariant::fromValue(3u));
    QVERIFY(rank3 != nullptr);
    rank3->trigger();
    QVERIFY(f.settle());
    const core::TablePlacement* placed = placementOf(*f.page.snapshot(), table);
    QVERIFY(placed != nullptr && !placed->shards.empty());
    for (const auto& sh : placed->shards) QCOMPARE(sh.group_rank, 3u);
  }

  void forbiddingATypeChangesThePlacement() {
    Fixture f;
    QVERIFY(f.settle());
    // The heaviest table and the type it has now.
    const PlanSnapshot& before = *f.page.snapshot();
    const std::string table = before.grid.plan.tables[before.breakdown.tables_by_load.front()].name;
    const core::TablePlacement* was = placementOf(before, table);
    QVERIFY(was != nullptr);
    const core::ShardingType type = was->sharding_type;
    f.page.forbidShardingType(QString::fromStdString(table), type);
    QCOMPARE(f.document.undoStack()->undoText(),
             QString("Forbid %1 for %2").arg(core::toString(type)).arg(table.c_str()));
    QVERIFY(f.settle());
    const core::TablePlacement* after = placementOf(*f.page.snapshot(), table);
    QVERIFY(after != nullptr);
    QVERIFY(after->sharding_type != type);
    QCOMPARE(listTexts(f.page.constraintList()),
             QStringList{QString("%1: no %2").arg(table.c_str(), core::toString(type))});

    // Force another type: the forbid stays, the force is listed, the plan uses it.
    f.page.forceShardingType(QString::fromStdString(table), core::ShardingType::TableWise);
    QVERIFY(f.settle());
    const core::TablePlacement* forced = placementOf(*f.page.snapshot(), table);
    QVERIFY(forced != nullptr);
    if (type != core::ShardingType::TableWise) QVERIFY(forced->sharding_type == core::ShardingType::TableWise);
    QCOMPARE(f.page.constraintList()->count(), type == core::ShardingType::TableWise ? 1 : 2);

    // Clear: the table is free again.
    std::unique_ptr<QMenu> menu(f.page.tableMenu(QString::fromStdString(table)));
    QAction* clear = menu->findChild<QAction*>("clearConstraints");
    QVERIFY(clear != nullptr && clear->isEnabled());
    clear->trigger();
    QVERIFY(f.document.project().constraints.empty());
    QCOMPARE(f.page.constraintList()->count(), 0);
  }

  void forceAndForbidMenusOfferEveryType() {
    Fixture f;
    QVERIFY(f.settle());
    std::unique_ptr<QMenu> menu(f.page.tableMenu(QStringLiteral("cat_3")));
    auto* force = menu->findChild<QMenu*>("forceMenu");
    auto* forbid = menu->findChild<QMenu*>("forbidMenu");
    QVERIFY(force != nullptr && forbid != nullptr);
    for (core::ShardingType type : shardscope::report::offeredShardingTypes()) {
      QVERIFY(actionWithText(force, core::toString(type)) != nullptr);
      QVERIFY(actionWithText(forbid, core::toString(type)) != nullptr);
    }
    actionWithText(forbid, "row_wise")->trigger();
    QCOMPARE(f.document.project().constraints.tables.size(), 1u);
    QVERIFY(f.document.project().constraints.tables[0].forbid == std::vector{core::ShardingType::RowWise});
    // The next menu shows it checked.
    std::unique_ptr<QMenu> again(f.page.tableMenu(QStringLiteral("cat_3")));
    QVERIFY(actionWithText(again->findChild<QMenu*>("forbidMenu"), "row_wise")->isChecked());
  }

  void unknownTablesAreNotEdited() {
    Fixture f;
    QVERIFY(f.settle());
    f.page.pinTable(QStringLiteral("no_such_table"), 1);
    f.page.forceShardingType(QStringLiteral("no_such_table"), core::ShardingType::RowWise);
    QVERIFY(f.document.project().constraints.empty());
    QCOMPARE(f.document.undoStack()->count(), 0);
    std::unique_ptr<QMenu> menu(f.page.tableMenu(QStringLiteral("no_such_table")));
    QVERIFY(!menu->findChild<QMenu*>("pinMenu")->isEnabled());
  }

  void bigPlansArePricedOffTheGuiThreadAndStaleOnesDropped() {
    Fixture f;
    f.page.setInlineWorkLimit(0);  // everything off-thread
    // Connected after the page: runs right after the page took the new result.
    // The breakdown is not in yet: it runs on a pool thread and comes back
    // through the event loop.
    bool pricing_when_planned = false;
    bool shown_when_planned = true;
    QObject::connect(&f.session, &PlanningSession::sweepFinished, &f.page, [&] {
      pricing_when_planned = f.page.isPricing();
      shown_when_planned = f.page.snapshot() != nullptr;
    });
    QVERIFY(f.page.waitUntilShown(kTimeoutMs));
    QVERIFY(pricing_when_planned);
    QVERIFY(!shown_when_planned);
    QVERIFY(!f.page.isPricing());
    QCOMPARE(f.page.snapshot()->sweep_job, f.session.shownJobId());

    // Two choices in a row: the first one's breakdown is dropped, the second shown.
    QSignalSpy shown(&f.page, &PlanPage::planShown);
    f.document.chooseGrid(16u, core::RankLayout::Strided);
    QVERIFY(f.page.isPricing());
    f.document.chooseGrid(8u, core::RankLayout::Strided);
    QVERIFY(f.page.waitUntilShown(kTimeoutMs));
    QTest::qWait(50);  // let any late result of the first job arrive (it must be dropped)
    QCOMPARE(f.page.snapshot()->groupSize(), 8u);
    QCOMPARE(shown.count(), 1);
    QCOMPARE(f.page.rankLoadChart()->rankCount(), 8);
  }

  void manyRanksShareBarsAndColumnsKeepingTheHeaviest() {
    // DCNv2 on 1,024 GPUs, M = 1,024: cat_20 row-wise over every rank, the
    // other tables table-wise on ranks 0, 37, 74, ... (priced, not planned).
    core::Project project = core::defaultProject();
    project.cluster.nodes = 128;
    const planner::Grid grid = planner::makeGrid(1024, 8, 1024, core::RankLayout::Strided);
    std::vector<core::TablePlacement> tables;
    std::uint32_t next = 0;
    for (const core::TableSpec& t : project.model.tables) {
      core::TablePlacement p{t.name, t.rows, t.dim, core::ShardingType::TableWise, {}};
      if (t.name == "cat_20") {
        p.sharding_type = core::ShardingType::RowWise;
        std::uint32_t rank = 0;
        for (const auto& b : core::rowWiseBlocks(t.rows, 1024))
          p.shards.push_back({rank++, b.offset, b.rows, 0, t.dim});
      } else {
        p.shards.push_back({next, 0, t.rows, 0, t.dim});
        next += 37;
      }
      tables.push_back(std::move(p));
    }
    const planner::SweepOptions options = planner::sweepOptionsOf(project);
    const planner::CostModel cost = planner::sweepCostModel(project.model, project.cluster, nullptr, options);
    auto snapshot = std::make_shared<PlanSnapshot>(shardscope::report::makePlanSnapshot(
        planner::evaluatePlacement(cost, grid, tables, {}, core::PlanTarget::TorchRec, "test"), project, options));
    const auto& loads = snapshot->breakdown.rank_load_ms;

    RankLoadChart chart;
    chart.setSnapshot(snapshot);
    QCOMPARE(chart.ranksPerBar(), 2u);  // 1,024 ranks in at most 512 bars
    std::vector<double> totals(512, 0.0);
    for (QCPBars* bars : chart.series()) {
      if (bars->dataCount() == 0) continue;
      QCOMPARE(bars->dataCount(), 512);
      int b = 0;
      for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
        totals[static_cast<std::size_t>(b++)] += it->value;
    }
    for (std::size_t b = 0; b < 512; ++b) QVERIFY(near(totals[b], std::max(loads[2 * b], loads[2 * b + 1])));
    const QString binned = chart.hoverText(0, 1e-6);
    QVERIFY2(binned.contains("group ranks 0\u20131"), qPrintable(binned));
    // Zoomed in: one bar per rank again.
    chart.xAxis->setRange(-0.5, 99.5);
    QCOMPARE(chart.ranksPerBar(), 1u);
    QCOMPARE(chart.series().front()->dataCount(), 1024);

    PlacementHeatmap heatmap;
    heatmap.setSnapshot(snapshot);
    QCOMPARE(heatmap.columnCount(), 1024);
    QCOMPARE(heatmap.rankColumns(), 256);
    QCOMPARE(heatmap.colorMap()->data()->keySize(), 256);
    QVERIFY2(heatmap.titleText().contains("4 per column"), qPrintable(heatmap.titleText()));
    // A table-wise table on one rank of four still colours its column.
    const int row = [&] {
      for (int r = 0; r < heatmap.rowCount(); ++r)
        if (snapshot->grid.plan.tables[*heatmap.tableOfRow(r)].name == "cat_9") return r;
      return -1;
    }();
    QVERIFY(row >= 0);
    const std::uint32_t holder = snapshot->grid.plan.tables[*heatmap.tableOfRow(row)].shards.front().group_rank;
    QVERIFY(!std::isnan(heatmap.colorMap()->data()->cell(static_cast<int>(holder / 4), row)));
    const QString cell = heatmap.hoverText(row, holder / 4 * 4);  // another rank of the same column
    QVERIFY2(cell.startsWith(QString("cat_9 on group rank %1").arg(holder)), qPrintable(cell));
    QVERIFY2(cell.contains("share this column"), qPrintable(cell));
  }

  void chartsRenderWhileThePageIsHidden() {
    Fixture f;
    QVERIFY(f.settle());
    QVERIFY(!f.page.isVisible());
    const QImage bars = f.page.rankLoadPlot()->toPixmap(900, 420).toImage();
    const QImage map = f.page.placementPlot()->toPixmap(500, 700).toImage();
    QCOMPARE(bars.size(), QSize(900, 420));
    QCOMPARE(map.size(), QSize(500, 700));
    // The heaviest table's colour fills some of the bars.
    const QColor first = f.page.rankLoadChart()->series().front()->brush().color();
    int coloured = 0;
    for (int y = 0; y < bars.height(); ++y)
      for (int x = 0; x < bars.width(); ++x)
        if (bars.pixelColor(x, y) == first) ++coloured;
    QVERIFY2(coloured > 500, qPrintable(QString::number(coloured)));
    // The heatmap is not blank: many distinct colours.
    QSet<QRgb> colours;
    for (int y = 0; y < map.height(); y += 3)
      for (int x = 0; x < map.width(); x += 3) colours.insert(map.pixel(x, y));
    QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
  }
};

QTEST_MAIN(TestPlanPage)
#include "test_plan_page.moc"
