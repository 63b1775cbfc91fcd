// Inputs of the embedding kernels' GPU check and benchmark: zipf-skewed rows
// (row 0 the hottest, as the workload lists skewed tables) drawn by
// rejection-inversion (Hörmann and Derflinger), O(1) per draw and no table,
// and bags of ids in CSR form. Deterministic for a seed (std::mt19937_64).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace shardscope::gputest {

// Uniform in [0, 1) from 53 bits.
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

// P(row r) proportional to (r + 1)^-alpha over [0, rows); alpha > 0.
class ZipfRows {
 public:
  ZipfRows(std::uint64_t rows, double alpha) : rows_(std::max<std::uint64_t>(rows, 1)), alpha_(alpha) {
    h_x1_ = hIntegral(1.5) - 1.0;
    h_n_ = hIntegral(static_cast<double>(rows_) + 0.5);
    s_ = 2.0 - hIntegralInverse(hIntegral(2.5) - h(2.0));
  }

  std::uint64_t operator()(std::mt19937_64& rng) const {
    for (;;) {
      const double u = h_n_ + uniform01(rng) * (h_x1_ - h_n_);
      const double x = hIntegralInverse(u);
      auto k = static_cast<std::uint64_t>(std::max(1.0, std::min(x + 0.5, static_cast<double>(rows_))));
      const auto kd = static_cast<double>(k);
      if (kd - x <= s_ || u >= hIntegral(kd + 0.5) - h(kd)) return k - 1;
    }
  }

 private:
  // log1p(x) / x and expm1(x) / x, with their series near 0.
  static double helper1(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double helper2(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
  }
  [[nodiscard]] double h(double x) const { return std::exp(-alpha_ * std::log(x)); }
  [[nodiscard]] double hIntegral(double x) const {
    const double lx = std::log(x);
    return helper2((1.0 - alpha_) * lx) * lx;
  }
  [[nodiscard]] double hIntegralInverse(double x) const {
    const double t = std::max(-1.0, x * (1.0 - alpha_));
    return std::exp(helper1(t) * x);
  }

  std::uint64_t rows_;
  double alpha_;
  double h_x1_ = 0, h_n_ = 0, s_ = 0;
};

// Bags in CSR form (offsets[0] == 0).
struct HostBags {
  std::vector<std::uint32_t> offsets{0};
  std::vector<std::uint32_t> ids;
  [[nodiscard]] std::uint32_t count() const { return static_cast<std::uint32_t>(offsets.size() - 1); }
};

// Appends `bags` bags over `rows` rows: a fraction `empty` of them empty, the
// others of a length uniform in [min_len, max_len], ids zipf(alpha).
inline void appendBags(HostBags& out, std::uint32_t bags, std::uint64_t rows, double alpha, std::uint32_t min_len,
                       std::uint32_t max_len, double empty, std::mt19937_64& rng) {
  const ZipfRows zipf(rows, alpha);
  for (std::uint32_t b = 0; b < bags; ++b) {
    std::uint32_t len = 0;
    if (uniform01(rng) >= empty) len = min_len + static_cast<std::uint32_t>(rng() % (max_len - min_len + 1));
    for (std::uint32_t i = 0; i < len; ++i) out.ids.push_back(static_cast<std::uint32_t>(zipf(rng)));
    out.offsets.push_back(static_cast<std::uint32_t>(out.ids.size()));
  }
}

}  // namespace shardscope::gputest
