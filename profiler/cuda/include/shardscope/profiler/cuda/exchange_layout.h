// Where every byte of a GPU engine step goes (plain C++, no CUDA: unit-tested
// without a GPU). One rank of a sharding group of M ranks holds its shards in
// one DeviceTables (plan order) and serves, per sharded shard, M x B bags
// (source group rank s, sample b). docs/engine-cuda.md#step has the layouts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shardscope/core/model.h"
#include "shardscope/profiler/engine/shard_inputs.h"

namespace shardscope::profiler::cuda {

// One block of an all-to-all-v: `count` elements at element offset `offset`,
// to (or from) group rank `peer`. A peer may get several blocks: NCCL
// matches the sends to a peer with its receives from us in order.
struct A2aPart {
  std::uint32_t peer = 0;
  std::size_t offset = 0;
  std::size_t count = 0;
  friend bool operator==(const A2aPart&, const A2aPart&) = default;
};

// A pooled block this rank receives from an owner: B x cols floats that it
// adds into table `table`'s B x dim output at column col_offset.
struct CombineBlock {
  std::size_t source_offset = 0;  // floats into the pooled receive buffer
  std::uint32_t table = 0;        // model table
  std::uint32_t col_offset = 0;
  std::uint32_t cols = 0;
};

struct ExchangeLayout {
  std::uint32_t group_size = 0;                  // M
  std::uint32_t me = 0;                          // group rank
  std::uint32_t batch = 0;                       // B, samples per rank
  std::vector<std::size_t> served;               // own sharded shards (indices into the own shards), plan order
  std::vector<std::size_t> dp;                   // own data-parallel shards
  std::vector<std::vector<std::size_t>> remote;  // per group rank d: its sharded shards (indices into d's shards)

  // Forward of the served shards, over all own shards (DeviceTables order):
  // shard k = served[i] has bags [i x M x B, (i + 1) x M x B); the others none.
  // Its output is [s][b][cols] at served_out_offset[k] (stride cols).
  std::vector<std::uint32_t> served_bag_begin;   // own shards + 1
  std::vector<std::uint64_t> served_out_offset;  // per own shard, floats
  std::vector<std::uint32_t> out_stride;         // per own shard: its cols
  std::size_t served_out_floats = 0;

  // Data-parallel forward: shard k = dp[j] has B bags from j x B; output into the table's pooled rows.
  std::vector<std::uint32_t> dp_bag_begin;   // own shards + 1
  std::vector<std::uint64_t> dp_out_offset;  // per own shard: the table's pooled offset (stride = its dim = cols)

  // Pooled outputs of every used table, B x dim each, one buffer.
  std::vector<std::uint64_t> table_offset;  // per model table (floats); unused tables: 0
  std::vector<bool> table_used;
  std::size_t pooled_floats = 0;

  // Pooled all-to-all (floats): to source s, block (served i, s); from owner
  // d, one B x cols block per remote[d] shard. The gradient all-to-all runs
  // the other way over the same blocks (send <-> receive).
  std::vector<A2aPart> pooled_send, pooled_recv;
  std::size_t pooled_recv_floats = 0;
  std::vector<CombineBlock> combine;  // one per pooled_recv block, same order

  // Id routing: one routing per (sharded table, column block): the shards
  // of a block tile the table's rows (row-wise pieces, or one whole-rows
  // shard), so every id goes to exactly one of them; column-wise and grid
  // shards split a table into several blocks, each routed on its own.
  struct RouteTarget {
    std::uint32_t group_rank = 0;
    std::size_t shard = 0;  // index into that group rank's shards
  };
  struct RouteGroup {
    std::size_t table = 0;
    std::uint32_t col_offset = 0;
    std::vector<RouteTarget> targets;  // group-rank then shard order (routeIds' shard order)
  };
  std::vector<RouteGroup> route_groups;
  // Per group rank d, per remote[d] shard n: (route group, position in its targets).
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> route_of;
};

[[nodiscard]] ExchangeLayout makeExchangeLayout(const core::ModelSpec& model,
                                                const std::vector<std::vector<RankShard>>& group_shards,
                                                std::uint32_t me, std::uint32_t batch);

// The ids all-to-all, once the counts are known: this rank sends, to each
// group rank d and each of d's remote shards k (remote[d] order), B lengths
// then `send_ids[d][n]` ids; it receives from each source s, per served
// shard i, B lengths into lengths[(i x M + s) x B ..] and `recv_ids[s][i]`
// ids into one array ordered (i, s), the bags' CSR order.
struct IdExchange {
  std::vector<A2aPart> length_send, length_recv;  // u32 elements
  std::vector<A2aPart> id_send, id_recv;          // u32 elements
  std::size_t recv_id_total = 0;
};

// send_offsets[d][n]: where the lengths and ids of (d, remote[d][n]) begin
// in the sender's routed buffers (lengths at `length_offset`, ids at `id_offset`).
struct RoutedBlock {
  std::size_t length_offset = 0;
  std::size_t id_offset = 0;
  std::size_t ids = 0;
};
[[nodiscard]] IdExchange makeIdExchange(const ExchangeLayout& layout, const std::vector<std::vector<RoutedBlock>>& send,
                                        const std::vector<std::vector<std::uint32_t>>& recv_ids);

}  // namespace shardscope::profiler::cuda
