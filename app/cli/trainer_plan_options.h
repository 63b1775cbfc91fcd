// --plan P --model M [--cluster C] [--world-size N] [--layout L]: the plan a
// trainer ran, for imported traces (`import`, `report`, `calibrate`;
// docs/import.md).
#pragma once

#include "cli.h"
#include "shardscope/core/plan_file.h"

namespace shardscope::app::cli {

// Takes the trainer-plan options out of `args` (errors show in args.error()).
[[nodiscard]] core::TrainerPlanSpec takeTrainerPlanSpec(Args& args);

// The usage text of the trainer-plan options, for the commands' --help.
extern const char* const kTrainerPlanHelp;

}  // namespace shardscope::app::cli
