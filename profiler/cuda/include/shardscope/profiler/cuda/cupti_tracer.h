// The live CUPTI tracer (runs only on a GPU machine; compiles anywhere CUPTI's
// headers are): activity buffers from a small pool, the record kinds the
// engine needs (kernels, copies, memsets, runtime and driver API calls,
// synchronizations, NVTX ranges, external correlation, CUPTI's overhead),
// every completed buffer fed into an ActivityCollector (cupti_records.h),
// the engine's phase ids as external correlation, and the clock mapping onto
// the engine's steady clock. One tracer per process: CUPTI has one set of
// activity callbacks. docs/engine-cuda.md#cupti-tracing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/profiler/cuda/cupti_records.h"

namespace shardscope::profiler::cuda {

struct CuptiTracerOptions {
  std::size_t buffer_bytes = std::size_t{8} << 20;  // one activity buffer (a multiple of 8, at least 64 KiB)
  std::size_t max_buffers = 64;                     // buffers alive at once; beyond, CUPTI drops records (counted)
  // Always on: CONCURRENT_KERNEL, MEMCPY, MEMSET, EXTERNAL_CORRELATION, and
  // RUNTIME and DRIVER (CUPTI emits external correlation only with API records).
  bool synchronization = true;  // SYNCHRONIZATION records
  bool overhead = true;         // OVERHEAD records
  // MARKER records of NVTX ranges. CUPTI sees NVTX only as the process's NVTX
  // injection: start() sets NVTX_INJECTION64_PATH to the loaded libcupti when
  // it is unset, which reaches every NVTX user that has not made its first
  // NVTX call yet (libraries that did, e.g. NCCL at init, stay unrecorded
  // unless the variable was set before the process started).
  bool nvtx = true;
  std::uint32_t flush_period_ms = 0;  // cuptiActivityFlushPeriod; 0: CUPTI hands over full buffers only
};

struct CuptiTracerStats {
  std::uint64_t buffers_allocated = 0;  // distinct buffers allocated (returned ones are reused)
  std::uint64_t buffers_requested = 0;  // buffers handed to CUPTI
  std::uint64_t buffers_refused = 0;    // requests declined at max_buffers (CUPTI then drops records)
  std::uint64_t buffer_errors = 0;      // buffers whose walk stopped at an invalid record
  std::uint64_t phase_errors = 0;       // external-id pushes or pops CUPTI refused
  // Completed buffers, bytes delivered, records (per kind, unknown kinds),
  // dropped records: cumulative over the tracer's life.
  CollectorStats collector;
  ClockMapping clock;                     // CUPTI ns -> steady ns; has_stop once stopped
  std::int64_t clock_uncertainty_ns = 0;  // half the narrowest steady-clock bracket around a CUPTI timestamp
  std::string nvtx_injection;             // NVTX_INJECTION64_PATH as found or set; "" none
  std::uint32_t cupti_version = 0;        // libcupti's API version (cuptiGetVersion)
  std::vector<std::string> notes;         // optional record kinds CUPTI refused, and why
};

class CuptiTracer {
 public:
  // Starts tracing this process. Errors: another CuptiTracer already runs
  // (Internal); bad options (Usage); CUPTI unavailable, a libcupti of another
  // major version, or another profiler owning CUPTI (Io, naming the CUPTI
  // call and CUPTI's description of the failure).
  [[nodiscard]] static core::Result<std::unique_ptr<CuptiTracer>> start(const CuptiTracerOptions& options = {});

  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;
  ~CuptiTracer();  // stops (errors ignored)

  // External correlation (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) on the
  // calling thread: every CUDA call until the matching pop, and what it
  // launches, carries `external_id`. Failures are counted (stats().phase_errors).
  void pushPhase(std::uint64_t external_id);
  void popPhase();

  // Hands every buffer CUPTI holds to the collector, incomplete records
  // included (cuptiActivityFlushAll, forced): synchronize the devices first
  // so that every launched kernel has its timestamps.
  [[nodiscard]] core::Status flush();
  // Everything delivered so far as one finished trace (flushing first while
  // running); the tracer then collects afresh.
  [[nodiscard]] core::Result<ActivityTrace> take();
  [[nodiscard]] CuptiTracerStats stats() const;
  // Disables the record kinds, flushes, samples the clock a second time and
  // lets another tracer start. take() and stats() still work afterwards.
  [[nodiscard]] core::Status stop();
  [[nodiscard]] bool running() const;

  struct Impl;

 private:
  explicit CuptiTracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// NVTX ranges on the calling thread (recorded by CUPTI as MARKER activities
// while it is the NVTX injection, see CuptiTracerOptions::nvtx). NVTX looks
// for its injection once, at its first call: call these only after start(),
// or they stay unrecorded for the life of the process.
void nvtxPush(const char* message);
void nvtxPop();

class NvtxRange {
 public:
  explicit NvtxRange(const char* message) { nvtxPush(message); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
  ~NvtxRange() { nvtxPop(); }
};

}  // namespace shardscope::profiler::cuda
