// Whole jobs on runs already in a trace store (engine runs and imported
// traces), each given the store's path: one run's full analysis (what
// `shardscope-cli report` prints), the calibration fit over several runs
// (`calibrate`), one run measured against the plan it ran (the desktop's
// Measured page), a run's measured table access, and the newest run of a
// plan (the Plan page's overlay). The trainer's plan fills in what an
// imported run lacks. Not here: the list of a store's runs, one cheap row
// each (run_catalog.h), and two runs side by side (run_comparison.h).
#pragma once

#include <atomic>
#include <optional>
#include <span>
#include <string>

#include "shardscope/core/access.h"
#include "shardscope/core/device.h"
#include "shardscope/core/plan_file.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/analysis/calibration_fit.h"
#include "shardscope/profiler/analysis/measured_vs_predicted.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::profiler {

struct StoredRunAnalysisRequest {
  std::string store;                       // the trace store's path
  std::optional<core::store::RunId> run;   // absent: the latest run
  std::optional<std::string> calibration;  // a shardscope.calibration/1 file to re-price the plan with
  core::TrainerPlanSpec trainer;           // for a run without a plan (an import)
};

// Errors: a calibration that does not load, a store that is missing or not a
// store, no runs or no such run (the message lists the ids there are), a bad
// trainer plan (Usage when incomplete), a run without step summaries.
[[nodiscard]] core::Result<RunAnalysis> analyzeStoredRun(const StoredRunAnalysisRequest& request);

// Fits the cost model's embedding constants to the `fit` runs and checks them
// on the `holdout` runs (calibrateFromRuns); `trainer` gives the plan of runs
// that lack one (its rank count from the first fit run). Errors: the store,
// the runs or the trainer plan (Usage when incomplete) do not load, too few
// measurements.
[[nodiscard]] core::Result<CalibrationReport> calibrateStoredRuns(const std::string& store,
                                                                  std::span<const core::store::RunId> fit,
                                                                  std::span<const core::store::RunId> holdout,
                                                                  const core::TrainerPlanSpec& trainer);

// calibrateStoredRuns with the inputs of runs that lack them already loaded
// (`supplied`: nullptr for engine runs, which carry their own).
[[nodiscard]] core::Result<CalibrationReport> calibrateStoredRuns(const std::string& store,
                                                                  std::span<const core::store::RunId> fit,
                                                                  std::span<const core::store::RunId> holdout,
                                                                  const RunInputs* supplied);

// One run measured against the plan it ran, or against `supplied`'s model,
// cluster and plan where given (an import, or another plan to compare with;
// they replace the run's own): what the desktop's measured-vs-predicted view
// shows. `prediction` is absent when there is no plan to predict from;
// `no_prediction` then says why.
struct RunVsPlan {
  RunAnalysis analysis;
  RunInputs inputs;  // what the prediction was made from
  std::optional<MeasuredVsPredicted> prediction;
  std::string no_prediction;
};

// Errors: the store or the run does not open, the run holds no step summaries.
[[nodiscard]] core::Result<RunVsPlan> runVsPlan(const std::string& store, core::store::RunId run,
                                                const core::Calibration* calibration, const RunInputs* supplied);

// The measured access per table a run stored (engine runs), as a
// shardscope.access/1 document whose source names the run and store.
// Errors: the store or run does not open, the run stored no access (an
// import, a run of an older build), a stored entry that does not validate.
[[nodiscard]] core::Result<core::AccessFile> runAccess(const std::string& store, core::store::RunId run);

// Same grid (N, M, layout) and the same shards of the same tables: a run of
// `a` ran what `b` describes (predictions, provenance and sync interval aside).
[[nodiscard]] bool samePlacement(const core::ShardPlan& a, const core::ShardPlan& b);

// The measured embedding load of the newest complete run of `plan` in a
// store: per group rank, the mean over the measured ranks at that position
// of forward + backward compute, ms per step (NaN where none was measured).
struct MeasuredPlanLoad {
  core::store::RunId run{};
  std::string label;
  std::vector<double> compute_ms;
  core::DeviceInfo device;  // what the run ran on: its times compare with a prediction only for that device
};

// nullopt: no store at `store`, or no complete run of the plan in it.
// Errors: a store that does not open, or whose run does not analyse.
[[nodiscard]] core::Result<std::optional<MeasuredPlanLoad>> latestRunOfPlan(const std::string& store,
                                                                            const core::ShardPlan& plan,
                                                                            const std::atomic<bool>* cancel = nullptr);

}  // namespace shardscope::profiler
