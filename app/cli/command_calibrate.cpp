// shardscope-cli calibrate --store F --runs 1,2,3 [--holdout 4,5] [--out cal.json] [--json]:
// fit the cost model's embedding constants to engine runs, check them on
// held-out runs, write a shardscope.calibration/1 (docs/analysis.md).
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

#include "profiling_commands.h"
#include "trainer_plan_options.h"
#include "shardscope/core/json_io.h"
#include "shardscope/profiler/workflow/stored_runs.h"

namespace shardscope::app::cli {

namespace {
constexpr const char* kCalibrateHelp =
    R"(usage: shardscope-cli calibrate --store F --runs 1,2,3 [--holdout 4,5] [--out cal.json] [--json]
                              [--plan P --model M [--cluster C] [--world-size N] [--layout L]]

Fits the cost model's embedding constants (embedding_bandwidth_gbps,
backward_scale, kernel_overhead_us, lookup_overhead_ns, ...) by non-negative
least squares on relative error: for engine runs to the measured
forward/backward time of every shard (with the measured lookups and unique
rows); for imported traces to each rank's measured embedding forward/backward
time against the sum of the shards the plan gives it (lookups expected from
the tables' access profiles). Then predicts the per-rank embedding compute of
the --holdout runs with the planner's cost model, calibrated and with the
default constants, and prints both errors (MAPE). --out writes the
calibration (shardscope.calibration/1); `plan --calibration cal.json` uses it.
A coefficient that fits to 0 is not written (the planner keeps its default).
--json prints the whole report.

An imported trace has no plan unless `import` was given one; these give the
plan the trainer ran, used for every run that lacks one:
)";
constexpr const char* kCalibrateExit =
    "\nExit 0 ok, 1 store/runs/plan unreadable or not fit-able, 2 usage, 3 writing --out failed.\n";

// "1,2,3" -> ids; nullopt on anything else (empty items, signs, zero, duplicates).
std::optional<std::vector<core::store::RunId>> parseRunList(const std::string& text) {
  std::vector<core::store::RunId> out;
  std::set<std::int64_t> seen;
  std::stringstream ss(text);
  std::string item;
  if (text.empty() || text.back() == ',') return std::nullopt;
  while (std::getline(ss, item, ',')) {
    const auto id = parsePositive(item, static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()));
    if (!id || !seen.insert(static_cast<std::int64_t>(*id)).second) return std::nullopt;
    out.push_back(core::store::RunId{static_cast<std::int64_t>(*id)});
  }
  return out;
}
}  // namespace

int runCalibrate(Args args) {
  if (args.flag("--help")) {
    std::cout << kCalibrateHelp << kTrainerPlanHelp << kCalibrateExit;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  auto store_arg = args.option("--store");
  auto runs_arg = args.option("--runs");
  auto holdout_arg = args.option("--holdout");
  auto out_arg = args.option("--out");
  const core::TrainerPlanSpec trainer = takeTrainerPlanSpec(args);
  if (auto bad = args.problem()) return usageError("calibrate: " + *bad);
  if (!store_arg) return usageError("calibrate needs --store <file>");
  if (!runs_arg) return usageError("calibrate needs --runs <id,id,...> (the runs to fit)");
  const auto fit = parseRunList(*runs_arg);
  if (!fit)
    return usageError("calibrate: --runs must be distinct positive run ids separated by commas, got '" + *runs_arg +
                      "'");
  std::vector<core::store::RunId> holdout;
  if (holdout_arg) {
    auto h = parseRunList(*holdout_arg);
    if (!h)
      return usageError("calibrate: --holdout must be distinct positive run ids separated by commas, got '" +
                        *holdout_arg + "'");
    holdout = std::move(*h);
    for (const auto id : holdout)
      for (const auto f : *fit)
        if (id == f)
          return usageError("calibrate: run " + std::to_string(static_cast<std::int64_t>(id)) +
                            " is in both --runs and --holdout; a held-out run must not be fitted");
  }

  auto report = profiler::calibrateStoredRuns(*store_arg, *fit, holdout, trainer);
  if (!report) return fail(report.error(), "calibrate: ");
  if (json)
    std::cout << profiler::calibrationReportJson(*report).dump(2) << "\n";
  else
    std::cout << profiler::formatCalibrationReport(*report);
  if (out_arg) {
    if (auto s = core::writeJsonFile(*out_arg, core::toJson(report->calibration)); !s) return fail(s.error());
    if (!json) std::cout << "\ncalibration written to " << *out_arg << "\n";
  }
  return kExitOk;
}

}  // namespace shardscope::app::cli
