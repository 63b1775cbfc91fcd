#include "planning_session.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QThread>
#include <QThreadPool>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>
#include <set>

#include "project_document.h"

namespace shardscope::app {

namespace {

// Why a project cannot be planned at all, or empty.
std::string unplannable(const core::Project& project) {
  if (project.cluster.worldSize() == 0) return "the cluster has no GPUs (N = 0)";
  if (project.model.tables.empty()) return "the model has no embedding tables";
  if (project.model.batch_size_per_gpu == 0) return "the batch size per GPU is 0";
  return {};
}

}  // namespace

planner::SweepOptions sweepOptionsOf(const core::Project& project) {
  planner::SweepOptions options;
  options.sync_interval = std::max<std::uint32_t>(1, project.sync_interval);
  options.planner.target = project.target;
  return options;
}

namespace {

// Runs on a pool thread: copies in, a plain value out.
SweepOutcome runSweep(const core::Project& project, const std::atomic<bool>* cancel,
                      const planner::SweepProgress& progress) {
  SweepOutcome outcome;
  outcome.result = std::make_shared<const planner::SweepResult>();
  outcome.error = unplannable(project);
  if (!outcome.error.empty()) return outcome;
  try {
    const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
    outcome.result = std::make_shared<const planner::SweepResult>(planner::sweep(
        project.model, project.cluster, cal, project.constraints, sweepOptionsOf(project), progress, cancel));
  } catch (const std::exception& e) {
    outcome.error = "planning failed: ";
    outcome.error += e.what();
  } catch (...) {
    outcome.error = "planning failed";
  }
  return outcome;
}

}  // namespace

QThreadPool* planningPool() {
  static QThreadPool* pool = [] {
    auto* p = new QThreadPool;  // lives as long as the process (jobs are waited for by their owners)
    p->setThreadPriority(QThread::IdlePriority);
    p->setMaxThreadCount(std::max(1, QThread::idealThreadCount()));
    return p;
  }();
  return pool;
}

double ScalingResult::bestPerGpu() const {
  double best = 0;
  for (const ScalingCell& c : cells)
    if (c.planned && c.fits) best = std::max(best, c.samples_per_second_per_gpu);
  return best;
}

std::vector<std::uint32_t> scalingWorldSizes(const core::ClusterSpec& cluster) {
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t n = 8; n <= 4096; n *= 2) sizes.push_back(n);
  const std::uint32_t own = cluster.worldSize();
  if (own > 0 && std::find(sizes.begin(), sizes.end(), own) == sizes.end()) {
    sizes.push_back(own);
    std::sort(sizes.begin(), sizes.end());
  }
  return sizes;
}

ScalingResult runScalingSweep(const core::Project& project, const std::atomic<bool>* cancel,
                              const std::function<void(int, int)>& progress) {
  ScalingResult out;
  out.error = unplannable(project);
  if (!out.error.empty()) return out;
  out.world_sizes = scalingWorldSizes(project.cluster);
  std::set<std::uint32_t> ms;
  for (std::uint32_t n : out.world_sizes)
    for (std::uint32_t m = 1; m <= n; ++m)
      if (n % m == 0 && (m & (m - 1)) == 0) ms.insert(m);  // powers of two: one row each
  // The project's own M values (a non-power-of-two N) too.
  for (std::uint32_t m = 1; m <= project.cluster.worldSize(); ++m)
    if (project.cluster.worldSize() % m == 0) ms.insert(m);
  out.group_sizes.assign(ms.begin(), ms.end());
  out.cells.resize(out.group_sizes.size() * out.world_sizes.size());
  for (std::size_t mi = 0; mi < out.group_sizes.size(); ++mi)
    for (std::size_t ni = 0; ni < out.world_sizes.size(); ++ni) {
      ScalingCell& c = out.cells[mi * out.world_sizes.size() + ni];
      c.group_size = out.group_sizes[mi];
      c.world_size = out.world_sizes[ni];
    }
  const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
  const int total = static_cast<int>(out.world_sizes.size());
  try {
    for (std::size_t ni = 0; ni < out.world_sizes.size(); ++ni) {
      if (cancel && cancel->load()) {
        out.cancelled = true;
        break;
      }
      const std::uint32_t n = out.world_sizes[ni];
      const core::ClusterSpec cluster = core::resizedCluster(project.cluster, n);
      planner::SweepResult sweep =
          planner::sweep(project.model, cluster, cal, project.constraints, sweepOptionsOf(project), {}, cancel);
      if (sweep.cancelled) {
        out.cancelled = true;
        break;
      }
      for (const planner::GridResult& g : sweep.grids) {
        const auto mi = static_cast<std::size_t>(
            std::lower_bound(out.group_sizes.begin(), out.group_sizes.end(), g.grid.group_size) -
            out.group_sizes.begin());
        if (mi >= out.group_sizes.size() || out.group_sizes[mi] != g.grid.group_size) continue;
        ScalingCell& c = out.cells[mi * out.world_sizes.size() + ni];
        const double per_gpu = g.samples_per_second / static_cast<double>(n);
        // The better layout: a fitting one first, then the higher throughput.
        const bool better = !c.planned || (g.fits && !c.fits) ||
                            (g.fits == c.fits && per_gpu > c.samples_per_second_per_gpu);
        if (!better) continue;
        c.planned = true;
        c.fits = g.fits;
        c.layout = g.grid.layout;
        c.samples_per_second_per_gpu = per_gpu;
        c.step_ms = g.step.step_ms;
      }
      if (progress) progress(static_cast<int>(ni) + 1, total);
    }
  } catch (const std::exception& e) {
    out.error = std::string("planning failed: ") + e.what();
  }
  return out;
}

PlanningSession::PlanningSession(ProjectDocument* document, QObject* parent)
    : QObject(parent),
      document_(document),
      debounce_(new QTimer(this)),
      result_(std::make_shared<const planner::SweepResult>()) {
  debounce_->setSingleShot(true);
  debounce_->setInterval(100);
  connect(debounce_, &QTimer::timeout, this, &PlanningSession::rerun);
  connect(document_, &ProjectDocument::projectChanged, this, &PlanningSession::scheduleRerun);
  connect(document_, &ProjectDocument::chosenGridChanged, this, &PlanningSession::chosenChanged);
  // The first run starts from the event loop, once every page is connected.
  QTimer::singleShot(0, this, [this] {
    if (job_id_ == 0) rerun();
  });
}

PlanningSession::~PlanningSession() {
  // Stop every run and wait for it (bounded by one grid): the runs post to this object.
  if (cancel_flag_) cancel_flag_->store(true);
  if (scaling_cancel_) scaling_cancel_->store(true);
  for (QFuture<void>& future : futures_) future.waitForFinished();
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
  if (cancel_flag_) cancel_flag_->store(true);
  if (scaling_cancel_) scaling_cancel_->store(true);
  ++job_id_;
  running_ = true;
  debounce_->start();
  emit sweepStarted(job_id_);
}

void PlanningSession::rerun() {
  debounce_->stop();
  if (cancel_flag_) cancel_flag_->store(true);
  if (scaling_cancel_) scaling_cancel_->store(true);
  futures_.erase(std::remove_if(futures_.begin(), futures_.end(), [](const QFuture<void>& f) { return f.isFinished(); }),
                 futures_.end());

  const quint64 id = ++job_id_;
  auto flag = std::make_shared<std::atomic<bool>>(false);
  cancel_flag_ = flag;
  running_ = true;
  emit sweepStarted(id);

  // Progress and the result are posted to this object, which waits for its
  // runs before it goes away.
  planner::SweepProgress progress = [this, id](std::size_t done, std::size_t total) {
    QMetaObject::invokeMethod(
        this,
        [this, id, done, total] {
          if (id == job_id_ && running_) emit sweepProgress(static_cast<int>(done), static_cast<int>(total));
        },
        Qt::QueuedConnection);
    return true;
  };
  futures_.push_back(QtConcurrent::run(planningPool(), [this, id, project = document_->project(), flag, progress] {
    SweepOutcome outcome = runSweep(project, flag.get(), progress);
    QMetaObject::invokeMethod(
        this, [this, id, outcome = std::move(outcome), project]() mutable { onFinished(id, std::move(outcome), project); },
        Qt::QueuedConnection);
  }));
}

void PlanningSession::cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
  if (scaling_cancel_) scaling_cancel_->store(true);
  if (debounce_->isActive()) {
    // Cancelled before the rerun started: the older result stays.
    debounce_->stop();
    running_ = false;
    emit sweepCancelled();
  }
}

void PlanningSession::onFinished(quint64 job_id, SweepOutcome outcome, const core::Project& project) {
  if (job_id != job_id_) return;  // an older run: dropped
  running_ = false;
  shown_job_id_ = job_id;
  result_ = std::move(outcome.result);
  planned_project_ = project;
  error_ = QString::fromStdString(outcome.error);
  emit sweepFinished(job_id);
  emit chosenChanged();
  if (error_.isEmpty() && !result_->cancelled) startScaling();
}

void PlanningSession::startScaling() {
  const quint64 id = ++scaling_id_;
  auto flag = std::make_shared<std::atomic<bool>>(false);
  scaling_cancel_ = flag;
  scaling_running_ = true;
  emit scalingStarted();
  auto progress = [this, id](int done, int total) {
    QMetaObject::invokeMethod(
        this,
        [this, id, done, total] {
          if (id == scaling_id_) emit scalingProgress(done, total);
        },
        Qt::QueuedConnection);
  };
  futures_.push_back(QtConcurrent::run(planningPool(), [this, id, project = planned_project_, flag, progress] {
    ScalingResult scaling = runScalingSweep(project, flag.get(), progress);
    QMetaObject::invokeMethod(
        this,
        [this, id, scaling = std::move(scaling)] {
          if (id != scaling_id_) return;
          scaling_running_ = false;
          // A cancelled scaling run keeps the older heatmap unless it had none.
          if (!scaling.cancelled || scaling_.cells.empty()) scaling_ = scaling;
          emit scalingFinished();
        },
        Qt::QueuedConnection);
  }));
}

int PlanningSession::chosenIndex() const {
  const core::Project& p = document_->project();
  if (!p.chosen_group_size) return -1;
  // Ranked order: the first match is the better layout.
  for (std::size_t i = 0; i < result_->grids.size(); ++i) {
    const planner::Grid& g = result_->grids[i].grid;
    if (g.group_size == *p.chosen_group_size && (!p.chosen_layout || g.layout == *p.chosen_layout))
      return static_cast<int>(i);
  }
  return -1;
}

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
