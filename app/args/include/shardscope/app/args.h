// The command-line arguments of ShardScope's programs (shardscope-cli and
// shardscope-engine): `--opt value` and `--opt=value` options, flags, and
// positional arguments, one parser so both programs read them alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shardscope::app {

// Arguments after the program (or subcommand) name. Options are taken out one
// by one; what remains is positional, or unknown when it starts with '-'.
class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}
  // Removes and returns the value of --name (nullopt when absent); the first
  // occurrence counts. A value may not start with "--" unless given as
  // --name=value. Sets error() when the value is missing.
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

// A whole decimal number of at most 19 digits in 1..max (no sign, no suffix), else nullopt.
[[nodiscard]] std::optional<unsigned long long> parsePositive(const std::string& text, unsigned long long max);

}  // namespace shardscope::app
