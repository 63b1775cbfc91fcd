#include "cli.h"

#include <iostream>

namespace shardscope::app::cli {

int fail(const core::Error& error, std::string_view usage_prefix) {
  if (error.kind == core::ErrorKind::Usage)
    std::cerr << "shardscope-cli: " << usage_prefix << error.message << "\nTry 'shardscope-cli --help'.\n";
  else
    std::cerr << error.message << "\n";
  return exitCodeFor(error);
}

int usageError(const std::string& message) { return fail(core::Error{message, core::ErrorKind::Usage}); }

}  // namespace shardscope::app::cli
