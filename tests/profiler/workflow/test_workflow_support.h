// What the workflow tests share: a profile request for the tiny engine model
// on the 4-rank CPU cluster (tests/data/engine), and the runs of a store.
#pragma once

#include <QTemporaryDir>

#include <string>
#include <vector>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::test {

// Two measured steps, one thread, 64 MiB: fast, and the same on any machine.
inline profiler::ProfileRequest tinyProfileRequest(const QTemporaryDir& dir) {
  const std::string data = SHARDSCOPE_TEST_DATA_DIR;
  profiler::ProfileRequest r;
  r.project.model = core::loadModel(data + "/engine/tiny_model.json").value();
  r.project.cluster = core::loadCluster(data + "/engine/cpu4.json").value();
  r.store = dir.filePath("s.sqlite").toStdString();
  r.steps = 2;
  r.threads = 1;
  r.memory_budget_bytes = 64ull << 20;
  return r;
}

// Every run of the store at `path`, oldest first; none when it does not open.
inline std::vector<core::store::RunRecord> storedRuns(const std::string& path) {
  auto opened = core::store::openStore(path);
  if (!opened) return {};
  auto runs = opened->listRuns();
  return runs ? std::move(runs).value() : std::vector<core::store::RunRecord>{};
}

}  // namespace shardscope::test
