#include "shardscope/report/table_size_histogram.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <utility>

namespace shardscope::report {

int binIndexOf(std::uint64_t bytes) {
  // floor(log2(bytes)) in integers: exact at every edge.
  if (bytes == 0) return 0;
  return (static_cast<int>(std::bit_width(bytes)) - 1) / kOctavesPerBin;
}

double binLowBytes(int k) { return std::ldexp(1.0, k * kOctavesPerBin); }

std::vector<TableSizeBin> tableSizeBins(const std::vector<core::TableSpec>& tables) {
  std::vector<TableSizeBin> bins;
  if (tables.empty()) return bins;
  int lo = INT_MAX;
  int hi = INT_MIN;
  for (const core::TableSpec& t : tables) {
    const int k = binIndexOf(t.weightBytes());
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  bins.resize(static_cast<std::size_t>(hi - lo + 1));
  for (int k = lo; k <= hi; ++k) {
    TableSizeBin& b = bins[static_cast<std::size_t>(k - lo)];
    b.index = k;
    b.low_bytes = binLowBytes(k);
    b.high_bytes = binLowBytes(k + 1);
  }
  std::vector<std::vector<std::pair<std::uint64_t, std::size_t>>> members(bins.size());  // (bytes, table)
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const std::uint64_t bytes = tables[t].weightBytes();
    const auto i = static_cast<std::size_t>(binIndexOf(bytes) - lo);
    bins[i].tables += 1;
    bins[i].total_bytes += static_cast<double>(bytes);
    members[i].emplace_back(bytes, t);
  }
  for (std::size_t i = 0; i < bins.size(); ++i) {
    auto& m = members[i];
    const auto shown = std::min<std::size_t>(m.size(), kMaxNamesPerBin);
    std::partial_sort(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(shown), m.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t j = 0; j < shown; ++j) bins[i].largest.push_back(m[j].second);
  }
  return bins;
}

}  // namespace shardscope::report
