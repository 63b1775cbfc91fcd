// Two runs side by side (e.g. a 1D and a 2D grid, or plan A and plan B): the
// step split into phases and every rank's embedding load, each as A, B and
// B - A. Both come from the run analysis (analyzeRun), so the figures are the
// ones `report` prints for each run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

// One figure of both runs; a run that lacks it (a rank it did not measure) has none.
struct ComparedValue {
  std::string name;  // "embedding forward", ..., or "rank 3"
  std::optional<double> a_ms, b_ms;
  [[nodiscard]] std::optional<double> differenceMs() const {
    return a_ms && b_ms ? std::optional<double>(*b_ms - *a_ms) : std::nullopt;
  }
};

struct RunComparison {
  core::store::RunId a{}, b{};
  std::string a_name, b_name;  // "run 3 (label)"
  // Means over the measured ranks, per measured step: embedding forward,
  // embedding backward, dense, collectives, the whole step.
  std::vector<ComparedValue> phases;
  // Per global rank: embedding compute (forward + backward) per step.
  std::vector<ComparedValue> ranks;
  std::vector<std::string> warnings;  // both runs' analysis warnings, prefixed by the run
};

// Errors: either run is missing or has no step summaries (analyzeRun's errors).
[[nodiscard]] core::Result<RunComparison> compareRuns(const core::store::TraceStore& store, core::store::RunId a,
                                                      core::store::RunId b);

}  // namespace shardscope::profiler
