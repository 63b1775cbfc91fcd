// Importing traces of real trainers (PyTorch profiler / Kineto JSON, Nsight
// Systems SQLite export): each importer streams a file's events, one rank at
// a time, into a TraceEventSink; StoreImportSink classifies them
// (import_classify.h) and writes one trace-store run that `report` analyses
// like an engine run (docs/formats/import-trace.md). Events are passed by
// view: a sink copies what it keeps, so memory stays bounded for huge files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

// A GPU a trace lists (Kineto deviceProperties, nsys TARGET_INFO_GPU): its device id as the
// trace's GPU events give it (-1 when the list does not say) and its name, printable and at most
// 256 bytes ("NVIDIA H100 80GB HBM3").
struct ImportGpu {
  int device = -1;
  std::string name;
};

// What one imported file says about its rank.
struct ImportRankInfo {
  int rank = -1;        // distributedInfo.rank (Kineto) or the one given on the command line
  int world_size = -1;  // -1 when the file does not say
  std::string source;   // file path
  std::string host;     // when the file says
  int device = -1;
  std::string backend;            // "nccl", ...
  std::int64_t base_time_ns = 0;  // the file's clock origin (Kineto baseTimeNanoseconds), 0 when absent
  // The store time of the file's ts 0, when the file says it (a ShardScope Chrome export's
  // otherData.origin_ns): every time of the file is then that plus its ts, with no clock alignment.
  std::optional<std::int64_t> time_origin_ns;
  // false: the file may still say its rank after its events (a Kineto file
  // whose distributedInfo follows traceEvents); `rank` is then provisional
  // (the one given on the command line, or -1) until updateRank.
  bool rank_final = true;
  // The job's process groups as the file lists them (Kineto
  // distributedInfo.pg_config): name -> its ranks as the trace writes them ("[0, 1]").
  std::vector<std::pair<std::string, std::string>> process_groups;
  // The GPUs the file lists, in its order (empty when it lists none). The rank's own is the one
  // with its GPU events' device, else the first (docs/formats/import-trace.md).
  std::vector<ImportGpu> gpus;
};

enum class TraceEventKind {
  Kernel,         // GPU kernel (Kineto cat "kernel"; nsys CUPTI_ACTIVITY_KIND_KERNEL)
  Memcpy,         // gpu_memcpy / CUPTI_ACTIVITY_KIND_MEMCPY
  Memset,         // gpu_memset / CUPTI_ACTIVITY_KIND_MEMSET
  Runtime,        // cuda_runtime, cuda_driver / CUPTI_ACTIVITY_KIND_RUNTIME
  CpuOp,          // cpu_op
  Annotation,     // user_annotation / NVTX range on the CPU
  GpuAnnotation,  // gpu_user_annotation
  ProfilerStep,   // "ProfilerStep#N" (Kineto) or an NVTX range named so: a training step
};

// A trace-store row as a ShardScope Chrome export describes it (Kineto args "shardscope_kind" or
// "shardscope_collective" and the row's fields; docs/formats/import-trace.md#rows-a-shardscope-export-describes):
// a sink stores it as it is instead of classifying the event.
struct StoredRow {
  std::string_view kind;  // a span of this kind ("emb_fwd", "step", ...), or "" for a collectives row
  std::string_view op;    // a collectives row's op ("all_to_all", ...), or "" for a span
  std::int64_t step = -1;
  std::int64_t bytes = 0;
  std::string_view table;  // span: the embedding table, "" for none
  // Collectives row: its group ("0,1,2,3"), algorithm and process group ("" for none), peers and seq.
  std::string_view group, algorithm, process_group;
  int peers = 0;
  std::int64_t seq = -1;
};

struct TraceEvent {
  TraceEventKind kind = TraceEventKind::Kernel;
  std::string_view name;
  std::int64_t start_ns = 0;  // on the file's clock
  std::int64_t end_ns = 0;
  int device = -1;               // GPU events
  std::int64_t stream = 0;       // GPU: CUDA stream; CPU: thread id
  std::int64_t correlation = 0;  // launch <-> kernel, 0 when none
  std::int64_t step = -1;        // ProfilerStep events: N; others: -1 (the sink assigns steps)
  // NCCL kernels, when the trace carries them (Kineto args).
  std::string_view collective;  // "all_to_all", "allreduce", ... ("" when unknown)
  std::int64_t in_nelems = 0, out_nelems = 0;
  std::string_view dtype;  // "Float", "BFloat16", ...
  int group_size = 0;
  std::string_view group_ranks;    // "[0, 2, 4, 6]" as in the trace
  std::string_view process_group;  // "Process Group Name" ("" when unknown)
  std::int64_t seq = -1;           // the call's sequence number in its process group ("Seq"), -1 when unknown
  // Set when the file describes the row itself (a ShardScope export): `kind` is then Kernel and unused,
  // `stream` is the store's stream, `correlation` the span's.
  const StoredRow* stored = nullptr;
};

// Receives one rank's events. Every call may fail (a store error, a limit);
// an importer stops at the first error and returns it.
class TraceEventSink {
 public:
  virtual ~TraceEventSink() = default;
  virtual core::Status beginRank(const ImportRankInfo& rank) = 0;
  virtual core::Status event(const TraceEvent& event) = 0;
  // What a file says after its events (Kineto writes baseTimeNanoseconds at
  // the end): the rank's info again, complete (rank_final), before endRank.
  // Same rank, unless beginRank's was provisional.
  virtual core::Status updateRank(const ImportRankInfo& rank) {
    (void)rank;
    return core::Ok{};
  }
  virtual core::Status endRank() = 0;
};

}  // namespace shardscope::profiler
