#include "shardscope/profiler/cuda/exchange_layout.h"

namespace shardscope::profiler::cuda {

ExchangeLayout makeExchangeLayout(const core::ModelSpec& model, const std::vector<std::vector<RankShard>>& group_shards,
                                  std::uint32_t me, std::uint32_t batch) {
  ExchangeLayout l;
  l.group_size = static_cast<std::uint32_t>(group_shards.size());
  l.me = me;
  l.batch = batch;
  const std::size_t M = l.group_size, B = batch;
  const auto& mine = group_shards[me];
  for (std::size_t k = 0; k < mine.size(); ++k) (mine[k].dataParallel() ? l.dp : l.served).push_back(k);
  l.remote.resize(M);
  for (std::size_t d = 0; d < M; ++d)
    for (std::size_t k = 0; k < group_shards[d].size(); ++k)
      if (!group_shards[d][k].dataParallel()) l.remote[d].push_back(k);

  // Pooled outputs of every table some shard of the group holds.
  l.table_used.assign(model.tables.size(), false);
  l.table_offset.assign(model.tables.size(), 0);
  for (const auto& g : group_shards)
    for (const RankShard& s : g) l.table_used[s.table] = true;
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    if (!l.table_used[t]) continue;
    l.table_offset[t] = l.pooled_floats;
    l.pooled_floats += B * model.tables[t].dim;
  }

  // Served forward: bags (i, s, b); outputs [i][s][b][cols].
  l.served_bag_begin.assign(mine.size() + 1, 0);
  l.served_out_offset.assign(mine.size(), 0);
  l.out_stride.assign(mine.size(), 0);
  l.dp_bag_begin.assign(mine.size() + 1, 0);
  l.dp_out_offset.assign(mine.size(), 0);
  std::size_t served_i = 0, dp_j = 0;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    l.out_stride[k] = mine[k].shard.cols;
    if (!mine[k].dataParallel()) {
      l.served_out_offset[k] = l.served_out_floats;
      l.served_out_floats += M * B * mine[k].shard.cols;
      ++served_i;
    } else {
      l.dp_out_offset[k] = l.table_offset[mine[k].table];
      ++dp_j;
    }
    l.served_bag_begin[k + 1] = static_cast<std::uint32_t>(served_i * M * B);
    l.dp_bag_begin[k + 1] = static_cast<std::uint32_t>(dp_j * B);
  }

  // Pooled all-to-all: to each source s, one block per served shard; from
  // each owner d, one block per remote shard (the order d sends them in).
  for (std::uint32_t s = 0; s < M; ++s)
    for (std::size_t k : l.served)
      l.pooled_send.push_back({s, l.served_out_offset[k] + s * B * mine[k].shard.cols, B * mine[k].shard.cols});
  for (std::uint32_t d = 0; d < M; ++d) {
    for (std::size_t k : l.remote[d]) {
      const RankShard& rs = group_shards[d][k];
      l.pooled_recv.push_back({d, l.pooled_recv_floats, B * rs.shard.cols});
      l.combine.push_back(
          {l.pooled_recv_floats, static_cast<std::uint32_t>(rs.table), rs.shard.col_offset, rs.shard.cols});
      l.pooled_recv_floats += B * rs.shard.cols;
    }
  }

  // Routing: per (table, column block), in the order remote[] lists the shards.
  l.route_of.resize(M);
  for (std::uint32_t d = 0; d < M; ++d) {
    for (std::size_t k : l.remote[d]) {
      const RankShard& rs = group_shards[d][k];
      std::size_t g = 0;
      while (g < l.route_groups.size() &&
             !(l.route_groups[g].table == rs.table && l.route_groups[g].col_offset == rs.shard.col_offset))
        ++g;
      if (g == l.route_groups.size()) l.route_groups.push_back({rs.table, rs.shard.col_offset, {}});
      l.route_of[d].emplace_back(g, l.route_groups[g].targets.size());
      l.route_groups[g].targets.push_back({d, k});
    }
  }
  return l;
}

IdExchange makeIdExchange(const ExchangeLayout& layout, const std::vector<std::vector<RoutedBlock>>& send,
                          const std::vector<std::vector<std::uint32_t>>& recv_ids) {
  IdExchange x;
  const std::size_t M = layout.group_size, B = layout.batch, S = layout.served.size();
  for (std::uint32_t d = 0; d < M; ++d) {
    for (const RoutedBlock& b : send[d]) {
      x.length_send.push_back({d, b.length_offset, B});
      x.id_send.push_back({d, b.id_offset, b.ids});
    }
  }
  // Received ids are ordered (served shard i, source s): the CSR order of the bags (i, s, b).
  std::vector<std::size_t> id_offset(S * M, 0);
  std::size_t total = 0;
  for (std::size_t i = 0; i < S; ++i)
    for (std::size_t s = 0; s < M; ++s) {
      id_offset[i * M + s] = total;
      total += recv_ids[s][i];
    }
  for (std::uint32_t s = 0; s < M; ++s) {
    for (std::size_t i = 0; i < S; ++i) {
      x.length_recv.push_back({s, (i * M + s) * B, B});
      x.id_recv.push_back({s, id_offset[i * M + s], recv_ids[s][i]});
    }
  }
  x.recv_id_total = total;
  return x;
}

}  // namespace shardscope::profiler::cuda
