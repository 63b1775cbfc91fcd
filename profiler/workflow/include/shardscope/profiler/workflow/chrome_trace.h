// A stored run (or a time range of it) as Chrome trace JSON, the format
// Perfetto and chrome://tracing open: one process per rank ("rank 3 (host)"),
// one thread per stream (compute, comm, GPU streams), every span an "X"
// event with its kind as category and step, bytes, correlation and table as
// args; every collective an "X" event on its own thread with op, group,
// process group, algorithm, seq and bytes. Written rank by rank, event by
// event: memory holds one rank's spans of the window at a time.
#pragma once

#include <cstdint>
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
  std::int64_t origin_ns = 0;  // store time of ts 0: the window's start, else the run's first span
};

// Timestamps are microseconds from `origin_ns` (Chrome's unit), with
// nanosecond fractions kept. Errors: the store or run cannot be read.
[[nodiscard]] core::Result<ChromeTraceOutcome> writeChromeTrace(const ChromeTraceRequest& request, std::ostream& out);

}  // namespace shardscope::profiler
