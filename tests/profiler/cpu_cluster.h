// The small CPU "cluster" the engine and analysis tests price plans on: one
// node of 4 ranks with a CPU's memory and bandwidth (the same as
// tests/data/engine/cpu4.json).
#pragma once

#include "shardscope/core/cluster.h"

namespace shardscope::test {

inline core::ClusterSpec cpu4() {
  core::ClusterSpec c;
  c.name = "cpu4";
  c.nodes = 1;
  c.gpus_per_node = 4;
  c.gpu = {"CPU rank", 2ull << 30, 10.0, 0.05, core::DeviceClass::Cpu};
  c.intra_node = {5.0, 5.0};
  c.inter_node = {1.0, 50.0};
  return c;
}

}  // namespace shardscope::test
