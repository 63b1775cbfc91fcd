// Nsight Systems importer: reads the SQLite export of one process's report
// (`nsys export --type sqlite -o rank0.sqlite report.nsys-rep`) and streams
// its GPU kernels, memcpy/memset, CUDA runtime calls and NVTX ranges into a
// TraceEventSink, merged across tables in start-time order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/profiler/import/trace_import.h"

namespace shardscope::profiler {

// What an import saw, filled when NsysOptions::report is set (also when the
// import fails half-way: the counts up to the failure). Rows the importer
// cannot use are skipped and counted, never fatal; `warnings` holds one line
// per non-zero skip count and per absent table, each naming the file.
struct NsysImportReport {
  int rank = -1;  // the rank the events were given
  int world_size = -1;
  // Events handed to the sink, by kind.
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0, runtime_calls = 0, nvtx_ranges = 0, profiler_steps = 0;
  // Rows skipped: no name (NULL name id / NVTX text), a name id missing from
  // StringIds, end < start, a start/end/name column of an unexpected type.
  std::uint64_t skipped_null_name = 0, skipped_unknown_string = 0, skipped_end_before_start = 0, skipped_bad_type = 0;
  std::vector<std::string> absent_tables;  // optional tables the file does not have
  std::vector<std::string> warnings;

  [[nodiscard]] std::uint64_t events() const {
    return kernels + memcpys + memsets + runtime_calls + nvtx_ranges + profiler_steps;
  }
  [[nodiscard]] std::uint64_t skipped() const {
    return skipped_null_name + skipped_unknown_string + skipped_end_before_start + skipped_bad_type;
  }
};

struct NsysOptions {
  // nsys exports hold one process, so one rank, per file. -1: an MPI_RANKS
  // table, an NVTX mark/range whose text starts "rank=N" (optionally with
  // "world_size=M"), or "rank<N>" in the file name, else 0.
  int rank = -1;
  int world_size = -1;                        // -1: from the NVTX hint when there is one
  const std::atomic<bool>* cancel = nullptr;  // checked every 1024 rows
  // Rows read so far / rows to read (counted up front, only when set).
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  NsysImportReport* report = nullptr;
};

// Imports one export: beginRank, the events in start order (ties: NVTX,
// runtime, kernel, memcpy, memset; within a table the longer range first),
// endRank. Errors: the file is missing, not SQLite, not an nsys export (no
// StringIds table), corrupt or truncated, cancelled, or the sink failed;
// after an error endRank is not called. Memory: one current row per table
// plus the StringIds entries actually referenced (looked up by id on first
// use and cached), so it stays bounded by the number of distinct names.
// SQLite sorts each table by start (exports have no index) in its own
// temporary storage.
[[nodiscard]] core::Status importNsys(const std::string& path, TraceEventSink& sink, const NsysOptions& options = {});

// The collective an NCCL kernel name encodes: "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
// -> "all_reduce", "ncclDevKernel_SendRecv(...)" -> "send_recv"; also
// all_gather, reduce_scatter, broadcast, reduce, send, recv. "" for other
// kernels and for NCCL kernels that do not say (ncclDevKernel_Generic).
[[nodiscard]] std::string_view nsysCollectiveFromKernelName(std::string_view kernel_name);

// "Memcpy HtoD", "Memcpy DtoD", ... for CUPTI's copyKind; "Memcpy" when unknown.
[[nodiscard]] std::string_view nsysMemcpyName(std::int64_t copy_kind);

}  // namespace shardscope::profiler
