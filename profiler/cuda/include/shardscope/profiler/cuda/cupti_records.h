// CUPTI activity records as values (plain C++ over CUPTI's headers: nothing
// here calls into libcupti, so it links and is unit-tested without a GPU).
// An ActivityCollector takes the records of completed activity buffers one by
// one, in whatever order the buffers arrive, and finish() turns them into one
// sorted ActivityTrace: kernels (demangled, interned names), copies, memsets,
// runtime and driver API calls, synchronizations, NVTX ranges and CUPTI's
// overhead, each with the engine's external correlation id resolved.
// gpuSpans() maps a trace onto the engine's spans (trace_recorder.h) for one
// rank. docs/engine-cuda.md#cupti-tracing says how the tracer uses this.
#pragma once

// CUPTI's headers declare anonymous structs inside anonymous unions, an
// extension -Wpedantic (clang: -Wnested-anon-types) reports in them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wnested-anon-types"
#endif
#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>
#pragma GCC diagnostic pop

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/profiler/trace/trace_recorder.h"

// The record structs read below are CUPTI 13's (CUDA 13.x): kernels as
// CUpti_ActivityKernel10, copies as CUpti_ActivityMemcpy6, memsets as
// CUpti_ActivityMemset4, API calls as CUpti_ActivityAPI, synchronizations as
// CUpti_ActivitySynchronization2, NVTX markers as CUpti_ActivityMarker2,
// overhead as CUpti_ActivityOverhead3. Another CUPTI writes other versions
// into its buffers; reading them through these structs would silently give
// wrong fields, so any other version is refused here.
#if !defined(CUPTI_API_VERSION) || CUPTI_API_VERSION < 130000 || CUPTI_API_VERSION >= 140000
#error "cupti_records reads CUPTI 13 (CUDA 13.x) activity records; port it to this CUPTI's record versions"
#endif

namespace shardscope::profiler::cuda {

// One activity, CUPTI's clock (ns). Host-side records (API calls, thread
// markers, overhead) have no device, context or stream (kNone).
struct GpuActivity {
  enum class Kind : std::uint8_t { Kernel, Memcpy, Memset, Runtime, Driver, Synchronization, Marker, Overhead };
  static constexpr std::size_t kKindCount = 8;
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;

  Kind kind = Kind::Kernel;
  // Index into ActivityTrace::names (0 = ""): the demangled kernel name, the
  // copy kind ("HtoD", ...), "memset", the API function, the synchronization
  // ("stream_synchronize", ...), the NVTX message, the overhead kind.
  std::uint32_t name = 0;
  std::int64_t start_ns = 0, end_ns = 0;  // start == end == 0: CUPTI could not time it
  std::uint32_t device = kNone, context = kNone, stream = kNone;
  std::uint32_t correlation_id = 0;          // CUPTI's (links a launch to its API call); 0: none
  std::uint32_t runtime_correlation_id = 0;  // copies: the runtime API call's
  std::uint64_t external_id = 0;             // the engine's phase id pushed around the launch; 0: none
  std::uint64_t bytes = 0;                   // copies and memsets
  std::uint32_t process = 0, thread = 0;     // API calls, thread markers
  // Kind-specific: copies CUpti_ActivityMemcpyKind, API calls the callback
  // id, synchronizations CUpti_ActivitySynchronizationType, overhead
  // CUpti_ActivityOverheadKind, markers the NVTX range id, memsets the value.
  std::uint32_t detail = 0;
  std::uint32_t result = 0;  // API calls and synchronizations: the call's return value
  // Kernels.
  std::array<std::int32_t, 3> grid{}, block{};
  std::int32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::uint16_t registers_per_thread = 0;
  // Copies: CUpti_ActivityMemoryKind of source and destination.
  std::uint8_t src_memory = 0, dst_memory = 0;
  std::uint32_t domain = 0;  // markers: index of the NVTX domain name (0: the default domain)
};

[[nodiscard]] std::string_view toString(GpuActivity::Kind kind);  // "kernel", "memcpy", ...

// What a collector saw, cumulative over its life.
struct CollectorStats {
  std::uint64_t buffers = 0;       // completed buffers (bufferDone)
  std::uint64_t buffer_bytes = 0;  // their valid bytes
  std::uint64_t records = 0;       // every record added, of any kind
  std::uint64_t dropped = 0;       // records CUPTI dropped for want of buffer space (addDropped)
  std::array<std::uint64_t, GpuActivity::kKindCount>
      by_kind{};                                         // records per GpuActivity::Kind (markers: each start/end)
  std::uint64_t external_correlations = 0;               // EXTERNAL_CORRELATION records of the kind followed
  std::uint64_t external_other = 0;                      // ... of other kinds (ignored)
  std::uint64_t external_conflicts = 0;                  // a correlation id named twice with different ids (first kept)
  std::uint64_t unknown = 0;                             // records of kinds not handled
  std::map<std::uint32_t, std::uint64_t> unknown_kinds;  // CUpti_ActivityKind value -> records
  std::uint64_t external_resolved = 0;                   // activities given an external id (finish)
  std::uint64_t unpaired_markers = 0;                    // NVTX range starts or ends without their other half (finish)
};

// A finished trace: activities sorted by (device, stream, start, end), host
// records (no device) last, with the strings they index.
struct ActivityTrace {
  std::vector<GpuActivity> activities;
  std::vector<std::string> names{std::string()};  // index 0 is ""
  CollectorStats stats;

  [[nodiscard]] std::string_view nameOf(std::uint32_t index) const {
    return index < names.size() ? std::string_view(names[index]) : std::string_view();
  }
  [[nodiscard]] std::string_view nameOf(const GpuActivity& a) const { return nameOf(a.name); }
};

// Names an API call from its callback id (the tracer asks libcupti:
// cuptiGetCallbackName). Called once per distinct (kind, id).
using ApiNamer = std::function<std::string(GpuActivity::Kind api, std::uint32_t callback_id)>;

class ActivityCollector {
 public:
  // external_kind: the CUpti_ExternalCorrelationKind whose ids are followed
  // (the tracer pushes CUSTOM0). Without a namer, API calls are named
  // "cuda_runtime#<cbid>" / "cuda_driver#<cbid>".
  explicit ActivityCollector(ApiNamer api_namer = {},
                             CUpti_ExternalCorrelationKind external_kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);

  // One record of a completed buffer (strings it points to are copied now).
  void add(const CUpti_Activity* record);
  // A completed buffer after its records were added.
  void bufferDone(std::size_t valid_bytes);
  // Records CUPTI reports as dropped (cuptiActivityGetNumDroppedRecords).
  void addDropped(std::uint64_t n) { stats_.dropped += n; }

  [[nodiscard]] const CollectorStats& stats() const { return stats_; }
  [[nodiscard]] std::size_t pending() const { return activities_.size(); }

  // Ends the trace: pairs NVTX range starts with their ends, resolves
  // external ids (an EXTERNAL_CORRELATION record may come before or after
  // the records it names, in any buffer), sorts, and hands everything over.
  // What stays unpaired is counted and dropped; the collector starts empty
  // again (its stats stay cumulative).
  [[nodiscard]] ActivityTrace finish();

 private:
  std::uint32_t intern(std::string_view s);
  std::uint32_t kernelName(const char* mangled);
  std::uint32_t apiName(GpuActivity::Kind api, std::uint32_t cbid);
  void addKernel(const CUpti_Activity* r);
  void addMemcpy(const CUpti_Activity* r);
  void addMemset(const CUpti_Activity* r);
  void addApi(const CUpti_Activity* r, GpuActivity::Kind kind);
  void addSync(const CUpti_Activity* r);
  void addMarker(const CUpti_Activity* r);
  void addOverhead(const CUpti_Activity* r);
  void addExternal(const CUpti_Activity* r);
  void push(const GpuActivity& a);

  ApiNamer api_namer_;
  CUpti_ExternalCorrelationKind external_kind_;
  CollectorStats stats_;
  std::vector<GpuActivity> activities_;
  std::vector<std::string> names_{std::string()};
  std::unordered_map<std::string, std::uint32_t> index_;
  std::unordered_map<std::string, std::uint32_t> kernel_names_;  // mangled -> demangled index
  std::unordered_map<std::uint64_t, std::uint32_t> api_names_;   // kind << 32 | cbid -> index
  std::unordered_map<std::uint32_t, std::uint64_t> external_;    // correlation id -> external id
  // NVTX range halves by range id, until finish() pairs them.
  std::unordered_map<std::uint32_t, GpuActivity> marker_starts_;
  std::unordered_map<std::uint32_t, std::int64_t> marker_ends_;
};

// "_Z3fooi" -> "foo(int)"; anything that does not demangle comes back as is.
[[nodiscard]] std::string demangle(const char* name);
// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (CUPTI's callback names carry the API version).
[[nodiscard]] std::string_view tidyApiName(std::string_view name);

// NCCL's device kernels, from their (demangled) names: NCCL >= 2.19
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
// older "ncclKernel_AllReduce_RING_LL_Sum_float(...)", "ncclDevKernel_SendRecv".
struct NcclKernel {
  std::string_view op;    // "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "send_recv",
                          // "all_to_all"; "" when the name does not say (ncclDevKernel_Generic)
  std::string algorithm;  // "RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"; "" none
  std::string protocol;   // "LL", "LL128", "SIMPLE"; "" none
  std::string reduction;  // "Sum", "Prod", "Min", "Max", "PreMulSum", "SumPostDiv"; "" none
  std::string dtype;      // "f32", "bf16", "float", "int8_t", ...; "" none
};
// Empty when `name` is not an NCCL kernel (does not start with "nccl").
[[nodiscard]] std::optional<NcclKernel> parseNcclKernel(std::string_view name);

// Span kinds of GPU records without an engine phase, as imported traces name
// them (docs/formats/import-trace.md); trace_recorder.h's span_kind has none.
namespace gpu_span_kind {
inline constexpr std::string_view kKernel = "kernel";
inline constexpr std::string_view kMemcpy = "memcpy";
inline constexpr std::string_view kMemset = "memset";
inline constexpr std::string_view kAllReduce = "all_reduce";  // NCCL kernels by op (the rest are span_kind's)
inline constexpr std::string_view kAllToAll = "all_to_all";
inline constexpr std::string_view kNccl = "nccl";  // an NCCL kernel whose name gives no op
}  // namespace gpu_span_kind

// CUPTI's clock (CLOCK_REALTIME on Linux) -> the engine's steady clock
// (traceNowNs): steady = cupti + offset, with the offset sampled when the
// tracer starts and when it stops and interpolated linearly in between
// (absorbing a slewing wall clock; a step of the wall clock cannot be undone).
struct ClockMapping {
  struct Sample {
    std::int64_t cupti_ns = 0;
    std::int64_t offset_ns = 0;  // steady - cupti at cupti_ns
  };
  Sample start, stop;
  bool has_stop = false;  // false: start's offset everywhere

  [[nodiscard]] static ClockMapping constant(std::int64_t offset_ns) { return {{0, offset_ns}, {}, false}; }
  [[nodiscard]] std::int64_t offsetAt(std::int64_t cupti_ns) const;
  [[nodiscard]] std::int64_t toSteady(std::int64_t cupti_ns) const { return cupti_ns + offsetAt(cupti_ns); }
};

// The engine phase a launch ran in, from the external id the engine pushed.
struct PhaseInfo {
  std::string_view kind;  // span kind (span_kind::...)
  std::int64_t step = -1;
};
using PhaseLookup = std::function<std::optional<PhaseInfo>(std::uint64_t external_id)>;

struct SpanOptions {
  int rank = 0;
  ClockMapping clock;
  PhaseLookup phase;                               // empty: no phases known
  std::function<bool(const GpuActivity&)> select;  // empty: every activity of the trace
};

struct SpanStream {
  std::uint32_t device = 0, cupti_stream = 0;
  int stream = 0;  // the span stream: 2, 3, ... (0 and 1 are the engine's compute and comm streams)
};

struct GpuSpans {
  std::vector<TraceRecorder::SpanRec> spans;               // sorted as the trace
  std::vector<SpanStream> streams;                         // in stream order
  std::uint64_t kernels = 0, copies = 0, collectives = 0;  // spans by what ran (collectives: NCCL kernels)
  std::uint64_t with_phase = 0;                            // spans whose external id named a phase
  std::uint64_t untimed = 0;                               // device records CUPTI could not time (left out)
};

// The selected kernels, copies and memsets as spans of `rank`: one span
// stream per (device, CUDA stream), numbered from 2 in trace order; kind =
// the phase of the external id when the lookup knows it, else NCCL kernels
// by op (all_reduce, send_recv, ...) and the rest kernel / memcpy / memset;
// name = the kernel name (copies: "HtoD", ...; memsets: "memset"); bytes =
// bytes copied or set; step = the phase's (else -1); correlation = CUPTI's.
// Strings are interned in `rec` (the spans are not recorded: the caller adds them).
[[nodiscard]] GpuSpans gpuSpans(const ActivityTrace& trace, const SpanOptions& options, TraceRecorder& rec);

// The engine's collectives of `rank` in `rec`, timed by the NCCL kernels among
// `spans` (gpuSpans' output) that overlap each one's phase window in the same
// step: start = first kernel's start, end = last kernel's end, algorithm =
// "RING/LL" from the kernel names. Collectives no kernel overlaps keep their times.
void refineCollectives(TraceRecorder& rec, int rank, const std::vector<TraceRecorder::SpanRec>& spans);

// A failed CUPTI call as an error naming the call and CUPTI's description,
// with the likely cause where the result code says it (another profiler
// owning CUPTI, no driver, missing permissions). result_text: cuptiGetResultString's.
[[nodiscard]] core::Error cuptiError(std::string_view call, CUptiResult result, std::string_view result_text);

}  // namespace shardscope::profiler::cuda
