// The engine's run configuration (`shardscope.engine-run/1`), stored with
// every engine run (runs.config_json) so a report can say how it was run:
// one writer for emulate, MPI and GPU runs, and the one reader of any run's
// configuration (an import's, `shardscope.import/1`, names its mode and GPUs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

inline constexpr std::string_view kEngineRunSchema = "shardscope.engine-run/1";
inline constexpr std::string_view kImportRunSchema = "shardscope.import/1";

// A shard that ran with fewer physical rows than it has (ids folded onto them).
struct CappedShard {
  std::string table;
  std::uint32_t group_rank = 0;
  std::uint64_t row_offset = 0;
  std::uint32_t col_offset = 0;
  std::uint64_t rows = 0;
  std::uint64_t physical_rows = 0;
};

// What the GPU tracer saw and cost (runs on GPUs): written at the run's end.
struct GpuTracing {
  bool cupti = false;
  std::uint64_t records = 0;
  std::uint64_t dropped_records = 0;
  std::uint64_t buffers = 0;
  std::uint64_t buffer_bytes = 0;
  std::optional<double> untraced_step_ms;  // mean step of the probe steps run before the tracer started
  std::optional<double> traced_step_ms;    // mean measured step, traced
  std::optional<double> overhead_pct;      // traced / untraced - 1, in percent
  std::string note;                        // why a figure is missing
};

struct EngineRunConfig {
  std::string mode;  // "emulate", "mpi" or "cuda"
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
  std::optional<std::string> device;              // "cuda" for runs on GPUs (absent: the CPU)
  std::vector<std::string> gpus;                  // per rank: the GPU's name and index
  std::optional<GpuTracing> gpu_tracing;
  std::string started;  // when the run began (UTC, ISO 8601); empty: the writer writes the time it writes
  // Read back only: the text's schema (kEngineRunSchema, an import's
  // kImportRunSchema, "" when absent); the writer always writes kEngineRunSchema.
  std::string schema;
};

// The JSON text (`started` as given, else now).
[[nodiscard]] std::string engineRunConfigJson(const EngineRunConfig& c);

// Reads a run's configuration (runs.config_json) back. The text must be JSON
// (core's checked parse: no key twice, nesting and numbers within limits)
// holding an object; errors (InvalidInput) name `source` and the JSON path.
// Every member is optional, and one of another type is passed over like one
// this build does not know (other builds, and imports, write this text):
// what the text does not give reads as 0, empty or absent, not as the
// writer's defaults (sync_interval 0: the run did not say).
[[nodiscard]] core::Result<EngineRunConfig> readEngineRunConfig(std::string_view text, const std::string& source);

// readEngineRunConfig, or a configuration that says nothing (every field 0,
// empty or absent) when the text is empty, not JSON or not an object: a run
// whose stored configuration is bad still lists, compares and analyses, its
// device, batch and grid unknown (the grid then comes from its plan).
[[nodiscard]] EngineRunConfig storedRunConfig(std::string_view text);

}  // namespace shardscope::profiler
