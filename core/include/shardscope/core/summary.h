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

// Byte sizes are binary everywhere (1 KiB = 2^10 bytes, 1 GiB = 2^30), as in
// the planner's memory figures.
enum class ByteUnit { Auto, B, KiB, MiB, GiB, TiB, PiB, EiB };

// How formatBytes writes a size. The default is "1.5 KiB", "97.7 GiB".
struct BytesFormat {
  // Auto: the largest unit that keeps the number at least 1; otherwise this one ("0.4 GiB").
  ByteUnit unit = ByteUnit::Auto;
  // Digits after the point, rounded as printf rounds; a size in bytes has none ("512 B").
  int decimals = 1;
  // No decimals from 10 of the unit on: "1.5 KiB", "12 KiB", "256 MiB".
  bool whole_from_ten = false;
  // Trailing zeros after the point dropped: "80 GiB", "79.6 GiB".
  bool trim_zeros = false;
  // The unit's name after the number; without it "19.07", for a column whose title names the unit.
  bool unit_name = true;
  // Digit groups in the whole part: "1,024.00".
  bool digit_groups = false;
};

// The one byte formatter: 1536 -> "1.5 KiB", 104857600000 -> "97.7 GiB",
// 512 -> "512 B"; {.decimals = 0} 2^22 -> "4 MiB"; {.unit = GiB} 2^28 ->
// "0.2 GiB". Units up to EiB; "?" when not finite.
[[nodiscard]] std::string formatBytes(double bytes, const BytesFormat& format = {});
// Commas between groups of three digits of a number's whole part: "1234567" -> "1,234,567", "-1024.00" -> "-1,024.00".
[[nodiscard]] std::string groupDigits(std::string_view number);
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

}  // namespace shardscope::core
