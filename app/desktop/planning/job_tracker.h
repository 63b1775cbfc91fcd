// Background work of the desktop, one JobTracker per kind of job (the grid
// sweep, the scaling sweep, pricing a plan, and later profiling, imports or
// calibration). start() runs a job on a pool thread under a fresh id and
// cancels the one before; the job's progress comes back to the GUI thread,
// coalesced; the result or error of a job that is no longer the current one
// is dropped; the GUI thread never waits on a job, except when the tracker
// goes away: it cancels its jobs and waits for them, as they post to it.
//
//   jobs_ = new JobTracker(planningPool(), this);
//   connect(jobs_, &JobTracker::progress, this, &Page::showProgress);
//   connect(jobs_, &JobTracker::failed, this, &Page::showError);
//   jobs_->start([path](JobContext& job) { return core::loadProject(path); },  // a core::Result: errors to failed()
//                [this](core::Project project) { show(std::move(project)); });
#pragma once

#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "shardscope/core/result.h"

class QThreadPool;

namespace shardscope::app {

// The thread pool every background planning job of the desktop runs on.
// Each job runs at background priority (backgroundThreadPriority), so it uses
// every spare core, the GUI thread wins a shared core, and the window stays
// responsive while a 4,096-GPU sweep runs.
[[nodiscard]] QThreadPool* planningPool();

// Lowers the calling thread (and the threads it starts) by 10 nice levels
// (at most to 19) on Linux, once per thread; from a desktop at nice 0:
// a core it shares with the GUI thread goes ~90 % to the GUI, yet it still
// progresses beside a build or a data loader that keeps every core busy, as
// SCHED_IDLE (~0.3 % of a core then) would not. Elsewhere it does nothing.
void backgroundThreadPriority();

class JobTracker;
struct JobState;

// What a running job sees of its tracker: its id, its cancel flag (for the
// planner's `const std::atomic<bool>* cancel` parameters) and a progress
// report that any thread may call.
class JobContext {
 public:
  JobContext(JobTracker* tracker, std::shared_ptr<JobState> state);

  [[nodiscard]] quint64 id() const;
  [[nodiscard]] const std::atomic<bool>* cancelFlag() const;
  [[nodiscard]] bool isCancelled() const;
  // Reaches the GUI thread as JobTracker::progress while the job is current;
  // reports made before the GUI thread took the last one are merged into it.
  void reportProgress(int done, int total) const;

 private:
  JobTracker* tracker_;
  std::shared_ptr<JobState> state_;
};

class JobTracker : public QObject {
  Q_OBJECT

 public:
  explicit JobTracker(QThreadPool* pool, QObject* parent = nullptr);
  // Cancels every job still running and waits for it (bounded by the work a
  // job does between two looks at its cancel flag).
  ~JobTracker() override;

  // Runs work(JobContext&) on the pool under a fresh id (the current job is
  // cancelled and its result will be dropped) and returns the id. On the GUI
  // thread, while the job is still the current one: on_result(value), or
  // failed() when the work threw or returned a core::Result holding an error.
  // A cancelled job still delivers whatever its work returned.
  template <class Work, class OnResult>
  quint64 start(Work work, OnResult on_result);

  // Cancels the current job and makes a new id current without starting
  // anything: a result still on its way is dropped. Returns the new id.
  quint64 supersede();
  // Asks the current job to stop; its result (the work done so far) still comes.
  void cancel();

  [[nodiscard]] quint64 currentId() const { return current_id_; }
  // The current job has not delivered its result or error yet.
  [[nodiscard]] bool isRunning() const { return running_; }

 signals:
  void progress(quint64 job_id, int done, int total);
  // `message`: the exception's what() or the Result's error; empty for an
  // exception that is not a std::exception.
  void failed(quint64 job_id, const QString& message);
  // On the GUI thread once a job's work has returned and its outcome was
  // handled: `handed_over` when on_result or failed() ran, false when it was
  // dropped (a stale job). Every progress report it made came before.
  void settled(quint64 job_id, bool handed_over);

 private:
  friend class JobContext;

  // What a job hands back to the GUI thread: a delivery of its value, or an error.
  struct Outcome {
    std::function<void()> deliver;
    std::optional<std::string> error;
  };
  template <class T>
  struct IsResult : std::false_type {};
  template <class T>
  struct IsResult<core::Result<T>> : std::true_type {};

  quint64 launch(std::function<Outcome(JobContext&)> job);
  void finish(const std::shared_ptr<JobState>& state, Outcome outcome);
  void postProgress(const std::shared_ptr<JobState>& state, int done, int total);

  struct Running {
    std::shared_ptr<JobState> state;
    QFuture<void> future;
  };

  QThreadPool* pool_;
  quint64 current_id_ = 0;
  bool running_ = false;
  std::shared_ptr<JobState> current_;  // the current job's state while it runs
  std::vector<Running> jobs_;          // outstanding jobs, waited for on destruction
};

template <class Work, class OnResult>
quint64 JobTracker::start(Work work, OnResult on_result) {
  using Value = std::decay_t<std::invoke_result_t<Work&, JobContext&>>;
  return launch([work = std::move(work), on_result = std::move(on_result)](JobContext& job) mutable -> Outcome {
    auto value = std::make_shared<Value>(work(job));
    if constexpr (IsResult<Value>::value) {
      if (!value->ok()) return {{}, value->error().message};
      return {[on_result, value] { on_result(std::move(*value).value()); }, std::nullopt};
    } else {
      return {[on_result, value] { on_result(std::move(*value)); }, std::nullopt};
    }
  });
}

}  // namespace shardscope::app
