// The measured loop through the real main window: a 4-rank emulate profile
// from the Profile dialog, its measured-vs-predicted view checked against the
// store, "Calibrate from this run" (the fit the CLI makes), and the Grid
// Explorer re-planning with the calibration (best grid before and after).
// Screenshots of the Measured page at 1280x800 and 1920x1080.
#include <QAction>
#include <QProcess>
#include <QComboBox>
#include <QLabel>
#include <QRegularExpression>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "calibration_bar.h"
#include "grid_explorer_page.h"
#include "main_window.h"
#include "measured_chart.h"
#include "measured_page.h"
#include "model_page.h"
#include "plan_page.h"
#include "rank_load_chart.h"
#include "planning_session.h"
#include "profile_dialog.h"
#include "project_document.h"
#include "runs_page.h"
#include "screenshot.h"
#include "tiny_project.h"
#include "shardscope/core/access.h"
#include "shardscope/core/json_io.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/measured_vs_predicted.h"
#include "shardscope/profiler/workflow/profile_run.h"
#include "shardscope/profiler/workflow/stored_runs.h"
#include "shardscope/profiler/workflow/trace_import_job.h"

using namespace shardscope;
using namespace shardscope::app;
namespace st = core::store;
using test::tinyProject;

namespace {

constexpr int kTimeoutMs = 120000;

// A calibration fitted on this machine's CPU, offered to the tiny project's
// cluster (no GPU model it could match): the confirmation names both, and
// "Apply anyway" applies it.
void acceptCalibrationForAnotherDevice(QWidget& window) {
  QMessageBox* box = nullptr;
  QTRY_VERIFY_WITH_TIMEOUT((box = window.findChild<QMessageBox*>(QStringLiteral("calibrationDeviceConfirm"))),
                           kTimeoutMs);
  QVERIFY2(box->text().contains(QStringLiteral("fitted on CPU")), qPrintable(box->text()));
  auto* apply = box->findChild<QPushButton*>(QStringLiteral("calibrationApplyAnyway"));
  QVERIFY(apply != nullptr);
  apply->click();
}

// A small emulate request of the tiny project into `store`.
profiler::ProfileRequest tinyRequest(const QString& store, std::uint32_t steps) {
  profiler::ProfileRequest r;
  r.project = tinyProject();
  r.store = store.toStdString();
  r.steps = steps;
  r.threads = 1;
  r.memory_budget_bytes = 64ull << 20;
  return r;
}

// The window with the tiny project saved in `dir` (its store next to it), planned.
bool openTinyProject(MainWindow& window, const QTemporaryDir& dir) {
  window.document()->reset(tinyProject());
  return window.document()->saveAs(dir.filePath(QStringLiteral("tiny.shardscope"))).ok() &&
         window.session()->waitUntilIdle(kTimeoutMs, false);
}

}  // namespace

class TestMeasuredLoop : public QObject {
  Q_OBJECT

 private slots:
  void profileMeasureCalibrateReplan() {
    QTemporaryDir dir;
    MainWindow window;
    window.resize(1280, 800);
    const QString project = dir.filePath(QStringLiteral("tiny.shardscope"));
    window.document()->reset(tinyProject());
    QVERIFY(window.document()->saveAs(project).ok());
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    QCOMPARE(window.storePath(), dir.filePath(QStringLiteral("tiny.runs.sqlite")));

    // Run > Profile: a small emulate run of the shown plan.
    auto* action = window.findChild<QAction*>(QStringLiteral("actionProfile"));
    QVERIFY(action != nullptr);
    action->trigger();
    auto* dialog = window.findChild<ProfileDialog*>();
    QVERIFY(dialog != nullptr);
    dialog->stepsBox()->setValue(3);
    dialog->threadsBox()->setValue(1);
    QSignalSpy shown(window.measuredPage(), &MeasuredPage::runShown);
    dialog->start();
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(shown.last().at(1).toString(), QString());
    const qint64 run = shown.last().at(0).toLongLong();
    QVERIFY(run > 0);
    QCOMPARE(window.currentPage(), MainWindow::Page::Measured);

    // The view's figures are the store's: the analysis and prediction made again here.
    MeasuredPage* page = window.measuredPage();
    QVERIFY(page->shown() != nullptr && page->shown()->prediction.has_value());
    auto expected = profiler::runVsPlan(window.storePath().toStdString(), st::RunId{run}, nullptr, nullptr);
    QVERIFY2(expected.ok(), expected.ok() ? "" : expected.error().message.c_str());
    QVERIFY(expected->prediction.has_value());
    const auto& v = *page->shown()->prediction;
    QCOMPARE(v.ranks.size(), expected->prediction->ranks.size());
    QCOMPARE(page->rankTable()->rowCount(), static_cast<int>(v.ranks.size()));
    // A CPU run against the cluster of CPU ranks it models: like for like, in milliseconds.
    QVERIFY(v.devices.absolute);
    QVERIFY(!page->chart()->showsShares());
    for (std::size_t i = 0; i < v.ranks.size(); ++i) {
      const auto& want = expected->prediction->ranks[i];
      QCOMPARE(v.ranks[i].measured.emb_fwd, want.measured.emb_fwd);
      QCOMPARE(v.ranks[i].predicted.embedding(), want.predicted.embedding());
      const int row = static_cast<int>(i);
      QCOMPARE(page->rankTable()->item(row, 2)->data(Qt::UserRole).toDouble(), want.measured.embedding());
      QCOMPARE(page->rankTable()->item(row, 3)->data(Qt::UserRole).toDouble(), want.predicted.embedding());
    }
    QCOMPARE(v.measured_imbalance.max_over_mean, expected->prediction->measured_imbalance.max_over_mean);
    QVERIFY(page->statsText().contains(QStringLiteral("max / mean")));
    QVERIFY(page->statsText().contains(QStringLiteral("KL divergence")));
    QCOMPARE(page->chart()->measuredSeries().front()->dataCount(), static_cast<int>(v.ranks.size()));
    QCOMPARE(page->chart()->predictedSeries().front()->dataCount(), static_cast<int>(v.ranks.size()));
    // The header names the device the run ran on.
    QVERIFY(page->findChild<QLabel*>(QStringLiteral("measuredHeader"))->text().contains(QStringLiteral("ran on CPU")));
    const QString shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_measured_1280x800.png");
    QVERIFY(saveScreenshot(window, shot, QSize(1280, 800)).ok());
    QCOMPARE(QImage(shot).size(), QSize(1280, 800));

    // The Plan page overlays the run's measured embedding load on the plan it ran.
    const QCPGraph* overlay = window.planPage()->rankLoadChart()->measuredGraph();
    const int group_size = static_cast<int>(window.session()->planGrid()->plan.sharding_group_size);
    QTRY_COMPARE_WITH_TIMEOUT(overlay->dataCount(), group_size, kTimeoutMs);
    QVERIFY(overlay->name().contains(QStringLiteral("run %1").arg(run)));
    for (const auto& r : expected->analysis.ranks)
      if (r.group_rank >= 0 && expected->analysis.ranks.size() == static_cast<std::size_t>(group_size))
        QCOMPARE(overlay->data()->at(r.group_rank)->value, r.compute_ms);
    window.showPage(MainWindow::Page::Plan);
    const QString plan_shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_plan_measured_1280x800.png");
    QVERIFY(saveScreenshot(window, plan_shot, QSize(1280, 800)).ok());

    // Calibrate from this run: the CLI's fit, and the project plans with it.
    QVERIFY(!window.document()->project().calibration.has_value());
    const QString best_before = PlanningSession::describe(*window.session()->result().best());
    QSignalSpy calibrated(page, &MeasuredPage::calibrated);
    page->calibrate();
    QVERIFY(calibrated.wait(kTimeoutMs));
    QCOMPARE(calibrated.last().at(0).toString(), QString());
    const st::RunId fit[] = {st::RunId{run}};
    auto cli = profiler::calibrateStoredRuns(window.storePath().toStdString(), fit, {}, core::TrainerPlanSpec{});
    QVERIFY(cli.ok());
    QVERIFY(window.document()->project().calibration.has_value());
    // The same fit; only the creation time may differ (a second may tick between the two).
    core::Calibration gui = *window.document()->project().calibration;
    gui.created = cli->calibration.created;
    QCOMPARE(core::toJson(gui).dump(), core::toJson(cli->calibration).dump());
    QVERIFY(page->calibrationTable()->rowCount() > 0);
    QCOMPARE(page->calibrationTable()->rowCount(), static_cast<int>(cli->calibration.coefficients.size()));
    // Each constant with its standard error; the calibration names the CPU it was fitted on.
    QVERIFY(page->calibrationTable()->item(0, 1)->text().contains(QStringLiteral("\u00b1")));
    QVERIFY(window.document()->project().calibration->device.kind == core::DeviceClass::Cpu);

    // The Grid Explorer re-plans with the calibration and shows the best grid before and after.
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    QCOMPARE(window.session()->plannedProject().calibration, window.document()->project().calibration);
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->calibrationChange().has_value(), kTimeoutMs);
    const auto& change = *window.session()->calibrationChange();
    QCOMPARE(change.before.calibration, QString());
    QCOMPARE(change.before.grid, best_before);
    QCOMPARE(change.after.calibration, QString::fromStdString(cli->calibration.source));
    QCOMPARE(change.after.grid, PlanningSession::describe(*window.session()->result().best()));
    const QString comparison = window.gridExplorerPage()->calibrationBar()->comparisonText();
    QVERIFY2(comparison.contains(QStringLiteral("default constants")), qPrintable(comparison));
    QVERIFY2(comparison.contains(QStringLiteral("calibration ")), qPrintable(comparison));
    const QString constants = window.gridExplorerPage()->calibrationBar()->constantsText();
    QVERIFY2(constants.contains(QStringLiteral("calibrated on CPU")), qPrintable(constants));

    // The measured view follows: its prediction is priced with the calibration now.
    QTRY_VERIFY_WITH_TIMEOUT(page->shown() != nullptr && page->shown()->prediction &&
                                 page->shown()->prediction->constants.rfind("calibration ", 0) == 0,
                             kTimeoutMs);
    const auto cal = *window.document()->project().calibration;
    auto calibrated_expected = profiler::runVsPlan(window.storePath().toStdString(), st::RunId{run}, &cal, nullptr);
    QVERIFY(calibrated_expected.ok());
    for (std::size_t i = 0; i < page->shown()->prediction->ranks.size(); ++i)
      QCOMPARE(page->shown()->prediction->ranks[i].predicted.embedding(),
               calibrated_expected->prediction->ranks[i].predicted.embedding());
    window.showPage(MainWindow::Page::Measured);
    QVERIFY(saveScreenshot(window, QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_measured_1920x1080.png"),
                           QSize(1920, 1080))
                .ok());
    window.showPage(MainWindow::Page::GridExplorer);
    const QString grid_shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_grid_calibrated_1280x800.png");
    QVERIFY(saveScreenshot(window, grid_shot, QSize(1280, 800)).ok());
    // Long calibration sources wrap: the window still fits 1280 pixels.
    QCOMPARE(QImage(grid_shot).size(), QSize(1280, 800));

    // Unload: the project plans with the defaults again, one undoable step.
    window.gridExplorerPage()->calibrationBar()->unloadCalibration();
    QVERIFY(!window.document()->project().calibration.has_value());
    window.document()->undoStack()->undo();
    QVERIFY(window.document()->project().calibration.has_value());
  }

  // The calibration the GUI fits from a run, and the plans it then predicts,
  // are the CLI's to the last bit: `calibrate --runs R --out`, then `report
  // --calibration` of held-out runs of other plans and `plan --calibration`.
  void guiCalibrationGivesTheClisNumbers() {
    QTemporaryDir dir;
    const QString cli = QStringLiteral(SHARDSCOPE_BINARY_DIR "/app/cli/shardscope-cli");
    QVERIFY2(QFileInfo::exists(cli), qPrintable(cli));
    MainWindow window;
    const QString project = dir.filePath(QStringLiteral("tiny.shardscope"));
    QVERIFY(openTinyProject(window, dir));
    // A fitted run and held-out runs of other grids and batches, as the calibration bench makes them.
    profiler::ProfileRequest r = tinyRequest(window.storePath(), 4);
    std::vector<qint64> runs;
    for (const auto& [m, batch] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{4, 0}, {2, 0}, {1, 64}}) {
      r.batch = batch;
      r.plan = profiler::plannedProfilePlan(r, m).value();
      auto outcome = profiler::runProfile(r, {}, nullptr);
      QVERIFY2(outcome.ok(), outcome.ok() ? "" : outcome.error().message.c_str());
      runs.push_back(static_cast<qint64>(outcome->run));
    }
    auto run_cli = [&](const QStringList& args) -> QByteArray {
      QProcess p;
      p.start(cli, args);
      if (!p.waitForFinished(kTimeoutMs) || p.exitCode() != 0) {
        qWarning("%s", p.readAllStandardError().constData());
        return {};
      }
      return p.readAllStandardOutput();
    };
    const QString cal_file = dir.filePath(QStringLiteral("cal.json"));
    QVERIFY(
        !run_cli({"calibrate", "--store", window.storePath(), "--runs", QString::number(runs[0]), "--out", cal_file})
             .isNull());

    // The GUI: the fitted run's view, Calibrate from This Run.
    MeasuredPage* page = window.measuredPage();
    QSignalSpy shown(page, &MeasuredPage::runShown);
    window.openRun(runs[0]);
    QVERIFY(shown.wait(kTimeoutMs));
    QSignalSpy calibrated(page, &MeasuredPage::calibrated);
    page->calibrate();
    QVERIFY(calibrated.wait(kTimeoutMs));
    const auto file = core::loadCalibration(cal_file.toStdString());
    QVERIFY(file.ok());
    core::Calibration gui = *window.document()->project().calibration;
    gui.created = file->created;  // the fit's creation time is the only field allowed to differ
    QVERIFY(gui == *file);

    // Held-out plans: the measured view's prediction per rank = the CLI report's.
    for (std::size_t i = 1; i < runs.size(); ++i) {
      window.openRun(runs[i]);
      QTRY_VERIFY_WITH_TIMEOUT(page->shown() && static_cast<qint64>(page->shown()->analysis.run.id) == runs[i] &&
                                   page->shown()->prediction &&
                                   page->shown()->prediction->constants.rfind("calibration", 0) == 0,
                               kTimeoutMs);
      const auto report = nlohmann::json::parse(run_cli({"report", "--store", window.storePath(), "--run",
                                                         QString::number(runs[i]), "--calibration", cal_file, "--json"})
                                                    .toStdString());
      const auto& ranks = page->shown()->prediction->ranks;
      QCOMPARE(report.at("ranks").size(), ranks.size());
      for (std::size_t k = 0; k < ranks.size(); ++k)
        QCOMPARE(ranks[k].predicted.embedding(), report.at("ranks").at(k).at("predicted_model_ms").get<double>());
    }

    // Re-plan: every grid's per-rank prediction = `plan --calibration`'s.
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    const auto plan = nlohmann::json::parse(
        run_cli({"plan", "--project", project, "--calibration", cal_file, "--json"}).toStdString());
    const auto& grids = window.session()->result().grids;
    QCOMPARE(plan.at("grids").size(), grids.size());
    for (std::size_t g = 0; g < grids.size(); ++g) {
      const auto& want = plan.at("grids").at(g);
      QCOMPARE(want.at("step").at("step_ms").get<double>(), grids[g].step.step_ms);
      for (std::size_t k = 0; k < grids[g].ranks.size(); ++k) {
        QCOMPARE(want.at("ranks").at(k).at("fwd_ms").get<double>(), grids[g].ranks[k].fwd_ms);
        QCOMPARE(want.at("ranks").at(k).at("bwd_ms").get<double>(), grids[g].ranks[k].bwd_ms);
      }
    }
  }

  // A run on this machine's CPU against a project priced for H100s: shares of
  // each group's embedding work, never milliseconds of two devices; its
  // calibration is applied to the H100 cluster only when the user says so.
  void aCpuRunAgainstGpuPredictionsComparesShares() {
    QTemporaryDir dir;
    MainWindow window;
    window.resize(1280, 800);
    core::Project h100 = tinyProject();
    h100.cluster.gpu.device = core::DeviceClass::Gpu;
    h100.cluster.gpu.name = "H100 SXM 80GB";
    window.document()->reset(h100);
    QVERIFY(window.document()->saveAs(dir.filePath(QStringLiteral("h100.shardscope"))).ok());
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    profiler::ProfileRequest r = tinyRequest(window.storePath(), 2);
    r.project = h100;
    r.plan = profiler::plannedProfilePlan(r, 2).value();
    auto outcome = profiler::runProfile(r, {}, nullptr);
    QVERIFY(outcome.ok());
    MeasuredPage* page = window.measuredPage();
    QSignalSpy shown(page, &MeasuredPage::runShown);
    window.openRun(static_cast<qint64>(outcome->run));
    QVERIFY(shown.wait(kTimeoutMs));
    QVERIFY(page->shown() && page->shown()->prediction);
    const auto& v = *page->shown()->prediction;
    QVERIFY(!v.devices.absolute);
    QVERIFY2(page->messageText().contains(QStringLiteral("Absolute times are not compared: this run ran on CPU")) &&
                 page->messageText().contains(QStringLiteral("predictions are for H100")),
             qPrintable(page->messageText()));
    QVERIFY(page->findChild<QLabel*>(QStringLiteral("measuredHeader"))->text().contains(QStringLiteral("ran on CPU")));
    QVERIFY(page->chart()->showsShares());
    // One position per measured rank, in order: no empty slot stands for a rank the run did not measure.
    const QCPBars* shares = page->chart()->measuredSeries().front();
    for (int i = 0; i < shares->dataCount(); ++i) QCOMPARE(std::lround(shares->data()->at(i)->key + 0.2), long{i});
    QCOMPARE(page->rankTable()->columnCount(), 7);
    for (int row = 0; row < page->rankTable()->rowCount(); ++row) {
      const auto& want = v.ranks[static_cast<std::size_t>(row)];
      QCOMPARE(page->rankTable()->item(row, 4)->text(),
               QStringLiteral("%1%").arg(want.measured_share * 100.0, 0, 'f', 1));
    }
    // No error figure at all, let alone one above 1,000 %.
    const QRegularExpression percent(QStringLiteral("([0-9][0-9,.]*)\\s*%"));
    for (auto it = percent.globalMatch(page->statsText() + page->chart()->titleText()); it.hasNext();) {
      QString number = it.next().captured(1);
      QVERIFY2(number.remove(QLatin1Char(',')).toDouble() <= 100.0, qPrintable(number));
    }
    QVERIFY(!page->statsText().contains(QStringLiteral("mean |error|")));
    QVERIFY(saveScreenshot(window,
                           QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_measured_shares_1280x800.png"),
                           QSize(1280, 800))
                .ok());

    // Calibrate: fitted on this CPU, offered to the H100 cluster: Cancel keeps the project as it was.
    QSignalSpy calibrated(page, &MeasuredPage::calibrated);
    QVERIFY(page->findChild<QPushButton*>(QStringLiteral("measuredCalibrate"))->text().contains(QStringLiteral("CPU")));
    page->calibrate();
    QMessageBox* box = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((box = window.findChild<QMessageBox*>(QStringLiteral("calibrationDeviceConfirm"))),
                             kTimeoutMs);
    QVERIFY2(box->text().contains(QStringLiteral("fitted on CPU")) && box->text().contains(QStringLiteral("H100")),
             qPrintable(box->text()));
    box->reject();
    QTRY_VERIFY_WITH_TIMEOUT(calibrated.count() == 1, kTimeoutMs);
    QVERIFY(!window.document()->project().calibration.has_value());
    QVERIFY(page->messageText().contains(QStringLiteral("was not applied")));
    // Apply anyway: the project plans with it and the Grid Explorer says on which device it was fitted.
    page->calibrate();
    acceptCalibrationForAnotherDevice(window);
    QTRY_VERIFY_WITH_TIMEOUT(calibrated.count() == 2, kTimeoutMs);
    QVERIFY(window.document()->project().calibration.has_value());
    const QString constants = window.gridExplorerPage()->calibrationBar()->constantsText();
    QVERIFY2(constants.contains(QStringLiteral("calibrated on CPU")) &&
                 constants.contains(QStringLiteral("the cluster is H100")),
             qPrintable(constants));
    // Priced for the CPU now, the run compares in milliseconds.
    QTRY_VERIFY_WITH_TIMEOUT(page->shown() && page->shown()->prediction && page->shown()->prediction->devices.absolute,
                             kTimeoutMs);
  }

  // A run compared with another plan: the Plan page's, then a plan file
  // (what an imported trace is compared with).
  // A project whose store holds runs opens its run pages on the newest
  // complete one, until the user picks another.
  void runPagesOpenOnTheNewestCompleteRun() {
    QTemporaryDir dir;
    qint64 newest = 0;
    {
      MainWindow first;
      QVERIFY(openTinyProject(first, dir));
      for (int i = 0; i < 2; ++i) {
        profiler::ProfileRequest r = tinyRequest(first.storePath(), 2);
        r.plan = profiler::plannedProfilePlan(r, 2).value();
        auto outcome = profiler::runProfile(r, {}, nullptr);
        QVERIFY(outcome.ok());
        newest = static_cast<qint64>(outcome->run);
      }
    }
    MainWindow window;
    window.resize(1280, 800);
    QVERIFY(window.openProject(dir.filePath(QStringLiteral("tiny.shardscope"))).ok());
    window.showPage(MainWindow::Page::Measured);
    QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), newest, kTimeoutMs);
    QVERIFY(window.waitUntilRunShown(kTimeoutMs));
    QVERIFY(window.measuredPage()->shown() &&
            static_cast<qint64>(window.measuredPage()->shown()->analysis.run.id) == newest);
    // The user's choice holds.
    window.selectRun(newest - 1);
    QVERIFY(window.waitUntilRunShown(kTimeoutMs));
    QCOMPARE(window.currentRun(), newest - 1);
    QCOMPARE(static_cast<qint64>(window.measuredPage()->shown()->analysis.run.id), newest - 1);
  }

  // An imported trace without the trainer's plan has nothing to be compared
  // with, but its ranks' measured work still shows, and the page says what to choose.
  void anImportWithoutAPlanShowsWhatItMeasured() {
    QTemporaryDir dir;
    MainWindow window;
    QVERIFY(openTinyProject(window, dir));
    profiler::TraceImportRequest request;
    request.inputs = {SHARDSCOPE_TEST_DATA_DIR "/import/rank0.json", SHARDSCOPE_TEST_DATA_DIR "/import/rank1.json.gz"};
    request.store = window.storePath().toStdString();
    auto imported = profiler::importTraces(request, {}, nullptr);
    QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().message.c_str());
    MeasuredPage* page = window.measuredPage();
    QSignalSpy shown(page, &MeasuredPage::runShown);
    window.openRun(static_cast<qint64>(imported->run));
    QVERIFY(shown.wait(kTimeoutMs));
    QVERIFY(page->shown() && !page->shown()->prediction);
    QVERIFY2(page->messageText().contains(QStringLiteral("No prediction")), qPrintable(page->messageText()));
    QCOMPARE(page->chart()->measuredSeries().front()->dataCount(), 2);
    QVERIFY(page->chart()->predictedSeries().front()->dataCount() == 0);
    QCOMPARE(page->rankTable()->rowCount(), 2);
    QCOMPARE(page->rankTable()->item(1, 4)->data(Qt::UserRole).toDouble(), page->shown()->analysis.ranks[1].compute_ms);
    // Nothing to fit against until the trainer's plan is chosen.
    QVERIFY(!page->findChild<QPushButton*>(QStringLiteral("measuredCalibrate"))->isEnabled());
  }

  void aRunIsComparedWithThePlanTheUserPicks() {
    QTemporaryDir dir;
    MainWindow window;
    QVERIFY(openTinyProject(window, dir));
    profiler::ProfileRequest r = tinyRequest(window.storePath(), 2);
    r.plan = profiler::plannedProfilePlan(r, 4).value();
    auto outcome = profiler::runProfile(r, {}, nullptr);
    QVERIFY(outcome.ok());
    const auto run = static_cast<qint64>(outcome->run);
    MeasuredPage* page = window.measuredPage();
    auto shownWith = [&](const std::string& summary) {
      return page->shown() && page->shown()->prediction &&
             page->shown()->prediction->plan_summary.rfind(summary, 0) == 0;
    };
    window.openRun(run);
    QTRY_VERIFY_WITH_TIMEOUT(shownWith("M=4 R=1"), kTimeoutMs);
    // The Plan page's plan: choose M = 2.
    const auto& grids = window.session()->result().grids;
    const auto m2 = std::find_if(grids.begin(), grids.end(), [](const auto& g) {
      return g.grid.group_size == 2 && g.grid.layout == core::RankLayout::Strided;
    });
    QVERIFY(m2 != grids.end());
    window.session()->choose(static_cast<int>(m2 - grids.begin()));
    QCOMPARE(window.session()->planGrid()->grid.group_size, 2u);
    page->setPlanSource(MeasuredPage::PlanSource::PlanPage);
    QTRY_VERIFY_WITH_TIMEOUT(shownWith("M=2 R=2 strided"), kTimeoutMs);
    QCOMPARE(page->shown()->prediction->ranks.size(), std::size_t{4});
    // A plan file: M = 1 (R = 4), written as trainers get it.
    r.plan = profiler::plannedProfilePlan(r, 1).value();
    const QString file = dir.filePath(QStringLiteral("m1.json"));
    QVERIFY(core::writeJsonFile(file.toStdString(), core::toJson(r.plan)).ok());
    page->setPlanSource(MeasuredPage::PlanSource::File, file);
    QTRY_VERIFY_WITH_TIMEOUT(shownWith("M=1 R=4"), kTimeoutMs);
    // A file that is not a plan: the error names it, nothing else changes.
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    QVERIFY(core::writeFileAtomic(bad.toStdString(), "{\"schema\": \"shardscope.plan/1\"}").ok());
    QSignalSpy shown(page, &MeasuredPage::runShown);
    page->setPlanSource(MeasuredPage::PlanSource::File, bad);
    QVERIFY(shown.wait(kTimeoutMs));
    QVERIFY2(shown.last().at(1).toString().contains(QStringLiteral("bad.json")),
             qPrintable(shown.last().at(1).toString()));
    QVERIFY(shownWith("M=1 R=4"));  // the view keeps the last good comparison
  }

  // The engine stores what each run looked up; the Runs page exports it as
  // shardscope.access/1, and attached to the project it becomes the model's
  // measured access.
  void aRunsAccessIsExportedAndAttached() {
    QTemporaryDir dir;
    MainWindow window;
    QVERIFY(openTinyProject(window, dir));
    profiler::ProfileRequest r = tinyRequest(window.storePath(), 3);
    r.plan = profiler::plannedProfilePlan(r, 2).value();
    auto outcome = profiler::runProfile(r, {}, nullptr);
    QVERIFY(outcome.ok());
    RunsPage* runs = window.runsPage();
    runs->setStorePath(window.storePath());
    QSignalSpy exported(runs, &RunsPage::accessExported);
    const QString file = dir.filePath(QStringLiteral("run.access.json"));
    runs->exportAccess(static_cast<qint64>(outcome->run), file);
    QVERIFY(exported.wait(kTimeoutMs));
    QCOMPARE(exported.last().at(1).toString(), QString());
    auto access = core::loadAccessFile(file.toStdString());
    QVERIFY2(access.ok(), access.ok() ? "" : access.error().message.c_str());
    QCOMPARE(access->tables.size(), r.project.model.tables.size());
    QCOMPARE(access->batches, std::uint64_t{3});
    const std::uint64_t samples = 3ull * 2 * r.project.model.batch_size_per_gpu;  // 3 steps of a group of M = 2
    for (const auto& t : access->tables) {
      QVERIFY(t.lookups > 0);
      QVERIFY(!t.hot.empty());
      // Fixed pooling: every sample looks up exactly `mean` ids.
      const auto& spec = *std::find_if(r.project.model.tables.begin(), r.project.model.tables.end(),
                                       [&](const core::TableSpec& s) { return s.name == t.name; });
      if (spec.pooling.kind == core::PoolingKind::Fixed)
        QCOMPARE(t.lookups, samples * static_cast<std::uint64_t>(spec.pooling.mean));
    }
    QSignalSpy attached(&window, &MainWindow::accessAttached);
    window.attachAccessFile(file);
    QVERIFY(attached.wait(kTimeoutMs));
    QVERIFY(attached.last().at(0).toBool());
    QCOMPARE(window.document()->project().access->tables.size(), r.project.model.tables.size());
    for (const auto& t : window.document()->project().model.tables)
      QCOMPARE(t.access.kind, core::AccessKind::Histogram);
    // An imported or old run has none: the error names the run.
    QSignalSpy failed(runs, &RunsPage::accessExported);
    runs->exportAccess(999, dir.filePath(QStringLiteral("none.json")));
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(!failed.last().at(1).toString().isEmpty());
    QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("none.json"))));
  }

  // A measured access file attached to the project: its histograms replace
  // the tables' assumed access (one undoable edit) and price row-wise blocks.
  void anAttachedAccessFilePricesRowBlocksFromWhatWasMeasured() {
    QTemporaryDir dir;
    MainWindow window;
    QVERIFY(window.session()->waitUntilIdle(kTimeoutMs, false));
    const core::TableSpec table = window.document()->project().model.tables[0];
    QVERIFY(table.access.kind != core::AccessKind::Histogram);
    core::AccessFile file;
    file.source = "generated: every id in the last eighth of the rows";
    file.batches = 4;
    file.tables.push_back({table.name, table.rows, 100, {{table.rows - 1, 40}}, {0, 0, 0, 0, 0, 0, 0, 100}});
    file.tables.push_back({"not_in_the_model", 10, 1, {}, {1}});
    const QString path = dir.filePath(QStringLiteral("access.json"));
    QVERIFY(core::writeJsonFile(path.toStdString(), core::toJson(file)).ok());

    QSignalSpy attached(&window, &MainWindow::accessAttached);
    window.attachAccessFile(path);
    QVERIFY(attached.wait(kTimeoutMs));
    QVERIFY(attached.last().at(0).toBool());
    const QString message = attached.last().at(1).toString();
    QVERIFY2(message.contains(QStringLiteral("1 table")) && message.contains(QStringLiteral("not_in_the_model")),
             qPrintable(message));
    const core::Project& p = window.document()->project();
    QCOMPARE(p.model.tables[0].access.kind, core::AccessKind::Histogram);
    QCOMPARE(p.model.tables[0].access.histogram.back(), 1.0);
    QVERIFY(p.access.has_value());
    QCOMPARE(p.access->source, file.source);
    QCOMPARE(p.access->tables, std::vector<std::string>{table.name});
    // The project file keeps both.
    QVERIFY(window.document()->saveAs(dir.filePath(QStringLiteral("p.shardscope"))).ok());
    auto reread = core::loadProject(dir.filePath(QStringLiteral("p.shardscope")).toStdString());
    QVERIFY2(reread.ok(), reread.ok() ? "" : reread.error().message.c_str());
    QVERIFY(reread->access == p.access);
    QVERIFY(reread->model.tables[0].access == p.model.tables[0].access);

    // Row-wise blocks are priced from the measured histogram: the last eighth takes every lookup.
    const planner::CostModel measured(p.model, p.cluster, planner::CostConstants::from(p.cluster, nullptr));
    QCOMPARE(measured.access(0).mass(0, table.rows / 2), 0.0);
    QCOMPARE(measured.access(0).mass(table.rows - table.rows / 8, table.rows), 1.0);
    const planner::Grid grid = planner::makeGrid(64, 8, 8, core::RankLayout::Strided);
    const auto gc = measured.gridCosts(grid);
    const auto cold = measured.shardCost(0, 0, table.rows / 2, table.dim, grid, gc);
    const auto hot = measured.shardCost(0, table.rows / 2, table.rows - table.rows / 2, table.dim, grid, gc);
    QCOMPARE(cold.ids, 0.0);
    QVERIFY(hot.fwd_ms > cold.fwd_ms);

    // The Model page says which tables are measured.
    window.showPage(MainWindow::Page::Model);
    auto* model_table = window.findChild<QTableView*>(QStringLiteral("tableView"));
    if (model_table == nullptr) model_table = window.modelPage()->findChild<QTableView*>();
    QVERIFY(model_table != nullptr);
    bool shown = false;
    for (int c = 0; c < model_table->model()->columnCount(); ++c)
      shown = shown || model_table->model()->index(0, c).data().toString() == QStringLiteral("measured (8 buckets)");
    QVERIFY(shown);
    QVERIFY(saveScreenshot(window,
                           QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_model_measured_1280x800.png"),
                           QSize(1280, 800))
                .ok());
    window.document()->undoStack()->undo();
    QVERIFY(!window.document()->project().access.has_value());
    QVERIFY(window.document()->project().model.tables[0].access == table.access);
  }
};

QTEST_MAIN(TestMeasuredLoop)
#include "test_measured_loop.moc"
