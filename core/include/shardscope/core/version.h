// The ShardScope version, for --version, About boxes and plan provenance.
#pragma once

namespace shardscope::core {

[[nodiscard]] const char* versionString();

}  // namespace shardscope::core
