#include "common_options.h"

namespace shardscope::app::cli {

core::ProjectSources takeProjectSources(Args& args, bool planning) {
  core::ProjectSources s;
  s.project = args.option("--project");
  s.model = args.option("--model");
  s.cluster = args.option("--cluster");
  if (planning) {
    s.calibration = args.option("--calibration");
    s.constraints = args.option("--constraints");
  }
  return s;
}

std::optional<unsigned long long> wholeNumberOption(const std::optional<std::string>& text, unsigned long long fallback,
                                                    unsigned long long max, const std::string& command,
                                                    const char* name, bool allow_zero) {
  if (!text) return fallback;
  if (allow_zero && *text == "0") return 0ull;
  auto v = parsePositive(*text, max);
  if (!v) {
    usageError(command + ": " + name + " must be a whole number in " + (allow_zero ? "0" : "1") + ".." +
               std::to_string(max) + ", got '" + *text + "'");
    return std::nullopt;
  }
  return v;
}

}  // namespace shardscope::app::cli
