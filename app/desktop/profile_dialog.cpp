#include "profile_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QThread>
#include <QVBoxLayout>
#include <limits>
#include <qcustomplot.h>

#include "chart_style.h"
#include "job_tracker.h"
#include "project_files.h"
#include "remote_agents.h"
#include "remote_jobs.h"
#include "shardscope/core/protocol/job_spec.h"
#include "shardscope/report/cluster_catalog.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::app {

ProfileDialog::ProfileDialog(core::Project project, std::optional<core::ShardPlan> shown, QString store,
                             QWidget* parent)
    : QDialog(parent),
      project_(std::move(project)),
      shown_(std::move(shown)),
      store_(std::move(store)),
      target_(new QComboBox),
      mode_(new QComboBox),
      device_(new QComboBox),
      plan_choice_(new QComboBox),
      batch_(new QSpinBox),
      steps_(new QSpinBox),
      threads_(new QSpinBox),
      warmup_(new QSpinBox),
      seed_(new QSpinBox),
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
  target_->setObjectName(QStringLiteral("profileTarget"));
  target_->setToolTip(tr("Where the run runs: this machine, or a connected agent's cluster (Run \u203a Connections)"));
  fillTargets();
  fillPlanChoices(project_.cluster.worldSize());
  batch_->setRange(1, 1 << 20);
  batch_->setValue(static_cast<int>(std::max<std::uint32_t>(1, project_.model.batch_size_per_gpu)));
  steps_->setRange(1, 100000);
  steps_->setValue(5);
  threads_->setRange(0, 1024);
  threads_->setSpecialValueText(tr("all cores"));
  threads_->setValue(0);
  warmup_->setRange(0, static_cast<int>(core::protocol::kMaxJobWarmup));
  warmup_->setValue(1);
  warmup_->setToolTip(tr("Unrecorded steps before the measured ones"));
  seed_->setRange(1, std::numeric_limits<int>::max());
  seed_->setValue(1);
  seed_->setToolTip(tr("The seed of the synthetic ids each rank looks up"));
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
  form->addRow(tr("Run on"), target_);
  form->addRow(tr("Mode"), mode_);
  form->addRow(tr("Device"), device_);
  form->addRow(tr("Plan"), plan_choice_);
  form->addRow(tr("Batch per GPU"), batch_);
  form->addRow(tr("Measured steps"), steps_);
  form->addRow(tr("Warm-up steps"), warmup_);
  form->addRow(tr("Seed"), seed_);
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

  connect(target_, &QComboBox::currentIndexChanged, this, &ProfileDialog::onTargetChanged);
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

bool ProfileDialog::isRunning() const { return jobs_->isRunning() || submitting_; }

QString ProfileDialog::statusText() const { return status_->text(); }

void ProfileDialog::start() {
  if (const QString address = target_->currentData().toString(); !address.isEmpty()) {
    startRemote(address);
    return;
  }
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
  request.warmup = static_cast<std::uint32_t>(warmup_->value());
  request.seed = static_cast<std::uint64_t>(seed_->value());
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
  for (QWidget* w : std::initializer_list<QWidget*>{target_, mode_, device_, plan_choice_, batch_, steps_, warmup_,
                                                    seed_, threads_, label_})
    w->setEnabled(!running);
  if (!running && !target_->currentData().toString().isEmpty()) {
    threads_->setEnabled(false);  // the agent's engine uses its own cores
    cancel_->setEnabled(false);   // a submitted job is cancelled on the Runs page
  }
}

}  // namespace shardscope::app

namespace shardscope::app {

void ProfileDialog::fillPlanChoices(std::uint32_t world_size) {
  const QSignalBlocker block(plan_choice_);
  const QVariant previous = plan_choice_->currentData();
  plan_choice_->clear();
  if (shown_ && shown_->world_size == world_size) {
    plan_choice_->addItem(
        tr("the shown plan: M = %1 \u00d7 R = %2").arg(shown_->sharding_group_size).arg(shown_->replicas), 0);
  }
  for (const std::uint32_t m : report::divisors(world_size))
    plan_choice_->addItem(tr("planned for M = %1 \u00d7 R = %2").arg(m).arg(world_size / m), m);
  const int again = plan_choice_->findData(previous);
  if (again >= 0) plan_choice_->setCurrentIndex(again);
}

void ProfileDialog::setRemoteTargets(RemoteAgents* agents, RemoteJobs* jobs) {
  agents_ = agents;
  remote_jobs_ = jobs;
  fillTargets();
  connect(agents_, &RemoteAgents::connected, this, &ProfileDialog::fillTargets);
  connect(agents_, &RemoteAgents::disconnected, this, &ProfileDialog::fillTargets);
}

void ProfileDialog::fillTargets() {
  const QString current = target_->currentData().toString();
  {
    const QSignalBlocker block(target_);
    target_->clear();
    target_->addItem(tr("this machine"), QString());
    if (agents_ != nullptr)
      for (const QString& address : agents_->connectedAddresses())
        target_->addItem(agents_->targetText(address), address);
    target_->setCurrentIndex(std::max(0, target_->findData(current)));
  }
  onTargetChanged();
}

bool ProfileDialog::setTarget(const QString& address) {
  const int index = target_->findData(address);
  if (index < 0) return false;
  target_->setCurrentIndex(index);
  onTargetChanged();
  return true;
}

void ProfileDialog::onTargetChanged() {
  const QString address = target_->currentData().toString();
  const RemoteAgents::Agent* agent = agents_ != nullptr && !address.isEmpty() ? agents_->agent(address) : nullptr;
  auto* modes = qobject_cast<QStandardItemModel*>(mode_->model());
  auto* devices = qobject_cast<QStandardItemModel*>(device_->model());
  if (agent == nullptr || !agent->description) {
    fillPlanChoices(project_.cluster.worldSize());
    if (modes != nullptr) modes->item(1)->setEnabled(true);
    if (devices != nullptr) devices->item(1)->setEnabled(profiler::gpuEngineBuilt());
    status_->setText(tr("The run goes into %1.").arg(store_));
    setRunning(isRunning());
    return;
  }
  const core::protocol::Description& d = *agent->description;
  fillPlanChoices(d.cluster.worldSize());
  const bool mpi = core::protocol::agentRunsMode(d, "mpi");
  if (modes != nullptr) modes->item(1)->setEnabled(mpi);
  if (!mpi) mode_->setCurrentIndex(0);
  if (devices != nullptr) devices->item(1)->setEnabled(d.gpu_engine);
  if (!d.gpu_engine) device_->setCurrentIndex(0);
  steps_->setMaximum(d.max_steps > 0 ? static_cast<int>(d.max_steps) : 100000);
  status_->setText(tr("Run submits the job to %1, planned for its %2 GPUs; follow it on the Runs page. When it "
                      "completes its run is fetched into %3.")
                       .arg(agent->saved.displayName())
                       .arg(d.cluster.worldSize())
                       .arg(store_));
  setRunning(isRunning());
}

void ProfileDialog::startRemote(const QString& address) {
  const RemoteAgents::Agent* agent = agents_ != nullptr ? agents_->agent(address) : nullptr;
  if (agent == nullptr || !agent->description || remote_jobs_ == nullptr) {
    status_->setText(tr("The agent %1 is not connected: connect it in Run \u203a Connections.").arg(address));
    emit failed(status_->text());
    return;
  }
  core::protocol::JobOptions options;
  const auto group_size = plan_choice_->currentData().toUInt();
  options.label = label_->text().trimmed().toStdString();
  if (options.label.empty()) options.label = core::protocol::defaultJobLabel(project_, group_size);
  if (group_size == 0) options.plan = shown_;
  options.grid = group_size;
  options.mode = mode_->currentData().toString().toStdString();
  options.cuda = device_->currentData().toString() == QStringLiteral("cuda");
  options.steps = static_cast<std::uint32_t>(steps_->value());
  options.warmup = static_cast<std::uint32_t>(warmup_->value());
  options.seed = static_cast<std::uint64_t>(seed_->value());
  options.batch = static_cast<std::uint32_t>(batch_->value());
  auto spec = core::protocol::makeJobSpecFor(project_, *agent->description, options);
  if (!spec) {
    status_->setText(QString::fromStdString(spec.error().message));
    emit failed(status_->text());
    return;
  }
  submitting_ = true;
  setRunning(true);
  cancel_->setEnabled(false);
  status_->setText(tr("Submitting to %1\u2026").arg(agent->saved.displayName()));
  const QString name = agent->saved.displayName();
  remote_jobs_->submit(
      address, *spec,
      [this, self = QPointer<ProfileDialog>(this), address, name](core::Result<core::protocol::JobInfo> info) {
        if (!self) return;
        submitting_ = false;
        setRunning(false);
        if (!info) {
          status_->setText(tr("%1 refused the job: %2").arg(name, QString::fromStdString(info.error().message)));
          emit failed(status_->text());
          return;
        }
        status_->setText(tr("Submitted as job %1 on %2: its progress is on the Runs page, and its "
                            "run comes into the store when it completes.")
                             .arg(QString::fromStdString(info->job), name));
        emit submitted(address, QString::fromStdString(info->job));
      });
}

}  // namespace shardscope::app
