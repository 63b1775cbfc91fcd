// A stored run (or a time range of it) as Chrome trace JSON, the format
// Perfetto and chrome://tracing open: one process per rank ("rank 3 (host)"),
// one thread per stream (compute, comm, GPU streams), every span an "X"
// event with its kind as category and step, bytes, correlation and table as
// args; every collective an "X" event on its own thread with op, group,
// process group, algorithm, seq and bytes. Each event also says the row it
// came from (args "shardscope_kind" / "shardscope_collective", "stream"), and
// times are exact ns, so the Kineto importer reads a rank's file back into
// the same spans and collectives (docs/formats/import-trace.md). Written rank
// by rank, event by event: memory holds one rank's spans of the window at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"

namespace shardscope::profiler {

struct ChromeTraceRequest {
  std::string store;
  core::store::RunId run{};  // 0: the newest run
  std::vector<int> ranks;    // empty: every rank
  // The window in ms from the run's first span: every span and collective that overlaps it; absent: all.
  std::optional<double> from_ms;
  std::optional<double> to_ms;
};

struct ChromeTraceOutcome {
  core::store::RunId run{};
  std::uint64_t spans = 0;
  std::uint64_t collectives = 0;
  std::int64_t origin_ns = 0;      // store time of ts 0: the window's start, else the run's first span
  std::vector<std::string> files;  // writeChromeTraceFiles: the files written, one per rank with events
};

// Every rank in one file. Timestamps are microseconds from `origin_ns` (Chrome's unit) written with
// exactly three decimals, so the ns are exact at any scale; `otherData.origin_ns` says the origin.
// A file of one rank also says it in `distributedInfo.rank` and imports as that rank's trace.
// Errors: the store or run cannot be read, the stream fails.
[[nodiscard]] core::Result<ChromeTraceOutcome> writeChromeTrace(const ChromeTraceRequest& request, std::ostream& out);

// One file per rank that has events in the window, `dir`/rank<N>.json, each a Chrome trace with
// `distributedInfo.rank` = N: the folder imports with `import kineto`. `dir` is made if missing; one
// that holds rank<N>.json files already is refused (a usage error), since importing the folder would
// mix two exports. Errors also: the store or run cannot be read, a file cannot be written.
[[nodiscard]] core::Result<ChromeTraceOutcome> writeChromeTraceFiles(const ChromeTraceRequest& request,
                                                                     const std::filesystem::path& dir);

}  // namespace shardscope::profiler
