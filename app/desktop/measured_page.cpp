#include "measured_page.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "shardscope/core/device.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/core/summary.h"
#include "shardscope/profiler/trace/run_device.h"
#include "shardscope/profiler/workflow/trainer_plan.h"
#include "shardscope/report/display_format.h"
#include "calibration_confirm.h"
#include "chart_style.h"
#include "job_tracker.h"
#include "measured_chart.h"
#include "planning_session.h"
#include "project_document.h"

namespace shardscope::app {

namespace st = core::store;

namespace {

QTableWidgetItem* number(double v, int decimals = 3) {
  auto* item = new QTableWidgetItem(QString::number(v, 'f', decimals));
  item->setData(Qt::UserRole, v);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

// A rank's first cell: its number, and "straggler" in the problem colour when it is one.
QTableWidgetItem* rankItem(int rank, bool straggler) {
  auto* item = new QTableWidgetItem(straggler ? QObject::tr("%1 straggler").arg(rank) : QString::number(rank));
  item->setData(Qt::UserRole, rank);
  if (straggler) item->setForeground(problemColor());
  return item;
}

QTableWidgetItem* text(const std::string& s) {
  auto* item = new QTableWidgetItem(QString::fromStdString(s));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

std::string shareText(double share) { return share >= 0 ? core::formatf("%.1f%%", share * 100.0) : std::string("-"); }

}  // namespace

MeasuredPage::MeasuredPage(ProjectDocument* document, PlanningSession* session, QWidget* parent)
    : QWidget(parent),
      document_(document),
      session_(session),
      header_(new QLabel),
      source_box_(new QComboBox),
      calibrate_(new QPushButton(tr("Calibrate from This Run"))),
      message_(new QLabel),
      chart_(new MeasuredChart),
      ranks_(new QTableWidget),
      stats_(new QLabel),
      calibration_title_(new QLabel),
      terms_(new QTableWidget),
      show_jobs_(new JobTracker(planningPool(), this)),
      calibrate_jobs_(new JobTracker(planningPool(), this)) {
  setObjectName(QStringLiteral("measuredPage"));
  header_->setObjectName(QStringLiteral("measuredHeader"));
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  source_box_->setObjectName(QStringLiteral("measuredPlanSource"));
  source_box_->addItem(tr("Predict from the plan the run ran"));
  source_box_->addItem(tr("Predict from the Plan page's plan"));
  source_box_->addItem(tr("Predict from a plan file\u2026"));
  source_box_->setToolTip(
      tr("An imported trace carries no plan: compare it with the Plan page's plan or the plan file (ShardScope or "
         "TorchRec) the trainer ran"));
  calibrate_->setObjectName(QStringLiteral("measuredCalibrate"));
  calibrate_->setToolTip(tr("Fit the cost model to this run (as shardscope-cli calibrate does) and plan with it"));
  message_->setObjectName(QStringLiteral("measuredMessage"));
  message_->setWordWrap(true);
  stats_->setObjectName(QStringLiteral("measuredStats"));
  stats_->setWordWrap(true);
  stats_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  ranks_->setObjectName(QStringLiteral("measuredRanks"));
  ranks_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  ranks_->verticalHeader()->hide();
  setRankColumns(true);
  // Every column in view at 1280x800: the columns share the table's width.
  ranks_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  ranks_->horizontalHeader()->setMinimumSectionSize(60);
  calibration_title_->setObjectName(QStringLiteral("measuredCalibrationTitle"));
  calibration_title_->setWordWrap(true);
  terms_->setObjectName(QStringLiteral("measuredCalibrationTerms"));
  terms_->setColumnCount(3);
  terms_->setHorizontalHeaderLabels({tr("Fitted constant"), tr("Value \u00b1 std. error"), tr("")});
  terms_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  terms_->verticalHeader()->hide();
  terms_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  calibration_title_->hide();
  terms_->hide();

  auto* bar = new QHBoxLayout;
  bar->addWidget(header_, 1);
  bar->addWidget(source_box_);
  bar->addWidget(calibrate_);
  auto* side = new QWidget;
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(stats_);
  side_layout->addWidget(calibration_title_);
  side_layout->addWidget(terms_, 1);
  auto* lower = new QSplitter(Qt::Horizontal);
  lower->setChildrenCollapsible(false);
  lower->addWidget(ranks_);
  lower->addWidget(side);
  lower->setStretchFactor(0, 3);
  lower->setStretchFactor(1, 2);
  lower->setSizes({640, 420});
  auto* vertical = new QSplitter(Qt::Vertical);
  vertical->setChildrenCollapsible(false);
  vertical->addWidget(chart_);
  vertical->addWidget(lower);
  vertical->setStretchFactor(0, 3);
  vertical->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(message_);
  layout->addWidget(vertical, 1);

  connect(source_box_, &QComboBox::activated, this, &MeasuredPage::onSourceActivated);
  connect(calibrate_, &QPushButton::clicked, this, &MeasuredPage::calibrate);
  connect(show_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    showMessage(message, true);
    emit runShown(run_, message.isEmpty() ? tr("analysis failed") : message);
  });
  connect(calibrate_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    calibrate_->setEnabled(run_ > 0);
    showMessage(tr("Calibration failed: %1").arg(message), true);
    emit calibrated(message.isEmpty() ? tr("calibration failed") : message);
  });
  // The prediction follows the project's calibration (loaded, fitted or unloaded).
  connect(document_, &ProjectDocument::projectChanged, this, [this] {
    if (run_ > 0 && shown_ && document_->project().calibration != shown_calibration_) showRun(run_);
  });
  header_->setText(noRunText());
  calibrate_->setEnabled(false);
}

MeasuredPage::~MeasuredPage() = default;

QString MeasuredPage::noRunText() const {
  return store_path_.isEmpty() ? tr("No trace store: profile a run (Run \u203a Profile\u2026) or open one (File "
                                    "\u203a Open Trace Store\u2026).")
                               : tr("No run shown: open one from the Runs page.");
}

void MeasuredPage::setStorePath(const QString& path) {
  if (path == store_path_) return;
  store_path_ = path;
  run_ = 0;
  shown_.reset();
  show_jobs_->supersede();
  chart_->setComparison(nullptr);
  ranks_->setRowCount(0);
  stats_->clear();
  header_->setText(noRunText());
  calibrate_->setEnabled(false);
}

void MeasuredPage::showRun(qint64 run) {
  run_ = run;
  calibrate_->setEnabled(false);
  header_->setText(tr("Run %1: analysing\u2026").arg(run));
  // What the prediction is made from in place of the run's own plan: copies, read off the GUI thread.
  std::optional<profiler::SuppliedPlan> supplied;
  const planner::GridResult* page_grid = session_->planGrid();
  if (source_ != PlanSource::Run) {
    profiler::SuppliedPlan s;
    s.model = session_->plannedProject().model;
    s.cluster = session_->plannedProject().cluster;
    if (source_ == PlanSource::File)
      s.file = plan_file_.toStdString();
    else if (page_grid != nullptr)
      s.plan = page_grid->plan;
    supplied = std::move(s);
  }
  const bool no_page_plan = source_ == PlanSource::PlanPage && page_grid == nullptr;
  const std::optional<core::Calibration> calibration = document_->project().calibration;
  shown_calibration_ = calibration;
  show_jobs_->start(
      [path = store_path_.toStdString(), run, supplied = std::move(supplied), no_page_plan,
       calibration](JobContext&) -> core::Result<std::shared_ptr<const profiler::RunVsPlan>> {
        if (no_page_plan) return core::Error{"the Plan page shows no plan yet"};
        auto r = profiler::runVsSuppliedPlan(path, st::RunId{run}, calibration ? &*calibration : nullptr,
                                             supplied ? &*supplied : nullptr);
        if (!r) return r.error();
        return std::make_shared<const profiler::RunVsPlan>(std::move(r).value());
      },
      [this](std::shared_ptr<const profiler::RunVsPlan> r) { show(std::move(r)); });
}

void MeasuredPage::setPlanSource(PlanSource source, const QString& file) {
  source_ = source;
  plan_file_ = file;
  source_box_->setCurrentIndex(static_cast<int>(source));
  if (source == PlanSource::File && !file.isEmpty())
    source_box_->setItemText(2, tr("Predict from %1").arg(QFileInfo(file).fileName()));
  if (run_ > 0) showRun(run_);
}

void MeasuredPage::onSourceActivated(int index) {
  if (index == static_cast<int>(PlanSource::File)) {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Plan the Trainer Ran"), {}, tr("Plans (*.json);;All files (*)"));
    if (file.isEmpty()) {
      source_box_->setCurrentIndex(static_cast<int>(source_));
      return;
    }
    setPlanSource(PlanSource::File, file);
    return;
  }
  setPlanSource(static_cast<PlanSource>(index));
}

void MeasuredPage::show(std::shared_ptr<const profiler::RunVsPlan> result) {
  shown_ = std::move(result);
  const profiler::RunVsPlan& r = *shown_;
  const auto& run = r.analysis.run;
  const core::DeviceInfo device = profiler::runDevice(r.inputs.config);
  header_->setText(tr("Run %1 \u00b7 %2 \u00b7 %3 \u00b7 %4 measured steps \u00b7 %5 ranks \u00b7 ran on %6")
                       .arg(static_cast<qint64>(run.id))
                       .arg(QString::fromStdString(run.label.empty() ? run.kind_text : run.label),
                            QString::fromStdString(r.analysis.mode))
                       .arg(r.analysis.steps)
                       .arg(r.analysis.ranks.size())
                       .arg(QString::fromStdString(core::describeDevice(device))));
  // An import is fitted against the plan its trainer ran: without one there is nothing to fit.
  const bool fittable = r.prediction.has_value() || !profiler::isImportedRun(run);
  calibrate_->setEnabled(fittable);
  calibrate_->setText(tr("Calibrate for %1 from This Run").arg(QString::fromStdString(core::shortDeviceName(device))));
  calibrate_->setToolTip(fittable ? tr("Fit the cost model's constants for %1 to this run (as shardscope-cli "
                                       "calibrate does) and plan with them")
                                        .arg(QString::fromStdString(core::describeDevice(device)))
                                  : tr("An imported run is fitted against the plan its trainer ran: choose it "
                                       "above first"));
  if (r.prediction) {
    chart_->setComparison(&*r.prediction);
    fillRankTable(*r.prediction);
    QStringList lines;
    if (!r.prediction->devices.absolute)
      lines << tr("Absolute times are not compared: %1. Compared instead: each rank's share of its sharding "
                  "group's embedding work, the imbalance and the stragglers.")
                   .arg(QString::fromStdString(r.prediction->devices.reason));
    if (!r.prediction->warnings.empty())
      lines << QString::fromStdString(r.prediction->warnings.front()) +
                   (r.prediction->warnings.size() > 1 ? tr(" (and %1 more)").arg(r.prediction->warnings.size() - 1)
                                                      : QString());
    showMessage(lines.join(QLatin1Char('\n')), false);
  } else {
    // Nothing to compare with, but what the run measured is still the answer to "which rank is slow".
    chart_->setMeasuredOnly(r.analysis, tr("no prediction"));
    fillMeasuredTable(r.analysis);
    showMessage(tr("No prediction: %1. Choose a plan above to compare.").arg(QString::fromStdString(r.no_prediction)),
                true);
  }
  fillStats(r);
  emit runShown(run_, {});
}

// Across devices the table compares shares, never milliseconds of two devices.
void MeasuredPage::setRankColumns(bool absolute) {
  if (absolute) {
    ranks_->setColumnCount(8);
    ranks_->setHorizontalHeaderLabels({tr("Rank"), tr("Group\nrank"), tr("Embedding\nmeasured"),
                                       tr("Embedding\npredicted"), tr("Embedding\nerror"), tr("Phases\nmeasured"),
                                       tr("Phases\npredicted"), tr("Error")});
    ranks_->horizontalHeaderItem(5)->setToolTip(tr("Sum of the phases the run measured, ms per step"));
    ranks_->horizontalHeaderItem(6)->setToolTip(tr("The prediction of the same phases, ms per step"));
    return;
  }
  ranks_->setColumnCount(7);
  ranks_->setHorizontalHeaderLabels({tr("Rank"), tr("Group"), tr("Group\nrank"), tr("Embedding\nms"),
                                     tr("Share\nmeasured"), tr("Share\npredicted"), tr("Gap\n(points)")});
  ranks_->horizontalHeaderItem(3)->setToolTip(tr("Measured embedding forward + backward, ms per step"));
  ranks_->horizontalHeaderItem(4)->setToolTip(tr("The rank's share of its sharding group's embedding work"));
  ranks_->horizontalHeaderItem(6)->setToolTip(tr("Measured share - predicted share, in percentage points"));
}

void MeasuredPage::fillRankTable(const profiler::MeasuredVsPredicted& v) {
  ranks_->setSortingEnabled(false);
  const bool absolute = v.devices.absolute;
  setRankColumns(absolute);
  ranks_->setRowCount(static_cast<int>(v.ranks.size()));
  for (int i = 0; i < static_cast<int>(v.ranks.size()); ++i) {
    const auto& r = v.ranks[static_cast<std::size_t>(i)];
    ranks_->setItem(i, 0, rankItem(r.rank, r.straggler));
    if (absolute) {
      ranks_->setItem(i, 1, number(r.group_rank, 0));
      ranks_->setItem(i, 2, number(r.measured.embedding()));
      ranks_->setItem(i, 3, number(r.predicted.embedding()));
      ranks_->setItem(i, 4, text(core::formatRelativeError(r.embedding_error)));
      ranks_->setItem(i, 5, number(r.measured_ms));
      ranks_->setItem(i, 6, number(r.predicted_ms));
      ranks_->setItem(i, 7, text(core::formatRelativeError(r.error)));
    } else {
      const bool both = r.measured_share >= 0 && r.predicted_share >= 0;
      ranks_->setItem(i, 1, number(r.sharding_group, 0));
      ranks_->setItem(i, 2, number(r.group_rank, 0));
      ranks_->setItem(i, 3, number(r.measured.embedding()));
      ranks_->setItem(i, 4, text(shareText(r.measured_share)));
      ranks_->setItem(i, 5, text(shareText(r.predicted_share)));
      ranks_->setItem(
          i, 6, text(both ? core::formatf("%+.1f", (r.measured_share - r.predicted_share) * 100.0) : std::string("-")));
    }
  }
}

void MeasuredPage::fillMeasuredTable(const profiler::RunAnalysis& a) {
  ranks_->setSortingEnabled(false);
  ranks_->setColumnCount(6);
  ranks_->setHorizontalHeaderLabels(
      {tr("Rank"), tr("Group\nrank"), tr("Forward\nms"), tr("Backward\nms"), tr("Embedding\nms"), tr("Step\nms")});
  ranks_->setRowCount(static_cast<int>(a.ranks.size()));
  for (int i = 0; i < static_cast<int>(a.ranks.size()); ++i) {
    const auto& r = a.ranks[static_cast<std::size_t>(i)];
    ranks_->setItem(i, 0, rankItem(r.rank, r.straggler));
    ranks_->setItem(i, 1, r.group_rank >= 0 ? number(r.group_rank, 0) : text("-"));
    ranks_->setItem(i, 2, number(r.emb_fwd_ms));
    ranks_->setItem(i, 3, number(r.emb_bwd_ms));
    ranks_->setItem(i, 4, number(r.compute_ms));
    ranks_->setItem(i, 5, number(r.step_ms));
  }
}

void MeasuredPage::fillStats(const profiler::RunVsPlan& r) {
  QString html;
  if (r.prediction) {
    const auto& v = *r.prediction;
    if (v.devices.absolute) {
      QStringList phases;
      for (int p = 0; p < profiler::kPhases; ++p)
        if (v.measured_phases[static_cast<std::size_t>(p)]) phases << QString::fromUtf8(profiler::phaseName(p));
      html +=
          tr("<b>Error</b> %1 mean |error| over ranks (embedding %2), over the measured phases: %3.<br>")
              .arg(QString::fromStdString(core::formatErrorSize(v.mape)),
                   QString::fromStdString(core::formatErrorSize(v.embedding_mape)), phases.join(QStringLiteral(", ")));
      html += tr("Priced with %1 for %2.<br>")
                  .arg(QString::fromStdString(v.constants).toHtmlEscaped(),
                       QString::fromStdString(core::describeDevice(v.devices.priced)).toHtmlEscaped());
      html += tr("Predicted step %1 ms (replica sync %2); measured step %3 ms (the slowest rank's step, median "
                 "over the measured steps).<br>")
                  .arg(v.predicted_step_ms, 0, 'f', 3)
                  .arg(QString::fromStdString(report::syncIntervalText(v.sync_interval)))
                  .arg(v.measured_step_ms, 0, 'f', 3);
    } else {
      html +=
          tr("<b>Share gap</b> %1 percentage points on average between each rank's measured and predicted share "
             "of its group's embedding work%2.<br>")
              .arg(v.share_gap >= 0 ? v.share_gap * 100.0 : 0.0, 0, 'f', 2)
              .arg(v.widest_share_gap_rank >= 0 ? tr(" (widest: rank %1)").arg(v.widest_share_gap_rank) : QString());
      html += tr("Measured step %1 ms on %2 (the slowest rank's step, median over the measured steps); predictions "
                 "are priced for %3.<br>")
                  .arg(v.measured_step_ms, 0, 'f', 3)
                  .arg(QString::fromStdString(core::shortDeviceName(v.devices.run)).toHtmlEscaped(),
                       QString::fromStdString(core::shortDeviceName(v.devices.priced)).toHtmlEscaped());
    }
    const auto row = [](const QString& name, double m, double p) {
      return QStringLiteral("<tr><td>%1</td><td align=right>%2</td><td align=right>%3</td></tr>")
          .arg(name)
          .arg(m, 0, 'f', 4)
          .arg(p, 0, 'f', 4);
    };
    const auto& a = v.measured_imbalance;
    const auto& b = v.predicted_imbalance;
    html +=
        tr("<b>Embedding load imbalance</b><table cellspacing=4><tr><th></th><th>measured</th>"
           "<th>predicted</th></tr>");
    html += row(tr("max / mean"), a.max_over_mean, b.max_over_mean);
    html += row(tr("total variation"), a.total_variation, b.total_variation);
    html += row(tr("total distance"), a.total_distance, b.total_distance);
    html += row(tr("chi divergence"), a.chi_divergence, b.chi_divergence);
    html += row(tr("KL divergence"), a.kl_divergence, b.kl_divergence);
    html += QStringLiteral("</table>");
  }
  const auto& an = r.analysis;
  QStringList stragglers;
  for (int rank : an.stragglers) stragglers << QString::number(rank);
  html += stragglers.isEmpty() ? tr("<b>Stragglers</b>: none (threshold %1 ms of embedding compute).")
                                     .arg(an.straggler_threshold_ms, 0, 'f', 3)
                               : tr("<b>Stragglers</b>: rank %1 (over %2 ms of embedding compute).")
                                     .arg(stragglers.join(QStringLiteral(", ")))
                                     .arg(an.straggler_threshold_ms, 0, 'f', 3);
  for (const auto& w : an.warnings) html += QStringLiteral("<br>\u26a0 ") + QString::fromStdString(w).toHtmlEscaped();
  stats_->setText(html);
}

void MeasuredPage::calibrate() {
  if (run_ <= 0 || store_path_.isEmpty()) return;
  calibrate_->setEnabled(false);
  showMessage(tr("Fitting the cost model to run %1\u2026").arg(run_), false);
  // An import is fitted with the plan it was compared with.
  std::optional<profiler::RunInputs> supplied;
  if (shown_ && profiler::isImportedRun(shown_->analysis.run) && shown_->inputs.plan) supplied = shown_->inputs;
  const qint64 run = run_;
  calibrate_jobs_->start(
      [path = store_path_.toStdString(), run,
       supplied](JobContext&) -> core::Result<std::shared_ptr<const profiler::CalibrationReport>> {
        const st::RunId fit[] = {st::RunId{run}};
        auto report = profiler::calibrateStoredRuns(path, fit, {}, supplied ? &*supplied : nullptr);
        if (!report) return report.error();
        return std::make_shared<const profiler::CalibrationReport>(std::move(report).value());
      },
      [this, run](std::shared_ptr<const profiler::CalibrationReport> report) {
        calibration_ = std::move(report);
        showCalibration(*calibration_);
        calibrate_->setEnabled(true);
        const core::Calibration fitted = calibration_->calibration;
        const QString device = QString::fromStdString(core::describeDevice(fitted.device));
        // A fit for one device planning a cluster of another is the user's call, said out loud.
        confirmCalibration(this, document_->project().cluster, fitted, [this, run, fitted, device](bool apply) {
          if (!apply) {
            showMessage(tr("The calibration for %1 from run %2 was not applied: the project's cluster is %3.")
                            .arg(device)
                            .arg(run)
                            .arg(QString::fromStdString(
                                core::shortDeviceName(core::clusterDevice(document_->project().cluster)))),
                        false);
            emit calibrated(tr("not applied"));
            return;
          }
          core::Project p = document_->project();
          p.calibration = fitted;
          document_->edit(std::move(p), tr("Calibrate from run %1").arg(run));
          showMessage(tr("The project now plans with the calibration for %1 from run %2; the Grid Explorer shows the "
                         "best grid before and after.")
                          .arg(device)
                          .arg(run),
                      false);
          emit calibrated({});
        });
      });
}

void MeasuredPage::showCalibration(const profiler::CalibrationReport& report) {
  const core::Calibration& cal = report.calibration;
  // The default constants are compared only when they are priced for the run's device.
  const QString defaults =
      report.defaults_not_compared.empty()
          ? tr("default constants %1").arg(QString::fromStdString(core::formatErrorSize(report.fit_mape_default)))
          : tr("default constants not compared: %1")
                .arg(QString::fromStdString(report.defaults_not_compared).toHtmlEscaped());
  calibration_title_->setText(tr("<b>Calibration for %1</b> from %2: fit error %3 (%4) over %5 measurements")
                                  .arg(QString::fromStdString(core::describeDevice(cal.device)).toHtmlEscaped(),
                                       QString::fromStdString(cal.source).toHtmlEscaped(),
                                       QString::fromStdString(core::formatErrorSize(report.fit_mape)), defaults)
                                  .arg(report.measurements));
  // The constants the planner uses, each with its standard error; one the run
  // does not determine (error above its value) is flagged, not hidden.
  terms_->setRowCount(static_cast<int>(cal.coefficients.size()));
  int i = 0;
  for (const auto& [name, c] : cal.coefficients) {
    const bool undetermined = core::notDetermined(c.value, c.std_error);
    terms_->setItem(i, 0, new QTableWidgetItem(QString::fromStdString(name)));
    auto* value = new QTableWidgetItem(QString::fromStdString(core::formatWithError(c.value, c.std_error)));
    value->setData(Qt::UserRole, c.value);
    value->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    terms_->setItem(i, 1, value);
    auto* note = new QTableWidgetItem(undetermined ? tr("not determined by the run") : QString());
    if (undetermined) {
      note->setForeground(problemColor());
      note->setToolTip(
          tr("Its standard error exceeds its value: the run does not pin it down. Fit runs that vary "
             "what it describes (batch sizes, tables)."));
    }
    terms_->setItem(i, 2, note);
    ++i;
  }
  calibration_title_->show();
  terms_->show();
}

void MeasuredPage::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
  message_->setVisible(!text.isEmpty());
}

QString MeasuredPage::statsText() const { return stats_->text(); }
QString MeasuredPage::messageText() const { return message_->text(); }

}  // namespace shardscope::app
