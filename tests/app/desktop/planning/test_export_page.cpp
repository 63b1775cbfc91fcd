// The Export page: the saved plan loads back as the plan shown, the per-rank
// CSV holds the planner's numbers, charts render from hidden pages, the
// TorchRec snippet names the saved plan and its group size, the HTML report
// shows the decision with embedded charts and escapes user strings, and a
// failed write names the file and keeps what was there.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <memory>
#include <qcustomplot.h>
#include <unistd.h>

#include "export_page.h"
#include "grid_explorer_page.h"
#include "main_window.h"
#include "planning_session.h"
#include "project_document.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/version.h"
#include "shardscope/report/torchrec_snippet.h"

using shardscope::app::ExportPage;
using shardscope::app::MainWindow;
using shardscope::app::PlanningSession;
namespace app = shardscope::app;
namespace core = shardscope::core;
namespace report = shardscope::report;

namespace {

constexpr int kPlanTimeoutMs = 120000;

QString readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

bool writeText(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// The Grid Explorer's four charts, as the main window hands them over.
void giveCharts(MainWindow& window) {
  app::GridExplorerPage* grid = window.gridExplorerPage();
  window.exportPage()->setCharts(
      {{QStringLiteral("step"), QStringLiteral("Step time per grid"), grid->stepPlot()},
       {QStringLiteral("memory"), QStringLiteral("Memory per GPU"), grid->memoryPlot()},
       {QStringLiteral("imbalance"), QStringLiteral("Load imbalance"), grid->imbalancePlot()},
       {QStringLiteral("heatmap"), QStringLiteral("Throughput per GPU"), grid->heatmapPlot()}});
}

// Distinct colours of an image, sampled on a grid (enough to tell a drawn
// chart from a blank or single-colour one).
int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 3) {
    for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  }
  return static_cast<int>(colours.size());
}

// Share of saturated pixels: bars and heatmap cells are coloured, while an
// empty plot is only white background, black axes and grey grid and text.
double colouredShare(const QImage& image) {
  int coloured = 0;
  int all = 0;
  for (int y = 0; y < image.height(); y += 2) {
    for (int x = 0; x < image.width(); x += 2, ++all) {
      const QColor c = image.pixelColor(x, y);
      const int hi = std::max({c.red(), c.green(), c.blue()});
      const int lo = std::min({c.red(), c.green(), c.blue()});
      coloured += hi - lo > 60 ? 1 : 0;
    }
  }
  return all == 0 ? 0.0 : static_cast<double>(coloured) / all;
}

// A chart that shows data: many colours, and coloured marks on it.
bool showsData(const QImage& image) { return distinctColours(image) > 8 && colouredShare(image) > 0.01; }

std::optional<QString> python3() {
  const QString exe = QStandardPaths::findExecutable(QStringLiteral("python3"));
  if (exe.isEmpty()) return std::nullopt;
  return exe;
}

// Runs python3 with the adapter on its path; stdout, or nullopt on failure.
std::optional<QString> runPython(const QString& code, const QByteArray& stdin_bytes = {}) {
  const auto exe = python3();
  if (!exe) return std::nullopt;
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(SHARDSCOPE_SOURCE_DIR "/packaging/python"));
  p.setProcessEnvironment(env);
  p.start(*exe, {QStringLiteral("-c"), code});
  if (!p.waitForStarted()) return std::nullopt;
  p.write(stdin_bytes);
  p.closeWriteChannel();
  if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
    qWarning().noquote() << "python3 failed:" << p.readAllStandardError();
    return std::nullopt;
  }
  return QString::fromUtf8(p.readAllStandardOutput());
}

}  // namespace

class TestExportPage : public QObject {
  Q_OBJECT

 private:
  // One planned window shared by the tests that only read (planning the
  // default project with its heatmap takes a while).
  std::unique_ptr<MainWindow> window_;
  QTemporaryDir dir_;

  ExportPage* page() const { return window_->exportPage(); }
  PlanningSession* session() const { return window_->session(); }
  QString path(const QString& name) const { return dir_.filePath(name); }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_export_page"));
    QVERIFY(dir_.isValid());
    window_ = std::make_unique<MainWindow>();
    giveCharts(*window_);
    QVERIFY(session()->waitUntilIdle(kPlanTimeoutMs, true));
    QVERIFY(session()->planGrid() != nullptr);
  }

  void cleanupTestCase() { window_.reset(); }

  void summaryNamesThePlanGrid() {
    const QString summary = page()->summaryText();
    QVERIFY2(summary.contains(PlanningSession::describe(*session()->planGrid())), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("best fitting")), qPrintable(summary));  // nothing chosen yet
    for (const char* name : {"savePlan", "savePerRankCsv", "saveReport", "saveCharts", "copySnippet"}) {
      auto* button = page()->findChild<QPushButton*>(QString::fromLatin1(name));
      QVERIFY2(button != nullptr && button->isEnabled(), name);
    }
  }

  void savedPlanLoadsBackAsThePlanGrid() {
    const QString file = path(QStringLiteral("plan.json"));
    const core::Status saved = page()->savePlan(file);
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
    const core::Result<core::ShardPlan> loaded = core::loadPlan(file.toStdString());
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    const core::ShardPlan& expected = session()->planGrid()->plan;
    QCOMPARE(loaded->world_size, expected.world_size);
    QCOMPARE(loaded->sharding_group_size, expected.sharding_group_size);
    QCOMPARE(loaded->replicas, expected.replicas);
    QVERIFY(loaded->layout == expected.layout);
    QVERIFY(loaded->sharding_groups == expected.sharding_groups);
    QVERIFY(loaded->replica_groups == expected.replica_groups);
    QCOMPARE(loaded->tables.size(), expected.tables.size());
    for (std::size_t i = 0; i < expected.tables.size(); ++i) {
      QCOMPARE(QString::fromStdString(loaded->tables[i].name), QString::fromStdString(expected.tables[i].name));
      QVERIFY2(loaded->tables[i] == expected.tables[i], expected.tables[i].name.c_str());  // type and every shard
    }
    QVERIFY(std::abs(loaded->predicted.step_ms - expected.predicted.step_ms) < 1e-6 * expected.predicted.step_ms);
    QCOMPARE(QString::fromStdString(loaded->provenance.tool), QString::fromStdString(expected.provenance.tool));
  }

  void savedPlanLoadsInThePythonAdapter() {
    if (!python3()) QSKIP("python3 not found");
    const QString file = path(QStringLiteral("adapter.json"));
    QVERIFY(page()->savePlan(file).ok());
    const auto out = runPython(QStringLiteral("import json, sys\n"
                                              "from shardscope_torchrec import load_plan\n"
                                              "p = load_plan(sys.argv[1] if len(sys.argv) > 1 else %1)\n"
                                              "print(json.dumps(p.dmp_collection_kwargs(), sort_keys=True))\n")
                                   .arg(QString::fromStdString(report::pythonStringLiteral(file.toStdString()))));
    QVERIFY(out.has_value());
    const core::ShardPlan& plan = session()->planGrid()->plan;
    const QString expected =
        QStringLiteral(
            "{\"node_group_size\": %1, \"sharding_group_size\": %2, \"use_inter_host_allreduce\": %3, "
            "\"world_size\": %4}")
            .arg(core::nodeGroupSize(plan.world_size, plan.gpus_per_node, plan.sharding_group_size, plan.layout))
            .arg(plan.sharding_group_size)
            .arg(plan.layout == core::RankLayout::Contiguous ? QStringLiteral("true") : QStringLiteral("false"))
            .arg(plan.world_size);
    QCOMPARE(out->trimmed(), expected);
  }

  void snippetNamesTheSavedPlanAndTheGroupSize() {
    const QString file = path(QStringLiteral("snippet plan \"quoted\".json"));
    QVERIFY(page()->savePlan(file).ok());
    const QString snippet = page()->snippetText();
    const std::uint32_t m = session()->planGrid()->grid.group_size;
    QVERIFY2(snippet.contains(QStringLiteral("PLAN_PATH = ") + QString::fromStdString(report::pythonStringLiteral(
                                                                   QFileInfo(file).absoluteFilePath().toStdString()))),
             qPrintable(snippet));
    QVERIFY2(snippet.contains(QStringLiteral("SHARDING_GROUP_SIZE = %1 ").arg(m)), qPrintable(snippet));
    QVERIFY(snippet.contains(QStringLiteral("DMPCollection(")));
    QVERIFY(snippet.contains(QStringLiteral("**plan.dmp_collection_kwargs()")));
    QVERIFY(snippet.contains(QStringLiteral("**plan.train_pipeline_kwargs()")));
    QVERIFY(snippet.contains(QStringLiteral("SYNC_INTERVAL = %1 ").arg(session()->planGrid()->plan.sync_interval)));
    // The page shows the same text, read-only and monospace.
    auto* view = page()->findChild<QPlainTextEdit*>(QStringLiteral("torchrecSnippet"));
    QVERIFY(view != nullptr);
    QCOMPARE(view->toPlainText(), snippet);
    QVERIFY(view->isReadOnly());
    QVERIFY(QFontInfo(view->font()).fixedPitch());
  }

  void snippetIsValidPython() {
    if (!python3()) QSKIP("python3 not found");
    const auto out = runPython(QStringLiteral("import ast, sys\nast.parse(sys.stdin.read())\nprint('ok')\n"),
                               page()->snippetText().toUtf8());
    QVERIFY(out.has_value());
    QCOMPARE(out->trimmed(), QStringLiteral("ok"));
  }

  void perRankCsvHasOneRowPerGroupRank() {
    const QString file = path(QStringLiteral("ranks.csv"));
    const core::Status saved = page()->savePerRankCsv(file);
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
    const QStringList lines = readText(file).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    const auto& grid = *session()->planGrid();
    QCOMPARE(lines.size(), static_cast<int>(grid.grid.group_size) + 1);
    const QStringList header = lines.front().split(QLatin1Char(','));
    QCOMPARE(header.front(), QStringLiteral("group_rank"));
    const auto column = [&](const char* name) { return header.indexOf(QString::fromLatin1(name)); };
    for (const char* name : {"fwd_ms", "bwd_ms", "served_comm_ms", "sync_ms", "load_ms", "memory_bytes",
                             "capacity_bytes", "shards", "critical"}) {
      QVERIFY2(column(name) >= 0, name);
    }
    int critical_rows = 0;
    for (std::size_t r = 0; r < grid.ranks.size(); ++r) {
      const QStringList cells = lines[static_cast<int>(r) + 1].split(QLatin1Char(','));
      QCOMPARE(cells.size(), header.size());
      const auto& rank = grid.ranks[r];
      QCOMPARE(cells[0].toUInt(), rank.group_rank);
      const auto near = [&](const char* name, double expected) {
        return std::abs(cells[column(name)].toDouble() - expected) <= 1e-6 + 1e-9 * std::abs(expected);
      };
      QVERIFY(near("fwd_ms", rank.fwd_ms));
      QVERIFY(near("bwd_ms", rank.bwd_ms));
      QVERIFY(near("served_comm_ms", rank.served_comm_ms));
      QVERIFY(near("sync_ms", rank.sync_ms));
      QVERIFY(near("load_ms", rank.load_ms));
      QCOMPARE(cells[column("memory_bytes")].toULongLong(), static_cast<qulonglong>(rank.memory_bytes));
      QCOMPARE(cells[column("capacity_bytes")].toULongLong(), static_cast<qulonglong>(rank.capacity_bytes));
      QCOMPARE(cells[column("shards")].toUInt(), rank.shards);
      critical_rows += cells[column("critical")] == QLatin1String("1") ? 1 : 0;
    }
    QCOMPARE(critical_rows, 1);
  }

  void chartsRenderFromHiddenPages() {
    // The window was never shown: every chart is drawn off screen.
    QVERIFY(!window_->isVisible());
    QCOMPARE(static_cast<int>(page()->charts().size()), 4);
    const QString png = path(QStringLiteral("step.png"));
    const core::Status saved = page()->saveChart(QStringLiteral("step"), png);
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
    const QImage image(png);
    QCOMPARE(image.size(), QSize(ExportPage::kChartWidth, ExportPage::kChartHeight));
    QVERIFY2(showsData(image), "the step chart is blank");
    QCustomPlot empty;  // what a blank chart looks like: the check tells them apart
    QVERIFY(!showsData(empty.toPixmap(ExportPage::kChartWidth, ExportPage::kChartHeight).toImage()));

    const QString pdf = path(QStringLiteral("memory.pdf"));
    QVERIFY(page()->saveChart(QStringLiteral("memory"), pdf).ok());
    QVERIFY(readText(pdf).startsWith(QStringLiteral("%PDF")));
    QVERIFY(QFileInfo(pdf).permissions().testFlag(QFileDevice::ReadOther));  // not the temporary file's 0600

    const QString folder = path(QStringLiteral("charts"));
    QVERIFY(page()->saveCharts(folder, QStringLiteral("png")).ok());
    for (const char* id : {"step", "memory", "imbalance", "heatmap"}) {
      const QImage chart(QDir(folder).filePath(QString::fromLatin1(id) + QStringLiteral(".png")));
      QVERIFY2(!chart.isNull() && showsData(chart), id);
    }
  }

  void chartsRefuseUnknownNamesAndFormats() {
    const QString svg = path(QStringLiteral("step.svg"));
    const core::Status by_format = page()->saveChart(QStringLiteral("step"), svg);
    QVERIFY(!by_format.ok());
    QVERIFY2(QString::fromStdString(by_format.error().message).contains(svg), by_format.error().message.c_str());
    QVERIFY(!QFile::exists(svg));
    const core::Status by_id = page()->saveChart(QStringLiteral("nope"), path(QStringLiteral("nope.png")));
    QVERIFY(!by_id.ok());
    QVERIFY(QString::fromStdString(by_id.error().message).contains(QStringLiteral("nope")));
  }

  void reportShowsTheDecisionWithEmbeddedCharts() {
    const QString file = path(QStringLiteral("report.html"));
    const core::Status written = page()->writeReport(file);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
    const QString html = readText(file);
    const auto& grid = *session()->planGrid();
    QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
    QVERIFY2(html.contains(QStringLiteral("M = %1 \u00d7 R = %2 (%3)")
                               .arg(grid.grid.group_size)
                               .arg(grid.grid.replicas)
                               .arg(QString::fromLatin1(core::toString(grid.grid.layout)))),
             "the decision's grid");
    QVERIFY(html.contains(QStringLiteral("%1 ms per step").arg(grid.step.step_ms, 0, 'f', 2)));
    for (const char* section : {"id=\"decision\"", "id=\"why\"", "id=\"alternatives\"", "id=\"provenance\""}) {
      QVERIFY2(html.contains(QString::fromLatin1(section)), section);
    }
    QVERIFY(html.contains(QStringLiteral("best fitting")));
    QVERIFY(html.contains(QStringLiteral("cost-model defaults")));  // the default project has no calibration
    QVERIFY(html.contains(QStringLiteral("ShardScope ") + QString::fromLatin1(core::versionString())));
    // Every grid that does not fit and is listed is marked.
    QVERIFY(html.contains(QStringLiteral("class=\"nofit\"")) == std::any_of(session()->result().grids.begin(),
                                                                            session()->result().grids.end(),
                                                                            [](const auto& g) { return !g.fits; }));

    // The charts, as PNGs inside the file.
    static const QRegularExpression kImage(QStringLiteral("src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\""));
    int images = 0;
    for (auto it = kImage.globalMatch(html); it.hasNext(); ++images) {
      const QByteArray png = QByteArray::fromBase64(it.next().captured(1).toLatin1());
      QImage image;
      QVERIFY(image.loadFromData(png, "PNG"));
      QVERIFY2(image.width() >= 1000 && image.height() >= 500,
               qPrintable(QStringLiteral("%1x%2").arg(image.width()).arg(image.height())));
      QVERIFY2(showsData(image), "an embedded chart is blank");
    }
    QCOMPARE(images, 4);
    QVERIFY(!html.contains(QStringLiteral("src=\"http")));  // self-contained
  }

  void choosingAnotherGridChangesWhatIsExported() {
    const auto& grids = session()->result().grids;
    const std::uint32_t best_m = grids.front().grid.group_size;
    int other = -1;
    for (std::size_t i = 0; i < grids.size(); ++i) {
      if (grids[i].fits && grids[i].grid.group_size != best_m) {
        other = static_cast<int>(i);
        break;
      }
    }
    QVERIFY(other >= 0);
    const std::uint32_t m = grids[static_cast<std::size_t>(other)].grid.group_size;
    session()->choose(other);
    QVERIFY(session()->planGridIsChosen());
    QCOMPARE(session()->planGrid()->grid.group_size, m);
    QVERIFY2(page()->summaryText().contains(QStringLiteral("chosen grid")), qPrintable(page()->summaryText()));
    auto* view = page()->findChild<QPlainTextEdit*>(QStringLiteral("torchrecSnippet"));
    QVERIFY2(view->toPlainText().contains(QStringLiteral("SHARDING_GROUP_SIZE = %1 ").arg(m)),
             qPrintable(view->toPlainText()));
    const auto html = page()->reportHtml();
    QVERIFY(html.ok());
    QVERIFY(html->contains(QStringLiteral("You chose this grid.")));
    QVERIFY(html->contains(QStringLiteral("class=\"tag\">chosen")));
    window_->document()->chooseGrid(std::nullopt);
    QVERIFY(!session()->planGridIsChosen());
  }

  void failedWritesNameTheFileAndKeepIt() {
    // A folder that does not exist.
    const QString missing = path(QStringLiteral("no/such/folder/report.html"));
    for (const core::Status& s :
         {page()->writeReport(missing), page()->savePlan(missing), page()->savePerRankCsv(missing),
          page()->saveChart(QStringLiteral("step"), missing + QStringLiteral(".png")), page()->saveSnippet(missing)}) {
      QVERIFY(!s.ok());
      QVERIFY2(QString::fromStdString(s.error().message).contains(missing), s.error().message.c_str());
    }
    QVERIFY(!QFileInfo::exists(path(QStringLiteral("no"))));

    // A target that is a folder with files in it: nothing is replaced.
    const QString folder = path(QStringLiteral("occupied.html"));
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(writeText(QDir(folder).filePath(QStringLiteral("keep.txt")), "keep"));
    const core::Status onto_folder = page()->writeReport(folder);
    QVERIFY(!onto_folder.ok());
    QVERIFY2(QString::fromStdString(onto_folder.error().message).contains(folder), onto_folder.error().message.c_str());
    QCOMPARE(readText(QDir(folder).filePath(QStringLiteral("keep.txt"))), QStringLiteral("keep"));

    // An existing file in a folder that cannot be written: the file keeps its
    // bytes (root writes anywhere, so only as another user).
    if (::geteuid() != 0) {
      const QString locked = path(QStringLiteral("locked"));
      QVERIFY(QDir().mkpath(locked));
      const QString report = QDir(locked).filePath(QStringLiteral("report.html"));
      const QString plan = QDir(locked).filePath(QStringLiteral("plan.json"));
      QVERIFY(writeText(report, "old report"));
      QVERIFY(writeText(plan, "old plan"));
      QVERIFY(QFile::setPermissions(locked, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
      const core::Status r = page()->writeReport(report);
      const core::Status p = page()->savePlan(plan);
      QVERIFY(QFile::setPermissions(locked, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
      QVERIFY(!r.ok() && QString::fromStdString(r.error().message).contains(report));
      QVERIFY(!p.ok() && QString::fromStdString(p.error().message).contains(plan));
      QCOMPARE(readText(report), QStringLiteral("old report"));
      QCOMPARE(readText(plan), QStringLiteral("old plan"));
    }
  }

  void reportEscapesUserStrings() {
    // A window of its own: this one edits the project.
    MainWindow window;
    QVERIFY(window.session()->waitUntilIdle(kPlanTimeoutMs, false));
    QVERIFY(window.session()->planGrid() != nullptr);
    const std::string critical = window.session()->planGrid()->critical_tables.front().table;
    core::Project edited = window.document()->project();
    edited.name = "<script>alert(1)</script>";
    edited.model.name = "model \"q\" & 'a'";
    for (auto& t : edited.model.tables) {
      if (t.name == critical) t.name = "<b>&x";
    }
    core::TableConstraint forbid;
    forbid.table = "<b>&x";
    forbid.forbid = {core::ShardingType::ColumnWise};
    edited.constraints.tables.push_back(forbid);
    window.document()->edit(edited);
    QVERIFY(window.session()->waitUntilIdle(kPlanTimeoutMs, false));
    QCOMPARE(QString::fromStdString(window.session()->plannedProject().name), QString::fromStdString(edited.name));

    const QString file = path(QStringLiteral("escaped.html"));
    const core::Status written = window.exportPage()->writeReport(file);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
    const QString html = readText(file);
    QVERIFY(html.contains(QStringLiteral("&lt;b&gt;&amp;x")));
    QVERIFY(!html.contains(QStringLiteral("<b>&x")));
    QVERIFY(html.contains(QStringLiteral("&lt;script&gt;alert(1)&lt;/script&gt;")));
    QVERIFY(!html.contains(QStringLiteral("<script")));
    QVERIFY(html.contains(QStringLiteral("model &quot;q&quot; &amp; &#39;a&#39;")));
  }

  void withoutAFittingGridTheReportSaysWhy() {
    MainWindow window;
    core::Project edited = window.document()->project();
    edited.cluster.gpu.hbm_bytes = 1ull << 30;  // 1 GiB per GPU: nothing fits
    window.document()->edit(edited);
    QVERIFY(window.session()->waitUntilIdle(kPlanTimeoutMs, false));
    QVERIFY(window.session()->hasResult());
    QVERIFY(window.session()->planGrid() == nullptr);
    ExportPage* export_page = window.exportPage();
    QVERIFY(!export_page->findChild<QPushButton*>(QStringLiteral("savePlan"))->isEnabled());
    QVERIFY(export_page->findChild<QPushButton*>(QStringLiteral("saveReport"))->isEnabled());
    QVERIFY(export_page->snippetText().isEmpty());
    const QString plan = path(QStringLiteral("none.json"));
    const core::Status not_saved = export_page->savePlan(plan);
    QVERIFY(!not_saved.ok());
    QVERIFY(QString::fromStdString(not_saved.error().message).contains(plan));
    QVERIFY(!QFile::exists(plan));
    const auto html = export_page->reportHtml();
    QVERIFY(html.ok());
    QVERIFY(html->contains(QStringLiteral("No grid fits")));
    QVERIFY(html->contains(QStringLiteral("fits in memory, so there is no plan to run")));
  }

  void aChartWhosePlotIsDestroyedIsForgotten() {
    auto* plot = new QCustomPlot;
    page()->setCharts({{QStringLiteral("gone"), QStringLiteral("Gone"), plot}});
    QCOMPARE(static_cast<int>(page()->charts().size()), 1);
    delete plot;
    QVERIFY(page()->charts().empty());
    QVERIFY(!page()->saveChart(QStringLiteral("gone"), path(QStringLiteral("gone.png"))).ok());
    giveCharts(*window_);
    QCOMPARE(static_cast<int>(page()->charts().size()), 4);
  }
};

QTEST_MAIN(TestExportPage)
#include "test_export_page.moc"
