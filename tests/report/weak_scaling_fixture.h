// The weak-scaling reading both report tests word: one row (M = 8) over
// N = 8, 16, 32; nothing fits at 8, and at 32 the replica sync grows by 2 ms.
#pragma once

#include <cstdint>

#include "shardscope/planner/scaling_sweep.h"

namespace shardscope::test {

inline planner::ScalingResult threeWorldSizes() {
  planner::ScalingResult r;
  r.world_sizes = {8, 16, 32};
  r.group_sizes = {8};
  for (std::uint32_t n : r.world_sizes) {
    planner::ScalingCell c;
    c.world_size = n;
    c.group_size = 8;
    c.planned = true;
    c.fits = n > 8;
    c.step.embedding_ms = 1.0;
    c.step.all_to_all_ms = 0.5;
    c.step.replica_sync_ms = n == 32 ? 2.5 : 0.5;
    c.step.dense_ms = 0.25;
    c.step_ms = c.step.embedding_ms + c.step.all_to_all_ms + c.step.replica_sync_ms + c.step.dense_ms;
    c.step.step_ms = c.step_ms;
    c.samples_per_second_per_gpu = 4096.0 * 1000.0 / c.step_ms;
    r.cells.push_back(c);
  }
  return r;
}

}  // namespace shardscope::test
