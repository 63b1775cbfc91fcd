// The planning state of a window, shared by every page: the grid sweep of
// the project (run off the GUI thread, debounced after edits, cancellable;
// the result of an older run is dropped), the grid the user chose in it,
// and the scaling sweep over world sizes 8..4,096 behind the Grid
// Explorer's heatmap. Pages read it and listen to its signals; only the
// session starts planner runs.
#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <optional>
#include <string>

#include "shardscope/core/project.h"
#include "shardscope/planner/scaling_sweep.h"
#include "shardscope/planner/sweep.h"

class QTimer;

namespace shardscope::app {

class JobTracker;
class ProjectDocument;

// What one sweep run hands back to the GUI thread: a plain value.
struct SweepOutcome {
  // Shared and immutable: handing a 4,096-GPU sweep to the GUI thread (and
  // on to the Plan page's workers) moves a pointer, never copies the plans.
  std::shared_ptr<const planner::SweepResult> result;
  std::string error;  // non-empty: nothing was planned (malformed project, exception)
};

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

  // The best grid before and after the project's calibration last changed
  // (loaded, fitted from a run, or unloaded): what the Grid Explorer shows
  // side by side. Absent until a sweep finished with another calibration
  // than the sweep before it.
  struct BestGrid {
    QString calibration;  // the calibration's source; empty: the default constants
    QString grid;         // describe() of the best grid; empty when no grid fits
    double step_ms = 0.0;
  };
  struct CalibrationChange {
    BestGrid before;
    BestGrid after;
  };
  [[nodiscard]] const std::optional<CalibrationChange>& calibrationChange() const { return calibration_change_; }

  [[nodiscard]] const planner::ScalingResult& scaling() const { return scaling_; }
  [[nodiscard]] bool isScalingRunning() const { return scaling_running_; }
  // Runs the event loop (the GUI stays live) until no sweep is running or
  // scheduled (and, with_scaling, the heatmap's sweep finished too); false
  // after timeout_ms. For the headless modes, tests and benchmarks.
  bool waitUntilIdle(int timeout_ms, bool with_scaling);
  // Debounce between an edit and the rerun (ms).
  void setDebounceInterval(int ms);

 public slots:
  void rerun();                 // start a sweep now (cancels a running one)
  void cancel();                // stop the running sweep (and scaling); the grids done so far are shown
  void choose(int grid_index);  // records result().grids[i] as the project's chosen grid

 signals:
  void sweepStarted(quint64 job_id);  // also when an edit schedules a rerun
  void sweepProgress(int done, int total);
  void sweepFinished(quint64 job_id);  // result() is the new run's
  void sweepCancelled();               // cancelled before a scheduled rerun started
  void chosenChanged();                // planGrid() may differ
  void calibrationChangeShown();       // calibrationChange() has a new before/after
  void scalingStarted();
  void scalingProgress(int done, int total);
  void scalingFinished();

 private:
  void scheduleRerun();
  void onFinished(quint64 job_id, SweepOutcome outcome, const core::Project& project);
  void startScaling();
  void noteBestGrid();  // updates calibrationChange() after a finished sweep
  void onScalingFinished(planner::ScalingResult scaling);

  ProjectDocument* document_;
  QTimer* debounce_;
  JobTracker* sweeps_;  // its ids are the session's job ids
  JobTracker* scaling_jobs_;
  quint64 job_id_ = 0;
  quint64 shown_job_id_ = 0;
  bool running_ = false;

  core::Project project_in_flight_;  // what the current run plans
  std::shared_ptr<const planner::SweepResult> result_;
  core::Project planned_project_;
  QString error_;

  bool scaling_running_ = false;
  planner::ScalingResult scaling_;
  std::optional<BestGrid> last_best_;                  // of the last finished sweep
  std::optional<core::Calibration> last_calibration_;  // the last finished sweep's
  std::optional<CalibrationChange> calibration_change_;
};

}  // namespace shardscope::app
