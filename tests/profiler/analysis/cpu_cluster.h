// The small CPU "cluster" the engine and analysis tests price plans on: one
// node of 4 ranks with a CPU's memory and bandwidth (the same as
// tests/data/engine/cpu4.json).
#pragma once

#include <cstdint>
#include <string>

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

// The same ranks named as the GPUs a trainer's imported trace ran on, so that
// an import (whose device is its trace's GPU) is compared in milliseconds.
inline core::ClusterSpec h100Ranks4() {
  core::ClusterSpec c = cpu4();
  c.name = "h100-ranks4";
  c.gpu.name = "H100 SXM 80GB";
  c.gpu.device = core::DeviceClass::Gpu;
  return c;
}

// runs.config_json of an import whose `ranks` traces each name an H100 (docs/formats/import-trace.md).
inline std::string h100ImportConfig(std::uint32_t ranks) {
  std::string gpus;
  for (std::uint32_t r = 0; r < ranks; ++r) gpus += std::string(r == 0 ? "" : ", ") + "\"NVIDIA H100 80GB HBM3\"";
  return R"({"schema": "shardscope.import/1", "mode": "import-kineto", "gpus": [)" + gpus + "]}";
}

}  // namespace shardscope::test
