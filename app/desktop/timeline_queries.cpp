#include "timeline_queries.h"

#include <QMetaObject>
#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

#include "job_tracker.h"

namespace shardscope::app {

namespace st = core::store;

namespace {

core::Result<TimelineOverview> readOverview(const st::TraceStore& store, st::RunId run) {
  TimelineOverview o;
  auto record = store.run(run);
  if (!record) return record.error();
  o.run = std::move(*record);
  auto extents = store.spanExtents(run);
  if (!extents) return extents.error();
  o.t0_ns = std::numeric_limits<std::int64_t>::max();
  o.t1_ns = std::numeric_limits<std::int64_t>::min();
  for (const auto& e : *extents) {
    if (e.span_count <= 0) continue;
    o.ranks.push_back(e.rank);
    o.spans += e.span_count;
    o.t0_ns = std::min(o.t0_ns, e.min_start_ns);
    o.t1_ns = std::max(o.t1_ns, e.max_end_ns);
  }
  if (o.ranks.empty()) {
    o.t0_ns = 0;
    o.t1_ns = 1;
  } else if (o.t1_ns <= o.t0_ns) {
    o.t1_ns = o.t0_ns + 1;  // a run of instants only
  }
  auto summaries = profiler::hasTimelineSummaries(store, run);
  o.summaries = summaries && *summaries;
  return o;
}

}  // namespace

TimelineQueries::TimelineQueries(QObject* parent) : QObject(parent) {
  thread_ = std::thread([this] { windowLoop(); });
  task_thread_ = std::thread([this] { taskLoop(); });
}

TimelineQueries::~TimelineQueries() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
    cancel_->store(true);
  }
  wake_.notify_all();
  thread_.join();
  task_thread_.join();
}

void TimelineQueries::open(const QString& path, qint64 run) {
  {
    const std::lock_guard lock(mutex_);
    epoch_.fetch_add(1);
    cancel_->store(true);
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    pending_open_ = std::pair{path, run};
    path_ = path;
    run_id_ = run;
    pending_window_.reset();
    tasks_.clear();
  }
  delivered_ = requested_;  // answers for the old run are stale
  wake_.notify_all();
}

quint64 TimelineQueries::requestWindow(profiler::TimelineRequest request) {
  const quint64 generation = ++requested_;
  {
    const std::lock_guard lock(mutex_);
    pending_window_ = std::pair{generation, std::move(request)};
  }
  wake_.notify_all();
  return generation;
}

void TimelineQueries::enqueue(Task task) {
  {
    const std::lock_guard lock(mutex_);
    tasks_.emplace_back(epoch_.load(), std::move(task));
  }
  wake_.notify_all();
}

void TimelineQueries::cancelTasks() {
  const std::lock_guard lock(mutex_);
  cancel_->store(true);
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  tasks_.clear();
}

bool TimelineQueries::idle() const {
  const std::lock_guard lock(mutex_);
  return !busy_ && !task_busy_ && !pending_open_ && !pending_window_ && tasks_.empty();
}

void TimelineQueries::deliver(quint64 epoch, std::function<void()> f) {
  QMetaObject::invokeMethod(
      this,
      [this, epoch, f = std::move(f)] {
        if (epoch == epoch_.load()) f();
      },
      Qt::QueuedConnection);
}

void TimelineQueries::windowLoop() {
  std::optional<st::TraceStore> store;
  st::StringTable strings;
  st::RunId run{};
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || pending_open_ || pending_window_; });
    if (stop_) return;
    const quint64 epoch = epoch_.load();
    busy_ = true;
    if (pending_open_) {
      const auto [path, id] = *std::exchange(pending_open_, std::nullopt);
      lock.unlock();
      store.reset();
      strings = {};
      run = st::RunId{id};
      auto store_file = st::openStore(path.toStdString(), st::OpenMode::ReadOnly);
      core::Result<TimelineOverview> overview = core::Error{""};
      if (store_file) {
        store.emplace(std::move(*store_file));
        auto table = store->strings();
        overview = table ? readOverview(*store, run) : core::Result<TimelineOverview>(table.error());
        if (table) strings = std::move(*table);
        if (overview) overview->strings = std::make_shared<const st::StringTable>(strings);
      } else {
        overview = store_file.error();
      }
      if (!overview) store.reset();
      deliver(epoch, [this, overview = std::move(overview)] {
        if (overview) {
          emit opened(*overview);
        } else {
          emit failed(QString::fromStdString(overview.error().message));
        }
      });
    } else if (pending_window_) {
      auto pending = *std::exchange(pending_window_, std::nullopt);
      const quint64 generation = pending.first;  // a variable, not a binding: lambdas capture it
      profiler::TimelineRequest request = std::move(pending.second);
      lock.unlock();
      request.run = run;  // the view asks for windows; the worker knows the run
      if (store) {
        const auto began = std::chrono::steady_clock::now();
        auto window = profiler::timelineWindow(*store, strings, request);
        const auto us =
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - began).count();
        if (window) {
          auto shared = std::make_shared<const profiler::TimelineWindow>(std::move(*window));
          deliver(epoch, [this, generation, shared, us] {
            if (generation <= delivered_) return;  // an older answer than the one shown
            delivered_ = generation;
            emit windowReady(generation, shared, us);
          });
        } else {
          deliver(epoch, [this, message = window.error().message] { emit failed(QString::fromStdString(message)); });
        }
      }
    }
    lock.lock();
    busy_ = false;
  }
}

void TimelineQueries::taskLoop() {
  // Background priority, as the planning pool's jobs: a search or the loading
  // of a run's calls yields a shared core to the GUI thread.
  backgroundThreadPriority();
  std::optional<st::TraceStore> store;
  st::StringTable strings;
  quint64 opened_epoch = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
    if (stop_) return;
    auto [task_epoch, task] = std::move(tasks_.front());
    tasks_.pop_front();
    const quint64 epoch = epoch_.load();
    if (task_epoch != epoch) continue;  // queued for a run no longer shown
    const std::shared_ptr<std::atomic<bool>> cancel = cancel_;
    const QString path = path_;
    const st::RunId run{run_id_};
    task_busy_ = true;
    lock.unlock();
    if (opened_epoch != epoch) {  // this thread's own connection to the run's store
      store.reset();
      strings = {};
      auto opened = st::openStore(path.toStdString(), st::OpenMode::ReadOnly);
      if (opened) {
        store.emplace(std::move(*opened));
        if (auto table = store->strings()) strings = std::move(*table);
      } else {
        deliver(epoch, [this, message = opened.error().message] { emit failed(QString::fromStdString(message)); });
      }
      opened_epoch = epoch;
    }
    if (store) {
      const TimelineContext context{*store, strings, run, cancel.get(), [this, epoch](int done, int total) {
                                      deliver(epoch, [this, done, total] { emit progress(done, total); });
                                    }};
      task(context);
    }
    lock.lock();
    task_busy_ = false;
  }
}

}  // namespace shardscope::app
