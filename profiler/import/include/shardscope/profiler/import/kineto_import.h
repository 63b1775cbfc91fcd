// PyTorch profiler (Kineto) JSON traces, one file per rank, plain or gzip:
// streamed by a validating JSON scanner over a decompressing reader, so
// memory does not grow with the file. Events go to a TraceEventSink;
// docs/import.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "shardscope/core/result.h"
#include "shardscope/profiler/import/trace_import.h"

namespace shardscope::profiler {

// otherData.schema of a ShardScope Chrome export (profiler/workflow chrome_trace.h): its events
// describe their trace-store rows, and otherData.origin_ns is the store time of ts 0.
inline constexpr std::string_view kChromeExportSchema = "shardscope.chrome-trace/1";

struct KinetoOptions {
  // Rank when the file has no distributedInfo.rank (-1: that is an error).
  // When distributedInfo follows traceEvents the events are held under this
  // rank until the file says its own (which wins), so a file read once.
  int fallback_rank = -1;
  // Called about every MiB read: (bytes of the file read so far, file size).
  // Returning false cancels the import ("cancelled" error).
  std::function<bool(std::uint64_t done, std::uint64_t total)> progress;
  // Uncompressed bytes read at a time (0: 64 KiB). Tests and the fuzzer use
  // a few bytes so that every kind of value gets cut by a chunk boundary.
  std::size_t chunk_bytes = 0;
};

// What one import saw, for the CLI's summary and warnings.
struct KinetoStats {
  std::uint64_t bytes_json = 0;                       // uncompressed JSON bytes parsed
  std::uint64_t events = 0;                           // events given to the sink
  std::map<std::string, std::uint64_t> by_cat;        // imported events per category
  std::map<std::string, std::uint64_t> unknown_cats;  // "X" events of other categories (skipped, warned)
  std::map<std::string, std::uint64_t> other_phases;  // events with ph != "X" (M, s, f, i, C, ...; skipped)
  std::uint64_t missing_time = 0;                     // "X" events without a valid ts or dur (skipped, warned)
  std::uint64_t stored = 0;         // events that describe their trace-store row (a ShardScope export; in `events`)
  bool rank_after_events = false;   // distributedInfo followed traceEvents (the rank was final only at the end)
  bool rank_from_fallback = false;  // the file says no rank: KinetoOptions::fallback_rank
};

// Streams `path` into `sink` (beginRank, event..., updateRank, endRank).
// Errors name the file and, for parse errors, the byte offset in the
// uncompressed JSON: "<file>: byte 1234: ..."; a value of the wrong kind
// also its JSON path (in the message and in Error::json_path). Events that
// describe their trace-store row (args "shardscope_kind" or
// "shardscope_collective", a ShardScope Chrome export) are given to the sink
// as StoredRow whatever their category; docs/formats/import-trace.md. Never throws.
[[nodiscard]] core::Result<KinetoStats> importKineto(const std::string& path, TraceEventSink& sink,
                                                     const KinetoOptions& options = {});

}  // namespace shardscope::profiler
