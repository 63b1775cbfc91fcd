// Writes imported traces (any number of ranks, one TraceEventSink rank at a
// time) as one trace-store run that `report` analyses like an engine run:
// classified spans, NCCL collectives, steps from profiler steps, step
// summaries, ranks aligned on a common clock. docs/formats/import-trace.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/import/import_classify.h"
#include "shardscope/profiler/import/trace_import.h"

namespace shardscope::profiler {

struct StoreImportOptions {
  core::store::RunKind kind = core::store::RunKind::ImportKineto;
  std::string label;
  // runs.config_json; empty: a shardscope.import/1 stub naming the kind. finish() adds the ranks' "gpus".
  std::string config_json;
  // The model, cluster and plan the trainer ran, when the user gives them
  // (shardscope JSON; empty: unknown). report and calibrate then need no --plan.
  std::string model_json, cluster_json, plan_json;
  // Events of one rank held before they are written. Past it the rank is
  // written as it streams (steps and a2a phases from what was seen so far).
  std::size_t max_buffered_events = 1'000'000;
  // Files that look like traces of different jobs (world sizes or process
  // groups that differ, base times more than kMaxBaseTimeApartNs apart) are
  // refused; with force they are imported with a warning.
  bool force = false;
};

// Ranks of one job start their profilers within minutes of each other;
// traces whose base times (baseTimeNanoseconds) are a day apart are of different jobs.
inline constexpr std::int64_t kMaxBaseTimeApartNs = std::int64_t{24} * 3600 * 1'000'000'000;

// What was imported for one rank (the CLI prints it).
struct ImportedRank {
  int rank = -1;
  std::string source;
  std::uint64_t events = 0;
  std::map<std::string, std::uint64_t> spans_by_kind;  // span kind -> count
  std::int64_t collectives = 0;
  std::int64_t steps = 0;        // steps: profiler steps seen, else the fallback's (step_source)
  std::uint64_t gpu_events = 0;  // kernels, memcpy and memset
  // Where the steps come from: "ProfilerStep", else (the trace has none) an
  // iteration annotation ("annotation \"## forward ##\"") or "whole trace".
  std::string step_source = "ProfilerStep";
  std::int64_t clock_offset_ns = 0;  // added to the file's clock
  std::string clock_reference;       // "ProfilerStep#3 start", "baseTimeNanoseconds", "none"
  bool streamed = false;             // exceeded max_buffered_events
  std::uint64_t stored = 0;          // events that described their row (a ShardScope export), stored as they said
  std::string gpu;                   // the GPU the file names for the rank (ImportRankInfo::gpus), "" when none
};

class StoreImportSink final : public TraceEventSink {
 public:
  // Begins the run (status 'running'). `classifier` may be null (defaults).
  [[nodiscard]] static core::Result<std::unique_ptr<StoreImportSink>> create(const std::filesystem::path& store,
                                                                             const StoreImportOptions& options,
                                                                             KernelClassifier classifier = {});
  ~StoreImportSink() override;

  core::Status beginRank(const ImportRankInfo& rank) override;
  core::Status event(const TraceEvent& event) override;
  core::Status updateRank(const ImportRankInfo& rank) override;
  core::Status endRank() override;

  // After every file imported: checks (world sizes, missing ranks become
  // warnings), writes the ranks' GPUs into the configuration and marks the
  // run complete. fail() marks it failed.
  [[nodiscard]] core::Status finish();
  [[nodiscard]] core::Status fail(std::string_view reason);

  [[nodiscard]] core::store::RunId run() const;
  [[nodiscard]] const std::vector<ImportedRank>& ranks() const { return done_; }
  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct State;
  explicit StoreImportSink(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
  std::vector<ImportedRank> done_;
  std::vector<std::string> warnings_;
};

// Bytes of one element of a trace dtype ("Float" 4, "BFloat16" 2, "Long" 8,
// ...); 0 when unknown.
[[nodiscard]] int dtypeBytes(std::string_view dtype);

}  // namespace shardscope::profiler
