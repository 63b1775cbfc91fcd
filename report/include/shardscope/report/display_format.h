// How the desktop app spells core values for people: byte sizes, counts,
// pooling and access distributions, and the rows of the summary panels.
// Qt-free so the wording is tested without a window and shared by all pages.
// Byte sizes are binary everywhere (1 KiB = 2^10 bytes, 1 GiB = 2^30), as in
// the planner's memory figures, and written by core::formatBytes ("1.5 KiB",
// "19.1 GiB", "16 GiB" on an axis). Bandwidths stay decimal GB/s, as links
// are quoted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"

namespace shardscope::report {

// 40000000 -> "40,000,000".
[[nodiscard]] std::string formatCount(std::uint64_t n);
// Gibibytes (2^30 bytes) with two decimals and digit groups, for a column or
// a total in one unit (core::formatBytes in GiB): 20480000000 -> "19.07",
// 2^40 -> "1,024.00", tiny non-zero sizes -> "< 0.01", 0 -> "0".
[[nodiscard]] std::string formatGibibytes(std::uint64_t bytes);
// A number with `decimals` digits after the point, trailing zeros kept.
[[nodiscard]] std::string formatFixed(double v, int decimals);
// Shortest form of a double: 1.05 -> "1.05", 3.0 -> "3".
[[nodiscard]] std::string formatShort(double v);
// 12345678 -> "12.3 M"; below 1000 the plain count.
[[nodiscard]] std::string formatScaledCount(double n);

// How often the replicas sync: "every step", "every 4 steps".
[[nodiscard]] std::string syncIntervalText(std::uint32_t steps);
// B against A as a relative change, in the one style of core::formatRelativeError:
// "+35.0%", "-80.0%", past +1,000 % a factor ("12.0x"). "" when `a` is not positive.
[[nodiscard]] std::string formatChange(double a, double b);
// B - A of two fractions in percentage points: "+6.2 pp", "−0.4 pp".
[[nodiscard]] std::string formatPointsDifference(double a, double b);

// "fixed 3", "uniform 20 ± 5".
[[nodiscard]] std::string poolingText(const core::PoolingSpec& p);
// "uniform", "zipf 1.05", "hot 10% → 90%", "histogram (64 buckets)".
[[nodiscard]] std::string accessText(const core::AccessSpec& a);

// "Row-wise Adagrad", "Adam", "SGD".
[[nodiscard]] std::string optimizerText(core::Optimizer o);

// What people type for a count of rows: "40000000", "40,000,000",
// "40 000 000", "4e7", "40M", "1.5k", "2G" or "2B" (k/M/G or B/T = 1e3/1e6/1e9/1e12).
// nullopt for anything else, a negative or fractional count, or one past
// 64 bits.
[[nodiscard]] std::optional<std::uint64_t> parseCount(std::string_view text);

// Pooling as the table editor shows it: "3" (fixed), "20 ± 5" (uniform).
[[nodiscard]] std::string poolingEditText(const core::PoolingSpec& p);
// Reads "3", "fixed 3", "20 ± 5", "20 +- 5", "20+/-5", "uniform 20 ± 5".
// A plain number keeps the kind of `current` (a uniform table keeps its
// spread). Ranges are not checked here (core::checkTable does).
[[nodiscard]] std::optional<core::PoolingSpec> parsePoolingText(std::string_view text,
                                                                const core::PoolingSpec& current);

// One line of a summary panel. `key` is stable (tests and object names use
// it); `label` and `value` are what the user reads.
struct SummaryRow {
  std::string key;
  std::string label;
  std::string value;
};

[[nodiscard]] std::vector<SummaryRow> modelSummaryRows(const core::ModelSpec& m);
[[nodiscard]] std::vector<SummaryRow> clusterSummaryRows(const core::ClusterSpec& c);

}  // namespace shardscope::report
