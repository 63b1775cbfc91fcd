// Seeded synthetic models at industrial scale, for tests and benchmarks:
// log-normal row counts (1e3..1e9), dims in {32..512}, pooling 1..100,
// zipf skew on most tables. The same seed gives the same model everywhere
// (own generators, not std:: distributions, whose output is unspecified).
#pragma once

#include <cstdint>

#include "shardscope/core/model.h"

namespace shardscope::planner {

struct SyntheticModelOptions {
  std::uint32_t tables = 100;
  std::uint64_t seed = 1;
  std::uint32_t batch_size_per_gpu = 512;
};

[[nodiscard]] core::ModelSpec syntheticModel(const SyntheticModelOptions& options);

}  // namespace shardscope::planner
