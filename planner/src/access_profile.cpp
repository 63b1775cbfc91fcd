// Piecewise-constant access distributions. Zipf uses log-spaced segments with
// exact generalized-harmonic masses for small ranks and the Euler-Maclaurin
// integral beyond, so a 1e9-row table needs ~200 segments.
#include "shardscope/planner/access_profile.h"

#include <algorithm>
#include <cmath>

namespace shardscope::planner {

namespace {
// sum_{k=a}^{b-1} k^-alpha for 1 <= a < b.
double zipfSum(std::uint64_t a, std::uint64_t b, double alpha) {
  if (b - a <= 64) {
    double s = 0.0;
    for (std::uint64_t k = a; k < b; ++k) s += std::pow(static_cast<double>(k), -alpha);
    return s;
  }
  // Euler-Maclaurin: integral + endpoint correction; error ~ f'(a)/12, tiny for a >= 32.
  const double fa = std::pow(static_cast<double>(a), -alpha), fb = std::pow(static_cast<double>(b), -alpha);
  double integral;
  if (std::abs(alpha - 1.0) < 1e-12) {
    integral = std::log(static_cast<double>(b) / static_cast<double>(a));
  } else {
    integral =
        (std::pow(static_cast<double>(b), 1.0 - alpha) - std::pow(static_cast<double>(a), 1.0 - alpha)) / (1.0 - alpha);
  }
  const double fpa = -alpha * fa / static_cast<double>(a), fpb = -alpha * fb / static_cast<double>(b);
  return integral + (fa - fb) / 2.0 - (fpa - fpb) / 12.0;
}
}  // namespace

void AccessProfile::addSegment(std::uint64_t begin, std::uint64_t end, double mass) {
  if (end <= begin) return;
  begin_.push_back(begin);
  per_row_.push_back(mass / static_cast<double>(end - begin));
}

AccessProfile::AccessProfile(const core::AccessSpec& a, std::uint64_t rows) : rows_(rows) {
  using core::AccessKind;
  switch (a.kind) {
    case AccessKind::Uniform:
      addSegment(0, rows, 1.0);
      break;
    case AccessKind::HotSet: {
      const auto hot = std::clamp<std::uint64_t>(
          static_cast<std::uint64_t>(std::ceil(a.hot_fraction * static_cast<double>(rows))), 1, rows);
      if (hot == rows) {
        addSegment(0, rows, 1.0);
      } else {
        addSegment(0, hot, a.hot_probability);
        addSegment(hot, rows, 1.0 - a.hot_probability);
      }
      break;
    }
    case AccessKind::Histogram: {
      const std::size_t buckets = a.histogram.size();
      double carried = 0.0;  // mass of buckets narrower than a row folds into the next
      std::uint64_t prev = 0;
      for (std::size_t i = 0; i < buckets; ++i) {
        const auto end = static_cast<std::uint64_t>(
            std::llround(static_cast<double>(rows) * static_cast<double>(i + 1) / static_cast<double>(buckets)));
        carried += a.histogram[i];
        if (end > prev) {
          addSegment(prev, end, carried);
          carried = 0.0;
          prev = end;
        }
      }
      break;
    }
    case AccessKind::Zipf: {
      // Rank k = row + 1. Segments: single rows up to 16, then geometric growth 1.1x.
      const double total = zipfSum(1, rows + 1, a.alpha);
      std::uint64_t k = 1;
      while (k <= rows) {
        std::uint64_t next =
            k < 16 ? k + 1 : std::max<std::uint64_t>(k + 1, static_cast<std::uint64_t>(static_cast<double>(k) * 1.1));
        next = std::min(next, rows + 1);
        addSegment(k - 1, next - 1, zipfSum(k, next, a.alpha) / total);
        k = next;
      }
      break;
    }
  }
  prefix_.resize(begin_.size() + 1, 0.0);
  for (std::size_t i = 0; i < begin_.size(); ++i) {
    const std::uint64_t end = i + 1 < begin_.size() ? begin_[i + 1] : rows_;
    prefix_[i + 1] = prefix_[i] + per_row_[i] * static_cast<double>(end - begin_[i]);
  }
  // Normalise away rounding so the whole table has mass exactly 1.
  const double sum = prefix_.back();
  if (sum > 0)
    for (std::size_t i = 0; i < per_row_.size(); ++i) {
      per_row_[i] /= sum;
      prefix_[i + 1] /= sum;
    }
}

std::size_t AccessProfile::segmentOf(std::uint64_t row) const {
  return static_cast<std::size_t>(std::upper_bound(begin_.begin(), begin_.end(), row) - begin_.begin()) - 1;
}

double AccessProfile::mass(std::uint64_t begin, std::uint64_t end) const {
  end = std::min(end, rows_);
  if (end <= begin) return 0.0;
  const std::size_t sb = segmentOf(begin), se = segmentOf(end - 1);
  if (sb == se) return per_row_[sb] * static_cast<double>(end - begin);
  const std::uint64_t sb_end = begin_[sb + 1];
  double m = per_row_[sb] * static_cast<double>(sb_end - begin);
  m += prefix_[se] - prefix_[sb + 1];
  m += per_row_[se] * static_cast<double>(end - begin_[se]);
  return m;
}

double AccessProfile::expectedUniqueRows(std::uint64_t begin, std::uint64_t end, double draws) const {
  end = std::min(end, rows_);
  if (end <= begin || draws <= 0) return 0.0;
  double unique = 0.0;
  for (std::size_t s = segmentOf(begin); s < begin_.size() && begin_[s] < end; ++s) {
    const std::uint64_t seg_end = s + 1 < begin_.size() ? begin_[s + 1] : rows_;
    const std::uint64_t lo = std::max(begin, begin_[s]), hi = std::min(end, seg_end);
    // Each row is hit at least once with probability 1 - (1 - p)^draws.
    const double p = per_row_[s];
    const double hit = p >= 1.0 ? 1.0 : -std::expm1(draws * std::log1p(-p));
    unique += static_cast<double>(hi - lo) * hit;
  }
  return unique;
}

}  // namespace shardscope::planner
