// The desktop tests' small project: the engine's tiny model
// (tests/data/engine) on its 4-rank CPU cluster, quick to profile anywhere.
#pragma once

#include <string>

#include "shardscope/core/json_io.h"
#include "shardscope/core/project.h"

namespace shardscope::test {

inline core::Project tinyProject() {
  const std::string data = SHARDSCOPE_TEST_DATA_DIR;
  core::Project p;
  p.name = "tiny on 4 CPU ranks";
  p.model = core::loadModel(data + "/engine/tiny_model.json").value();
  p.cluster = core::loadCluster(data + "/engine/cpu4.json").value();
  return p;
}

}  // namespace shardscope::test
