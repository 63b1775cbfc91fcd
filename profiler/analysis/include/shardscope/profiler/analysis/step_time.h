// A run's step time: the one definition every page and report uses
// (docs/analysis.md#step-time). Synchronous training waits for its slowest
// rank, so a step lasts as long as the slowest measured rank's step; the run's
// step time is the median of that over its measured steps, so one step the OS
// preempted does not move it.
#pragma once

#include <optional>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

// Median over the measured steps of the slowest rank's total_ns, in ms;
// none without summaries. A step that some ranks did not record takes the
// slowest of those that did.
[[nodiscard]] std::optional<double> stepTimeMs(const std::vector<core::store::StepSummary>& summaries);

// The same from the store. Errors: the run does not exist, or the store cannot be read.
[[nodiscard]] core::Result<std::optional<double>> stepTimeMs(const core::store::TraceStore& store,
                                                             core::store::RunId run);

}  // namespace shardscope::profiler
