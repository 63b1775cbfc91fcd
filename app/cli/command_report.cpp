// shardscope-cli report --store F [--run ID] [--calibration C] [--plan P --model M ...] [--json]:
// the analysis of one engine run or imported trace (docs/analysis.md).
#include <iostream>
#include <limits>

#include "cli.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "trainer_plan.h"

namespace shardscope::app::cli {

namespace {
constexpr const char* kReportHelp = R"(usage: shardscope-cli report --store F [--run ID] [--calibration C] [--json]
                           [--plan P --model M [--cluster C] [--world-size N] [--layout L]]

Analyses one engine run (emulate or mpi) or imported trace (import kineto|nsys)
of a trace store: per rank the embedding forward/backward time, compute,
collective time per kind and the part spent waiting for peers, dense and step
time; busy and idle time and how much collective time overlaps compute;
collective bus bandwidth by message size; measured vs predicted compute (the
plan's prediction and the cost model's now, with --calibration C instead of
the default constants); imbalance (max/mean) of compute overall and per
sharding group; stragglers (compute > min(mean + 2 sd, 1.10 x median)); per
table lookups, unique rows and time per step. Without --run: the latest run.
A run that is not complete is analysed and flagged. docs/analysis.md.

For a run without a plan (an imported trace), these give the one the trainer ran:
)";
constexpr const char* kReportExit =
    "\nExit 0 ok, 1 store/run/calibration/plan unreadable or the run has no step summaries, 2 usage.\n";
}  // namespace

int runReport(Args args) {
  if (args.flag("--help")) {
    std::cout << kReportHelp << kTrainerPlanHelp << kReportExit;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  auto store_arg = args.option("--store");
  auto run_arg = args.option("--run");
  auto cal_arg = args.option("--calibration");
  const TrainerPlanArgs trainer = takeTrainerPlanArgs(args);
  if (!args.error().empty()) return usageError("report: " + args.error());
  if (auto u = args.unknownOption()) return usageError("report: unknown option " + *u);
  if (!args.positional().empty()) return usageError("report: unexpected argument " + args.positional().front());
  if (!store_arg) return usageError("report needs --store <file>");
  std::optional<core::store::RunId> run_id;
  if (run_arg) {
    const auto id = parsePositive(*run_arg, static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()));
    if (!id) return usageError("report: --run must be a positive run id, got '" + *run_arg + "'");
    run_id = core::store::RunId{static_cast<std::int64_t>(*id)};
  }

  std::optional<core::Calibration> calibration;
  if (cal_arg) {
    auto c = core::loadCalibration(*cal_arg);
    if (!c) {
      std::cerr << c.error().message << "\n";
      return kExitInvalid;
    }
    calibration = std::move(c).value();
  }
  auto store = core::store::openStore(*store_arg, core::store::OpenMode::ReadOnly);
  if (!store) {
    std::cerr << store.error().message << "\n";
    return kExitInvalid;
  }
  if (!run_id) {
    auto latest = profiler::latestRun(*store);
    if (!latest) {
      std::cerr << latest.error().message << "\n";
      return kExitInvalid;
    }
    run_id = *latest;
  } else if (auto r = store->run(*run_id); !r) {
    std::string ids;
    if (auto runs = store->listRuns(); runs)
      for (const auto& x : *runs) ids += (ids.empty() ? "" : ", ") + std::to_string(static_cast<std::int64_t>(x.id));
    std::cerr << *store_arg << ": no run " << static_cast<std::int64_t>(*run_id) << " in this store ("
              << (ids.empty() ? std::string("it has no runs") : "runs: " + ids) << ")\n";
    return kExitInvalid;
  }
  std::optional<profiler::RunInputs> supplied;
  if (const int code = trainerPlanForRun(trainer, *store, *run_id, "report", supplied); code != kExitOk) return code;
  profiler::AnalysisOptions options;
  options.calibration = calibration ? &*calibration : nullptr;
  options.supplied = supplied ? &*supplied : nullptr;
  auto analysis = profiler::analyzeRun(*store, *run_id, options);
  if (!analysis) {
    std::cerr << analysis.error().message << "\n";
    return kExitInvalid;
  }
  if (json) std::cout << profiler::reportJson(*analysis).dump(2) << "\n";
  else std::cout << profiler::formatReport(*analysis);
  return kExitOk;
}

}  // namespace shardscope::app::cli
