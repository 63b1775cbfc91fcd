// The bins of the Model page's table-size histogram: how many tables weigh
// 1-4 MiB, 4-16 MiB, ... (bins of a factor of 4 of weight bytes, on a log
// scale), with the largest tables of each bin. Every KiB, MiB and GiB starts
// a bin, so the edges read as whole binary sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shardscope/core/model.h"

namespace shardscope::report {

// Bin k holds sizes in [4^k, 4^(k+1)) bytes = [2^(2k), 2^(2k+2)).
inline constexpr int kOctavesPerBin = 2;
// Bins per factor of 1024 (from 1 KiB to 1 MiB): bin 5u starts at 1024^u bytes.
inline constexpr int kBinsPerBinaryUnit = 10 / kOctavesPerBin;
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

// The bin holding `bytes` (0 bytes: bin 0).
[[nodiscard]] int binIndexOf(std::uint64_t bytes);
// The lower edge of bin k in bytes, 4^k.
[[nodiscard]] double binLowBytes(int k);
// Consecutive bins from the smallest table's to the largest's (empty ones
// included, so an axis has no gaps); empty without tables.
[[nodiscard]] std::vector<TableSizeBin> tableSizeBins(const std::vector<core::TableSpec>& tables);

}  // namespace shardscope::report
