// A fixed pool for the kernels: one job at a time, chunks handed out through an
// atomic counter so that fast threads take more of them, the caller working too.
#include "shardscope/profiler/engine/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace shardscope::profiler {

struct ThreadPool::State {
  unsigned size = 1;
  std::vector<std::thread> workers;

  std::mutex call_mutex;  // serializes parallelFor callers from different threads

  std::mutex m;
  std::condition_variable wake;
  std::condition_variable idle;
  bool stop = false;
  bool active = false;           // a job is open for workers to join
  std::uint64_t generation = 0;  // bumped per job so a worker joins each job at most once
  unsigned inside = 0;           // workers that joined the current job and have not left it

  // The current job; written by the caller under m before workers can see it.
  const std::function<void(std::size_t, std::size_t)>* body = nullptr;
  std::size_t n = 0;
  std::size_t chunk = 1;
  std::size_t chunks = 0;
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;  // first exception thrown by a body (guarded by m)

  void runChunks() {
    for (;;) {
      const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= chunks) return;
      const std::size_t b = k * chunk;
      const std::size_t e = std::min(n, b + chunk);
      try {
        (*body)(b, e);
      } catch (...) {
        std::lock_guard lock(m);
        if (!error) error = std::current_exception();
      }
    }
  }

  void workerLoop() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(m);
        wake.wait(lock, [&] { return stop || (active && generation != seen); });
        if (stop) return;
        seen = generation;
        ++inside;
      }
      runChunks();
      {
        std::lock_guard lock(m);
        if (--inside == 0) idle.notify_all();
      }
    }
  }
};

ThreadPool::ThreadPool(unsigned threads) : s_(std::make_unique<State>()) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  s_->size = threads;
  s_->workers.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) s_->workers.emplace_back([st = s_.get()] { st->workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(s_->m);
    s_->stop = true;
  }
  s_->wake.notify_all();
  for (auto& t : s_->workers) t.join();
}

unsigned ThreadPool::size() const { return s_->size; }

void ThreadPool::parallelFor(std::size_t n, std::size_t grain,
                             const std::function<void(std::size_t, std::size_t)>& body) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  // About 4 chunks per thread balances uneven bags without much counter traffic.
  const std::size_t target = (n + 4 * std::size_t{s_->size} - 1) / (4 * std::size_t{s_->size});
  const std::size_t chunk = std::max(grain, target);
  if (s_->workers.empty() || chunk >= n) {
    body(0, n);
    return;
  }
  std::lock_guard call(s_->call_mutex);
  State& s = *s_;
  {
    std::lock_guard lock(s.m);
    s.body = &body;
    s.n = n;
    s.chunk = chunk;
    s.chunks = (n + chunk - 1) / chunk;
    s.next.store(0, std::memory_order_relaxed);
    s.error = nullptr;
    s.active = true;
    ++s.generation;
  }
  s.wake.notify_all();
  s.runChunks();
  std::exception_ptr error;
  {
    // Every chunk is claimed; the workers that claimed some are still inside.
    std::unique_lock lock(s.m);
    s.active = false;
    s.idle.wait(lock, [&] { return s.inside == 0; });
    s.body = nullptr;
    error = s.error;
    s.error = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace shardscope::profiler
