// libshardscope-nccl-profiler.so: the tables NCCL looks up when
// NCCL_PROFILER_PLUGIN names this library (docs/nccl-profiler.md). Everything
// here is hidden except ncclProfiler_v5, ncclProfiler_v4 and the trainer's
// step hook; the work is done by one Recorder per process, made at the first
// init from the environment:
//   SHARDSCOPE_NCCL_TRACE_DIR     where the trace file goes (default: the working directory)
//   SHARDSCOPE_NCCL_PROFILE_MASK  events to record (default coll,p2p; see parseEventMask)
//   SHARDSCOPE_NCCL_MAX_EVENTS    events alive at once (default 32768)
//   SHARDSCOPE_NCCL_BUFFER_KB     trace text held before it is written (default 1024)
//   RANK/WORLD_SIZE (or OMPI_COMM_WORLD_*, PMI_*, SLURM_PROCID/NTASKS): the process's rank in the job
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "shardscope/profiler/nccl_plugin/nccl_profiler_abi.h"
#include "shardscope/profiler/nccl_plugin/nccl_recorder.h"
#include "shardscope/profiler/nccl_plugin/nccl_records.h"

namespace nccl = shardscope::profiler::nccl;

namespace {

constexpr const char* kName = "shardscope";

std::mutex g_make;
// Made once and never destroyed: NCCL's proxy threads may still call in while
// the process exits. The Closer writes what is left at exit (or dlclose).
std::atomic<nccl::Recorder*> g_recorder{nullptr};

struct Closer {
  ~Closer() {
    std::lock_guard<std::mutex> lk(g_make);
    if (nccl::Recorder* r = g_recorder.load()) r->shutdown();
  }
} g_closer;

std::int64_t g_pending_step = -1;  // a step set before the first init

std::optional<long> envNumber(const char* name, long lo, long hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  long n = 0;
  const char* end = v + std::strlen(v);
  auto r = std::from_chars(v, end, n);
  if (r.ec != std::errc() || r.ptr != end || n < lo || n > hi) return std::nullopt;
  return n;
}

void warn(nccl::NcclLogger log, const std::string& msg) {
  if (log != nullptr)
    log(nccl::kLogWarn, nccl::kLogInit, __FILE__, __LINE__, "shardscope-nccl-profiler: %s", msg.c_str());
}

nccl::RecorderOptions optionsFromEnv(nccl::NcclLogger log, const char* interface) {
  nccl::RecorderOptions o;
  o.interface = interface;
  o.log = log;
  if (const char* dir = std::getenv("SHARDSCOPE_NCCL_TRACE_DIR"); dir != nullptr && *dir != '\0') o.dir = dir;
  if (const char* m = std::getenv("SHARDSCOPE_NCCL_PROFILE_MASK"); m != nullptr) {
    std::string why;
    if (auto mask = nccl::parseEventMask(m, &why)) {
      o.mask = *mask;
      if (!why.empty()) warn(log, "SHARDSCOPE_NCCL_PROFILE_MASK: " + why);
    } else {
      warn(log, "SHARDSCOPE_NCCL_PROFILE_MASK: " + why + "; recording coll,p2p");
    }
  }
  if (auto n = envNumber("SHARDSCOPE_NCCL_MAX_EVENTS", 16, 1L << 24)) o.max_events = static_cast<std::size_t>(*n);
  if (auto n = envNumber("SHARDSCOPE_NCCL_BUFFER_KB", 4, 1L << 20)) o.buffer_bytes = static_cast<std::size_t>(*n) << 10;
  // The launcher's rank, else (in the header) the first communicator's.
  static constexpr const char* kRankVars[][2] = {{"RANK", "WORLD_SIZE"},
                                                 {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                                 {"PMI_RANK", "PMI_SIZE"},
                                                 {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const auto& vars : kRankVars) {
    auto rank = envNumber(vars[0], 0, (1L << 24) - 1);
    auto size = envNumber(vars[1], 1, 1L << 24);
    if (rank && size && *rank < *size) {
      o.rank = static_cast<int>(*rank);
      o.nranks = static_cast<int>(*size);
      o.rank_source = vars[0];
      break;
    }
  }
  return o;
}

nccl::Recorder* recorder(nccl::NcclLogger log, const char* interface) {
  std::lock_guard<std::mutex> lk(g_make);
  nccl::Recorder* r = g_recorder.load();
  if (r == nullptr) {
    r = new nccl::Recorder(optionsFromEnv(log, interface));
    if (g_pending_step >= 0) r->setStep(g_pending_step);
    g_recorder.store(r);
  }
  return r;
}

nccl::NcclResult initCommon(void** context, std::uint64_t hash, int* mask, const char* name, int nodes, int nranks,
                            int rank, nccl::NcclLogger log, const char* interface) {
  nccl::Recorder* r = recorder(log, interface);
  const nccl::NcclResult res = r->init(context, hash, mask, name, nodes, nranks, rank);
  if (res != nccl::kNcclSuccess)
    warn(log, "not recording (" + r->lastError() + ")");
  else if (log != nullptr)
    log(nccl::kLogInfo, nccl::kLogInit, __FILE__, __LINE__, "shardscope-nccl-profiler: comm \"%s\" rank %d/%d -> %s",
        name != nullptr ? name : "", rank, nranks, r->path().c_str());
  return res;
}

nccl::NcclResult init5(void** context, std::uint64_t hash, int* mask, const char* name, int nodes, int nranks, int rank,
                       nccl::NcclLogger log) {
  return initCommon(context, hash, mask, name, nodes, nranks, rank, log, "v5");
}
nccl::NcclResult init4(void** context, int* mask, const char* name, std::uint64_t hash, int nodes, int nranks, int rank,
                       nccl::NcclLogger log) {
  return initCommon(context, hash, mask, name, nodes, nranks, rank, log, "v4");
}

nccl::NcclResult start5(void* context, void** handle, nccl::EventDescrV5* d) {
  if (handle != nullptr) *handle = nullptr;
  nccl::Recorder* r = g_recorder.load();
  if (r == nullptr || d == nullptr) return nccl::kNcclSuccess;
  return r->startEvent(context, handle, *d);
}

// v4 descriptors as v5's: a task's parent (the group) moves to parent_group.
nccl::NcclResult start4(void* context, void** handle, nccl::EventDescrV4* d) {
  if (handle != nullptr) *handle = nullptr;
  nccl::Recorder* r = g_recorder.load();
  if (r == nullptr || d == nullptr) return nccl::kNcclSuccess;
  nccl::EventDescrV5 v{};
  v.type = d->type;
  v.parent = d->parent;
  v.rank = d->rank;
  switch (d->type) {
    case nccl::event_type::kColl: {
      const nccl::CollDescrV4& c = d->coll;
      v.coll = {c.seq,      c.func,     c.send_buff, c.recv_buff, c.count, c.root,
                c.datatype, c.channels, c.warps,     c.algo,      c.proto, d->parent};
      break;
    }
    case nccl::event_type::kP2p: {
      const nccl::P2pDescrV4& p = d->p2p;
      v.p2p = {p.func, p.buff, p.datatype, p.count, p.peer, p.channels, d->parent};
      break;
    }
    case nccl::event_type::kProxyOp:
      v.proxy_op = d->proxy_op;
      break;
    case nccl::event_type::kProxyStep:
      v.proxy_step = d->proxy_step;
      break;
    case nccl::event_type::kKernelCh:
      v.kernel_ch = d->kernel_ch;
      break;
    default:
      break;
  }
  return r->startEvent(context, handle, v);
}

nccl::NcclResult stop(void* handle) {
  nccl::Recorder* r = g_recorder.load();
  return r != nullptr ? r->stopEvent(handle) : nccl::kNcclSuccess;
}
nccl::NcclResult record(void* handle, int state, nccl::EventStateArgs* args) {
  nccl::Recorder* r = g_recorder.load();
  return r != nullptr ? r->recordEventState(handle, state, args) : nccl::kNcclSuccess;
}
nccl::NcclResult finalize(void* context) {
  nccl::Recorder* r = g_recorder.load();
  return r != nullptr ? r->finalize(context) : nccl::kNcclSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default")))
nccl::ProfilerV5 ncclProfiler_v5 = {kName, init5, start5, stop, record, finalize};
__attribute__((visibility("default")))
nccl::ProfilerV4 ncclProfiler_v4 = {kName, init4, start4, stop, record, finalize};

// The trainer's step counter (ctypes: CDLL(path).shardscope_nccl_profiler_set_step(step)): calls
// NCCL starts from now on carry it in their `step` field; a negative step clears it.
__attribute__((visibility("default"))) void shardscope_nccl_profiler_set_step(long long step) {
  std::lock_guard<std::mutex> lk(g_make);
  g_pending_step = step < 0 ? -1 : step;
  if (nccl::Recorder* r = g_recorder.load()) r->setStep(g_pending_step);
}

}  // extern "C"
