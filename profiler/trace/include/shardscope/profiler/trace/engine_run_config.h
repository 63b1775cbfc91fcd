// The engine's run configuration (`shardscope.engine-run/1`), stored with
// every engine run (runs.config_json) so a report can say how it was run:
// one writer for emulate and MPI runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::profiler {

// A shard that ran with fewer physical rows than it has (ids folded onto them).
struct CappedShard {
  std::string table;
  std::uint32_t group_rank = 0;
  std::uint64_t row_offset = 0;
  std::uint32_t col_offset = 0;
  std::uint64_t rows = 0;
  std::uint64_t physical_rows = 0;
};

struct EngineRunConfig {
  std::string mode;  // "emulate" or "mpi"
  std::uint32_t steps = 0;
  std::uint32_t warmup = 0;
  std::uint64_t seed = 0;
  unsigned threads = 0;
  std::uint32_t batch_size_per_gpu = 0;
  std::uint32_t sync_interval = 1;
  std::string pooling = "sum";
  double learning_rate = 0;
  double eps = 0;
  bool tracing = false;
  bool replay = false;
  std::uint32_t sharding_group_size = 0;
  std::uint32_t replicas = 0;
  std::uint32_t groups_measured = 0;
  std::vector<std::uint32_t> ranks_measured;
  std::optional<std::uint32_t> world_size;  // MPI runs
  std::uint64_t memory_budget_bytes = 0;
  std::vector<CappedShard> capped;
  std::string host;
  std::optional<std::vector<std::string>> hosts;  // MPI runs: every rank's host
  std::string cpu;                                // the CPU model (profiler::cpuName())
};

// The JSON text, with the start time (UTC) added.
[[nodiscard]] std::string engineRunConfigJson(const EngineRunConfig& c);

}  // namespace shardscope::profiler
