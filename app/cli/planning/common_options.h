// Options several commands share: --project/--model/--cluster/--calibration/
// --constraints (what to plan or profile), and whole-number options.
#pragma once

#include <optional>
#include <string>

#include "cli.h"
#include "shardscope/core/project_inputs.h"

namespace shardscope::app::cli {

// Takes --project, --model, --cluster and, with `planning`, --calibration and
// --constraints out of `args` (errors show in args.error()).
[[nodiscard]] core::ProjectSources takeProjectSources(Args& args, bool planning = true);

// A whole number option in [0 or 1]..max, `fallback` when absent; otherwise
// nullopt, with the usage error printed ("<command>: --steps must be a whole
// number in 1..100000, got 'x'").
[[nodiscard]] std::optional<unsigned long long> wholeNumberOption(const std::optional<std::string>& text,
                                                                  unsigned long long fallback, unsigned long long max,
                                                                  const std::string& command, const char* name,
                                                                  bool allow_zero = false);

}  // namespace shardscope::app::cli
