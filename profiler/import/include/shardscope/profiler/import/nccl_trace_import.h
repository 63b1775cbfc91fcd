// Traces of ShardScope's NCCL profiler plugin (shardscope.nccl-trace/1: JSON
// lines, one file per process; docs/formats/nccl-trace.md) into one
// trace-store run of kind import-nccl: one rank per file, a `collectives` row
// and a span per call (op, bytes, communicator, sequence number, NCCL's
// algorithm and protocol, peers), steps from the trainer's step counter when
// the calls carry one. Every file is checked in full before the run begins,
// so a bad file leaves the store as it was. docs/nccl-profiler.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/import/store_import_sink.h"

namespace shardscope::profiler {

inline constexpr std::string_view kNcclTraceSchema = "shardscope.nccl-trace/1";

// The file's first line: the process.
struct NcclTraceHeader {
  std::string host;
  std::int64_t pid = 0;
  int rank = 0, nranks = 1;  // the process's rank in the job, the job's size
  std::string rank_source;   // "RANK", ..., "communicator" (the first communicator's rank)
  std::string comm;          // the first communicator's name
  std::int64_t time_ns = 0;  // when the plugin opened the file (0: not said)
};

// A communicator as a "comm" line (or the calls) describe it.
struct NcclTraceComm {
  std::string name;  // the trainer's name for it (ncclConfig_t.commName), may be empty
  std::uint64_t hash = 0;
  int rank = 0, nranks = 1;  // this process's rank in it, its size
};

// One "call" line, checked.
struct NcclTraceCall {
  std::int64_t line = 0;
  NcclTraceComm comm;
  std::string op;  // all_reduce, all_to_all, send_recv, ... (any [a-z0-9_] word; unknown ones are skipped)
  std::string func, datatype, algo, proto;
  std::int64_t seq = 0, bytes = 0, count = 0;
  int root = -1, channels = 0;
  std::vector<int> peers;  // p2p calls: ranks in the communicator
  bool has_peers = false;
  std::int64_t start_ns = 0, end_ns = 0;            // the plugin's CPU clock
  std::int64_t gpu_start_ns = -1, gpu_end_ns = -1;  // GPU timer over the kernel channels, -1: none
  std::int64_t step = -1;
  bool partial = false, incomplete = false;
};

// What reading a file found besides its calls.
struct NcclTraceSummary {
  NcclTraceHeader header;
  std::vector<NcclTraceComm> comms;  // distinct by hash, in the order first seen
  std::uint64_t lines = 0, calls = 0;
  std::uint64_t with_gpu_times = 0, with_step = 0, partial = 0, incomplete = 0;
  bool has_end = false;       // an "end" line was seen (the last one counts)
  std::uint64_t dropped = 0;  // the last end line's count
};

using NcclCallFn = std::function<core::Status(const NcclTraceCall&)>;

// Reads one file line by line, checking each; `on_call` (may be empty) gets
// every call in file order. Errors name the file, the line, the JSON path and
// what was expected: "rank1.jsonl: line 7: /bytes: expected a whole number
// >= 0, found -5". Never throws.
[[nodiscard]] core::Result<NcclTraceSummary> readNcclTrace(const std::string& path, const NcclCallFn& on_call = {},
                                                           const std::atomic<bool>* cancel = nullptr);

// Files as given; a folder means its *.jsonl files and those of its
// subfolders down to `max_depth` levels (0: its own), in path order.
[[nodiscard]] core::Result<std::vector<std::string>> expandNcclTraceInputs(const std::vector<std::string>& inputs,
                                                                           int max_depth = 4);

struct NcclImportOptions {
  std::string label;  // "" -> "nccl <first file> (+N)"
  // Files that look like traces of different jobs (world sizes that differ,
  // one communicator rank in two files, another "world" communicator, start
  // times a day apart) are refused; with force imported with a warning.
  bool force = false;
  std::string model_json, cluster_json, plan_json;  // the trainer's, when given (as StoreImportOptions)
  const std::atomic<bool>* cancel = nullptr;
  // (bytes read, bytes to read: every file is read twice, to check and to write)
  std::function<void(std::uint64_t done, std::uint64_t total, std::string_view file)> progress;
};

struct NcclImportOutcome {
  core::store::RunId run{};
  std::vector<ImportedRank> ranks;                   // per file, in file order
  std::map<std::string, std::uint64_t> calls_by_op;  // over all ranks
  std::uint64_t calls = 0;
  std::vector<std::string> warnings;
};

// Checks every file (and that they are of one job), then writes them as one
// run of `store` (created when missing). Errors: InvalidInput for a file
// (nothing written), Io when the store fails (the run is marked failed),
// Cancelled.
[[nodiscard]] core::Result<NcclImportOutcome> importNcclTraces(const std::vector<std::string>& files,
                                                               const std::filesystem::path& store,
                                                               const NcclImportOptions& options = {});

}  // namespace shardscope::profiler
