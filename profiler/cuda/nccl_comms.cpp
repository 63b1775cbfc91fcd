#include "shardscope/profiler/cuda/nccl_comms.h"

#include <utility>

#include <cuda_runtime_api.h>

#include "shardscope/core/rank_layout.h"
#include "shardscope/profiler/cuda/cuda_engine.h"

namespace shardscope::profiler::cuda {

std::string ncclMessage(const char* what, ncclResult_t r, ncclComm_t comm) {
  std::string m = std::string(what) + ": " + ncclGetErrorString(r);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') m += std::string(" (") + last + ")";
  return m;
}

core::Result<ncclUniqueId> newNcclId() {
  ncclUniqueId id{};
  if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
    return core::Error{ncclMessage("ncclGetUniqueId", r), core::ErrorKind::Io};
  return id;
}

NcclGrid::NcclGrid(NcclGrid&& other) noexcept { *this = std::move(other); }

NcclGrid& NcclGrid::operator=(NcclGrid&& other) noexcept {
  if (this == &other) return *this;
  destroy();
  world_ = std::exchange(other.world_, nullptr);
  sharding_ = std::exchange(other.sharding_, nullptr);
  replica_ = std::exchange(other.replica_, nullptr);
  rank_ = other.rank_;
  world_size_ = other.world_size_;
  group_rank_ = other.group_rank_;
  group_size_ = other.group_size_;
  replicas_ = other.replicas_;
  sharding_group_ = other.sharding_group_;
  replica_group_ = other.replica_group_;
  return *this;
}

NcclGrid::~NcclGrid() { destroy(); }

void NcclGrid::destroy() noexcept {
  for (ncclComm_t* c : {&replica_, &sharding_, &world_}) {
    if (*c != nullptr) ncclCommDestroy(*c);
    *c = nullptr;
  }
}

void NcclGrid::abort() noexcept {
  for (ncclComm_t* c : {&replica_, &sharding_, &world_}) {
    if (*c != nullptr) ncclCommAbort(*c);
    *c = nullptr;
  }
}

core::Result<NcclGrid> NcclGrid::create(const ncclUniqueId& id, const core::ShardPlan& plan, std::uint32_t rank) {
  const auto split = core::commSplitOf(plan.sharding_groups, plan.replica_groups, rank);
  if (!split)
    return core::Error{
        "rank " + std::to_string(rank) + " is not in exactly one sharding and one replica group of the plan",
        core::ErrorKind::InvalidInput};
  NcclGrid g;
  g.rank_ = rank;
  g.world_size_ = plan.world_size;
  g.group_size_ = plan.sharding_group_size;
  g.replicas_ = plan.replicas;
  g.sharding_group_ = static_cast<std::uint32_t>(split->sharding_color);
  g.replica_group_ = static_cast<std::uint32_t>(split->replica_color);
  g.group_rank_ = static_cast<std::uint32_t>(split->sharding_key);

  ncclConfig_t world_config = NCCL_CONFIG_INITIALIZER;
  world_config.commName = "world";
  ncclUniqueId id_copy = id;
  if (const ncclResult_t r = ncclCommInitRankConfig(&g.world_, static_cast<int>(plan.world_size), id_copy,
                                                    static_cast<int>(rank), &world_config);
      r != ncclSuccess)
    return core::Error{ncclMessage("ncclCommInitRankConfig (world)", r), core::ErrorKind::Io};
  ncclConfig_t sharding_config = NCCL_CONFIG_INITIALIZER;
  sharding_config.commName = "sharding";
  if (const ncclResult_t r =
          ncclCommSplit(g.world_, split->sharding_color, split->sharding_key, &g.sharding_, &sharding_config);
      r != ncclSuccess)
    return core::Error{ncclMessage("ncclCommSplit (sharding group)", r, g.world_), core::ErrorKind::Io};
  ncclConfig_t replica_config = NCCL_CONFIG_INITIALIZER;
  replica_config.commName = "replica";
  if (const ncclResult_t r =
          ncclCommSplit(g.world_, split->replica_color, split->replica_key, &g.replica_, &replica_config);
      r != ncclSuccess)
    return core::Error{ncclMessage("ncclCommSplit (replica group)", r, g.world_), core::ErrorKind::Io};

  // The split must have produced exactly the plan's group sizes and positions.
  int count = 0, me = 0;
  if (ncclCommCount(g.sharding_, &count) != ncclSuccess || ncclCommUserRank(g.sharding_, &me) != ncclSuccess ||
      count != static_cast<int>(g.group_size_) || me != split->sharding_key)
    return core::Error{"ncclCommSplit gave a sharding communicator of " + std::to_string(count) + " ranks (rank " +
                           std::to_string(me) + "), the plan says " + std::to_string(g.group_size_) + " (rank " +
                           std::to_string(split->sharding_key) + ")",
                       core::ErrorKind::Internal};
  if (ncclCommCount(g.replica_, &count) != ncclSuccess || ncclCommUserRank(g.replica_, &me) != ncclSuccess ||
      count != static_cast<int>(g.replicas_) || me != split->replica_key)
    return core::Error{"ncclCommSplit gave a replica communicator of " + std::to_string(count) + " ranks (rank " +
                           std::to_string(me) + "), the plan says " + std::to_string(g.replicas_) + " (rank " +
                           std::to_string(split->replica_key) + ")",
                       core::ErrorKind::Internal};
  return g;
}

std::size_t ncclTypeSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 1;
  }
}

core::Status allToAllV(const void* send, std::span<const A2aPart> send_parts, void* recv,
                       std::span<const A2aPart> recv_parts, ncclDataType_t type, ncclComm_t comm, std::uint32_t me,
                       cudaStream_t stream) {
  const std::size_t elem = ncclTypeSize(type);
  const auto* s = static_cast<const char*>(send);
  auto* r = static_cast<char*>(recv);
  // The own blocks: copies, paired in order.
  std::size_t next_own = 0;
  for (const A2aPart& out : send_parts) {
    if (out.peer != me || out.count == 0) continue;
    while (next_own < recv_parts.size() && (recv_parts[next_own].peer != me || recv_parts[next_own].count == 0))
      ++next_own;
    if (next_own == recv_parts.size() || recv_parts[next_own].count != out.count)
      return core::Error{"all-to-all: the own blocks' send and receive counts differ", core::ErrorKind::Internal};
    if (const cudaError_t e = cudaMemcpyAsync(r + recv_parts[next_own].offset * elem, s + out.offset * elem,
                                              out.count * elem, cudaMemcpyDeviceToDevice, stream);
        e != cudaSuccess)
      return core::Error{std::string("all-to-all own block: cudaMemcpyAsync: ") + cudaGetErrorString(e),
                         core::ErrorKind::Io};
    ++next_own;
  }
  if (const ncclResult_t g = ncclGroupStart(); g != ncclSuccess)
    return core::Error{ncclMessage("ncclGroupStart", g, comm), core::ErrorKind::Io};
  ncclResult_t first = ncclSuccess;
  for (const A2aPart& p : send_parts) {
    if (p.peer == me || p.count == 0) continue;
    const ncclResult_t x = ncclSend(s + p.offset * elem, p.count, type, static_cast<int>(p.peer), comm, stream);
    if (first == ncclSuccess) first = x;
  }
  for (const A2aPart& p : recv_parts) {
    if (p.peer == me || p.count == 0) continue;
    const ncclResult_t x = ncclRecv(r + p.offset * elem, p.count, type, static_cast<int>(p.peer), comm, stream);
    if (first == ncclSuccess) first = x;
  }
  const ncclResult_t end = ncclGroupEnd();
  if (first != ncclSuccess) return core::Error{ncclMessage("ncclSend/ncclRecv", first, comm), core::ErrorKind::Io};
  if (end != ncclSuccess) return core::Error{ncclMessage("ncclGroupEnd (all-to-all)", end, comm), core::ErrorKind::Io};
  return core::Ok{};
}

core::Status allReduce(void* buffer, std::size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                       cudaStream_t stream) {
  if (count == 0) return core::Ok{};
  if (const ncclResult_t r = ncclAllReduce(buffer, buffer, count, type, op, comm, stream); r != ncclSuccess)
    return core::Error{ncclMessage("ncclAllReduce", r, comm), core::ErrorKind::Io};
  return core::Ok{};
}

namespace {
// CUDA's and NCCL's integer versions (13000, 22809) as "13.0", "2.28.9".
std::string cudaVersionText(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
std::string ncclVersionText(int v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}
}  // namespace

StackVersions stackVersions() {
  StackVersions out;
  int runtime = 0, driver = 0, nccl = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) out.cuda_runtime = cudaVersionText(runtime);
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) out.cuda_driver = cudaVersionText(driver);
  if (ncclGetVersion(&nccl) == ncclSuccess) out.nccl = ncclVersionText(nccl);
  return out;
}

}  // namespace shardscope::profiler::cuda
