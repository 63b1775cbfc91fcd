// The planning state of a window, shared by every page: the grid sweep of
// the project (run off the GUI thread, debounced after edits, cancellable;
// the result of an older run is dropped), the grid the user chose in it,
// and the scaling sweep over world sizes 8..4,096 behind the Grid
// Explorer's heatmap. Pages read it and listen to its signals; only the
// session starts planner runs.
#pragma once

#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

#include "shardscope/core/project.h"
#include "shardscope/planner/sweep.h"

class QThreadPool;
class QTimer;

namespace shardscope::app {

class ProjectDocument;

// What one sweep run hands back to the GUI thread: a plain value.
struct SweepOutcome {
  // Shared and immutable: handing a 4,096-GPU sweep to the GUI thread (and
  // on to the Plan page's workers) moves a pointer, never copies the plans.
  std::shared_ptr<const planner::SweepResult> result;
  std::string error;  // non-empty: nothing was planned (malformed project, exception)
};

// Predicted throughput per GPU over world size x sharding group size, each
// cell the best layout that fits (scaling_efficiency: per-GPU throughput
// over the best per-GPU throughput of the whole table).
struct ScalingCell {
  std::uint32_t world_size = 0;
  std::uint32_t group_size = 0;
  core::RankLayout layout = core::RankLayout::Strided;
  bool planned = false;  // M divides N and the grid was planned
  bool fits = false;
  double samples_per_second_per_gpu = 0;
  double step_ms = 0;
};

struct ScalingResult {
  std::vector<std::uint32_t> world_sizes;   // columns, ascending
  std::vector<std::uint32_t> group_sizes;   // rows, ascending
  std::vector<ScalingCell> cells;           // row-major: group_sizes x world_sizes
  bool cancelled = false;
  std::string error;
  [[nodiscard]] const ScalingCell* at(std::size_t m_index, std::size_t n_index) const {
    const std::size_t i = m_index * world_sizes.size() + n_index;
    return i < cells.size() ? &cells[i] : nullptr;
  }
  [[nodiscard]] double bestPerGpu() const;
};

// The thread pool every background planning job of the desktop runs on.
// Its threads run at idle priority (SCHED_IDLE on Linux), so they use every
// spare core but never take a core from the GUI thread: the window stays
// responsive while a 4,096-GPU sweep runs.
[[nodiscard]] QThreadPool* planningPool();

// How the project asks to be swept (sync interval, ...): the one place the
// desktop turns a project into planner options.
[[nodiscard]] planner::SweepOptions sweepOptionsOf(const core::Project& project);

// The world sizes of the heatmap for a cluster: powers of two from 8 to
// 4,096, plus the cluster's own N when it is not one of them.
[[nodiscard]] std::vector<std::uint32_t> scalingWorldSizes(const core::ClusterSpec& cluster);
// Runs the scaling sweep (pool thread); progress(done, total) per world size.
[[nodiscard]] ScalingResult runScalingSweep(const core::Project& project, const std::atomic<bool>* cancel,
                                            const std::function<void(int, int)>& progress = {});

class PlanningSession : public QObject {
  Q_OBJECT

 public:
  explicit PlanningSession(ProjectDocument* document, QObject* parent = nullptr);
  ~PlanningSession() override;

  [[nodiscard]] ProjectDocument* document() const { return document_; }
  // The shown sweep and the project it was planned from (edits since then
  // are being planned when isRunning()).
  [[nodiscard]] const planner::SweepResult& result() const { return *result_; }
  // The same result, shared: workers keep it alive while they read it.
  [[nodiscard]] std::shared_ptr<const planner::SweepResult> resultPtr() const { return result_; }
  [[nodiscard]] const core::Project& plannedProject() const { return planned_project_; }
  [[nodiscard]] const QString& error() const { return error_; }
  [[nodiscard]] bool isRunning() const { return running_; }
  [[nodiscard]] quint64 currentJobId() const { return job_id_; }
  [[nodiscard]] quint64 shownJobId() const { return shown_job_id_; }
  [[nodiscard]] bool hasResult() const { return shown_job_id_ != 0; }

  // The grid the project's choice names in result() (M, and the layout when
  // one was chosen, else the better-ranked layout); -1 when there is no
  // choice or it is not in the result.
  [[nodiscard]] int chosenIndex() const;
  // The grid the Plan and Export pages show: the chosen one, else the best
  // fitting grid, else nullptr.
  [[nodiscard]] const planner::GridResult* planGrid() const;
  [[nodiscard]] bool planGridIsChosen() const { return chosenIndex() >= 0; }
  // "M = 8 × R = 8 (strided), 12.34 ms per step" for the status bar and reports.
  [[nodiscard]] static QString describe(const planner::GridResult& grid);

  [[nodiscard]] const ScalingResult& scaling() const { return scaling_; }
  [[nodiscard]] bool isScalingRunning() const { return scaling_running_; }
  // Runs the event loop (the GUI stays live) until no sweep is running or
  // scheduled (and, with_scaling, the heatmap's sweep finished too); false
  // after timeout_ms. For the headless modes, tests and benchmarks.
  bool waitUntilIdle(int timeout_ms, bool with_scaling);
  // Debounce between an edit and the rerun (ms).
  void setDebounceInterval(int ms);

 public slots:
  void rerun();           // start a sweep now (cancels a running one)
  void cancel();          // stop the running sweep (and scaling); the grids done so far are shown
  void choose(int grid_index);  // records result().grids[i] as the project's chosen grid

 signals:
  void sweepStarted(quint64 job_id);   // also when an edit schedules a rerun
  void sweepProgress(int done, int total);
  void sweepFinished(quint64 job_id);  // result() is the new run's
  void sweepCancelled();               // cancelled before a scheduled rerun started
  void chosenChanged();                // planGrid() may differ
  void scalingStarted();
  void scalingProgress(int done, int total);
  void scalingFinished();

 private:
  void scheduleRerun();
  void onFinished(quint64 job_id, SweepOutcome outcome, const core::Project& project);
  void startScaling();

  ProjectDocument* document_;
  QTimer* debounce_;
  quint64 job_id_ = 0;
  quint64 shown_job_id_ = 0;
  bool running_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  std::vector<QFuture<void>> futures_;  // outstanding runs, waited for on destruction

  std::shared_ptr<const planner::SweepResult> result_;
  core::Project planned_project_;
  QString error_;

  quint64 scaling_id_ = 0;
  bool scaling_running_ = false;
  std::shared_ptr<std::atomic<bool>> scaling_cancel_;
  ScalingResult scaling_;
};

}  // namespace shardscope::app
