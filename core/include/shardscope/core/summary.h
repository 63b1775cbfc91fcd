// Human-readable summaries of a model and a cluster, shared by the CLI, the
// headless run and the desktop app's status texts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"

namespace shardscope::core {

// printf into a std::string (format-checked at call sites).
[[nodiscard]] __attribute__((format(printf, 1, 2))) std::string formatf(const char* fmt, ...);

// 1536 -> "1.5 KiB", 104857600000 -> "97.7 GiB".
[[nodiscard]] std::string formatBytes(std::uint64_t bytes);
// 40000000 -> "40.0M", 3067956 -> "3.07M", 155 -> "155".
[[nodiscard]] std::string formatCount(double n);
[[nodiscard]] std::string describeAccess(const AccessSpec& a);
// Ranks as people read them, sorted, without repeats, runs folded: {5, 0, 1, 2, 3, 7, 8} -> "0-3, 5, 7, 8".
[[nodiscard]] std::string formatRankRanges(std::vector<int> ranks);
// ASCII letters in lower case (names of kernels, annotations, collectives).
[[nodiscard]] std::string asciiLower(std::string_view s);

[[nodiscard]] std::string formatModelSummary(const ModelSpec& m);      // multi-line, with a table of tables
[[nodiscard]] std::string formatClusterSummary(const ClusterSpec& c);  // multi-line

}  // namespace shardscope::core
