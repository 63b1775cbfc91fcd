// What the user requires of a plan: pin a table to group ranks, force or
// forbid sharding types, cap a rank's memory. JSON `shardscope.constraints/1`
// (docs/formats/constraints.md). The planner reports every constraint it
// cannot meet; none is dropped silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/plan.h"

namespace shardscope::core {

struct TableConstraint {
  std::string table;
  std::vector<std::uint32_t> pin_ranks;  // group ranks the table's shards must live on (empty: free)
  std::optional<ShardingType> force;     // the only sharding type allowed
  std::vector<ShardingType> forbid;      // types not allowed
  bool operator==(const TableConstraint&) const = default;
};

struct RankMemoryCap {
  std::uint32_t group_rank = 0;
  std::uint64_t bytes = 0;
  bool operator==(const RankMemoryCap&) const = default;
};

struct Constraints {
  std::vector<TableConstraint> tables;
  std::vector<RankMemoryCap> rank_memory_caps;
  [[nodiscard]] bool empty() const { return tables.empty() && rank_memory_caps.empty(); }
  [[nodiscard]] const TableConstraint* find(const std::string& table) const;
  bool operator==(const Constraints&) const = default;
};

}  // namespace shardscope::core
