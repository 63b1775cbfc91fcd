// shardscope-cli: subcommands and their shared conventions (exit codes and
// arguments: shardscope/app/args.h). Thin: each command parses its arguments, calls into
// core/planner/profiler and prints. Exit codes are documented in docs/cli.md.
#pragma once

#include <string>
#include <string_view>

#include "shardscope/app/args.h"
#include "shardscope/core/result.h"

namespace shardscope::app::cli {

// Prints `error` to stderr and returns exitCodeFor(error). A Usage error reads
// "shardscope-cli: <usage_prefix><message>" and the --help hint; any other
// prints its message as is.
int fail(const core::Error& error, std::string_view usage_prefix = {});
int usageError(const std::string& message);  // fail() of a Usage error

int runValidate(Args args);
int runStore(Args args);
int runSummary(Args args);
int runPresets(Args args);
int runDevices(Args args);
int runPlan(Args args);
int runScaling(Args args);  // command_scaling.cpp: weak scaling 8..4,096 GPUs, the cause of each drop
int runGenModel(Args args);
int runEvaluate(Args args);
int runProfile(Args args);      // command_profile.cpp: engine runs (emulate in-process, mpi through a launcher)
int runReport(Args args);       // command_report.cpp: analysis of a run in a store
int runCalibrate(Args args);    // command_calibrate.cpp: fit a calibration from runs, held-out check
int runImport(Args args);       // command_import.cpp: traces of real trainers (Kineto, Nsight, NCCL) into a store
int runExportTrace(Args args);  // command_export.cpp: a stored run as Chrome trace JSON
#ifdef SHARDSCOPE_HAVE_REMOTE
int runRemote(Args args);  // command_remote.cpp: drives a shardscope-agent
#endif

}  // namespace shardscope::app::cli
