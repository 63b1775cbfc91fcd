#include "shardscope/profiler/workflow/stored_runs.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/trace/engine_run_config.h"
#include "shardscope/profiler/trace/run_device.h"
#include "shardscope/profiler/workflow/trainer_plan.h"

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
                                                    const core::TrainerPlanSpec& trainer) {
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  if (fit.empty()) return core::Error{"no runs to fit", core::ErrorKind::Usage};
  auto supplied = trainerPlanForRun(trainer, *store, fit.front());
  if (!supplied) return supplied.error();
  return calibrateStoredRuns(store_path, fit, holdout, *supplied ? &**supplied : nullptr);
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
  if (supplied) {  // the prediction is of the plan the user gave, even for a run that carries its own
    out.inputs.model = supplied->model ? supplied->model : out.inputs.model;
    out.inputs.cluster = supplied->cluster ? supplied->cluster : out.inputs.cluster;
    out.inputs.plan = supplied->plan ? supplied->plan : out.inputs.plan;
  }
  out.analysis = std::move(analysis).value();
  auto prediction = measuredVsPredicted(out.analysis, out.inputs, calibration);
  if (prediction)
    out.prediction = std::move(prediction).value();
  else
    out.no_prediction = prediction.error().message;
  return out;
}

core::Result<core::AccessFile> runAccess(const std::string& store_path, st::RunId run) {
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  auto record = store->run(run);
  if (!record) return record.error();
  auto rows = store->tableAccess(run);
  if (!rows) return rows.error();
  const std::string name = store_path + ": run " + std::to_string(static_cast<std::int64_t>(run));
  if (rows->empty())
    return core::Error{name + " stored no table access (imported traces and runs of older builds have none)",
                       core::ErrorKind::InvalidInput, store_path};
  nlohmann::json doc = {{"schema", "shardscope.access/1"}, {"tables", nlohmann::json::array()}};
  doc["source"] = "run " + std::to_string(static_cast<std::int64_t>(run)) + " (" + record->label + ") of " +
                  std::filesystem::path(store_path).filename().string();
  const EngineRunConfig config = storedRunConfig(record->config_json);
  if (config.steps > 0)
    doc["batches"] = std::uint64_t{config.steps} * (config.groups_measured > 0 ? config.groups_measured : 1);
  for (const auto& [table, text] : *rows) {
    auto entry = core::parseJsonText(text, name + ": table " + table);
    if (!entry) return core::Error{name + ": table " + table + ": stored access is not JSON"};
    doc["tables"].push_back(std::move(entry).value());
  }
  return core::accessFromJson(doc, name);
}

bool samePlacement(const core::ShardPlan& a, const core::ShardPlan& b) {
  if (a.world_size != b.world_size || a.sharding_group_size != b.sharding_group_size || a.layout != b.layout ||
      a.tables.size() != b.tables.size())
    return false;
  for (std::size_t i = 0; i < a.tables.size(); ++i) {
    const auto& x = a.tables[i];
    const auto& y = b.tables[i];
    if (x.name != y.name || x.rows != y.rows || x.dim != y.dim || x.sharding_type != y.sharding_type ||
        x.shards != y.shards)
      return false;
  }
  return true;
}

core::Result<std::optional<MeasuredPlanLoad>> latestRunOfPlan(const std::string& store_path,
                                                              const core::ShardPlan& plan,
                                                              const std::atomic<bool>* cancel) {
  std::error_code ec;
  if (store_path.empty() || !std::filesystem::exists(store_path, ec)) return std::optional<MeasuredPlanLoad>{};
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  auto runs = store->listRuns();
  if (!runs) return runs.error();
  std::sort(runs->begin(), runs->end(), [](const st::RunRecord& x, const st::RunRecord& y) {
    return static_cast<std::int64_t>(x.id) > static_cast<std::int64_t>(y.id);
  });
  for (const auto& run : *runs) {
    if (cancel && cancel->load()) return std::optional<MeasuredPlanLoad>{};
    if (!run.isComplete() || run.plan_json.empty()) continue;
    const auto j = core::parseJsonText(run.plan_json, "run plan");
    if (!j) continue;
    auto ran = core::planFromJson(*j, "run plan");
    if (!ran || !samePlacement(*ran, plan)) continue;
    auto analysis = analyzeRun(*store, run.id);
    if (!analysis) return analysis.error();
    MeasuredPlanLoad out;
    out.run = run.id;
    out.label = run.label;
    out.device = runDevice(storedRunConfig(run.config_json));
    std::vector<double> sum(plan.sharding_group_size, 0.0);
    std::vector<int> count(plan.sharding_group_size, 0);
    for (const auto& r : analysis->ranks) {
      const int gr = groupRankOf(plan, r.rank);
      if (gr < 0 || static_cast<std::size_t>(gr) >= sum.size()) continue;
      sum[static_cast<std::size_t>(gr)] += r.compute_ms;
      ++count[static_cast<std::size_t>(gr)];
    }
    out.compute_ms.resize(sum.size());
    for (std::size_t i = 0; i < sum.size(); ++i)
      out.compute_ms[i] = count[i] > 0 ? sum[i] / count[i] : std::numeric_limits<double>::quiet_NaN();
    return std::optional<MeasuredPlanLoad>(std::move(out));
  }
  return std::optional<MeasuredPlanLoad>{};
}

}  // namespace shardscope::profiler
