// Importing the traces a real training job wrote (PyTorch profiler / Kineto
// JSON, Nsight Systems SQLite exports; one file per rank) as one run of a
// trace store, with the trainer's plan kept beside it when given, and the
// summary of what was imported. docs/import.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/plan_file.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/import/nccl_trace_import.h"
#include "shardscope/profiler/import/store_import_sink.h"

namespace shardscope::profiler {

// Kineto JSON, Nsight Systems SQLite exports, or the NCCL profiler plugin's
// shardscope.nccl-trace/1 files (docs/nccl-profiler.md).
enum class TraceFormat { Kineto, Nsys, Nccl };

// "kineto" / "nsys" / "nccl", and the run kinds they become ("import-kineto" / ...).
[[nodiscard]] std::string_view toString(TraceFormat format);
[[nodiscard]] std::string_view importRunKind(TraceFormat format);

// How deep a folder is searched for traces by default (its own files are depth 0).
inline constexpr int kDefaultTraceDepth = 4;

// Files as given; a folder means its files of the format (Kineto: *.json and
// *.json.gz; nsys: *.sqlite and *.db; nccl: *.jsonl) in it and in its subfolders down to
// `max_depth` levels below it (0: its own files only), in path order.
// Symbolic links to folders are not followed. Errors: a folder that cannot be
// listed or holds none.
[[nodiscard]] core::Result<std::vector<std::string>> expandTraceInputs(const std::vector<std::string>& inputs,
                                                                       TraceFormat format,
                                                                       int max_depth = kDefaultTraceDepth);

struct TraceImportRequest {
  TraceFormat format = TraceFormat::Kineto;
  std::vector<std::string> inputs;   // files and folders
  std::string store;                 // the trace store (created when missing)
  std::optional<std::string> label;  // default "<format> <first file> (+N)"
  std::optional<std::string> rules;  // shardscope.classify/1 rules tried before the built-in ones
  bool rank_from_name = false;       // nsys: the rank from the file, not its position
  // Kineto, for files whose distributedInfo has no rank (the file's own wins):
  // `rank` for the one file given, or the first capture group of
  // `rank_pattern` (ECMAScript, searched in the file's name); else the file's
  // position among the inputs (warning).
  std::optional<int> rank;
  std::optional<std::string> rank_pattern;
  int max_depth = kDefaultTraceDepth;  // of folders, see expandTraceInputs
  bool force = false;                  // import files that look like traces of different jobs (warning)
  core::TrainerPlanSpec trainer;       // the plan the trainer ran; its world size defaults to the file count
  std::uint64_t progress_min_bytes = 64ull << 20;  // progress only for inputs at least this large
};

struct TraceImportOutcome {
  core::store::RunId run{};
  std::vector<ImportedRank> ranks;
  std::map<std::string, std::uint64_t> spans_by_kind;  // over all ranks
  std::uint64_t events = 0;                            // over all ranks
  std::string plan_summary;                            // "M=4 R=2 on 8 GPUs"; empty without a trainer plan
  std::vector<std::string> warnings;                   // per file, then the run's
};

// (bytes or rows done, total, what is being read)
using TraceImportProgress = std::function<void(std::uint64_t done, std::uint64_t total, std::string_view what)>;

// The NCCL plugin's traces as one run (each file names its rank; rules and
// rank options do not apply): what `import nccl` prints. importTraces of
// TraceFormat::Nccl is this, as a TraceImportOutcome (calls by op as its
// spans by kind).
struct NcclTraceImport {
  NcclImportOutcome outcome;
  std::string plan_summary;  // as TraceImportOutcome's
};
[[nodiscard]] core::Result<NcclTraceImport> importNcclTraceRun(const TraceImportRequest& request,
                                                               const TraceImportProgress& progress,
                                                               const std::atomic<bool>* cancel);

// Checks every input (and the rules and trainer plan) before the run is
// begun, then imports the files in order. Errors: InvalidInput (an input,
// the rules or the plan do not load; after the run began it is marked
// failed and the message ends "run <id> marked failed"), Usage (an
// incomplete trainer plan), Io (the store cannot be written), Cancelled.
[[nodiscard]] core::Result<TraceImportOutcome> importTraces(const TraceImportRequest& request,
                                                            const TraceImportProgress& progress,
                                                            const std::atomic<bool>* cancel);

// What `import` prints: the run, a table of the ranks (events, steps,
// collectives, clock offset, file), spans by kind, the warnings, next steps.
[[nodiscard]] std::string importSummaryText(const TraceImportOutcome& outcome, const TraceImportRequest& request);
[[nodiscard]] nlohmann::ordered_json importSummaryJson(const TraceImportOutcome& outcome,
                                                       const TraceImportRequest& request);

}  // namespace shardscope::profiler
