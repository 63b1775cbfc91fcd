#include "job_tracker.h"

#include <QThread>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <exception>

namespace shardscope::app {

// One job's state, shared by the tracker and the pool thread that runs it.
struct JobState {
  quint64 id = 0;
  std::atomic<bool> cancel{false};
  // The latest progress, done in the high 32 bits and total in the low ones,
  // and whether a report is on its way to the GUI thread.
  std::atomic<std::uint64_t> progress{0};
  std::atomic<bool> progress_posted{false};
};

void backgroundThreadPriority() {
#ifdef __linux__
  // Linux keeps a nice value per thread: this thread's id, not the process's.
  // Ten below where it is (a desktop started with `nice` keeps its order), at most 19;
  // once lowered, a pool thread stays there for its next jobs.
  thread_local bool lowered = false;
  if (lowered) return;
  lowered = true;
  const auto self = static_cast<id_t>(::gettid());
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, self);
  if (errno != 0) return;
  setpriority(PRIO_PROCESS, self, std::min(now + 10, 19));
#endif
}

QThreadPool* planningPool() {
  static QThreadPool* pool = [] {
    auto* p = new QThreadPool;  // lives as long as the process (jobs are waited for by their trackers)
    p->setMaxThreadCount(std::max(1, QThread::idealThreadCount()));
    return p;
  }();
  return pool;
}

JobContext::JobContext(JobTracker* tracker, std::shared_ptr<JobState> state)
    : tracker_(tracker), state_(std::move(state)) {}

quint64 JobContext::id() const { return state_->id; }

const std::atomic<bool>* JobContext::cancelFlag() const { return &state_->cancel; }

bool JobContext::isCancelled() const { return state_->cancel.load(); }

void JobContext::reportProgress(int done, int total) const { tracker_->postProgress(state_, done, total); }

JobTracker::JobTracker(QThreadPool* pool, QObject* parent) : QObject(parent), pool_(pool) {}

JobTracker::~JobTracker() {
  // The jobs post to this tracker: stop them all first, then wait.
  for (Running& job : jobs_) job.state->cancel.store(true);
  for (Running& job : jobs_) job.future.waitForFinished();
}

quint64 JobTracker::supersede() {
  cancel();
  current_.reset();
  running_ = false;
  return ++current_id_;
}

void JobTracker::cancel() {
  if (current_) current_->cancel.store(true);
}

quint64 JobTracker::launch(std::function<Outcome(JobContext&)> job) {
  supersede();
  std::erase_if(jobs_, [](const Running& r) { return r.future.isFinished(); });
  auto state = std::make_shared<JobState>();
  state->id = current_id_;
  current_ = state;
  running_ = true;
  QFuture<void> future = QtConcurrent::run(pool_, [this, state, job = std::move(job)] {
    backgroundThreadPriority();
    JobContext context(this, state);
    Outcome outcome;
    try {
      outcome = job(context);
    } catch (const std::exception& e) {
      outcome.error = e.what();
    } catch (...) {
      outcome.error = std::string();
    }
    // The tracker waits for this job before it goes away, so it is still here.
    QMetaObject::invokeMethod(
        this, [this, state, outcome = std::move(outcome)]() mutable { finish(state, std::move(outcome)); },
        Qt::QueuedConnection);
  });
  jobs_.push_back({state, std::move(future)});
  return state->id;
}

void JobTracker::finish(const std::shared_ptr<JobState>& state, Outcome outcome) {
  if (state->id != current_id_) {  // an older job: dropped
    emit settled(state->id, false);
    return;
  }
  running_ = false;
  current_.reset();
  if (outcome.error)
    emit failed(state->id, QString::fromStdString(*outcome.error));
  else
    outcome.deliver();
  emit settled(state->id, true);
}

void JobTracker::postProgress(const std::shared_ptr<JobState>& state, int done, int total) {
  state->progress.store(static_cast<std::uint64_t>(static_cast<std::uint32_t>(done)) << 32 |
                        static_cast<std::uint32_t>(total));
  if (state->progress_posted.exchange(true)) return;  // the one on its way will carry this report
  QMetaObject::invokeMethod(
      this,
      [this, state] {
        state->progress_posted.store(false);
        const std::uint64_t latest = state->progress.load();
        if (state->id != current_id_ || !running_) return;
        emit progress(state->id, static_cast<int>(static_cast<std::uint32_t>(latest >> 32)),
                      static_cast<int>(static_cast<std::uint32_t>(latest)));
      },
      Qt::QueuedConnection);
}

}  // namespace shardscope::app
