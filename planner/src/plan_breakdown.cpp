// Pricing goes through CostModel::shardCost / dataParallelCost exactly as
// evaluatePlacement does, so the per-rank sums are the GridResult's loads.
#include "shardscope/planner/plan_breakdown.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace shardscope::planner {

std::span<const ShardLoad> PlanBreakdown::onRank(std::uint32_t group_rank) const {
  if (group_rank + 1 >= rank_offsets.size()) return {};
  return std::span<const ShardLoad>(entries).subspan(rank_offsets[group_rank],
                                                     rank_offsets[group_rank + 1] - rank_offsets[group_rank]);
}

double PlanBreakdown::loadOf(std::uint32_t table, std::uint32_t group_rank) const {
  double load = 0;
  for (const ShardLoad& e : onRank(group_rank))
    if (e.table == table) load += e.cost.load();
  return load;
}

PlanBreakdown breakdownOf(const CostModel& model, const GridResult& result, const std::atomic<bool>* cancel) {
  PlanBreakdown out;
  const std::uint32_t M = result.grid.group_size;
  const auto& tables = result.plan.tables;
  out.group_size = M;
  out.rank_offsets.assign(static_cast<std::size_t>(M) + 1, 0);
  out.rank_load_ms.assign(M, 0.0);
  out.table_load_ms.assign(tables.size(), 0.0);
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(model.model().tables.size());
  for (std::size_t t = 0; t < model.model().tables.size(); ++t) index.emplace(model.model().tables[t].name, t);
  const GridCosts gc = model.gridCosts(result.grid);

  // Priced in plan order, then placed by rank (a counting sort keeps plan order inside a rank).
  std::vector<ShardLoad> priced;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    if (cancel && cancel->load()) {
      out.cancelled = true;
      return out;
    }
    const core::TablePlacement& tp = tables[t];
    const auto it = index.find(tp.name);
    if (it == index.end()) {
      out.problems.push_back("table " + tp.name + " is in the plan but not in the model; not priced");
      continue;
    }
    const auto table = static_cast<std::uint32_t>(t);
    if (tp.sharding_type == core::ShardingType::DataParallel) {
      const ShardCost c = model.dataParallelCost(it->second, result.grid, gc);
      const bool listed = tp.shards.size() == M;
      for (std::uint32_t r = 0; r < M; ++r) {
        const bool own = listed && tp.shards[r].group_rank == r;
        priced.push_back({table, own ? r : ShardLoad::kNoShard, r, c});
      }
    } else {
      for (std::size_t s = 0; s < tp.shards.size(); ++s) {
        const core::Shard& sh = tp.shards[s];
        if (sh.group_rank >= M) continue;  // evaluatePlacement skips it too
        priced.push_back({table, static_cast<std::uint32_t>(s), sh.group_rank,
                          model.shardCost(it->second, sh.row_offset, sh.rows, sh.cols, result.grid, gc)});
      }
    }
  }
  for (const ShardLoad& e : priced) ++out.rank_offsets[e.group_rank + 1];
  for (std::uint32_t r = 0; r < M; ++r) out.rank_offsets[r + 1] += out.rank_offsets[r];
  std::vector<std::size_t> next(out.rank_offsets.begin(), out.rank_offsets.end() - 1);
  out.entries.resize(priced.size());
  for (ShardLoad& e : priced) {
    const double load = e.cost.load();
    out.rank_load_ms[e.group_rank] += load;
    out.table_load_ms[e.table] += load;
    out.entries[next[e.group_rank]++] = e;
  }
  out.tables_by_load.resize(tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) out.tables_by_load[t] = static_cast<std::uint32_t>(t);
  std::stable_sort(out.tables_by_load.begin(), out.tables_by_load.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return out.table_load_ms[a] > out.table_load_ms[b]; });
  return out;
}

std::vector<std::uint32_t> shownTables(const PlanBreakdown& breakdown, std::size_t top,
                                       std::span<const std::uint32_t> always) {
  const std::size_t n = breakdown.tables_by_load.size();
  std::vector<bool> taken(n, false);
  std::vector<std::uint32_t> out;
  for (std::uint32_t t : always) {
    if (out.size() >= top) break;
    if (t < n && !taken[t]) {
      taken[t] = true;
      out.push_back(t);
    }
  }
  for (std::uint32_t t : breakdown.tables_by_load) {
    if (out.size() >= top) break;
    if (!taken[t]) {
      taken[t] = true;
      out.push_back(t);
    }
  }
  // Heaviest first: the order of tables_by_load.
  std::vector<std::size_t> place(n);
  for (std::size_t i = 0; i < n; ++i) place[breakdown.tables_by_load[i]] = i;
  std::sort(out.begin(), out.end(), [&](std::uint32_t a, std::uint32_t b) { return place[a] < place[b]; });
  return out;
}

RankLoadStack rankLoadStack(const PlanBreakdown& breakdown, std::vector<std::uint32_t> tables) {
  RankLoadStack out;
  const std::size_t n = breakdown.table_load_ms.size();
  std::erase_if(tables, [n](std::uint32_t t) { return t >= n; });
  out.tables = std::move(tables);
  const std::size_t shown = out.tables.size();
  out.other_tables = n - shown;
  out.load_ms.assign(shown + 1, std::vector<double>(breakdown.group_size, 0.0));
  // Series of each plan table: its place among the shown ones, else "other".
  std::vector<std::size_t> series(n, shown);
  for (std::size_t s = 0; s < shown; ++s) series[out.tables[s]] = s;
  out.sync_ms.assign(breakdown.group_size, 0.0);
  for (const ShardLoad& e : breakdown.entries) {
    out.load_ms[series[e.table]][e.group_rank] += e.cost.load() - e.cost.sync_ms;
    out.sync_ms[e.group_rank] += e.cost.sync_ms;
  }
  return out;
}

std::uint32_t PlacementMatrix::lastRank(std::uint32_t column) const {
  return std::min(ranks, (column + 1) * ranks_per_column) - 1;
}

PlacementMatrix placementMatrix(const PlanBreakdown& breakdown, std::vector<std::uint32_t> tables,
                                std::uint32_t max_columns) {
  PlacementMatrix out;
  const std::size_t n = breakdown.table_load_ms.size();
  std::erase_if(tables, [n](std::uint32_t t) { return t >= n; });
  out.tables = std::move(tables);
  out.ranks = breakdown.group_size;
  if (max_columns > 0 && out.ranks > max_columns) out.ranks_per_column = (out.ranks + max_columns - 1) / max_columns;
  out.columns = out.ranks == 0 ? 0 : (out.ranks + out.ranks_per_column - 1) / out.ranks_per_column;
  const std::size_t rows = out.tables.size();
  out.load_ms.assign(rows * out.columns, std::nan(""));
  constexpr std::size_t kNotShown = static_cast<std::size_t>(-1);
  std::vector<std::size_t> row(n, kNotShown);
  for (std::size_t s = 0; s < rows; ++s) row[out.tables[s]] = s;
  // Each rank's load per shown table, then the largest per column.
  std::vector<double> on_rank(rows, std::nan(""));
  std::vector<std::size_t> touched;
  for (std::uint32_t r = 0; r < out.ranks; ++r) {
    for (const ShardLoad& e : breakdown.onRank(r)) {
      const std::size_t i = row[e.table];
      if (i == kNotShown) continue;
      if (std::isnan(on_rank[i])) {
        on_rank[i] = 0;
        touched.push_back(i);
      }
      on_rank[i] += e.cost.load();
    }
    for (std::size_t i : touched) {
      double& cell = out.load_ms[i * out.columns + out.columnOf(r)];
      cell = std::isnan(cell) ? on_rank[i] : std::max(cell, on_rank[i]);
      on_rank[i] = std::nan("");
    }
    touched.clear();
  }
  for (double v : out.load_ms) {
    if (std::isnan(v)) continue;
    out.max_load_ms = std::max(out.max_load_ms, v);
    if (v > 0 && (out.min_load_ms == 0 || v < out.min_load_ms)) out.min_load_ms = v;
  }
  return out;
}

}  // namespace shardscope::planner
