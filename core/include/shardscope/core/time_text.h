// Timestamps as ShardScope writes them into files and runs: ISO 8601 UTC to
// the second, "2026-12-02T10:00:00Z".
#pragma once

#include <string>

namespace shardscope::core {

[[nodiscard]] std::string utcNowIso8601();

}  // namespace shardscope::core
