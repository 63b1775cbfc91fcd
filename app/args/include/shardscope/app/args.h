// The command-line conventions of ShardScope's programs (shardscope-cli and
// shardscope-engine): `--opt value` and `--opt=value` options, flags, and
// positional arguments, one parser so both programs read them alike; and the
// exit codes, mapped from an error's kind in one place (docs/cli.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::app {

enum ExitCode : int {
  kExitOk = 0,
  kExitInvalid = 1,  // an input file is invalid or unreadable
  kExitUsage = 2,    // bad command line
  kExitFailure = 3,  // runtime failure (no CUDA device, writing an output file fails, ...)
  kExitCancelled = 130,
};

// The one mapping from what went wrong to the exit code: Usage 2,
// InvalidInput 1, Io and Internal 3, Cancelled 130.
[[nodiscard]] int exitCodeFor(const core::Error& error);

// Arguments after the program (or subcommand) name. Options are taken out one
// by one; what remains is positional, or unknown when it starts with '-'.
class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}
  // Removes and returns the value of --name (nullopt when absent). A value
  // may not start with "--" unless given as --name=value. Sets error() when
  // the value is missing, or when --name is given twice.
  std::optional<std::string> option(const std::string& name);
  bool flag(const std::string& name);  // removes --name when present; given twice sets error()
  // What remains once options were taken; anything starting with "--" here is unknown.
  [[nodiscard]] std::vector<std::string> positional() const;
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::optional<std::string> unknownOption() const;
  // Once every option was taken: the first thing wrong with the command
  // line, as a command's usage error words it after "<command>: " (a
  // missing value, "unknown option --x", "unexpected argument y" where no
  // positional argument is taken), else nullopt.
  enum class Positionals { None, Allowed };
  [[nodiscard]] std::optional<std::string> problem(Positionals positionals = Positionals::None) const;

 private:
  std::optional<std::string> takeOption(const std::string& name);
  std::vector<std::string> args_;
  std::string error_;
};

// A whole decimal number of at most 19 digits in 1..max (no sign, no suffix), else nullopt.
[[nodiscard]] std::optional<unsigned long long> parsePositive(const std::string& text, unsigned long long max);

}  // namespace shardscope::app
