// The bins of the Model page's table-size histogram: how many tables weigh
// 1-3 MB, 3-10 MB, ... (bins of half a decade of weight bytes, on a log
// scale), with the largest tables of each bin.
#pragma once

#include <cstddef>
#include <vector>

#include "shardscope/core/model.h"

namespace shardscope::report {

// Bin k holds sizes in [10^(k/2), 10^((k+1)/2)) bytes.
inline constexpr int kBinsPerDecade = 2;
// Tables a bin lists, the largest first.
inline constexpr std::size_t kMaxNamesPerBin = 8;

struct TableSizeBin {
  int index = 0;          // k above
  double low_bytes = 0;   // inclusive
  double high_bytes = 0;  // exclusive
  int tables = 0;
  double total_bytes = 0;            // weights of the tables in the bin
  std::vector<std::size_t> largest;  // its largest tables (indices), the largest first, at most kMaxNamesPerBin
};

// The bin holding `bytes` (below one byte: bin 0).
[[nodiscard]] int binIndexOf(double bytes);
// The lower edge of bin k in bytes.
[[nodiscard]] double binLowBytes(int k);
// Consecutive bins from the smallest table's to the largest's (empty ones
// included, so an axis has no gaps); empty without tables.
[[nodiscard]] std::vector<TableSizeBin> tableSizeBins(const std::vector<core::TableSpec>& tables);

}  // namespace shardscope::report
