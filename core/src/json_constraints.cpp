// shardscope.constraints/1 <-> Constraints. Format: docs/formats/constraints.md.
#include <algorithm>
#include <unordered_map>

#include "json_parts.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"

namespace shardscope::core {

namespace {
using detail::childPath;
using detail::describe;
using detail::json;
using detail::JsonReader;

std::optional<ShardingType> readType(JsonReader& r, const json& v, const std::string& path) {
  if (v.is_string())
    if (auto t = shardingTypeFromString(v.get<std::string>())) return t;
  r.fail(path,
         "expected a sharding type (table_wise, row_wise, column_wise, table_row_wise, table_column_wise, "
         "grid_shard, data_parallel), got " +
             describe(v));
  return std::nullopt;
}
}  // namespace

const TableConstraint* Constraints::find(const std::string& table) const {
  for (const auto& t : tables)
    if (t.table == table) return &t;
  return nullptr;
}

namespace detail {

Constraints readConstraintsBody(JsonReader& r, const json& j, const std::string& path) {
  Constraints c;
  if (!r.expectObject(j, path)) return c;
  const std::string tpath = childPath(path, "tables");
  if (const json* tables = r.member(j, path, "tables", false, ""); tables && r.expectArray(*tables, tpath)) {
    std::unordered_map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < tables->size(); ++i) {
      const std::string ipath = childPath(tpath, i);
      const json& tj = (*tables)[i];
      if (!r.expectObject(tj, ipath)) continue;
      TableConstraint t;
      if (auto s = r.string(tj, ipath, "table")) t.table = *s;
      if (const json* pins = r.member(tj, ipath, "pin_ranks", false, "");
          pins && r.expectArray(*pins, childPath(ipath, "pin_ranks"))) {
        for (std::size_t k = 0; k < pins->size(); ++k)
          if (auto x = r.integerValue((*pins)[k], childPath(childPath(ipath, "pin_ranks"), k), 0, kMaxWorldSize - 1))
            t.pin_ranks.push_back(static_cast<std::uint32_t>(*x));
        auto sorted = t.pin_ranks;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
          r.fail(childPath(ipath, "pin_ranks"), "expected distinct group ranks");
      }
      if (const json* f = r.member(tj, ipath, "force", false, "")) t.force = readType(r, *f, childPath(ipath, "force"));
      if (const json* fb = r.member(tj, ipath, "forbid", false, "");
          fb && r.expectArray(*fb, childPath(ipath, "forbid"))) {
        for (std::size_t k = 0; k < fb->size(); ++k)
          if (auto x = readType(r, (*fb)[k], childPath(childPath(ipath, "forbid"), k))) t.forbid.push_back(*x);
      }
      if (t.force && std::find(t.forbid.begin(), t.forbid.end(), *t.force) != t.forbid.end())
        r.fail(ipath,
               std::string("contradicting entries: \"") + toString(*t.force) + "\" is both forced and forbidden");
      if (!t.table.empty()) {
        if (auto [it, inserted] = seen.emplace(t.table, i); !inserted)
          r.fail(childPath(ipath, "table"),
                 "expected one entry per table, \"" + t.table + "\" is also at " + childPath(tpath, it->second));
      }
      c.tables.push_back(std::move(t));
    }
  }
  const std::string mpath = childPath(path, "rank_memory_caps");
  if (const json* caps = r.member(j, path, "rank_memory_caps", false, ""); caps && r.expectArray(*caps, mpath)) {
    for (std::size_t i = 0; i < caps->size(); ++i) {
      const std::string ipath = childPath(mpath, i);
      if (!r.expectObject((*caps)[i], ipath)) continue;
      RankMemoryCap cap;
      if (auto x = r.integer((*caps)[i], ipath, "group_rank", true, 0, kMaxWorldSize - 1))
        cap.group_rank = static_cast<std::uint32_t>(*x);
      if (auto x = r.integer((*caps)[i], ipath, "bytes", true, 1)) cap.bytes = *x;
      c.rank_memory_caps.push_back(cap);
    }
  }
  return c;
}

}  // namespace detail

nlohmann::ordered_json toJson(const Constraints& c) {
  nlohmann::ordered_json j;
  j["schema"] = kConstraintsSchema;
  auto& tables = j["tables"] = nlohmann::ordered_json::array();
  for (const auto& t : c.tables) {
    nlohmann::ordered_json tj;
    tj["table"] = t.table;
    if (!t.pin_ranks.empty()) tj["pin_ranks"] = t.pin_ranks;
    if (t.force) tj["force"] = toString(*t.force);
    if (!t.forbid.empty()) {
      auto& fb = tj["forbid"] = nlohmann::ordered_json::array();
      for (auto f : t.forbid) fb.push_back(toString(f));
    }
    tables.push_back(std::move(tj));
  }
  auto& caps = j["rank_memory_caps"] = nlohmann::ordered_json::array();
  for (const auto& cap : c.rank_memory_caps) caps.push_back({{"group_rank", cap.group_rank}, {"bytes", cap.bytes}});
  return j;
}

Result<Constraints> constraintsFromJson(const nlohmann::json& j, const std::string& source) {
  return detail::readDocument<Constraints>(j, source, kConstraintsSchema, detail::readConstraintsBody);
}

Result<Constraints> loadConstraints(const std::string& path) {
  auto j = readJsonFile(path);
  if (!j) return j.error();
  return constraintsFromJson(*j, path);
}

}  // namespace shardscope::core
