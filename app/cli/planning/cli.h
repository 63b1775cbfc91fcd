// shardscope-cli: its shared conventions (exit codes and arguments:
// shardscope/app/args.h) and the planning commands, which need no profiler:
// this folder is the library shardscope_cli_planning (app_args, core,
// planner, report). The commands that run, import or read traces are
// shardscope-cli's own (profiling_commands.h). Thin: each command parses its
// arguments, calls into a library and prints. Exit codes are documented in
// docs/cli.md.
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
int runSummary(Args args);
int runPresets(Args args);
int runPlan(Args args);
int runScaling(Args args);  // command_scaling.cpp: weak scaling 8..4,096 GPUs, the cause of each drop
int runGenModel(Args args);
int runEvaluate(Args args);

}  // namespace shardscope::app::cli
