// The engine's use of the CUPTI tracer (private to shardscope_cuda): start it
// once per process, push the engine's phase ids as external correlation on
// each rank's thread, and at the end turn every activity record into spans of
// the rank that caused it (decoded from the external id, else by device),
// with the tracer's figures (records, drops, buffers).
#pragma once

#include <memory>
#include <vector>

#include "cuda_rank.h"
#include "shardscope/core/result.h"
#include "shardscope/profiler/trace/engine_run_config.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler::cuda {

class CuptiTracer;

class CuptiSession {
 public:
  CuptiSession();
  CuptiSession(const CuptiSession&) = delete;
  CuptiSession& operator=(const CuptiSession&) = delete;
  ~CuptiSession();

  [[nodiscard]] core::Status start();
  [[nodiscard]] bool started() const { return tracer_ != nullptr; }
  // Push/pop of the engine's phase ids on the calling thread (no-ops until started).
  [[nodiscard]] PhaseHooks hooks();
  // Flushes and stops the tracer; its records become spans of their ranks in
  // `rec` (rank_of_device[d]: the rank on device d, -1 none) and its figures go into `figures`.
  [[nodiscard]] core::Status finish(TraceRecorder& rec, const std::vector<int>& rank_of_device, GpuTracing& figures);

 private:
  std::unique_ptr<CuptiTracer> tracer_;
};

}  // namespace shardscope::profiler::cuda
