#include "shardscope/app/args.h"

#include <cstddef>

#include "shardscope/core/units.h"

namespace shardscope::app {

namespace {
// Whether `args` still hold --name or --name=... (a second occurrence).
bool holds(const std::vector<std::string>& args, const std::string& name) {
  for (const auto& a : args)
    if (a == name || a.starts_with(name + "=")) return true;
  return false;
}
}  // namespace

std::optional<std::string> Args::option(const std::string& name) {
  auto value = takeOption(name);
  if (value && holds(args_, name) && error_.empty()) error_ = name + " given twice";
  return value;
}

std::optional<std::string> Args::takeOption(const std::string& name) {
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const std::string& a = args_[i];
    const auto at = args_.begin() + static_cast<std::ptrdiff_t>(i);
    if (a == name) {
      if (i + 1 >= args_.size() || args_[i + 1].starts_with("--")) {
        error_ = name + " needs a value";
        args_.erase(at);
        return std::nullopt;
      }
      std::string v = args_[i + 1];
      args_.erase(at, at + 2);
      return v;
    }
    if (a.starts_with(name + "=")) {
      std::string v = a.substr(name.size() + 1);
      args_.erase(at);
      return v;
    }
  }
  return std::nullopt;
}

bool Args::flag(const std::string& name) {
  for (std::size_t i = 0; i < args_.size(); ++i)
    if (args_[i] == name) {
      args_.erase(args_.begin() + static_cast<std::ptrdiff_t>(i));
      if (holds(args_, name) && error_.empty()) error_ = name + " given twice";
      return true;
    }
  return false;
}

std::vector<std::string> Args::positional() const { return args_; }

std::optional<std::string> Args::problem(Positionals positionals) const {
  if (!error_.empty()) return error_;
  if (auto u = unknownOption()) return "unknown option " + *u;
  if (positionals == Positionals::None) {
    const auto rest = positional();
    if (!rest.empty()) return "unexpected argument " + rest.front();
  }
  return std::nullopt;
}

std::optional<std::string> Args::unknownOption() const {
  for (const auto& a : args_)
    if (a.starts_with("--") || (a.size() > 1 && a[0] == '-' && a != "-")) return a;
  return std::nullopt;
}

std::optional<unsigned long long> parsePositive(const std::string& text, unsigned long long max) {
  if (text.size() > 19) return std::nullopt;  // as shardscope-cli always read them: 20 digits are too many
  return core::parseWholeNumber(text, 1, max);
}

int exitCodeFor(const core::Error& error) {
  switch (error.kind) {
    case core::ErrorKind::Usage:
      return kExitUsage;
    case core::ErrorKind::InvalidInput:
      return kExitInvalid;
    case core::ErrorKind::Io:
    case core::ErrorKind::Internal:
      return kExitFailure;
    case core::ErrorKind::Cancelled:
      return kExitCancelled;
  }
  return kExitFailure;
}

}  // namespace shardscope::app
