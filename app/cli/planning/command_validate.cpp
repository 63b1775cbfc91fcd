// shardscope-cli validate <file>...: load each file with the loader its
// schema names, print one line per file, exit 1 when any is invalid.
#include <iostream>

#include "cli.h"
#include "shardscope/core/document_check.h"

namespace shardscope::app::cli {

int runValidate(Args args) {
  if (args.flag("--help")) {
    std::cout << "usage: shardscope-cli validate <file>...\n"
                 "Checks each file against the format its \"schema\" field names; prints every problem as\n"
                 "<file>: <JSON path>: <expectation>. Exit 0 when all are valid, 1 otherwise.\n";
    return kExitOk;
  }
  if (auto bad = args.problem(Args::Positionals::Allowed)) return usageError("validate: " + *bad);
  const auto files = args.positional();
  if (files.empty()) return usageError("validate needs at least one file");
  int rc = kExitOk;
  for (const auto& f : files) {
    auto r = core::checkDocument(f);
    if (r) {
      std::cout << f << ": ok: " << *r << "\n";
    } else {
      const int code = fail(r.error());
      if (rc == kExitOk) rc = code;
    }
  }
  return rc;
}

}  // namespace shardscope::app::cli
