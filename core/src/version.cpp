#include "shardscope/core/version.h"

namespace shardscope::core {

const char* versionString() { return SHARDSCOPE_VERSION; }

std::string versionLine() { return std::string(versionString()) + " (commit " + buildCommit() + ")"; }

}  // namespace shardscope::core
