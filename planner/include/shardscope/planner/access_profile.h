// Where a table's ids land: a piecewise-constant approximation of its row
// access distribution, so a row range gets the share of lookups it really
// receives (a zipf table's first rows are hot) and the expected number of
// distinct rows it touches per step.
#pragma once

#include <cstdint>
#include <vector>

#include "shardscope/core/model.h"

namespace shardscope::planner {

class AccessProfile {
 public:
  // Builds segments: exact for uniform/hot-set/histogram, log-spaced for zipf.
  AccessProfile(const core::AccessSpec& access, std::uint64_t rows);

  // Share of all ids that hit rows [begin, end).
  [[nodiscard]] double mass(std::uint64_t begin, std::uint64_t end) const;
  // Expected distinct rows of [begin, end) hit by `draws` ids drawn from the whole table.
  [[nodiscard]] double expectedUniqueRows(std::uint64_t begin, std::uint64_t end, double draws) const;
  [[nodiscard]] std::uint64_t rows() const { return rows_; }
  [[nodiscard]] std::size_t segmentCount() const { return begin_.size(); }
  // The segment holding `row`: rows of one segment are equally likely, so two
  // equal-sized row ranges inside one segment cost the same.
  [[nodiscard]] std::size_t segmentOf(std::uint64_t row) const;
  // First row of segment i (i < segmentCount()), for walking segments in order.
  [[nodiscard]] std::uint64_t segmentBegin(std::size_t i) const { return begin_[i]; }

 private:
  void addSegment(std::uint64_t begin, std::uint64_t end, double mass);

  std::uint64_t rows_;
  std::vector<std::uint64_t> begin_;  // segment starts, ascending; segment i = [begin_[i], begin_[i+1])
  std::vector<double> per_row_;       // probability of one row in segment i
  std::vector<double> prefix_;        // mass of segments before i
};

}  // namespace shardscope::planner
