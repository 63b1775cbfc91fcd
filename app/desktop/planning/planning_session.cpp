#include "planning_session.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <algorithm>

#include "job_tracker.h"
#include "project_document.h"
#include "shardscope/report/grid_choice.h"

namespace shardscope::app {

PlanningSession::PlanningSession(ProjectDocument* document, QObject* parent)
    : QObject(parent),
      document_(document),
      debounce_(new QTimer(this)),
      sweeps_(new JobTracker(planningPool(), this)),
      scaling_jobs_(new JobTracker(planningPool(), this)),
      result_(std::make_shared<const planner::SweepResult>()) {
  debounce_->setSingleShot(true);
  debounce_->setInterval(100);
  connect(debounce_, &QTimer::timeout, this, &PlanningSession::rerun);
  connect(document_, &ProjectDocument::projectChanged, this, &PlanningSession::scheduleRerun);
  connect(document_, &ProjectDocument::chosenGridChanged, this, &PlanningSession::chosenChanged);
  connect(sweeps_, &JobTracker::progress, this, [this](quint64 /*job_id*/, int done, int total) {
    if (running_) emit sweepProgress(done, total);
  });
  connect(sweeps_, &JobTracker::failed, this, [this](quint64 job_id, const QString& message) {
    SweepOutcome outcome;
    outcome.result = std::make_shared<const planner::SweepResult>();
    outcome.error = message.isEmpty() ? "planning failed" : "planning failed: " + message.toStdString();
    onFinished(job_id, std::move(outcome), project_in_flight_);
  });
  connect(scaling_jobs_, &JobTracker::progress, this,
          [this](quint64 /*job_id*/, int done, int total) { emit scalingProgress(done, total); });
  connect(scaling_jobs_, &JobTracker::failed, this, [this](quint64 /*job_id*/, const QString& message) {
    planner::ScalingResult failed;
    failed.error = message.isEmpty() ? "planning failed" : "planning failed: " + message.toStdString();
    onScalingFinished(std::move(failed));
  });
  // The first run starts from the event loop, once every page is connected.
  QTimer::singleShot(0, this, [this] {
    if (job_id_ == 0) rerun();
  });
}

PlanningSession::~PlanningSession() {
  // Stop both sweeps at once; the trackers wait for them (bounded by one grid) as they go.
  sweeps_->cancel();
  scaling_jobs_->cancel();
}

bool PlanningSession::waitUntilIdle(int timeout_ms, bool with_scaling) {
  QElapsedTimer timer;
  timer.start();
  auto busy = [this, with_scaling] {
    return job_id_ == 0 || running_ || shown_job_id_ != job_id_ || (with_scaling && scaling_running_);
  };
  while (busy()) {
    const qint64 left = timeout_ms - timer.elapsed();
    if (left <= 0) return false;
    QEventLoop loop;
    connect(this, &PlanningSession::sweepFinished, &loop, &QEventLoop::quit);
    connect(this, &PlanningSession::scalingFinished, &loop, &QEventLoop::quit);
    connect(this, &PlanningSession::sweepCancelled, &loop, &QEventLoop::quit);
    QTimer::singleShot(std::min<qint64>(left, 50), &loop, &QEventLoop::quit);
    loop.exec();
    if (!running_ && !debounce_->isActive() && shown_job_id_ != job_id_) return true;  // cancelled before it ran
  }
  return true;
}

void PlanningSession::setDebounceInterval(int ms) { debounce_->setInterval(ms); }

void PlanningSession::scheduleRerun() {
  // Stop the stale runs at once; start a new one when the edits settle.
  job_id_ = sweeps_->supersede();
  scaling_jobs_->cancel();
  running_ = true;
  debounce_->start();
  emit sweepStarted(job_id_);
}

void PlanningSession::rerun() {
  debounce_->stop();
  scaling_jobs_->cancel();
  // Copies in, a plain value out; the outcome (or error) comes back only
  // while this run is the current one.
  project_in_flight_ = document_->project();
  const quint64 id = sweeps_->start(
      [project = project_in_flight_](JobContext& job) {
        SweepOutcome outcome;
        outcome.result = std::make_shared<const planner::SweepResult>();
        outcome.error = planner::unplannable(project);
        if (!outcome.error.empty()) return outcome;
        const planner::SweepProgress progress = [&job](std::size_t done, std::size_t total) {
          job.reportProgress(static_cast<int>(done), static_cast<int>(total));
          return true;
        };
        const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
        outcome.result = std::make_shared<const planner::SweepResult>(
            planner::sweep(project.model, project.cluster, cal, project.constraints, planner::sweepOptionsOf(project),
                           progress, job.cancelFlag()));
        return outcome;
      },
      [this](SweepOutcome outcome) { onFinished(sweeps_->currentId(), std::move(outcome), project_in_flight_); });
  job_id_ = id;
  running_ = true;
  emit sweepStarted(id);
}

void PlanningSession::cancel() {
  sweeps_->cancel();
  scaling_jobs_->cancel();
  if (debounce_->isActive()) {
    // Cancelled before the rerun started: the older result stays.
    debounce_->stop();
    running_ = false;
    emit sweepCancelled();
  }
}

void PlanningSession::onFinished(quint64 job_id, SweepOutcome outcome, const core::Project& project) {
  running_ = false;
  shown_job_id_ = job_id;
  result_ = std::move(outcome.result);
  planned_project_ = project;
  error_ = QString::fromStdString(outcome.error);
  if (error_.isEmpty() && !result_->cancelled) noteBestGrid();
  emit sweepFinished(job_id);
  emit chosenChanged();
  if (error_.isEmpty() && !result_->cancelled) startScaling();
}

void PlanningSession::noteBestGrid() {
  BestGrid now;
  if (planned_project_.calibration) now.calibration = QString::fromStdString(planned_project_.calibration->source);
  if (const planner::GridResult* best = result_->best()) {
    now.grid = describe(*best);
    now.step_ms = best->step.step_ms;
  }
  if (last_best_ && last_calibration_ != planned_project_.calibration) {
    calibration_change_ = CalibrationChange{*last_best_, now};
    emit calibrationChangeShown();
  } else if (calibration_change_) {
    calibration_change_->after = now;  // other edits since: the "after" side follows them
    emit calibrationChangeShown();
  }
  last_best_ = now;
  last_calibration_ = planned_project_.calibration;
}

void PlanningSession::startScaling() {
  scaling_running_ = true;
  emit scalingStarted();
  scaling_jobs_->start(
      [project = planned_project_](JobContext& job) {
        return planner::runScalingSweep(project, job.cancelFlag(),
                                        [&job](int done, int total) { job.reportProgress(done, total); });
      },
      [this](planner::ScalingResult scaling) { onScalingFinished(std::move(scaling)); });
}

void PlanningSession::onScalingFinished(planner::ScalingResult scaling) {
  scaling_running_ = false;
  // A cancelled scaling run keeps the older heatmap unless it had none.
  if (!scaling.cancelled || scaling_.cells.empty()) scaling_ = std::move(scaling);
  emit scalingFinished();
}

int PlanningSession::chosenIndex() const { return report::chosenIndex(*result_, document_->project()); }

const planner::GridResult* PlanningSession::planGrid() const {
  const int chosen = chosenIndex();
  if (chosen >= 0) return &result_->grids[static_cast<std::size_t>(chosen)];
  return result_->best();
}

QString PlanningSession::describe(const planner::GridResult& g) {
  QString text = tr("M = %1 \u00d7 R = %2 (%3), %4 ms per step")
                     .arg(g.grid.group_size)
                     .arg(g.grid.replicas)
                     .arg(QString::fromLatin1(core::toString(g.grid.layout)))
                     .arg(g.step.step_ms, 0, 'f', 2);
  if (!g.fits) text += tr(", does not fit");
  return text;
}

void PlanningSession::choose(int grid_index) {
  if (grid_index < 0 || static_cast<std::size_t>(grid_index) >= result_->grids.size()) return;
  const planner::Grid& g = result_->grids[static_cast<std::size_t>(grid_index)].grid;
  document_->chooseGrid(g.group_size, g.layout);
}

}  // namespace shardscope::app
