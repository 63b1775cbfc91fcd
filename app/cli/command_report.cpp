// shardscope-cli report --store F [--run ID] [--calibration C] [--plan P --model M ...] [--json]:
// the analysis of one engine run or imported trace (docs/analysis.md).
#include <iostream>
#include <limits>

#include "profiling_commands.h"
#include "trainer_plan_options.h"
#include "shardscope/profiler/workflow/stored_runs.h"

namespace shardscope::app::cli {

namespace {
constexpr const char* kReportHelp = R"(usage: shardscope-cli report --store F [--run ID] [--calibration C] [--json]
                           [--plan P --model M [--cluster C] [--world-size N] [--layout L]]

Analyses one engine run (emulate, mpi or cuda) or imported trace (import kineto|nsys|nccl)
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
  profiler::StoredRunAnalysisRequest request;
  request.trainer = takeTrainerPlanSpec(args);
  if (auto bad = args.problem()) return usageError("report: " + *bad);
  if (!store_arg) return usageError("report needs --store <file>");
  if (run_arg) {
    const auto id = parsePositive(*run_arg, static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()));
    if (!id) return usageError("report: --run must be a positive run id, got '" + *run_arg + "'");
    request.run = core::store::RunId{static_cast<std::int64_t>(*id)};
  }
  request.store = *store_arg;
  request.calibration = cal_arg;
  auto analysis = profiler::analyzeStoredRun(request);
  if (!analysis) return fail(analysis.error(), "report: ");
  if (json)
    std::cout << profiler::reportJson(*analysis).dump(2) << "\n";
  else
    std::cout << profiler::formatReport(*analysis);
  return kExitOk;
}

}  // namespace shardscope::app::cli
