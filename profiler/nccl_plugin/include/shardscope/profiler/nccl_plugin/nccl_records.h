// What the NCCL profiler plugin writes: NCCL's tasks (collective and
// point-to-point, as the plugin saw them start and stop) turned into one
// record per call, and the lines of a shardscope.nccl-trace/1 file
// (docs/formats/nccl-trace.md). Plain C++ without NCCL, CUDA or a JSON
// library, so that the plugin stays a small self-contained module.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::profiler::nccl {

inline constexpr std::string_view kTraceSchema = "shardscope.nccl-trace/1";

// What the plugin records unless SHARDSCOPE_NCCL_PROFILE_MASK says otherwise:
// groups, collectives and point-to-point tasks (event_type bits).
int defaultEventMask();

// SHARDSCOPE_NCCL_PROFILE_MASK: a number (NCCL's event bits, decimal or 0x..)
// or names separated by ',' or '+': coll, p2p, kernel (GPU timestamps per
// channel), proxy (network proxy ops), proxy_step, default, all. The result is
// normalised to what the plugin can use: groups always, collectives and p2p
// when kernel or proxy events need a parent, proxy ops under proxy steps;
// other bits are dropped. nullopt (with `why`) for text that is neither.
std::optional<int> parseEventMask(std::string_view text, std::string* why);
// "group,coll,p2p": the names of a mask's bits, for the file header and logs.
std::string maskNames(int mask);

// Bytes of one element of an NCCL datatype name ("ncclFloat32" 4); 0 when unknown.
int ncclTypeBytes(std::string_view datatype);
// The op of a collective task's NCCL function name, as the trace store names
// collectives: "AllReduce" -> "all_reduce", "AlltoAll" -> "all_to_all",
// "Send"/"Recv"/"Gather"/"Scatter" -> "send_recv"; unknown names in snake case.
std::string collectiveOp(std::string_view func);

// One communicator, as init described it.
struct CommView {
  std::string_view name;  // ncclConfig_t.commName ("" when the trainer gave none)
  std::uint64_t hash = 0;
  int rank = 0, nranks = 1, nodes = 1;
};

// A finished task (collective or send/recv) with what its children told.
struct TaskView {
  bool p2p = false;
  std::string_view func, datatype, algo, proto;
  std::uint64_t seq = 0;  // NCCL's, collectives only
  std::uint64_t count = 0;
  int root = -1, peer = -1;  // root: collectives; peer: p2p (rank in the communicator)
  int channels = 0, warps = 0;
  std::int64_t cpu_start = 0, cpu_end = 0;   // when NCCL started / stopped (enqueued) the task, CPU clock ns
  std::uint64_t gpu_start = 0, gpu_end = 0;  // GPU globaltimer over its kernel channels, 0: none
  int kernel_channels = 0;                   // kernel channel events folded in
  std::uint32_t proxy_ops = 0, proxy_steps = 0;
  std::int64_t proxy_start = 0, proxy_end = 0;  // first proxy op start, last stop (CPU clock)
  std::uint64_t net_bytes = 0;                  // transfer sizes of its proxy steps
  bool settled = true;                          // false: written before every part of it was seen
};

// One call: the line a trace file holds per collective, per all-to-all, per group of sends/receives.
struct CallRecord {
  std::string op;    // all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv
  std::string func;  // NCCL's function ("AllReduce"; "SendRecv" for a group of sends and receives)
  std::uint64_t seq = 0;
  std::uint64_t count = 0;  // collectives: NCCL's count; p2p: elements sent + received
  std::string datatype;
  int type_bytes = 0;
  std::uint64_t bytes = 0;  // the store's convention, docs/formats/nccl-trace.md
  int root = -1;            // broadcast, reduce
  std::string algo, proto;  // collectives
  int channels = 0, warps = 0;
  std::vector<int> peers;  // p2p: the ranks (in the communicator) it sent to or received from
  int sends = 0, recvs = 0;
  std::uint64_t send_bytes = 0, recv_bytes = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint64_t gpu_start_ns = 0, gpu_end_ns = 0;  // both 0 when unknown
  int kernel_channels = 0;
  std::uint32_t proxy_ops = 0, proxy_steps = 0;
  std::int64_t proxy_start_ns = 0, proxy_end_ns = 0;
  std::uint64_t net_bytes = 0;
  std::int64_t step = -1;   // the trainer's step counter (shardscope_nccl_profiler_set_step), -1 none
  bool partial = false;     // some of its tasks were dropped (the event pool was full)
  bool incomplete = false;  // written before every kernel/proxy event of it was seen
};

// How a group's point-to-point tasks read as one call: all_to_all when they
// exchange with every other rank (each other rank is the peer of a send or a
// receive, with at least one of each), else send_recv. Tasks with the
// rank itself as peer (copies) count in bytes but not as peers.
std::string_view p2pGroupOp(const CommView& comm, std::span<const TaskView> p2p_tasks);

// The calls of one finished group: each collective task is a call of its own;
// the point-to-point tasks together are one call (p2pGroupOp) numbered
// `p2p_seq` (the plugin counts such calls per communicator and op). `step`
// and `partial` are the group's.
std::vector<CallRecord> translateGroup(const CommView& comm, std::span<const TaskView> tasks, std::uint64_t p2p_seq,
                                       std::int64_t step, bool partial);

// Lines of the file, each ending in '\n', appended to `out`.
struct TraceHeader {
  std::string host;
  std::int64_t pid = 0;
  int rank = 0, nranks = 1;  // the process's rank in the job and the job's size
  std::string rank_source;   // "RANK", "OMPI_COMM_WORLD_RANK", ... or "communicator"
  CommView comm;             // the first communicator
  int mask = 0;
  std::string interface;  // "v5" or "v4"
  std::int64_t time_ns = 0;
};
void appendHeader(std::string& out, const TraceHeader& h);
void appendComm(std::string& out, const CommView& comm, std::int64_t time_ns);
void appendCall(std::string& out, const CommView& comm, const CallRecord& call);
struct TraceEnd {
  std::uint64_t calls = 0;
  std::uint64_t dropped = 0;              // events not recorded: the pool was full
  std::uint64_t dropped_by_type[6] = {};  // group, coll, p2p, proxy_op, proxy_step, kernel_ch
  std::int64_t time_ns = 0;
};
void appendEnd(std::string& out, const TraceEnd& end);

// "0x" and 16 hex digits.
std::string hashText(std::uint64_t hash);
// `s` as a JSON string, quotes included (control characters escaped, invalid UTF-8 replaced).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace shardscope::profiler::nccl
