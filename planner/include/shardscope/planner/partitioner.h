// Places every table of a model on the M ranks of a sharding group so that
// the slowest rank is as fast as possible within each rank's memory: the
// optimizing partitioner (greedy longest-first, then moves, swaps and
// splits of the heaviest tables) and the named baselines it is measured
// against.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/constraints.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/planner/grid_result.h"

namespace shardscope::planner {

enum class Algorithm {
  Optimized,
  Random,
  RoundRobin,
  DimGreedy,
  SizeGreedy,
  LookupGreedy,
  SizeLookupGreedy,
  TorchRecGreedy,
};

[[nodiscard]] const char* toString(Algorithm a);
[[nodiscard]] std::optional<Algorithm> algorithmFromString(std::string_view s);
[[nodiscard]] const std::vector<Algorithm>& allAlgorithms();
[[nodiscard]] const std::vector<Algorithm>& baselineAlgorithms();

struct PlannerOptions {
  Algorithm algorithm = Algorithm::Optimized;
  // The trainer the plan is for: TorchRec's rank rules, or ShardScope's
  // engine, which also runs permuted row blocks (core::PlanTarget).
  core::PlanTarget target = core::PlanTarget::TorchRec;
  std::uint64_t seed = 1;                       // for `random`
  std::uint32_t max_improvement_steps = 20000;  // moves/swaps/splits per grid (deterministic cap)
  double time_budget_ms = 2000;   // wall-clock safety cap on improvement per grid (the step cap normally ends it)
  bool compare_baselines = true;  // Optimized also starts from the best greedy baseline
  // Set by another thread (a Ctrl-C handler, a Cancel button) to stop; the
  // grid is then returned with `cancelled` set and nothing else to trust.
  const std::atomic<bool>* cancel = nullptr;
};

// Lower bound on the slowest rank's load for this grid (see docs/cost-model.md).
[[nodiscard]] double lowerBoundMs(const CostModel& model, const Grid& grid, const core::Constraints& constraints,
                                  core::PlanTarget target);

[[nodiscard]] GridResult planGrid(const CostModel& model, const Grid& grid, const core::Constraints& constraints,
                                  const PlannerOptions& options);

}  // namespace shardscope::planner
