// NCCL's profiler plugin interface, declared here with our own names: the
// function tables NCCL looks up by symbol (`ncclProfiler_v5`, introduced by
// NCCL 2.28 and still loaded by 2.29; `ncclProfiler_v4`, NCCL 2.27's) and the
// event descriptors it passes. The layouts must match NCCL's byte for byte
// (x86-64 and aarch64 LP64); the static_asserts below pin every offset we
// read. NCCL's own headers are not installed with the library, and the plugin
// needs none of CUDA or NCCL to build. Reference: ext-profiler/README.md in
// the NCCL repository.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace shardscope::profiler::nccl {

// ncclResult_t: an int-sized C enum; the plugin returns success, or an error
// from init, which makes NCCL run without the plugin.
using NcclResult = int;
inline constexpr NcclResult kNcclSuccess = 0;
inline constexpr NcclResult kNcclSystemError = 2;

// Event types (descriptor `type`, and the bits of the activation mask init returns).
namespace event_type {
inline constexpr int kGroup = 1 << 0;          // one kernel plan of a communicator (NCCL groups its tasks so)
inline constexpr int kColl = 1 << 1;           // a collective task
inline constexpr int kP2p = 1 << 2;            // a send or receive task
inline constexpr int kProxyOp = 1 << 3;        // the proxy thread's network work for one channel of a task
inline constexpr int kProxyStep = 1 << 4;      // one network transfer of a proxy op
inline constexpr int kProxyCtrl = 1 << 5;      // the proxy thread's idle/active/append states (not used)
inline constexpr int kKernelCh = 1 << 6;       // one channel of a task in the GPU kernel, with GPU timestamps
inline constexpr int kNetPlugin = 1 << 7;      // network-plugin defined events (not used)
inline constexpr int kGroupApi = 1 << 8;       // v5: ncclGroupStart/End as called (not used)
inline constexpr int kCollApi = 1 << 9;        // v5: a collective API call (not used)
inline constexpr int kP2pApi = 1 << 10;        // v5: a send/recv API call (not used)
inline constexpr int kKernelLaunch = 1 << 11;  // v5: the kernel launch (not used)
}  // namespace event_type

// States passed to recordEventState (ncclProfilerEventState_t); those we read.
namespace event_state {
inline constexpr int kProxyStepSendGpuWait = 8;
inline constexpr int kProxyStepSendWait = 9;
inline constexpr int kProxyStepRecvWait = 10;
inline constexpr int kProxyStepRecvFlushWait = 11;
inline constexpr int kProxyStepRecvGpuWait = 12;
inline constexpr int kProxyStepSendPeerWait = 20;
inline constexpr int kKernelChStop = 22;  // carries the GPU timestamp of the channel's end
}  // namespace event_state

// ncclDebugLogger_t: level (NCCL_LOG_WARN 2, NCCL_LOG_INFO 3), subsystem flags
// (NCCL_INIT 1), source file and line, printf format.
using NcclLogger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
inline constexpr int kLogWarn = 2;
inline constexpr int kLogInfo = 3;
inline constexpr unsigned long kLogInit = 1;

// Descriptor parts, one per event type (the members of NCCL's descriptor union).
struct GroupApiDescr {
  bool graph_captured;
  int group_depth;
};
struct CollApiDescr {
  const char* func;
  std::size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graph_captured;
};
struct P2pApiDescr {
  const char* func;
  std::size_t count;
  const char* datatype;
  void* stream;
  bool graph_captured;
};
struct KernelLaunchDescr {
  void* stream;
};
// A collective task. Strings are NCCL's: "AllReduce", "ncclFloat32", "RING", "SIMPLE".
struct CollDescrV4 {
  std::uint64_t seq;  // the call's number among this communicator's calls of `func`
  const char* func;
  const void* send_buff;
  void* recv_buff;
  std::size_t count;  // elements (all_gather: sent per rank; reduce_scatter: received per rank)
  int root;
  const char* datatype;
  std::uint8_t channels;
  std::uint8_t warps;
  const char* algo;
  const char* proto;
};
struct CollDescrV5 {
  std::uint64_t seq;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t channels;
  std::uint8_t warps;
  const char* algo;
  const char* proto;
  void* parent_group;  // the group (kernel plan) event; the descriptor's parent is the API event in v5
};
// A send or receive task: func "Send" or "Recv", `peer` its rank in the communicator.
struct P2pDescrV4 {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t channels;
};
struct P2pDescrV5 {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t channels;
  void* parent_group;
};
struct ProxyOpDescr {
  pid_t pid;  // the process that made the op: its parent is ours to read only when it is this process
  std::uint8_t channel;
  int peer;
  int steps;
  int chunk_size;
  int is_send;
};
struct ProxyStepDescr {
  int step;
};
struct KernelChDescr {
  std::uint8_t channel;
  std::uint64_t ptimer;  // GPU globaltimer (ns) when the channel started the task
};
struct NetPluginDescr {
  std::int64_t id;
  void* data;
};

// ncclProfilerEventDescr_v5_t.
struct EventDescrV5 {
  std::uint64_t type;  // one event_type bit
  void* parent;        // the parent event's handle (coll/p2p: the API event; proxy/kernel: the task)
  int rank;            // rank in the communicator
  union {
    GroupApiDescr group_api;
    CollApiDescr coll_api;
    P2pApiDescr p2p_api;
    KernelLaunchDescr kernel_launch;
    CollDescrV5 coll;
    P2pDescrV5 p2p;
    ProxyOpDescr proxy_op;
    ProxyStepDescr proxy_step;
    KernelChDescr kernel_ch;
    NetPluginDescr net_plugin;
  };
};

// ncclProfilerEventDescr_v4_t: the type is one byte, coll/p2p's parent is the group.
struct EventDescrV4 {
  std::uint8_t type;
  void* parent;
  int rank;
  union {
    CollDescrV4 coll;
    P2pDescrV4 p2p;
    ProxyOpDescr proxy_op;
    ProxyStepDescr proxy_step;
    KernelChDescr kernel_ch;
    NetPluginDescr net_plugin;
  };
};

// ncclProfilerEventStateArgs_v4_t / _v5_t (the same union).
union EventStateArgs {
  struct {
    std::size_t trans_size;  // bytes of the step's transfer
  } proxy_step;
  struct {
    int appended_ops;
  } proxy_ctrl;
  struct {
    void* data;
  } net_plugin;
  struct {
    std::uint64_t ptimer;  // GPU globaltimer (ns) when the channel finished the task
  } kernel_ch;
};

// ncclProfiler_v5_t, the table NCCL 2.28 (and 2.29) look up as `ncclProfiler_v5`.
struct ProfilerV5 {
  const char* name;
  NcclResult (*init)(void** context, std::uint64_t comm_hash, int* activation_mask, const char* comm_name, int nodes,
                     int nranks, int rank, NcclLogger log);
  NcclResult (*start_event)(void* context, void** handle, EventDescrV5* descr);
  NcclResult (*stop_event)(void* handle);
  NcclResult (*record_event_state)(void* handle, int state, EventStateArgs* args);
  NcclResult (*finalize)(void* context);
};

// ncclProfiler_v4_t (NCCL 2.27; 2.28 and 2.29 still load it): init takes the
// name before the hash.
struct ProfilerV4 {
  const char* name;
  NcclResult (*init)(void** context, int* activation_mask, const char* comm_name, std::uint64_t comm_hash, int nodes,
                     int nranks, int rank, NcclLogger log);
  NcclResult (*start_event)(void* context, void** handle, EventDescrV4* descr);
  NcclResult (*stop_event)(void* handle);
  NcclResult (*record_event_state)(void* handle, int state, EventStateArgs* args);
  NcclResult (*finalize)(void* context);
};

#if defined(__LP64__)
// NCCL's layouts on LP64 (x86-64, aarch64), offset by offset.
static_assert(offsetof(EventDescrV5, parent) == 8 && offsetof(EventDescrV5, rank) == 16);
static_assert(offsetof(EventDescrV5, coll) == 24 && sizeof(EventDescrV5) == 112);
static_assert(offsetof(CollDescrV5, func) == 8 && offsetof(CollDescrV5, count) == 32 &&
              offsetof(CollDescrV5, root) == 40 && offsetof(CollDescrV5, datatype) == 48 &&
              offsetof(CollDescrV5, channels) == 56 && offsetof(CollDescrV5, warps) == 57 &&
              offsetof(CollDescrV5, algo) == 64 && offsetof(CollDescrV5, proto) == 72 &&
              offsetof(CollDescrV5, parent_group) == 80);
static_assert(offsetof(P2pDescrV5, datatype) == 16 && offsetof(P2pDescrV5, count) == 24 &&
              offsetof(P2pDescrV5, peer) == 32 && offsetof(P2pDescrV5, channels) == 36 &&
              offsetof(P2pDescrV5, parent_group) == 40);
static_assert(offsetof(ProxyOpDescr, channel) == 4 && offsetof(ProxyOpDescr, peer) == 8 &&
              offsetof(ProxyOpDescr, is_send) == 20);
static_assert(offsetof(KernelChDescr, ptimer) == 8);
static_assert(offsetof(EventDescrV4, coll) == 24 && sizeof(EventDescrV4) == 104);
static_assert(sizeof(EventStateArgs) == 8);
static_assert(sizeof(ProfilerV5) == 6 * sizeof(void*) && sizeof(ProfilerV4) == 6 * sizeof(void*));
#endif

}  // namespace shardscope::profiler::nccl
