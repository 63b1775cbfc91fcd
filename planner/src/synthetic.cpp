#include "shardscope/planner/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "shardscope/core/hash.h"

namespace shardscope::planner {

namespace {
// SplitMix64: tiny, well-mixed, identical on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  std::uint64_t next() { return gen_.next(); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                                           // Box-Muller
    const double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  core::SplitMix64 gen_;
};
}  // namespace

core::ModelSpec syntheticModel(const SyntheticModelOptions& o) {
  Rng rng(o.seed);
  core::ModelSpec m;
  m.name = "synthetic-" + std::to_string(o.tables) + "-seed" + std::to_string(o.seed);
  m.batch_size_per_gpu = o.batch_size_per_gpu;
  m.optimizer = core::Optimizer::RowWiseAdagrad;
  constexpr std::uint32_t dims[] = {32, 64, 128, 256, 512};
  constexpr double dim_weights[] = {0.15, 0.3, 0.35, 0.15, 0.05};
  for (std::uint32_t i = 0; i < o.tables; ++i) {
    core::TableSpec t;
    t.name = std::to_string(i);
    t.name.insert(0, 1, 't');  // not "t" + ..., which trips GCC 12's -Wrestrict false positive
    const double log_rows = std::clamp(5.0 + 1.3 * rng.normal(), 3.0, 9.0);
    t.rows = static_cast<std::uint64_t>(std::llround(std::pow(10.0, log_rows)));
    double u = rng.uniform();
    std::size_t d = 0;
    while (d + 1 < std::size(dims) && u >= dim_weights[d]) u -= dim_weights[d++];
    t.dim = dims[d];
    // Pooling log-uniform in [1, 100], rounded to whole ids.
    t.pooling.mean = std::round(std::pow(10.0, 2.0 * rng.uniform()));
    if (rng.uniform() < 0.7) {
      t.access.kind = core::AccessKind::Zipf;
      t.access.alpha = std::round((0.6 + 0.7 * rng.uniform()) * 100.0) / 100.0;
    }
    m.tables.push_back(std::move(t));
  }
  // A DCN-sized dense part.
  m.dense.parameters = 16'000'000;
  m.dense.flops_per_sample = 6.0 * static_cast<double>(m.dense.parameters);
  return m;
}

}  // namespace shardscope::planner
