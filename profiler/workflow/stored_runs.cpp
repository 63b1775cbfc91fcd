#include "shardscope/profiler/workflow/stored_runs.h"

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

namespace st = core::store;

namespace {
// The run to analyse: `run` when the store has it, else the latest.
core::Result<st::RunId> chosenRun(const st::TraceStore& store, const std::string& path, std::optional<st::RunId> run) {
  if (!run) return latestRun(store);
  if (store.run(*run)) return *run;
  std::string ids;
  if (auto runs = store.listRuns(); runs)
    for (const auto& x : *runs) ids += (ids.empty() ? "" : ", ") + std::to_string(static_cast<std::int64_t>(x.id));
  return core::Error{path + ": no run " + std::to_string(static_cast<std::int64_t>(*run)) + " in this store (" +
                     (ids.empty() ? std::string("it has no runs") : "runs: " + ids) + ")"};
}
}  // namespace

core::Result<RunAnalysis> analyzeStoredRun(const StoredRunAnalysisRequest& request) {
  std::optional<core::Calibration> calibration;
  if (request.calibration) {
    auto c = core::loadCalibration(*request.calibration);
    if (!c) return c.error();
    calibration = std::move(c).value();
  }
  auto store = st::openStore(request.store, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  auto run = chosenRun(*store, request.store, request.run);
  if (!run) return run.error();
  auto supplied = trainerPlanForRun(request.trainer, *store, *run);
  if (!supplied) return supplied.error();
  AnalysisOptions options;
  options.calibration = calibration ? &*calibration : nullptr;
  options.supplied = *supplied ? &**supplied : nullptr;
  return analyzeRun(*store, *run, options);
}

core::Result<CalibrationReport> calibrateStoredRuns(const std::string& store_path, std::span<const st::RunId> fit,
                                                    std::span<const st::RunId> holdout,
                                                    const TrainerPlanSpec& trainer) {
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  if (fit.empty()) return core::Error{"no runs to fit", core::ErrorKind::Usage};
  auto supplied = trainerPlanForRun(trainer, *store, fit.front());
  if (!supplied) return supplied.error();
  return calibrateFromRuns(*store, fit, holdout, *supplied ? &**supplied : nullptr);
}

core::Result<CalibrationReport> calibrateStoredRuns(const std::string& store_path, std::span<const st::RunId> fit,
                                                    std::span<const st::RunId> holdout, const RunInputs* supplied) {
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  if (fit.empty()) return core::Error{"no runs to fit", core::ErrorKind::Usage};
  return calibrateFromRuns(*store, fit, holdout, supplied);
}

core::Result<RunVsPlan> runVsPlan(const std::string& store_path, st::RunId run, const core::Calibration* calibration,
                                  const RunInputs* supplied) {
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  AnalysisOptions options;
  options.calibration = calibration;
  options.supplied = supplied;
  auto analysis = analyzeRun(*store, run, options);
  if (!analysis) return analysis.error();
  RunVsPlan out;
  out.inputs = runInputs(analysis->run, supplied);
  out.analysis = std::move(analysis).value();
  auto prediction = measuredVsPredicted(out.analysis, out.inputs, calibration);
  if (prediction)
    out.prediction = std::move(prediction).value();
  else
    out.no_prediction = prediction.error().message;
  return out;
}

}  // namespace shardscope::profiler
