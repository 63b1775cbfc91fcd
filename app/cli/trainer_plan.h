// --plan P --model M [--cluster C] [--world-size N] [--layout L]: the plan a
// trainer ran (shardscope.plan/1 or TorchRec's ShardingPlan._serialize()),
// with the model and cluster it is for. Imported traces carry none of them;
// `import`, `report` and `calibrate` take them to compare measured with
// predicted compute and to fit a calibration (docs/import.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::app::cli {

struct TrainerPlanArgs {
  std::optional<std::string> plan, model, cluster, world_size, layout;
  [[nodiscard]] bool any() const { return plan || model || cluster || world_size || layout; }
};

// Takes the options out of `args` (errors show in args.error()).
[[nodiscard]] TrainerPlanArgs takeTrainerPlanArgs(Args& args);

// The usage text of these options, for the commands' --help.
extern const char* const kTrainerPlanHelp;

// Loads them. `ranks`: the number of ranks the trace has, the TorchRec plan's
// world size when --world-size is not given. Errors name the file and field;
// `usage` is set when the command line itself is wrong (exit 2, not 1).
[[nodiscard]] core::Result<profiler::RunInputs> loadTrainerPlan(const TrainerPlanArgs& a, std::uint32_t ranks,
                                                                bool* usage = nullptr);

// What `report` and `calibrate` do with the options: nothing when none was
// given; else load them for `run` (its ranks are the TorchRec plan's default
// world size) into `out`. On failure prints "<command>: ..." and returns the
// exit code (2 usage, 1 invalid input); kExitOk otherwise.
[[nodiscard]] int trainerPlanForRun(const TrainerPlanArgs& a, const core::store::TraceStore& store,
                                    core::store::RunId run, const char* command,
                                    std::optional<profiler::RunInputs>& out);

}  // namespace shardscope::app::cli
