// The ShardScope version, for --version, About boxes and plan provenance.
#pragma once

#include <string>

namespace shardscope::core {

[[nodiscard]] const char* versionString();
// The git commit the build came from: 12 hex digits, "-dirty" when the tree
// had changes, or "unknown" (a build outside a git checkout).
[[nodiscard]] const char* buildCommit();
// "0.1.0 (commit 0123456789ab)": what every program's --version prints after its name.
[[nodiscard]] std::string versionLine();

}  // namespace shardscope::core
