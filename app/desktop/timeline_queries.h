// The timeline page's store worker: one thread that owns its own read
// connection to the trace store and answers the page's questions, so the GUI
// thread never reads the store.
//
// Two threads, each with its own read connection: one answers windows (and
// opens the run), the other runs the other tasks, so a long search or the
// loading of a run's collective calls never delays a frame.
// Window requests are coalesced: while one runs, a newer request replaces
// the pending one, so a fast drag costs one query per finished query, not one
// per mouse event; an answer older than the newest one delivered is dropped.
// Other tasks (the run's overview, collective calls, steps, search, range
// totals, building summaries) run in order between window requests and are
// dropped when the page opens another run. Answers arrive on the GUI thread.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/timeline_window.h"

namespace shardscope::app {

// What the page needs to know about a run before drawing it.
struct TimelineOverview {
  core::store::RunRecord run;
  std::vector<int> ranks;  // ranks with spans, ascending
  std::int64_t t0_ns = 0;  // earliest start and latest end over every rank
  std::int64_t t1_ns = 0;
  std::int64_t spans = 0;
  bool summaries = false;                                   // far-zoom summaries are stored for the run
  std::shared_ptr<const core::store::StringTable> strings;  // the store's strings when it was opened
};

// What a worker task sees: the open store, its strings, the run, and a
// cancel flag set when the page opens another run or cancels tasks.
struct TimelineContext {
  const core::store::TraceStore& store;
  const core::store::StringTable& strings;
  core::store::RunId run;
  const std::atomic<bool>* cancel;
  // Reports progress to the GUI thread (TimelineQueries::progress).
  std::function<void(int done, int total)> progress;
};

class TimelineQueries : public QObject {
  Q_OBJECT

 public:
  explicit TimelineQueries(QObject* parent = nullptr);
  // Cancels what runs and joins the worker (bounded by one store query).
  ~TimelineQueries() override;

  // Reads run `run` of the store at `path` from now on; pending work for the
  // previous run is dropped and its running task cancelled. The overview
  // arrives as opened(), or failed().
  void open(const QString& path, qint64 run);
  // Asks for a window of the open run (request.run is set to it); returns its generation number.
  quint64 requestWindow(profiler::TimelineRequest request);
  [[nodiscard]] quint64 latestRequested() const { return requested_; }

  // Runs task(context) on the worker after the work queued before it; `done`
  // gets its result on the GUI thread unless another run was opened since.
  template <class T>
  void run(std::function<core::Result<T>(const TimelineContext&)> task, std::function<void(core::Result<T>)> done);
  // Cancels the running task and drops queued ones (window requests stay).
  void cancelTasks();
  // Nothing queued or running (tests wait on this with QTRY_VERIFY).
  [[nodiscard]] bool idle() const;

 signals:
  void opened(const shardscope::app::TimelineOverview& overview);
  // `query_us`: the store query and level-of-detail merge, on the worker.
  void windowReady(quint64 generation, std::shared_ptr<const profiler::TimelineWindow> window, qint64 query_us);
  void failed(const QString& message);
  void progress(int done, int total);

 private:
  struct Worker;
  using Task = std::function<void(const TimelineContext&)>;
  void enqueue(Task task);
  void windowLoop();
  void taskLoop();
  void deliver(quint64 epoch, std::function<void()> f);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::optional<std::pair<QString, qint64>> pending_open_;
  std::optional<std::pair<quint64, profiler::TimelineRequest>> pending_window_;
  std::deque<std::pair<quint64, Task>> tasks_;  // (epoch, task)
  bool busy_ = false;                           // the window thread is working
  bool task_busy_ = false;                      // the task thread is working
  QString path_;                                // the open run, for the task thread's connection
  qint64 run_id_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  std::atomic<quint64> epoch_{0};  // bumped by open(): answers of older epochs are dropped
  quint64 requested_ = 0;          // GUI thread: newest window generation asked for
  quint64 delivered_ = 0;          // GUI thread: newest window generation shown
  std::thread thread_;
  std::thread task_thread_;
};

template <class T>
void TimelineQueries::run(std::function<core::Result<T>(const TimelineContext&)> task,
                          std::function<void(core::Result<T>)> done) {
  const quint64 epoch = epoch_.load();
  enqueue([this, epoch, task = std::move(task), done = std::move(done)](const TimelineContext& context) {
    auto result = std::make_shared<core::Result<T>>(task(context));
    deliver(epoch, [done, result] { done(std::move(*result)); });
  });
}

}  // namespace shardscope::app
