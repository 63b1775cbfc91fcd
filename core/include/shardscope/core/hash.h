// SplitMix64, the one mixing function behind every deterministic stream in
// ShardScope (synthetic models, workload ids, embedding weights, gradients):
// equal seeds give equal streams in the planner, the engine and the tests.
#pragma once

#include <cstdint>

namespace shardscope::core {

// The golden-ratio increment of SplitMix64.
inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// SplitMix64's finalizer: a bijection of 64 bits with full avalanche.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// One SplitMix64 step from state z: mix64(z + gamma), a stateless hash of z.
[[nodiscard]] constexpr std::uint64_t splitMix64(std::uint64_t z) { return mix64(z + kGoldenGamma); }

// The SplitMix64 generator: next() advances the state by gamma and mixes it.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(std::uint64_t seed) : state_(seed) {}
  constexpr std::uint64_t next() { return mix64(state_ += kGoldenGamma); }

 private:
  std::uint64_t state_;
};

}  // namespace shardscope::core
