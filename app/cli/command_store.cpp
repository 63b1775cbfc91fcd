// shardscope-cli store info <file>: filled in once the trace store lands.
#include <iostream>

#include "cli.h"

namespace shardscope::app::cli {

int runStore(Args args) {
  (void)args;
  std::cerr << "store: not yet available\n";
  return kExitFailure;
}

}  // namespace shardscope::app::cli
