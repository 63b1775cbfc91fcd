// A fixed pool of worker threads for the engine's kernels: parallelFor splits
// [0, n) into chunks of at least `grain` and runs them on the workers and the
// calling thread; it returns when every chunk is done.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace shardscope::profiler {

class ThreadPool {
 public:
  // threads == 0: std::thread::hardware_concurrency(). threads == 1: no workers, runs inline.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  [[nodiscard]] unsigned size() const;  // threads that run chunks, the caller included

  // body(begin, end) over disjoint chunks covering [0, n). Not reentrant: a
  // body must not call parallelFor on the same pool.
  void parallelFor(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& body);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace shardscope::profiler
