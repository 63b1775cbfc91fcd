// Options several commands share: --project/--model/--cluster/--calibration/
// --constraints (what to plan or profile), and --plan P --model M [--cluster C]
// [--world-size N] [--layout L] (the plan a trainer ran, for imported traces:
// `import`, `report`, `calibrate`; docs/import.md).
#pragma once

#include <optional>
#include <string>

#include "cli.h"
#include "shardscope/profiler/workflow/project_inputs.h"
#include "shardscope/profiler/workflow/trainer_plan.h"

namespace shardscope::app::cli {

// Takes --project, --model, --cluster and, with `planning`, --calibration and
// --constraints out of `args` (errors show in args.error()).
[[nodiscard]] profiler::ProjectSources takeProjectSources(Args& args, bool planning = true);

// Takes the trainer-plan options out of `args` (errors show in args.error()).
[[nodiscard]] profiler::TrainerPlanSpec takeTrainerPlanSpec(Args& args);

// A whole number option in [0 or 1]..max, `fallback` when absent; otherwise
// nullopt, with the usage error printed ("<command>: --steps must be a whole
// number in 1..100000, got 'x'").
[[nodiscard]] std::optional<unsigned long long> wholeNumberOption(const std::optional<std::string>& text,
                                                                  unsigned long long fallback, unsigned long long max,
                                                                  const std::string& command, const char* name,
                                                                  bool allow_zero = false);

// The usage text of the trainer-plan options, for the commands' --help.
extern const char* const kTrainerPlanHelp;

}  // namespace shardscope::app::cli
