// Which shards a rank holds, how many rows of each fit in memory, and which of
// a batch's ids each shard serves. Shared by emulate mode and the distributed
// engine, so both run exactly the same lookups for a plan.
#include "shardscope/profiler/engine/shard_inputs.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_map>

namespace shardscope::profiler {

namespace {

constexpr std::uint64_t kMaxPhysicalRows = std::numeric_limits<std::uint32_t>::max();

// Bytes of one physical row: weights in the engine's type (fp32 tables run in
// fp32, every narrower dtype runs as fp16) plus the row-wise AdaGrad state.
std::uint64_t stateBytesPerRow(const RankShard& s, const core::ModelSpec& model) {
  const core::DType dtype = s.table < model.tables.size() ? model.tables[s.table].dtype : core::DType::FP32;
  const std::uint64_t weight = dtype == core::DType::FP32 ? 4 : 2;
  return std::uint64_t{s.shard.cols} * weight + 4;
}

std::uint64_t stateBytesAt(const std::vector<RankShard>& shards, const std::vector<std::uint64_t>& per_row,
                           std::uint64_t cap) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < shards.size(); ++i) total += std::min(shards[i].physical_rows, cap) * per_row[i];
  return total;
}

}  // namespace

core::Result<std::vector<RankShard>> shardsOfRank(const core::ModelSpec& model, const core::ShardPlan& plan,
                                                  std::uint32_t group_rank) {
  if (plan.sharding_group_size == 0 || group_rank >= plan.sharding_group_size) {
    std::ostringstream m;
    m << "plan: group rank " << group_rank << " is outside the sharding group (size " << plan.sharding_group_size
      << ")";
    return core::Error{m.str()};
  }
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t t = 0; t < model.tables.size(); ++t) by_name.emplace(model.tables[t].name, t);

  std::vector<RankShard> out;
  for (std::size_t p = 0; p < plan.tables.size(); ++p) {
    const core::TablePlacement& tp = plan.tables[p];
    const auto it = by_name.find(tp.name);
    if (it == by_name.end()) {
      return core::Error{std::string("plan table \"") +=
                         tp.name + "\": the model \"" + model.name + "\" has no table of that name"};
    }
    const core::TableSpec& spec = model.tables[it->second];
    if (spec.rows != tp.rows || spec.dim != tp.dim) {
      std::ostringstream m;
      m << "plan table \"" << tp.name << "\": the plan has " << tp.rows << " rows x dim " << tp.dim
        << ", the model's table has " << spec.rows << " rows x dim " << spec.dim;
      return core::Error{m.str()};
    }
    bool found = false;
    for (std::size_t i = 0; i < tp.shards.size(); ++i) {
      const core::Shard& s = tp.shards[i];
      if (s.group_rank != group_rank) continue;
      // An empty row block (TorchRec's trailing blocks) holds nothing to look up.
      if (s.rows == 0 && tp.sharding_type != core::ShardingType::DataParallel && s.cols > 0) continue;
      if (s.rows == 0 || s.cols == 0 || s.row_offset > tp.rows || s.rows > tp.rows - s.row_offset ||
          s.col_offset > tp.dim || s.cols > tp.dim - s.col_offset) {
        std::ostringstream m;
        m << "plan table \"" << tp.name << "\": shard " << i << " (rows " << s.row_offset << "+" << s.rows << ", cols "
          << s.col_offset << "+" << s.cols << ") is empty or lies outside the table's " << tp.rows << " rows x dim "
          << tp.dim;
        return core::Error{m.str()};
      }
      if (tp.sharding_type == core::ShardingType::DataParallel && found) continue;  // one copy per rank
      found = true;
      RankShard rs;
      rs.table = it->second;
      rs.placement = p;
      rs.type = tp.sharding_type;
      rs.shard = s;
      rs.physical_rows = s.rows;
      out.push_back(rs);
    }
    // A data-parallel table lives on every group rank even where an imported
    // plan does not list the copy.
    if (!found && tp.sharding_type == core::ShardingType::DataParallel) {
      RankShard rs;
      rs.table = it->second;
      rs.placement = p;
      rs.type = tp.sharding_type;
      rs.shard = core::Shard{group_rank, 0, tp.rows, 0, tp.dim};
      rs.physical_rows = tp.rows;
      out.push_back(rs);
    }
  }
  return out;
}

void applyMemoryBudget(std::vector<RankShard>& shards, const core::ModelSpec& model, std::uint64_t budget_bytes) {
  for (RankShard& s : shards) s.physical_rows = std::min({s.physical_rows, s.shard.rows, kMaxPhysicalRows});
  if (budget_bytes == 0 || shards.empty()) return;
  std::vector<std::uint64_t> per_row(shards.size());
  std::uint64_t max_rows = 0;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    per_row[i] = stateBytesPerRow(shards[i], model);
    max_rows = std::max(max_rows, shards[i].physical_rows);
  }
  if (stateBytesAt(shards, per_row, max_rows) <= budget_bytes) return;
  // Largest common cap C with sum(min(rows_i, C) x bytes_i) <= budget; the
  // total grows with C, so bisect. At least one row per shard, even when
  // that does not fit (the caller checks the result against its budget).
  std::uint64_t lo = 1, hi = max_rows;  // lo fits or is the floor; hi does not fit
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (stateBytesAt(shards, per_row, mid) <= budget_bytes)
      lo = mid;
    else
      hi = mid;
  }
  for (RankShard& s : shards) s.physical_rows = std::min(s.physical_rows, lo);
}

void equalizeDataParallelRows(std::vector<std::vector<RankShard>>& group_shards) {
  std::map<std::size_t, std::uint64_t> fewest;  // per data-parallel table
  for (const auto& shards : group_shards)
    for (const RankShard& s : shards)
      if (s.dataParallel()) {
        auto [it, added] = fewest.try_emplace(s.table, s.physical_rows);
        if (!added) it->second = std::min(it->second, s.physical_rows);
      }
  for (auto& shards : group_shards)
    for (RankShard& s : shards)
      if (s.dataParallel()) s.physical_rows = fewest[s.table];
}

std::uint64_t shardStateBytes(const RankShard& shard, const core::ModelSpec& model) {
  return shard.physical_rows * stateBytesPerRow(shard, model);
}

void routeToShard(const Batch& batch, const RankShard& shard, ShardBags& out) {
  const std::size_t samples = batch.lengths.size();
  out.offsets.resize(samples + 1);
  out.ids.clear();
  out.offsets[0] = 0;
  const std::uint64_t first = shard.shard.row_offset;
  const std::uint64_t rows = shard.shard.rows;
  const std::uint64_t physical = shard.physical_rows == 0 ? 1 : shard.physical_rows;
  const std::uint64_t* id = batch.ids.data();
  const std::uint64_t* const end = id + batch.ids.size();
  // A data-parallel shard is the whole table, so the range test passes every
  // id; the caller hands it only the rank's own samples.
  for (std::size_t s = 0; s < samples; ++s) {
    const std::uint64_t* const bag_end =
        id + std::min<std::size_t>(batch.lengths[s], static_cast<std::size_t>(end - id));
    for (; id < bag_end; ++id) {
      // Unsigned wrap-around makes ids below the range fail the test too.
      const std::uint64_t local = *id - first;
      if (local >= rows) continue;
      out.ids.push_back(static_cast<std::uint32_t>(local < physical ? local : local % physical));
    }
    out.offsets[s + 1] = static_cast<std::uint32_t>(out.ids.size());
  }
}

}  // namespace shardscope::profiler
