// NCCL communicators for a plan's 2D grid: the world, and the sharding-group
// and replica-group communicators split from it (ncclCommSplit) exactly as
// the plan lists its groups (core::commSplitOf: color = group index, key =
// position, so a communicator's rank is the group rank / replica index).
// Communicators are named "world", "sharding" and "replica" (NCCL's
// commName), which NCCL's profiler plugin and our traces report.
// All-to-all-v runs as grouped send/recv; all-reduce for the replica weight
// sync (average) and the dense gradients (sum).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/profiler/cuda/exchange_layout.h"

namespace shardscope::profiler::cuda {

// "ncclCommSplit: ncclInvalidUsage (invalid usage): <NCCL's last error>".
[[nodiscard]] std::string ncclMessage(const char* what, ncclResult_t r, ncclComm_t comm = nullptr);

// A fresh id (rank 0 makes it; MPI or the in-process driver hands it to every rank).
[[nodiscard]] core::Result<ncclUniqueId> newNcclId();

class NcclGrid {
 public:
  NcclGrid() = default;
  NcclGrid(const NcclGrid&) = delete;
  NcclGrid& operator=(const NcclGrid&) = delete;
  NcclGrid(NcclGrid&& other) noexcept;
  NcclGrid& operator=(NcclGrid&& other) noexcept;
  ~NcclGrid();

  // Collective over the plan's world (every rank calls it, on its own device
  // already made current): the world communicator from `id`, then the splits.
  [[nodiscard]] static core::Result<NcclGrid> create(const ncclUniqueId& id, const core::ShardPlan& plan,
                                                     std::uint32_t rank);

  [[nodiscard]] ncclComm_t world() const { return world_; }
  [[nodiscard]] ncclComm_t sharding() const { return sharding_; }
  [[nodiscard]] ncclComm_t replica() const { return replica_; }
  [[nodiscard]] std::uint32_t rank() const { return rank_; }
  [[nodiscard]] std::uint32_t worldSize() const { return world_size_; }
  [[nodiscard]] std::uint32_t groupRank() const { return group_rank_; }  // rank in `sharding`
  [[nodiscard]] std::uint32_t groupSize() const { return group_size_; }  // M
  [[nodiscard]] std::uint32_t replicas() const { return replicas_; }     // R
  [[nodiscard]] std::uint32_t shardingGroup() const { return sharding_group_; }
  [[nodiscard]] std::uint32_t replicaGroup() const { return replica_group_; }

  // Aborts every communicator (a rank that failed: peers blocked in a
  // collective then fail instead of hanging).
  void abort() noexcept;
  // Forgets the communicators without destroying them (someone else aborted them).
  void release() noexcept { world_ = sharding_ = replica_ = nullptr; }

 private:
  void destroy() noexcept;
  ncclComm_t world_ = nullptr, sharding_ = nullptr, replica_ = nullptr;
  std::uint32_t rank_ = 0, world_size_ = 0, group_rank_ = 0, group_size_ = 0, replicas_ = 0;
  std::uint32_t sharding_group_ = 0, replica_group_ = 0;
};

// Grouped send/recv of every block (zero counts skipped). Blocks to `me`
// are copied on `stream`, matched in order with the receives from `me`,
// whose counts must be equal. Asynchronous.
[[nodiscard]] core::Status allToAllV(const void* send, std::span<const A2aPart> send_parts, void* recv,
                                     std::span<const A2aPart> recv_parts, ncclDataType_t type, ncclComm_t comm,
                                     std::uint32_t me, cudaStream_t stream);

// In-place all-reduce (ncclSum or ncclAvg). Asynchronous.
[[nodiscard]] core::Status allReduce(void* buffer, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                                     ncclComm_t comm, cudaStream_t stream);

[[nodiscard]] std::size_t ncclTypeSize(ncclDataType_t type);

}  // namespace shardscope::profiler::cuda
