// The list of a trace store's runs as a user browses them (the desktop's
// Runs page): one summary row per run, engine runs and imported traces
// alike, with what tells runs apart (kind, model, grid and layout, batch,
// device, ranks, status, date) and what they measured (steps, the run's step
// time). No analysis: a few queries per run, so a store of hundreds of runs
// lists in well under a second, and a run whose stored JSON is bad still
// lists. One run's full analysis is stored_runs.h; two runs side by side,
// run_comparison.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/device.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

struct RunRow {
  core::store::RunId id{};
  std::string kind;                       // as stored: "emulate", "mpi", "cuda", "import-kineto", ...
  std::string label;                      // the user's name for the run
  std::string model;                      // the model's name, "" when the run has none (an import)
  std::uint32_t sharding_group_size = 0;  // M; 0 when unknown
  std::uint32_t replicas = 0;             // R; 0 when unknown
  std::string layout;                     // "strided", "contiguous" (the run's plan); "" when unknown
  std::uint32_t world_size = 0;           // N: the configuration's, else the plan's, else M x R; 0 when unknown
  std::uint32_t measured_ranks = 0;       // ranks with step summaries
  std::uint32_t batch_size_per_gpu = 0;   // the configuration's; 0 when unknown (an import)
  core::DeviceInfo device;                // runDevice(config)
  core::store::RunStatus status = core::store::RunStatus::Running;
  std::string error;              // why a failed run failed
  std::string created_at;         // ISO 8601 UTC
  std::int64_t steps = 0;         // distinct measured steps
  std::optional<double> step_ms;  // the run's step time (analysis/step_time.h); none without step summaries
};

// Every run of `store`, newest first. Fields a run's JSON lacks or cannot
// give stay empty (a run written by another build still lists).
[[nodiscard]] core::Result<std::vector<RunRow>> listRunRows(const core::store::TraceStore& store);
// One run's row (after a rename, or for a run that was just written).
[[nodiscard]] core::Result<RunRow> runRow(const core::store::TraceStore& store, core::store::RunId id);

}  // namespace shardscope::profiler
