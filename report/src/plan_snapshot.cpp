#include "shardscope/report/plan_snapshot.h"

#include <algorithm>

#include "shardscope/core/summary.h"
#include "shardscope/report/display_format.h"

namespace shardscope::report {

namespace {

constexpr std::size_t kShardLines = 6;  // shards listed in a hover text before "… n more"

std::string costText(const planner::ShardCost& c) {
  std::string s = core::formatf("fwd %.3f + bwd %.3f + comm %.3f", c.fwd_ms, c.bwd_ms, c.comm_ms);
  if (c.sync_ms > 0) s += core::formatf(" + sync %.3f", c.sync_ms);
  s += core::formatf(" = %.3f ms", c.load());
  return s;
}

}  // namespace

int PlanSnapshot::tableIndex(const std::string& name) const {
  const auto& t = grid.plan.tables;
  const auto it = std::find_if(t.begin(), t.end(), [&](const auto& p) { return p.name == name; });
  return it == t.end() ? -1 : static_cast<int>(it - t.begin());
}

std::size_t snapshotWork(const planner::GridResult& grid) {
  // Building the cost model prices every table's access profile: count it
  // too, so a 1,000-table model is priced off the GUI thread even when its
  // plan has few shards.
  std::size_t work = grid.plan.tables.size() * 16;
  for (const auto& t : grid.plan.tables)
    work += t.sharding_type == core::ShardingType::DataParallel ? grid.grid.group_size : t.shards.size();
  return work;
}

PlanSnapshot makePlanSnapshot(planner::GridResult grid, const core::Project& planned_from,
                              const planner::SweepOptions& options, const std::atomic<bool>* cancel) {
  PlanSnapshot s;
  s.grid = std::move(grid);
  const core::Calibration* cal = planned_from.calibration ? &*planned_from.calibration : nullptr;
  const planner::CostModel cost = planner::sweepCostModel(planned_from.model, planned_from.cluster, cal, options);
  s.breakdown = planner::breakdownOf(cost, s.grid, cancel);
  if (s.breakdown.cancelled) return s;
  // The slowest rank's main tables, heaviest there first.
  std::vector<std::uint32_t> critical;
  for (const planner::TableLoad& t : s.grid.critical_tables) {
    if (t.load_ms < kCriticalShare * s.grid.max_load_ms) break;
    if (const int i = s.tableIndex(t.table); i >= 0) critical.push_back(static_cast<std::uint32_t>(i));
  }
  const std::span<const std::uint32_t> all(critical);
  s.stack = planner::rankLoadStack(
      s.breakdown, planner::shownTables(s.breakdown, kStackedTables, all.first(std::min<std::size_t>(all.size(), 3))));
  s.matrix =
      planner::placementMatrix(s.breakdown, planner::shownTables(s.breakdown, kHeatmapTables, all), kHeatmapColumns);
  s.tables.resize(s.grid.plan.tables.size());
  // Entries come by rank, so each table's ranks arrive ascending.
  std::vector<double> on_rank(s.tables.size(), 0.0);
  for (const planner::ShardLoad& e : s.breakdown.entries) {
    TableSummary& t = s.tables[e.table];
    if (t.ranks.empty() || t.ranks.back() != e.group_rank) {
      t.ranks.push_back(e.group_rank);
      on_rank[e.table] = 0;
    }
    ++t.shards;
    t.load_ms += e.cost.load();
    t.state_bytes += e.cost.memory_bytes;
    on_rank[e.table] += e.cost.load();
    t.max_rank_ms = std::max(t.max_rank_ms, on_rank[e.table]);
  }
  // A data-parallel table's state is one copy per rank; count one group's worth once.
  for (std::size_t t = 0; t < s.tables.size(); ++t)
    if (s.grid.plan.tables[t].sharding_type == core::ShardingType::DataParallel && !s.tables[t].ranks.empty())
      s.tables[t].state_bytes /= s.tables[t].ranks.size();
  return s;
}

std::string rankSpanText(const std::vector<std::uint32_t>& ranks) {
  if (ranks.empty()) return "none";
  if (ranks.size() == 1) return std::to_string(ranks.front());
  const bool contiguous = ranks.back() - ranks.front() + 1 == ranks.size();
  if (contiguous) return std::to_string(ranks.front()) + "\u2013" + std::to_string(ranks.back());
  std::string s;
  const std::size_t shown = std::min<std::size_t>(ranks.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(ranks[i]);
  }
  if (shown < ranks.size()) s += core::formatf(", \u2026 (%zu ranks)", ranks.size());
  return s;
}

std::string shardRangeText(const core::TablePlacement& table, const core::Shard& shard) {
  std::string s = "rows ";
  s += formatCount(shard.row_offset);
  s += "\u2013";
  s += formatCount(shard.row_offset + shard.rows - (shard.rows > 0 ? 1 : 0));
  s += " of ";
  s += formatCount(table.rows);
  s += core::formatf(", cols %u\u2013%u", shard.col_offset, shard.col_offset + shard.cols - (shard.cols > 0 ? 1 : 0));
  return s;
}

std::string tableOnRankText(const PlanSnapshot& s, std::uint32_t table, std::uint32_t group_rank) {
  if (table >= s.grid.plan.tables.size() || group_rank >= s.breakdown.group_size) return {};
  const core::TablePlacement& tp = s.grid.plan.tables[table];
  std::string out = tp.name;
  out += core::formatf(" on group rank %u: %s, %s \u00d7 %u", group_rank, core::toString(tp.sharding_type),
                       formatCount(tp.rows).c_str(), tp.dim);
  double load = 0;
  std::size_t listed = 0, count = 0;
  for (const planner::ShardLoad& e : s.breakdown.onRank(group_rank)) {
    if (e.table != table) continue;
    load += e.cost.load();
    ++count;
    if (listed >= kShardLines) continue;
    ++listed;
    out += "\n";
    if (tp.sharding_type == core::ShardingType::DataParallel) {
      out += "data-parallel copy (all rows and columns): ";
    } else {
      out += core::formatf("shard %u: ", e.shard);
      out += shardRangeText(tp, tp.shards[e.shard]);
      out += ": ";
    }
    out += costText(e.cost);
  }
  if (count == 0) {
    out += "\nno shard on this rank";
    return out;
  }
  if (count > listed) out += core::formatf("\n\u2026 %zu more shards", count - listed);
  const double rank_load = s.breakdown.rank_load_ms[group_rank];
  out += core::formatf("\non this rank: %.3f ms of its %.3f ms load (%.1f%%)", load, rank_load,
                       rank_load > 0 ? load / rank_load * 100.0 : 0.0);
  return out;
}

std::string syncOnRankText(const PlanSnapshot& s, std::uint32_t group_rank) {
  if (group_rank >= s.breakdown.group_size || group_rank >= s.stack.sync_ms.size()) return {};
  const double sync = s.stack.sync_ms[group_rank];
  std::uint64_t bytes = 0;
  for (const planner::ShardLoad& e : s.breakdown.onRank(group_rank))
    if (e.cost.sync_ms > 0) bytes += e.cost.memory_bytes;
  const double rank_load = s.breakdown.rank_load_ms[group_rank];
  std::string out = core::formatf("replica sync on group rank %u: %.3f ms per step", group_rank, sync);
  out += core::formatf("\nall-reduce of its shards' weights and optimizer state (%s) across the %u replicas, %s",
                       core::formatBytes(bytes).c_str(), s.grid.grid.replicas,
                       syncIntervalText(s.grid.plan.sync_interval).c_str());
  out +=
      core::formatf("\n%.1f%% of the rank's %.3f ms load", rank_load > 0 ? sync / rank_load * 100.0 : 0.0, rank_load);
  return out;
}

std::string otherTablesOnRankText(const PlanSnapshot& s, std::uint32_t group_rank) {
  if (group_rank >= s.breakdown.group_size) return {};
  std::vector<bool> stacked(s.grid.plan.tables.size(), false);
  for (std::uint32_t t : s.stack.tables) stacked[t] = true;
  std::vector<std::pair<double, std::uint32_t>> loads;  // (load, table), merged per table
  for (const planner::ShardLoad& e : s.breakdown.onRank(group_rank)) {
    if (stacked[e.table]) continue;
    // The replica sync is a segment of its own (syncOnRankText).
    const double load = e.cost.load() - e.cost.sync_ms;
    if (!loads.empty() && loads.back().second == e.table)
      loads.back().first += load;
    else
      loads.emplace_back(load, e.table);
  }
  double total = 0;
  for (const auto& l : loads) total += l.first;
  std::sort(loads.begin(), loads.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out =
      core::formatf("other tables on group rank %u: %zu tables, %.3f ms", group_rank, loads.size(), total);
  const std::size_t shown = std::min(loads.size(), kShardLines);
  for (std::size_t i = 0; i < shown; ++i) {
    const core::TablePlacement& tp = s.grid.plan.tables[loads[i].second];
    out += core::formatf("\n%s (%s): %.3f ms", tp.name.c_str(), core::toString(tp.sharding_type), loads[i].first);
  }
  if (shown < loads.size()) out += core::formatf("\n\u2026 %zu more", loads.size() - shown);
  return out;
}

}  // namespace shardscope::report
