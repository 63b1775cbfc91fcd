#include "shardscope/report/rank_csv.h"

#include "shardscope/core/summary.h"

namespace shardscope::report {

std::string perRankCsv(const planner::GridResult& grid) {
  std::string out =
      "group_rank,global_rank_in_group0,shards,fwd_ms,bwd_ms,served_comm_ms,sync_ms,load_ms,"
      "state_bytes,served_buffer_bytes,memory_bytes,capacity_bytes,critical\n";
  const auto& group0 = grid.grid.sharding_groups;
  for (const planner::RankResult& r : grid.ranks) {
    const long long global = !group0.empty() && r.group_rank < group0.front().size()
                                 ? static_cast<long long>(group0.front()[r.group_rank])
                                 : -1;
    out += core::formatf(
        "%u,%lld,%u,%.6f,%.6f,%.6f,%.6f,%.6f,%llu,%llu,%llu,%llu,%d\n", r.group_rank, global, r.shards, r.fwd_ms,
        r.bwd_ms, r.served_comm_ms, r.sync_ms, r.load_ms, static_cast<unsigned long long>(r.state_bytes),
        static_cast<unsigned long long>(r.served_buffer_bytes), static_cast<unsigned long long>(r.memory_bytes),
        static_cast<unsigned long long>(r.capacity_bytes), r.group_rank == grid.critical_rank ? 1 : 0);
  }
  return out;
}

}  // namespace shardscope::report
