#include "profile_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QThread>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include "chart_style.h"
#include "job_tracker.h"
#include "project_files.h"
#include "shardscope/report/cluster_catalog.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::app {

ProfileDialog::ProfileDialog(core::Project project, std::optional<core::ShardPlan> shown, QString store,
                             QWidget* parent)
    : QDialog(parent),
      project_(std::move(project)),
      shown_(std::move(shown)),
      store_(std::move(store)),
      mode_(new QComboBox),
      device_(new QComboBox),
      plan_choice_(new QComboBox),
      batch_(new QSpinBox),
      steps_(new QSpinBox),
      threads_(new QSpinBox),
      label_(new QLineEdit),
      progress_(new QProgressBar),
      plot_(new QCustomPlot),
      status_(new QLabel),
      run_(new QPushButton(tr("Run"))),
      cancel_(new QPushButton(tr("Cancel Run"))),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Close)),
      jobs_(new JobTracker(planningPool(), this)) {
  setObjectName(QStringLiteral("ProfileDialog"));
  setWindowTitle(tr("Profile"));
  mode_->addItem(tr("emulate (this process, one sharding group)"), QStringLiteral("emulate"));
  mode_->addItem(tr("mpi (shardscope-engine, one process per rank)"), QStringLiteral("mpi"));
  device_->addItem(tr("CPU"), QStringLiteral("cpu"));
  device_->addItem(tr("GPUs (CUDA, NCCL collectives, CUPTI trace)"), QStringLiteral("cuda"));
  if (!profiler::gpuEngineBuilt()) {
    // Shown but not offered: the user learns that GPU runs exist and why they cannot run here.
    if (auto* model = qobject_cast<QStandardItemModel*>(device_->model())) model->item(1)->setEnabled(false);
    device_->setItemData(1, tr("This build has no GPU engine (CUDA, NCCL and CUPTI are needed at build time)."),
                         Qt::ToolTipRole);
  }
  device_->setToolTip(
      tr("GPUs: in emulate mode every rank runs in this process on its own GPU (the plan's world "
         "size must not exceed this machine's GPUs); in mpi mode one engine process per GPU."));
  if (shown_) {
    plan_choice_->addItem(
        tr("the shown plan: M = %1 \u00d7 R = %2").arg(shown_->sharding_group_size).arg(shown_->replicas), 0);
  }
  for (const std::uint32_t m : report::divisors(project_.cluster.worldSize()))
    plan_choice_->addItem(tr("planned for M = %1 \u00d7 R = %2").arg(m).arg(project_.cluster.worldSize() / m), m);
  batch_->setRange(1, 1 << 20);
  batch_->setValue(static_cast<int>(std::max<std::uint32_t>(1, project_.model.batch_size_per_gpu)));
  steps_->setRange(1, 100000);
  steps_->setValue(5);
  threads_->setRange(0, 1024);
  threads_->setSpecialValueText(tr("all cores"));
  threads_->setValue(0);
  label_->setPlaceholderText(tr("optional name of the run"));
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_->setWordWrap(true);
  status_->setText(tr("The run goes into %1.").arg(store_));

  plot_->setObjectName(QStringLiteral("profileStepTimes"));
  plot_->setMinimumHeight(220);
  plot_->xAxis->setLabel(tr("measured step"));
  plot_->yAxis->setLabel(tr("step time (ms)"));
  plot_->legend->setVisible(false);  // shown with the first rank's graph
  plot_hint_ = new QCPItemText(plot_);
  plot_hint_->position->setType(QCPItemPosition::ptAxisRectRatio);
  plot_hint_->position->setCoords(0.5, 0.5);
  plot_hint_->setText(tr("Each measured rank's step time appears here as the run measures it."));
  plot_hint_->setColor(palette().color(QPalette::PlaceholderText));
  // Steps are whole numbers: ticks at integers only, however few steps there are.
  auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
  ticker->setTickStep(1.0);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  plot_->xAxis->setTicker(ticker);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

  auto* form = new QFormLayout;
  form->addRow(tr("Mode"), mode_);
  form->addRow(tr("Device"), device_);
  form->addRow(tr("Plan"), plan_choice_);
  form->addRow(tr("Batch per GPU"), batch_);
  form->addRow(tr("Measured steps"), steps_);
  form->addRow(tr("Threads"), threads_);
  form->addRow(tr("Name"), label_);
  buttons_->addButton(run_, QDialogButtonBox::ActionRole);
  buttons_->addButton(cancel_, QDialogButtonBox::ActionRole);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(plot_, 1);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(buttons_);

  connect(run_, &QPushButton::clicked, this, &ProfileDialog::start);
  connect(cancel_, &QPushButton::clicked, this, &ProfileDialog::cancel);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(jobs_, &JobTracker::progress, this, [this](quint64, int done, int total) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
    status_->setText(tr("Step %1 of %2 (warm-up included)\u2026").arg(done).arg(total));
  });
  connect(jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    setRunning(false);
    status_->setText(message);
    emit failed(message);
  });
  setRunning(false);
}

// The job posts step times to this dialog: it is finished (the tracker waits
// for it) before the dialog's own destruction begins.
ProfileDialog::~ProfileDialog() { delete jobs_; }

void ProfileDialog::addStepTime(quint32 rank, qint64 step, double step_ms) {
  if (step < 0) return;  // warm-up
  const QString name = tr("rank %1").arg(rank);
  QCPGraph* graph = nullptr;
  for (int i = 0; i < plot_->graphCount(); ++i)
    if (plot_->graph(i)->name() == name) graph = plot_->graph(i);
  if (graph == nullptr) {
    graph = plot_->addGraph();
    graph->setName(name);
    graph->setPen(QPen(seriesColor(plot_->graphCount() - 1), 2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    if (plot_->graphCount() > 8) graph->removeFromLegend();
    plot_->legend->setVisible(true);
    plot_hint_->setVisible(false);
  }
  graph->addData(static_cast<double>(step), step_ms);
  plot_->rescaleAxes();
  plot_->yAxis->setRange(0, plot_->yAxis->range().upper * 1.15);
  plot_->xAxis->setRange(plot_->xAxis->range().lower - 0.5, plot_->xAxis->range().upper + 0.5);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ProfileDialog::clearStepTimes() {
  plot_->clearGraphs();
  plot_->legend->setVisible(false);
  plot_hint_->setVisible(true);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool ProfileDialog::isRunning() const { return jobs_->isRunning(); }

void ProfileDialog::start() {
  profiler::ProfileRequest request;
  request.project = project_;
  request.store = localPath(store_);
  request.mode = mode_->currentData().toString() == QStringLiteral("mpi") ? profiler::ProfileMode::Mpi
                                                                          : profiler::ProfileMode::Emulate;
  request.device = device_->currentData().toString() == QStringLiteral("cuda") ? profiler::ProfileDevice::Cuda
                                                                               : profiler::ProfileDevice::Cpu;
  request.batch = static_cast<std::uint32_t>(batch_->value());
  request.steps = static_cast<std::uint32_t>(steps_->value());
  request.threads = static_cast<unsigned>(threads_->value());
  if (!label_->text().trimmed().isEmpty()) request.label = label_->text().trimmed().toStdString();
  const auto group_size = plan_choice_->currentData().toUInt();
  std::optional<core::ShardPlan> shown = group_size == 0 ? shown_ : std::nullopt;
  clearStepTimes();
  request.on_step = [this](const profiler::RankStepTime& t) {
    QMetaObject::invokeMethod(
        this, [this, t] { addStepTime(t.rank, t.step, t.step_ms); }, Qt::QueuedConnection);
  };
  setRunning(true);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  status_->setText(tr("Starting\u2026"));
  jobs_->start(
      [request, shown, group_size](JobContext& job) mutable -> core::Result<profiler::ProfileOutcome> {
        if (shown) {
          request.plan = *shown;
        } else {
          auto plan = profiler::plannedProfilePlan(request, group_size);
          if (!plan) return plan.error();
          request.plan = std::move(plan).value();
        }
        const profiler::ProfileProgressFn progress = [&job](const profiler::ProfileProgress& p) {
          if (p.kind == profiler::ProfileProgress::Kind::Step && p.total > 0)
            job.reportProgress(static_cast<int>(p.done), static_cast<int>(p.total));
        };
        return profiler::runProfile(request, progress, job.cancelFlag());
      },
      [this](profiler::ProfileOutcome outcome) {
        setRunning(false);
        progress_->setValue(progress_->maximum());
        status_->setText(tr("Run %1 is in the store: %2 measured step(s) on %3 rank(s).")
                             .arg(static_cast<qint64>(outcome.run))
                             .arg(outcome.analysis.steps)
                             .arg(outcome.analysis.ranks.size()));
        emit profiled(static_cast<qint64>(outcome.run));
      });
}

void ProfileDialog::cancel() {
  if (!jobs_->isRunning()) return;
  status_->setText(tr("Cancelling\u2026 (the run is kept, marked failed)"));
  jobs_->cancel();
}

void ProfileDialog::setRunning(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  for (QWidget* w : std::initializer_list<QWidget*>{mode_, device_, plan_choice_, batch_, steps_, threads_, label_})
    w->setEnabled(!running);
}

}  // namespace shardscope::app
