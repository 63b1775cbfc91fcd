// CUPTI activity records -> GpuActivity values, and activities -> engine spans.
#include "shardscope/profiler/cuda/cupti_records.h"

#include <cxxabi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <tuple>
#include <utility>

namespace shardscope::profiler::cuda {

// The layouts this file reads (CUPTI 13.0). A CUPTI update that changes a
// struct without renaming it fails here instead of misreading fields.
static_assert(sizeof(CUpti_Activity) == 8);
static_assert(sizeof(CUpti_ActivityKernel10) == 216);
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96);
static_assert(sizeof(CUpti_ActivityMemset4) == 88);
static_assert(sizeof(CUpti_ActivityAPI) == 40);
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56);
static_assert(sizeof(CUpti_ActivityMarker2) == 56);
static_assert(sizeof(CUpti_ActivityOverhead3) == 56);
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24);

namespace {

using Kind = GpuActivity::Kind;

template <typename Record>
const Record& as(const CUpti_Activity* r) {
  return *reinterpret_cast<const Record*>(r);
}

std::int64_t ns(std::uint64_t t) { return static_cast<std::int64_t>(t); }

std::size_t kindIndex(Kind k) { return static_cast<std::size_t>(k); }

std::string_view memcpyKindName(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "memcpy";
  }
}

std::string_view syncTypeName(std::uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context_synchronize";
    default:
      return "synchronization";
  }
}

std::string_view overheadKindName(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "driver_compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "cupti_buffer_flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "cupti_instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "cupti_resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "runtime_triggered_module_loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "lazy_function_loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "command_buffer_full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "activity_buffer_request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
      return "uvm_activity_init";
    default:
      return "overhead";
  }
}

// Where a marker or overhead record happened: a thread, or a device / context / stream.
void setObject(GpuActivity& a, CUpti_ActivityObjectKind kind, const CUpti_ActivityObjectKindId& id) {
  switch (kind) {
    case CUPTI_ACTIVITY_OBJECT_PROCESS:
    case CUPTI_ACTIVITY_OBJECT_THREAD:
      a.process = id.pt.processId;
      a.thread = id.pt.threadId;
      break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
      a.device = id.dcs.deviceId;
      break;
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
      a.device = id.dcs.deviceId;
      a.context = id.dcs.contextId;
      break;
    case CUPTI_ACTIVITY_OBJECT_STREAM:
      a.device = id.dcs.deviceId;
      a.context = id.dcs.contextId;
      a.stream = id.dcs.streamId;
      break;
    default:
      break;
  }
}

bool hasFlag(CUpti_ActivityFlag flags, CUpti_ActivityFlag flag) {
  return (static_cast<std::uint32_t>(flags) & static_cast<std::uint32_t>(flag)) != 0;
}

}  // namespace

std::string_view toString(GpuActivity::Kind kind) {
  switch (kind) {
    case Kind::Kernel:
      return "kernel";
    case Kind::Memcpy:
      return "memcpy";
    case Kind::Memset:
      return "memset";
    case Kind::Runtime:
      return "runtime";
    case Kind::Driver:
      return "driver";
    case Kind::Synchronization:
      return "synchronization";
    case Kind::Marker:
      return "marker";
    case Kind::Overhead:
      return "overhead";
  }
  return "unknown";
}

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  // Only C++ symbols: __cxa_demangle also reads bare type codes ("i" -> "int").
  if (std::string_view(name).substr(0, 2) != "_Z") return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out != nullptr ? std::string(out) : std::string(name);
  std::free(out);  // NOLINT(cppcoreguidelines-no-malloc): __cxa_demangle allocates with malloc
  return result;
}

std::string_view tidyApiName(std::string_view name) {
  const std::size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 == name.size()) return name;
  for (std::size_t i = v + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, v);
}

// --- ActivityCollector ---------------------------------------------------

ActivityCollector::ActivityCollector(ApiNamer api_namer, CUpti_ExternalCorrelationKind external_kind)
    : api_namer_(std::move(api_namer)), external_kind_(external_kind) {}

std::uint32_t ActivityCollector::intern(std::string_view s) {
  if (s.empty()) return 0;
  std::string key(s);
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.push_back(key);
  index_.emplace(std::move(key), id);
  return id;
}

std::uint32_t ActivityCollector::kernelName(const char* mangled) {
  if (mangled == nullptr) return 0;
  std::string key(mangled);
  if (auto it = kernel_names_.find(key); it != kernel_names_.end()) return it->second;
  const std::uint32_t id = intern(demangle(mangled));
  kernel_names_.emplace(std::move(key), id);
  return id;
}

std::uint32_t ActivityCollector::apiName(GpuActivity::Kind api, std::uint32_t cbid) {
  const std::uint64_t key = (api == Kind::Driver ? std::uint64_t{1} << 32 : 0) | cbid;
  if (auto it = api_names_.find(key); it != api_names_.end()) return it->second;
  std::string text = api_namer_ ? api_namer_(api, cbid) : std::string();
  if (text.empty()) text = (api == Kind::Driver ? "cuda_driver#" : "cuda_runtime#") + std::to_string(cbid);
  const std::uint32_t id = intern(tidyApiName(text));
  api_names_.emplace(key, id);
  return id;
}

void ActivityCollector::push(const GpuActivity& a) { activities_.push_back(a); }

void ActivityCollector::add(const CUpti_Activity* record) {
  if (record == nullptr) return;
  ++stats_.records;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return addKernel(record);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return addMemcpy(record);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return addMemset(record);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return addApi(record, Kind::Runtime);
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return addApi(record, Kind::Driver);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return addSync(record);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return addMarker(record);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return addOverhead(record);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return addExternal(record);
    default:
      ++stats_.unknown;
      ++stats_.unknown_kinds[static_cast<std::uint32_t>(record->kind)];
      return;
  }
}

void ActivityCollector::bufferDone(std::size_t valid_bytes) {
  ++stats_.buffers;
  stats_.buffer_bytes += valid_bytes;
}

void ActivityCollector::addKernel(const CUpti_Activity* r) {
  const auto& k = as<CUpti_ActivityKernel10>(r);
  GpuActivity a;
  a.kind = Kind::Kernel;
  a.name = kernelName(k.name);
  a.start_ns = ns(k.start);
  a.end_ns = ns(k.end);
  a.device = k.deviceId;
  a.context = k.contextId;
  a.stream = k.streamId;
  a.correlation_id = k.correlationId;
  a.grid = {k.gridX, k.gridY, k.gridZ};
  a.block = {k.blockX, k.blockY, k.blockZ};
  a.static_shared_bytes = k.staticSharedMemory;
  a.dynamic_shared_bytes = k.dynamicSharedMemory;
  a.registers_per_thread = k.registersPerThread;
  ++stats_.by_kind[kindIndex(Kind::Kernel)];
  push(a);
}

void ActivityCollector::addMemcpy(const CUpti_Activity* r) {
  const auto& m = as<CUpti_ActivityMemcpy6>(r);
  GpuActivity a;
  a.kind = Kind::Memcpy;
  a.name = intern(memcpyKindName(m.copyKind));
  a.start_ns = ns(m.start);
  a.end_ns = ns(m.end);
  a.device = m.deviceId;
  a.context = m.contextId;
  a.stream = m.streamId;
  a.correlation_id = m.correlationId;
  a.runtime_correlation_id = m.runtimeCorrelationId;
  a.bytes = m.bytes;
  a.detail = m.copyKind;
  a.src_memory = m.srcKind;
  a.dst_memory = m.dstKind;
  ++stats_.by_kind[kindIndex(Kind::Memcpy)];
  push(a);
}

void ActivityCollector::addMemset(const CUpti_Activity* r) {
  const auto& m = as<CUpti_ActivityMemset4>(r);
  GpuActivity a;
  a.kind = Kind::Memset;
  a.name = intern("memset");
  a.start_ns = ns(m.start);
  a.end_ns = ns(m.end);
  a.device = m.deviceId;
  a.context = m.contextId;
  a.stream = m.streamId;
  a.correlation_id = m.correlationId;
  a.bytes = m.bytes;
  a.detail = m.value;
  a.dst_memory = static_cast<std::uint8_t>(m.memoryKind);
  ++stats_.by_kind[kindIndex(Kind::Memset)];
  push(a);
}

void ActivityCollector::addApi(const CUpti_Activity* r, GpuActivity::Kind kind) {
  const auto& api = as<CUpti_ActivityAPI>(r);
  GpuActivity a;
  a.kind = kind;
  a.name = apiName(kind, api.cbid);
  a.start_ns = ns(api.start);
  a.end_ns = ns(api.end);
  a.process = api.processId;
  a.thread = api.threadId;
  a.correlation_id = api.correlationId;
  a.detail = api.cbid;
  a.result = api.returnValue;
  ++stats_.by_kind[kindIndex(kind)];
  push(a);
}

void ActivityCollector::addSync(const CUpti_Activity* r) {
  const auto& s = as<CUpti_ActivitySynchronization2>(r);
  GpuActivity a;
  a.kind = Kind::Synchronization;
  a.name = intern(syncTypeName(static_cast<std::uint32_t>(s.type)));
  a.start_ns = ns(s.start);
  a.end_ns = ns(s.end);
  a.context = s.contextId;  // CUPTI_INVALID_CONTEXT_ID / _STREAM_ID are kNone
  a.stream = s.streamId;
  a.correlation_id = s.correlationId;
  a.detail = static_cast<std::uint32_t>(s.type);
  a.result = s.returnValue;
  ++stats_.by_kind[kindIndex(Kind::Synchronization)];
  push(a);
}

void ActivityCollector::addMarker(const CUpti_Activity* r) {
  const auto& m = as<CUpti_ActivityMarker2>(r);
  ++stats_.by_kind[kindIndex(Kind::Marker)];
  if (hasFlag(m.flags, CUPTI_ACTIVITY_FLAG_MARKER_END)) {
    marker_ends_[m.id] = ns(m.timestamp);
    return;
  }
  GpuActivity a;
  a.kind = Kind::Marker;
  a.name = m.name != nullptr ? intern(m.name) : 0;
  a.domain = m.domain != nullptr ? intern(m.domain) : 0;
  a.start_ns = a.end_ns = ns(m.timestamp);
  a.detail = m.id;
  setObject(a, m.objectKind, m.objectId);
  if (hasFlag(m.flags, CUPTI_ACTIVITY_FLAG_MARKER_START)) {
    if (!marker_starts_.emplace(m.id, a).second) ++stats_.unpaired_markers;  // an id reused while open
    return;
  }
  push(a);  // instantaneous (nvtxMark) or a synchronization marker
}

void ActivityCollector::addOverhead(const CUpti_Activity* r) {
  const auto& o = as<CUpti_ActivityOverhead3>(r);
  GpuActivity a;
  a.kind = Kind::Overhead;
  a.name = intern(overheadKindName(static_cast<std::uint32_t>(o.overheadKind)));
  a.start_ns = ns(o.start);
  a.end_ns = ns(o.end);
  a.correlation_id = o.correlationId;
  a.detail = static_cast<std::uint32_t>(o.overheadKind);
  setObject(a, o.objectKind, o.objectId);
  ++stats_.by_kind[kindIndex(Kind::Overhead)];
  push(a);
}

void ActivityCollector::addExternal(const CUpti_Activity* r) {
  const auto& e = as<CUpti_ActivityExternalCorrelation>(r);
  if (e.externalKind != external_kind_) {
    ++stats_.external_other;
    return;
  }
  ++stats_.external_correlations;
  const auto [it, inserted] = external_.emplace(e.correlationId, e.externalId);
  if (!inserted && it->second != e.externalId) ++stats_.external_conflicts;
}

ActivityTrace ActivityCollector::finish() {
  // NVTX ranges: a start and its end (either may have come first).
  for (auto& [id, start] : marker_starts_) {
    const auto end = marker_ends_.find(id);
    if (end == marker_ends_.end()) {
      ++stats_.unpaired_markers;
      continue;
    }
    start.end_ns = std::max(start.start_ns, end->second);
    push(start);
    marker_ends_.erase(end);
  }
  stats_.unpaired_markers += marker_ends_.size();
  marker_starts_.clear();
  marker_ends_.clear();

  for (GpuActivity& a : activities_) {
    auto it = a.correlation_id != 0 ? external_.find(a.correlation_id) : external_.end();
    if (it == external_.end() && a.runtime_correlation_id != 0) it = external_.find(a.runtime_correlation_id);
    if (it == external_.end()) continue;
    a.external_id = it->second;
    ++stats_.external_resolved;
  }
  external_.clear();

  std::sort(activities_.begin(), activities_.end(), [](const GpuActivity& x, const GpuActivity& y) {
    return std::tie(x.device, x.stream, x.start_ns, x.end_ns, x.kind, x.correlation_id, x.thread, x.name) <
           std::tie(y.device, y.stream, y.start_ns, y.end_ns, y.kind, y.correlation_id, y.thread, y.name);
  });

  ActivityTrace trace;
  trace.activities = std::move(activities_);
  trace.names = std::move(names_);
  trace.stats = stats_;
  activities_.clear();
  names_.assign(1, std::string());
  index_.clear();
  kernel_names_.clear();
  api_names_.clear();
  return trace;
}

// --- NCCL kernels --------------------------------------------------------

namespace {

std::vector<std::string_view> splitTokens(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const std::size_t cut = s.find('_');
    if (cut != 0) out.push_back(s.substr(0, cut));
    if (cut == std::string_view::npos) break;
    s.remove_prefix(cut + 1);
  }
  return out;
}

// NCCL's collective names (the first token after the kernel prefix) -> op.
struct NcclOpName {
  std::string_view token, op;
};
constexpr NcclOpName kNcclOps[] = {
    {"AllReduce", gpu_span_kind::kAllReduce},
    {"AllGather", span_kind::kAllGather},
    {"ReduceScatter", span_kind::kReduceScatter},
    {"Broadcast", span_kind::kBroadcast},
    {"Reduce", span_kind::kReduce},
    {"SendRecv", span_kind::kSendRecv},
    {"Send", span_kind::kSendRecv},
    {"Recv", span_kind::kSendRecv},
    {"AllToAll", gpu_span_kind::kAllToAll},
    {"Alltoall", gpu_span_kind::kAllToAll},
    {"AlltoAll", gpu_span_kind::kAllToAll},
};

std::string_view ncclOp(std::string_view token) {
  for (const NcclOpName& o : kNcclOps)
    if (token == o.token) return o.op;
  return {};
}

bool isOneOf(std::string_view token, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), token) != set.end();
}

}  // namespace

std::optional<NcclKernel> parseNcclKernel(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  if (!name.starts_with("nccl")) return std::nullopt;
  name = name.substr(0, std::min(name.find('('), name.find('<')));
  NcclKernel k;
  const std::size_t prefix = name.find('_');
  if (prefix == std::string_view::npos) return k;
  const std::vector<std::string_view> tokens = splitTokens(name.substr(prefix + 1));
  std::size_t i = 0;
  if (i < tokens.size() && !(k.op = ncclOp(tokens[i])).empty()) ++i;
  std::string leftover;
  for (; i < tokens.size(); ++i) {
    const std::string_view t = tokens[i];
    const std::string_view next = i + 1 < tokens.size() ? tokens[i + 1] : std::string_view();
    if ((t == "COLLNET" && (next == "DIRECT" || next == "CHAIN")) || (t == "NVLS" && next == "TREE")) {
      k.algorithm = std::string(t) + "_" + std::string(next);
      ++i;
    } else if (isOneOf(t, {"RING", "TREE", "NVLS", "PAT", "COLLNET"})) {
      k.algorithm = t;
    } else if (isOneOf(t, {"LL", "LL128", "SIMPLE"})) {
      k.protocol = t;
    } else if (isOneOf(t, {"Sum", "Prod", "Min", "Max", "PreMulSum", "SumPostDiv", "Avg"})) {
      k.reduction = t;
    } else {
      leftover += (leftover.empty() ? "" : "_") + std::string(t);
    }
  }
  if (!k.op.empty()) k.dtype = std::move(leftover);
  return k;
}

// --- Spans ---------------------------------------------------------------

std::int64_t ClockMapping::offsetAt(std::int64_t cupti_ns) const {
  if (!has_stop || stop.cupti_ns <= start.cupti_ns || cupti_ns <= start.cupti_ns) return start.offset_ns;
  if (cupti_ns >= stop.cupti_ns) return stop.offset_ns;
  const double f = static_cast<double>(cupti_ns - start.cupti_ns) / static_cast<double>(stop.cupti_ns - start.cupti_ns);
  return start.offset_ns + std::llround(f * static_cast<double>(stop.offset_ns - start.offset_ns));
}

GpuSpans gpuSpans(const ActivityTrace& trace, const SpanOptions& options, TraceRecorder& rec) {
  GpuSpans out;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> stream_of;
  for (const GpuActivity& a : trace.activities) {
    if (a.kind != Kind::Kernel && a.kind != Kind::Memcpy && a.kind != Kind::Memset) continue;
    if (options.select && !options.select(a)) continue;
    if ((a.start_ns == 0 && a.end_ns == 0) || a.end_ns < a.start_ns) {
      ++out.untimed;
      continue;
    }
    const auto key = std::make_pair(a.device, a.stream);
    auto it = stream_of.find(key);
    if (it == stream_of.end()) {
      const int stream = kCommStream + 1 + static_cast<int>(stream_of.size());
      it = stream_of.emplace(key, stream).first;
      out.streams.push_back({a.device, a.stream, stream});
    }
    const std::string_view name = trace.nameOf(a);
    const std::optional<NcclKernel> nccl = a.kind == Kind::Kernel ? parseNcclKernel(name) : std::nullopt;
    const std::optional<PhaseInfo> phase =
        a.external_id != 0 && options.phase ? options.phase(a.external_id) : std::nullopt;
    std::string_view kind;
    if (phase && !phase->kind.empty()) {
      kind = phase->kind;
      ++out.with_phase;
    } else if (nccl) {
      kind = nccl->op.empty() ? gpu_span_kind::kNccl : nccl->op;
    } else {
      kind = a.kind == Kind::Kernel   ? gpu_span_kind::kKernel
             : a.kind == Kind::Memcpy ? gpu_span_kind::kMemcpy
                                      : gpu_span_kind::kMemset;
    }
    if (a.kind == Kind::Kernel) ++(nccl ? out.collectives : out.kernels);
    if (a.kind != Kind::Kernel) ++out.copies;

    TraceRecorder::SpanRec s;
    s.rank = options.rank;
    s.stream = it->second;
    s.kind = rec.name(kind);
    s.name = rec.name(name);
    s.start_ns = options.clock.toSteady(a.start_ns);
    s.end_ns = options.clock.toSteady(a.end_ns);
    s.end_ns = std::max(s.end_ns, s.start_ns);  // an interpolated offset may shrink a span by a rounding ns
    s.step = phase ? phase->step : -1;
    s.bytes = static_cast<std::int64_t>(a.bytes);
    s.correlation = a.correlation_id;
    out.spans.push_back(s);
  }
  return out;
}

// --- Errors --------------------------------------------------------------

core::Error cuptiError(std::string_view call, CUptiResult result, std::string_view result_text) {
  std::string message = std::string(call) + " failed: " +
                        (result_text.empty() ? std::string("unknown CUPTI error") : std::string(result_text)) +
                        " (CUPTI error " + std::to_string(static_cast<int>(result)) + ")";
  std::string_view hint;
  switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
    case CUPTI_ERROR_DISABLED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      hint = "another profiler (Nsight Systems, the PyTorch profiler, DCGM) already traces this process";
      break;
    case CUPTI_ERROR_NOT_INITIALIZED:
      hint =
          "CUPTI could not attach to the CUDA driver: no usable GPU or driver, or another profiler (Nsight Systems, "
          "the PyTorch profiler, DCGM) already traces this process";
      break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      hint = "this user may not trace the GPU (see the driver's profiling permissions)";
      break;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      hint = "CUPTI cannot trace this GPU or system";
      break;
    default:
      break;
  }
  if (!hint.empty()) message += ": " + std::string(hint);
  return core::Error{std::move(message), core::ErrorKind::Io};
}

// The engine's collectives of `rank` timed by the NCCL kernels CUPTI saw
// inside each one's phase window (same step), their algorithm and protocol
// from the kernel names (RING/LL). CUDA-event windows stay where no kernel was seen.
void refineCollectives(TraceRecorder& rec, int rank, const std::vector<TraceRecorder::SpanRec>& spans) {
  for (TraceRecorder::CollectiveRec& c : rec.collectives()) {
    if (c.rank != rank) continue;
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    std::string algorithm;
    for (const TraceRecorder::SpanRec& s : spans) {
      if (s.step != c.step || s.end_ns < c.start_ns || s.start_ns > c.end_ns) continue;
      const auto nccl = parseNcclKernel(rec.text(s.name));
      if (!nccl) continue;
      lo = std::min(lo, s.start_ns);
      hi = std::max(hi, s.end_ns);
      if (algorithm.empty() && !nccl->algorithm.empty())
        algorithm = nccl->algorithm + (nccl->protocol.empty() ? "" : "/" + nccl->protocol);
    }
    if (lo > hi) continue;
    c.start_ns = lo;
    c.end_ns = hi;
    if (!algorithm.empty()) c.algorithm = rec.name(algorithm);
  }
}

}  // namespace shardscope::profiler::cuda
