// shardscope.access/1: reader, writer, and applying it to a model.
#include "shardscope/core/access.h"

#include <map>
#include <set>

#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/json_reader.h"

namespace shardscope::core {

namespace {

using detail::childPath;
using detail::json;
using detail::JsonReader;

constexpr std::string_view kAccessSchema = "shardscope.access/1";

void readHot(JsonReader& r, const json& t, const std::string& path, TableAccess& out) {
  const json* hot = r.member(t, path, "hot", false, "");
  if (!hot || !r.expectArray(*hot, path + "/hot")) return;
  if (hot->size() > kMaxHotIds) {
    r.fail(path + "/hot",
           "expected at most " + std::to_string(kMaxHotIds) + " ids, got " + std::to_string(hot->size()));
    return;
  }
  std::set<std::uint64_t> seen;
  for (std::size_t i = 0; i < hot->size(); ++i) {
    const std::string p = childPath(path + "/hot", i);
    const json& e = (*hot)[i];
    if (!e.is_array() || e.size() != 2) {
      r.fail(p, "expected [id, count], got " + detail::describe(e));
      continue;
    }
    const auto id = r.integerValue(e[0], p + "/0", 0, out.rows ? out.rows - 1 : 0);
    const auto count = r.integerValue(e[1], p + "/1", 1);
    if (!id || !count) continue;
    if (!seen.insert(*id).second) r.fail(p + "/0", "expected each id once, " + std::to_string(*id) + " repeats");
    if (!out.hot.empty() && *count > out.hot.back().second)
      r.fail(p + "/1", "expected the hottest ids first (counts never rising), got " + std::to_string(*count) +
                           " after " + std::to_string(out.hot.back().second));
    out.hot.emplace_back(*id, *count);
  }
}

void readBuckets(JsonReader& r, const json& t, const std::string& path, TableAccess& out) {
  const json* b = r.member(t, path, "buckets", true, "an array of counts over equal row buckets");
  if (!b || !r.expectArray(*b, path + "/buckets")) return;
  if (b->empty() || b->size() > kMaxAccessBuckets || (out.rows && b->size() > out.rows)) {
    r.fail(path + "/buckets", "expected 1 to " + std::to_string(std::min<std::uint64_t>(kMaxAccessBuckets, out.rows)) +
                                  " counts, got " + std::to_string(b->size()));
    return;
  }
  std::uint64_t sum = 0;
  bool overflow = false;
  for (std::size_t i = 0; i < b->size(); ++i) {
    const auto c = r.integerValue((*b)[i], childPath(path + "/buckets", i), 0);
    if (!c) continue;
    overflow = overflow || sum > UINT64_MAX - *c;
    sum += *c;
    out.buckets.push_back(*c);
  }
  if (overflow) r.fail(path + "/buckets", "expected counts whose sum fits 64 bits");
  if (r.ok() && sum != out.lookups)
    r.fail(path + "/lookups",
           "expected the sum of the bucket counts (" + std::to_string(sum) + "), got " + std::to_string(out.lookups));
  for (const auto& [id, count] : out.hot)
    if (r.ok() && count > out.buckets[accessBucketOf(id, out.rows, out.buckets.size())])
      r.fail(path + "/hot",
             "expected id " + std::to_string(id) + "'s count (" + std::to_string(count) + ") within its bucket's");
}

TableAccess readTable(JsonReader& r, const json& t, const std::string& path) {
  TableAccess out;
  if (!r.expectObject(t, path)) return out;
  if (auto s = r.string(t, path, "name")) out.name = *s;
  if (auto x = r.integer(t, path, "rows", true, 1, kMaxRows)) out.rows = *x;
  if (auto x = r.integer(t, path, "lookups", true, 0)) out.lookups = *x;
  if (!out.rows) return out;
  readHot(r, t, path, out);
  readBuckets(r, t, path, out);
  return out;
}

}  // namespace

std::size_t accessBucketOf(std::uint64_t id, std::uint64_t rows, std::size_t buckets) {
  if (rows == 0 || buckets == 0) return 0;
  if (id >= rows) return buckets - 1;
  // Exact in 64 bits while id x buckets fits: rows <= 2^48 and buckets <= 2^16 in a valid file.
  if (id <= UINT64_MAX / buckets) return std::min<std::size_t>(id * buckets / rows, buckets - 1);
  return std::min<std::size_t>(static_cast<std::size_t>(static_cast<long double>(id) * buckets / rows), buckets - 1);
}

Result<AccessFile> accessFromJson(const nlohmann::json& j, const std::string& source) {
  JsonReader r(source);
  if (!r.schema(j, kAccessSchema)) return r.error();
  AccessFile a;
  if (auto s = r.string(j, "", "source", false, true)) a.source = *s;
  if (auto x = r.integer(j, "", "batches", false, 0)) a.batches = *x;
  const json* tables = r.member(j, "", "tables", true, "an array of tables");
  if (tables && r.expectArray(*tables, "/tables")) {
    if (tables->size() > kMaxTables)
      r.fail("/tables",
             "expected at most " + std::to_string(kMaxTables) + " tables, got " + std::to_string(tables->size()));
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < tables->size() && i < kMaxTables && r.problemCount() < 20; ++i) {
      a.tables.push_back(readTable(r, (*tables)[i], childPath("/tables", i)));
      const std::string& name = a.tables.back().name;
      if (name.empty()) continue;
      if (auto [it, inserted] = seen.emplace(name, i); !inserted)
        r.fail(childPath(childPath("/tables", i), "name"),
               "expected a unique table name, \"" + name + "\" is also at " + childPath("/tables", it->second));
    }
  }
  if (!r.ok()) return r.error();
  return a;
}

Result<AccessFile> loadAccessFile(const std::string& path) {
  auto j = readJsonFile(path);
  if (!j) return j.error();
  return accessFromJson(*j, path);
}

nlohmann::ordered_json toJson(const AccessFile& a) {
  nlohmann::ordered_json j;
  j["schema"] = kAccessSchema;
  j["source"] = a.source;
  j["batches"] = a.batches;
  auto& tables = j["tables"] = nlohmann::ordered_json::array();
  for (const auto& t : a.tables) tables.push_back(toJson(t));
  return j;
}

nlohmann::ordered_json toJson(const TableAccess& t) {
  nlohmann::ordered_json j;
  j["name"] = t.name;
  j["rows"] = t.rows;
  j["lookups"] = t.lookups;
  auto& hot = j["hot"] = nlohmann::ordered_json::array();
  for (const auto& [id, count] : t.hot) hot.push_back({id, count});
  j["buckets"] = t.buckets;
  return j;
}

AppliedAccess applyAccess(const ModelSpec& model, const AccessFile& access) {
  AppliedAccess out;
  out.model = model;
  std::map<std::string, const TableAccess*> by_name;
  for (const auto& t : access.tables) by_name[t.name] = &t;
  for (auto& table : out.model.tables) {
    const auto it = by_name.find(table.name);
    if (it == by_name.end()) continue;
    const TableAccess& m = *it->second;
    if (m.rows != table.rows) {
      out.problems.push_back(table.name + ": measured on " + std::to_string(m.rows) + " rows, the model has " +
                             std::to_string(table.rows) + "; keeps its assumed access");
    } else if (m.lookups == 0) {
      out.problems.push_back(table.name + ": no ids observed; keeps its assumed access");
    } else {
      table.access = AccessSpec{};
      table.access.kind = AccessKind::Histogram;
      table.access.histogram.reserve(m.buckets.size());
      for (std::uint64_t c : m.buckets)
        table.access.histogram.push_back(static_cast<double>(c) / static_cast<double>(m.lookups));
      out.measured.push_back(table.name);
    }
    by_name.erase(it);
  }
  for (const auto& [name, t] : by_name) out.problems.push_back(name + ": the model has no table of that name");
  return out;
}

AttachedProject attachAccess(const Project& project, const AccessFile& access, const std::string& file) {
  AppliedAccess applied = applyAccess(project.model, access);
  AttachedProject out;
  out.project = project;
  out.project.model = std::move(applied.model);
  out.project.access = Project::AttachedAccess{file, access.source, applied.measured};
  out.measured = std::move(applied.measured);
  out.problems = std::move(applied.problems);
  return out;
}

}  // namespace shardscope::core
