// Human-readable summaries of a model and a cluster, shared by the CLI, the
// headless run and the desktop app's status texts.
#pragma once

#include <cmath>
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
// A relative error (measured / predicted - 1) for people: "+12.3%", "-45.0%";
// past +1,000% the factor instead ("74.4x"), so no figure reads 74401.5 %;
// "-" when it is not finite.
[[nodiscard]] std::string formatRelativeError(double fraction);
// The size of an error (a mean |error|, a fraction) the same way without the
// sign: "12.3%", past 1,000% "74.4x"; "-" when negative (not compared).
[[nodiscard]] std::string formatErrorSize(double fraction);
// A fitted constant and its standard error in engineering notation (exponents
// that are multiples of 3), three significant digits: "1.23 ± 0.04",
// "(2.10 ± 0.04)e3", "(850 ± 12)e-9"; "± ?" when the error is not known (0).
[[nodiscard]] std::string formatWithError(double value, double std_error);
// A constant the run does not determine: its standard error exceeds its value.
[[nodiscard]] inline bool notDetermined(double value, double std_error) { return std_error > std::abs(value); }

// Ranks as people read them, sorted, without repeats, runs folded: {5, 0, 1, 2, 3, 7, 8} -> "0-3, 5, 7, 8".
[[nodiscard]] std::string formatRankRanges(std::vector<int> ranks);
// ASCII letters in lower case (names of kernels, annotations, collectives).
[[nodiscard]] std::string asciiLower(std::string_view s);

[[nodiscard]] std::string formatModelSummary(const ModelSpec& m);      // multi-line, with a table of tables
[[nodiscard]] std::string formatClusterSummary(const ClusterSpec& c);  // multi-line

}  // namespace shardscope::core
