#include "shardscope/report/constraint_edits.h"

#include <algorithm>

#include "shardscope/core/summary.h"

namespace shardscope::report {

namespace {

core::TableConstraint& entryFor(core::Constraints& c, const std::string& table) {
  for (auto& t : c.tables)
    if (t.table == table) return t;
  core::TableConstraint fresh;
  fresh.table = table;
  c.tables.push_back(std::move(fresh));
  return c.tables.back();
}

bool unconstrained(const core::TableConstraint& t) { return t.pin_ranks.empty() && !t.force && t.forbid.empty(); }

void dropEmpty(core::Constraints& c) {
  c.tables.erase(std::remove_if(c.tables.begin(), c.tables.end(), unconstrained), c.tables.end());
}

}  // namespace

const std::vector<core::ShardingType>& offeredShardingTypes() {
  static const std::vector<core::ShardingType> types = {
      core::ShardingType::TableWise,    core::ShardingType::RowWise,         core::ShardingType::ColumnWise,
      core::ShardingType::TableRowWise, core::ShardingType::TableColumnWise, core::ShardingType::GridShard,
      core::ShardingType::DataParallel};
  return types;
}

core::Constraints withPin(core::Constraints c, const std::string& table, std::uint32_t group_rank) {
  entryFor(c, table).pin_ranks = {group_rank};
  return c;
}

core::Constraints withForced(core::Constraints c, const std::string& table, core::ShardingType type) {
  core::TableConstraint& t = entryFor(c, table);
  t.force = type;
  t.forbid.erase(std::remove(t.forbid.begin(), t.forbid.end(), type), t.forbid.end());
  return c;
}

core::Constraints withForbidden(core::Constraints c, const std::string& table, core::ShardingType type) {
  core::TableConstraint& t = entryFor(c, table);
  if (t.force && *t.force == type) t.force.reset();
  if (std::find(t.forbid.begin(), t.forbid.end(), type) == t.forbid.end()) t.forbid.push_back(type);
  return c;
}

core::Constraints withoutTable(core::Constraints c, const std::string& table) {
  c.tables.erase(std::remove_if(c.tables.begin(), c.tables.end(), [&](const auto& t) { return t.table == table; }),
                 c.tables.end());
  return c;
}

std::vector<ConstraintEntry> constraintEntries(const core::Constraints& c) {
  using Kind = ConstraintEntry::Kind;
  std::vector<ConstraintEntry> out;
  // A line about `table`: "<table><what>".
  const auto tableEntry = [&out](Kind kind, const std::string& table, const std::string& what) -> ConstraintEntry& {
    ConstraintEntry& e = out.emplace_back();
    e.kind = kind;
    e.table = table;
    e.text = table;
    e.text += what;
    return e;
  };
  for (const auto& t : c.tables) {
    for (std::uint32_t r : t.pin_ranks) {
      tableEntry(Kind::Pin, t.table, ": pinned to group rank " + std::to_string(r)).group_rank = r;
    }
    if (t.force) tableEntry(Kind::Force, t.table, std::string(": only ") + core::toString(*t.force)).type = *t.force;
    for (core::ShardingType type : t.forbid) {
      tableEntry(Kind::Forbid, t.table, std::string(": no ") + core::toString(type)).type = type;
    }
  }
  for (const auto& cap : c.rank_memory_caps) {
    ConstraintEntry& e = out.emplace_back();
    e.kind = Kind::MemoryCap;
    e.group_rank = cap.group_rank;
    e.bytes = cap.bytes;
    e.text = "group rank ";
    e.text += std::to_string(cap.group_rank);
    e.text += ": memory at most ";
    e.text += core::formatBytes(cap.bytes);
  }
  return out;
}

core::Constraints without(core::Constraints c, const ConstraintEntry& entry) {
  using Kind = ConstraintEntry::Kind;
  if (entry.kind == Kind::MemoryCap) {
    const auto it = std::find_if(c.rank_memory_caps.begin(), c.rank_memory_caps.end(), [&](const auto& cap) {
      return cap.group_rank == entry.group_rank && cap.bytes == entry.bytes;
    });
    if (it != c.rank_memory_caps.end()) c.rank_memory_caps.erase(it);
    return c;
  }
  for (auto& t : c.tables) {
    if (t.table != entry.table) continue;
    switch (entry.kind) {
      case Kind::Pin:
        t.pin_ranks.erase(std::remove(t.pin_ranks.begin(), t.pin_ranks.end(), entry.group_rank), t.pin_ranks.end());
        break;
      case Kind::Force:
        if (t.force && *t.force == entry.type) t.force.reset();
        break;
      case Kind::Forbid:
        t.forbid.erase(std::remove(t.forbid.begin(), t.forbid.end(), entry.type), t.forbid.end());
        break;
      case Kind::MemoryCap:
        break;
    }
  }
  dropEmpty(c);
  return c;
}

std::string pinDescription(const std::string& table, std::uint32_t group_rank) {
  std::string s = "Pin ";
  s += table;
  s += " to group rank ";
  s += std::to_string(group_rank);
  return s;
}

std::string forceDescription(const std::string& table, core::ShardingType type) {
  std::string s = "Force ";
  s += core::toString(type);
  s += " for ";
  s += table;
  return s;
}

std::string forbidDescription(const std::string& table, core::ShardingType type) {
  std::string s = "Forbid ";
  s += core::toString(type);
  s += " for ";
  s += table;
  return s;
}

std::string clearDescription(const std::string& table) {
  std::string s = "Clear constraints of ";
  s += table;
  return s;
}

std::string removeDescription(const ConstraintEntry& entry) {
  std::string s = "Remove constraint ";
  s += entry.text;
  return s;
}

}  // namespace shardscope::report
