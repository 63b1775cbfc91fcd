// The constraint edits the Plan page offers (pin a table to a group rank,
// force or forbid a sharding type, clear a table's constraints) and the
// constraint list it shows, one line per requirement so each can be removed
// on its own. Value in, value out and Qt-free: the page turns each into one
// undoable project edit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/constraints.h"

namespace shardscope::report {

// The sharding types the page offers, in TorchRec's order.
[[nodiscard]] const std::vector<core::ShardingType>& offeredShardingTypes();

// `table` lives on `group_rank` only (replaces an earlier pin).
[[nodiscard]] core::Constraints withPin(core::Constraints c, const std::string& table, std::uint32_t group_rank);
// `type` is the only one allowed (and no longer forbidden).
[[nodiscard]] core::Constraints withForced(core::Constraints c, const std::string& table, core::ShardingType type);
// `type` is not allowed (and no longer forced).
[[nodiscard]] core::Constraints withForbidden(core::Constraints c, const std::string& table, core::ShardingType type);
// No constraint on `table` any more.
[[nodiscard]] core::Constraints withoutTable(core::Constraints c, const std::string& table);

// One removable line of the constraint list.
struct ConstraintEntry {
  enum class Kind { Pin, Force, Forbid, MemoryCap };
  Kind kind = Kind::Pin;
  std::string table;                                        // Pin, Force, Forbid
  std::uint32_t group_rank = 0;                             // Pin (one of the pinned ranks), MemoryCap
  core::ShardingType type = core::ShardingType::TableWise;  // Force, Forbid
  std::uint64_t bytes = 0;                                  // MemoryCap
  std::string text;                                         // "t3: pinned to group rank 2"
};

// Every requirement of `c`, in the order of the file: tables (pins, forced,
// forbidden), then rank memory caps.
[[nodiscard]] std::vector<ConstraintEntry> constraintEntries(const core::Constraints& c);
// `c` without the requirement `entry` names (a table left with none is dropped).
[[nodiscard]] core::Constraints without(core::Constraints c, const ConstraintEntry& entry);

// "Pin t3 to group rank 2", "Force row_wise for t3", ...: undo-stack names.
[[nodiscard]] std::string pinDescription(const std::string& table, std::uint32_t group_rank);
[[nodiscard]] std::string forceDescription(const std::string& table, core::ShardingType type);
[[nodiscard]] std::string forbidDescription(const std::string& table, core::ShardingType type);
[[nodiscard]] std::string clearDescription(const std::string& table);
[[nodiscard]] std::string removeDescription(const ConstraintEntry& entry);

}  // namespace shardscope::report
