#include "shardscope/core/version.h"

namespace shardscope::core {

const char* versionString() { return SHARDSCOPE_VERSION; }

}  // namespace shardscope::core
