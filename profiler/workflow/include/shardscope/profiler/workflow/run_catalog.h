// The runs of a trace store as a user browses them (the desktop's Runs page):
// one row per run, engine runs and imported traces alike, with what tells runs
// apart (kind, model, grid, mode, status, date) and what they measured (steps,
// median step time). Read with a few queries per run, so a store of hundreds
// of runs lists in well under a second.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

struct RunRow {
  core::store::RunId id{};
  std::string kind;                       // as stored: "emulate", "mpi", "import-kineto", ...
  std::string label;                      // the user's name for the run
  std::string model;                      // the model's name, "" when the run has none (an import)
  std::uint32_t sharding_group_size = 0;  // M; 0 when unknown
  std::uint32_t replicas = 0;             // R; 0 when unknown
  std::string mode;                       // the engine's mode, else the kind
  core::store::RunStatus status = core::store::RunStatus::Running;
  std::string error;                     // why a failed run failed
  std::string created_at;                // ISO 8601 UTC
  std::int64_t steps = 0;                // distinct measured steps
  std::optional<double> median_step_ms;  // over every (rank, step); none without step summaries
};

// Every run of `store`, newest first. Fields a run's JSON lacks or cannot
// give stay empty (a run written by another build still lists).
[[nodiscard]] core::Result<std::vector<RunRow>> listRunRows(const core::store::TraceStore& store);
// One run's row (after a rename, or for a run that was just written).
[[nodiscard]] core::Result<RunRow> runRow(const core::store::TraceStore& store, core::store::RunId id);

}  // namespace shardscope::profiler
