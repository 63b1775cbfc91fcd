// shardscope-cli: subcommands and their shared conventions (exit codes,
// argument access). Thin: each command parses its arguments and calls into
// core/planner/profiler. Exit codes are documented in docs/cli.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shardscope::app::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitInvalid = 1,   // an input file is invalid or unreadable
  kExitUsage = 2,     // bad command line
  kExitFailure = 3,   // runtime failure (no CUDA device, writing an output file fails, ...)
  kExitCancelled = 130,
};

// Arguments after the subcommand name, with `--opt value` / `--opt=value` access.
class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}
  // Removes and returns the value of --name (nullopt when absent). Sets error() when the value is missing.
  std::optional<std::string> option(const std::string& name);
  bool flag(const std::string& name);  // removes --name when present
  // What remains once options were taken; anything starting with "--" here is unknown.
  [[nodiscard]] std::vector<std::string> positional() const;
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::optional<std::string> unknownOption() const;

 private:
  std::vector<std::string> args_;
  std::string error_;
};

int runValidate(Args args);
int runStore(Args args);
int runSummary(Args args);
int runPresets(Args args);
int runDevices(Args args);
int runPlan(Args args);
int runGenModel(Args args);
int runEvaluate(Args args);
int runProfile(Args args);    // command_profile.cpp: engine runs (emulate in-process, mpi through a launcher)
int runReport(Args args);     // command_report.cpp: analysis of a run in a store
int runCalibrate(Args args);  // command_calibrate.cpp: fit a calibration from runs, held-out check
int runImport(Args args);     // command_import.cpp: traces of real trainers (Kineto, Nsight Systems) into a store

int usageError(const std::string& message);  // prints to stderr, returns kExitUsage

// A whole decimal number in 1..max (no sign, no suffix), else nullopt.
std::optional<unsigned long long> parsePositive(const std::string& text, unsigned long long max);

}  // namespace shardscope::app::cli
