// Options several commands share: --project/--model/--cluster/--calibration/
// --constraints (what to plan or profile), and --plan P --model M [--cluster C]
// [--world-size N] [--layout L] (the plan a trainer ran, for imported traces:
// `import`, `report`, `calibrate`; docs/import.md).
#pragma once

#include "cli.h"
#include "shardscope/profiler/workflow/project_inputs.h"
#include "shardscope/profiler/workflow/trainer_plan.h"

namespace shardscope::app::cli {

// Takes --project, --model, --cluster and, with `planning`, --calibration and
// --constraints out of `args` (errors show in args.error()).
[[nodiscard]] profiler::ProjectSources takeProjectSources(Args& args, bool planning = true);

// Takes the trainer-plan options out of `args` (errors show in args.error()).
[[nodiscard]] profiler::TrainerPlanSpec takeTrainerPlanSpec(Args& args);

// The usage text of the trainer-plan options, for the commands' --help.
extern const char* const kTrainerPlanHelp;

}  // namespace shardscope::app::cli
