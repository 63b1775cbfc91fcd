// Helpers shared by the calibration fit, its sample gathering and its report
// (private to profiler/analysis).
#pragma once

#include <span>
#include <string>

#include "shardscope/core/result.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::profiler::calibration_detail {

// ms per byte at 1 GB/s: bytes / (gbps * 1e9) * 1e3.
constexpr double kMsPerByteAtOneGbps = 1e-6;

// Runs are engine runs with a model, a cluster and a plan.
struct LoadedRun {
  core::store::RunRecord record;
  RunInputs inputs;
};

[[nodiscard]] core::Result<LoadedRun> loadRun(const core::store::TraceStore& store, core::store::RunId id,
                                              const RunInputs* supplied);

// "3,4,7"
[[nodiscard]] std::string idList(std::span<const core::store::RunId> ids);
// Four significant digits.
[[nodiscard]] std::string fmtSig(double v);
// "12.3%"
[[nodiscard]] std::string pct(double fraction);

}  // namespace shardscope::profiler::calibration_detail
