// Two runs of one store compared side by side (the Runs page's comparison;
// the list of runs is run_catalog.h, one run's own analysis stored_runs.h),
// e.g. a 1D and a 2D grid, or plan A and plan B: the step split into phases,
// every matched rank's embedding load and the imbalance, A against B. Like
// is compared with like: ranks are paired by their role in the plan
// (sharding group and group rank), not by global rank, and runs on different
// kinds of device (a CPU emulate run against an H100 run) compare shares of
// the work instead of milliseconds. The figures come from the run analysis
// (analyzeRun) and the run's step time (step_time.h); docs/desktop.md#runs
// says how the page shows them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/device.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

// What the values of a comparison are.
enum class ComparedUnit {
  Milliseconds,  // per measured step
  Share,         // a fraction of a whole (0..1): of the step's phases, of the sharding group's embedding work
  Ratio,         // max / mean
};

// One figure of both runs; a run that lacks it (a rank it did not measure) has none.
struct ComparedValue {
  std::string name;  // "embedding fwd", ..., "step", "group 0, group rank 1", "max/mean"
  ComparedUnit unit = ComparedUnit::Milliseconds;
  std::optional<double> a, b;
  // Matched ranks: the global rank on each side (-1: not measured there) and the role they were matched by.
  int a_rank = -1, b_rank = -1;
  int group = -1, group_rank = -1;
  [[nodiscard]] std::optional<double> difference() const {
    return a && b ? std::optional<double>(*b - *a) : std::nullopt;
  }
};

// How ranks were paired.
enum class RankMatching {
  GroupAndGroupRank,  // both runs have plans: the same sharding group, the same position in it
  GroupRank,          // both have plans but measured different sharding groups: the same position
  GlobalRank,         // a run without a plan: the same global rank
};

struct RunComparison {
  core::store::RunId a{}, b{};
  std::string a_name, b_name;  // "run 3 (label)"
  core::DeviceInfo a_device, b_device;
  // Milliseconds when both ran on the same kind of device (core::sameDeviceKind),
  // else shares; `basis_note` says why in one line ("" for milliseconds).
  bool shares = false;
  std::string basis_note;
  RankMatching matching = RankMatching::GlobalRank;
  std::string matching_note;  // "ranks matched by sharding group and group rank (both runs have plans)"
  std::optional<double> a_step_ms, b_step_ms;  // each run's step time, whatever the basis
  // Embedding fwd, embedding bwd, all-to-all, replica sync, dense (measuredPhases):
  // means over the measured ranks in ms, then "step" (the run's step time);
  // with shares, each phase's part of their sum and no step.
  std::vector<ComparedValue> phases;
  // Per matched rank, in role order: embedding compute (forward + backward)
  // in ms, or with shares the rank's part of its sharding group's.
  std::vector<ComparedValue> ranks;
  // max / mean of embedding compute over every measured rank, then per
  // sharding group when a run measured several (the same with either basis).
  std::vector<ComparedValue> imbalance;
  std::vector<std::string> warnings;  // both runs' analysis warnings, prefixed by the run
};

// Errors: either run is missing or has no step summaries (analyzeRun's errors).
[[nodiscard]] core::Result<RunComparison> compareRuns(const core::store::TraceStore& store, core::store::RunId a,
                                                      core::store::RunId b);

}  // namespace shardscope::profiler
