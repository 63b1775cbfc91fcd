// One rank of the distributed engine as its driver runs it, whichever backend
// does the work: the CPU backend (engine_mpi's RankEngine) or the GPU one
// (cuda_rank_stepper.h). The driver owns the process group (MPI), the
// agreement on cancel between steps, and rank 0's writing of the run.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "shardscope/profiler/engine/workload.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler {

class RankStepper {
 public:
  RankStepper() = default;
  RankStepper(const RankStepper&) = delete;
  RankStepper& operator=(const RankStepper&) = delete;
  virtual ~RankStepper() = default;

  // One training step; `measured` >= 0 is recorded as that step, -1 is a
  // warm-up. Throws std::runtime_error (or bad_alloc) on failure: peers are
  // then blocked in a collective and the driver aborts the job.
  virtual void step(std::uint64_t global_step, std::int64_t measured, bool sync) = 0;
  virtual void resetCounters() = 0;
  // Per-(rank, table) totals over the measured steps, into the recorder
  // (and, on GPUs, the tracer's records of this rank).
  virtual void writeTableStats() = 0;
  virtual TraceRecorder& recorder() = 0;
  // This rank's line of shardscope.engine-summary/1.
  [[nodiscard]] virtual nlohmann::ordered_json summary() const = 0;
  [[nodiscard]] virtual const WorkloadGenerator& workload() const = 0;
};

}  // namespace shardscope::profiler
