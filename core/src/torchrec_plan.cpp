// TorchRec serialized sharding plan -> ShardPlan. The plan is read with the
// same JsonReader as ShardScope's own formats, so every problem names the
// JSON pointer inside the TorchRec plan; the result then goes through
// planFromJson so the exact-cover checks of shardscope.plan/1 apply, and its
// messages are mapped back from "/tables/<i>" to the TorchRec table's path.
#include "shardscope/core/torchrec_plan.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shardscope/core/json_reader.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"

namespace shardscope::core {

namespace {
using detail::childPath;
using detail::describe;
using detail::json;
using detail::JsonReader;

constexpr std::uint64_t kMaxRank = kMaxWorldSize - 1;
constexpr std::uint64_t kMaxColOffset = kMaxDim - 1;
constexpr std::uint64_t kMaxCols = kMaxDim;

// Message text from pieces; numbers are spelled with std::to_string. (Appending
// avoids GCC 12's false -Wrestrict on "literal" + std::to_string(x).)
template <class T>
void append(std::string& s, const T& v) {
  if constexpr (std::is_arithmetic_v<T>)
    s += std::to_string(v);
  else
    s += v;
}
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (append(s, parts), ...);
  return s;
}

std::string rankList(const std::vector<std::uint32_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size() && i < 8; ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  if (v.size() > 8) s += ", ...";
  s += "]";
  return s;
}

std::optional<std::uint64_t> parseUnsigned(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "rank:R/cuda:L", "rank:R/cpu" or "rank:R" -> R.
std::optional<std::uint64_t> placementRank(std::string_view s) {
  constexpr std::string_view kRank = "rank:";
  if (!s.starts_with(kRank)) return std::nullopt;
  s.remove_prefix(kRank.size());
  const std::size_t slash = s.find('/');
  const auto rank = parseUnsigned(s.substr(0, slash));
  if (!rank || *rank > kMaxRank) return std::nullopt;
  if (slash == std::string_view::npos) return rank;
  const std::string_view device = s.substr(slash + 1);
  constexpr std::string_view kCuda = "cuda:";
  if (device == "cpu") return rank;
  if (device.starts_with(kCuda) && parseUnsigned(device.substr(kCuda.size()))) return rank;
  return std::nullopt;
}

// A two-element [row, col] array: shard_offsets or shard_sizes.
std::optional<std::array<std::uint64_t, 2>> readPair(JsonReader& r, const json& shard, const std::string& path,
                                                     std::string_view key, std::array<std::uint64_t, 2> min,
                                                     std::array<std::uint64_t, 2> max, std::string_view what) {
  const std::string expectation = cat("an array of 2 integers [", what, "]");
  const json* v = r.member(shard, path, key, true, expectation);
  if (!v) return std::nullopt;
  const std::string kpath = childPath(path, key);
  if (!v->is_array()) {
    r.fail(kpath, cat("expected ", expectation, ", got ", describe(*v)));
    return std::nullopt;
  }
  if (v->size() != 2) {
    r.fail(kpath, cat("expected ", expectation, ", got an array of ", v->size()));
    return std::nullopt;
  }
  const auto a = r.integerValue((*v)[0], childPath(kpath, std::size_t{0}), min[0], max[0]);
  const auto b = r.integerValue((*v)[1], childPath(kpath, std::size_t{1}), min[1], max[1]);
  if (!a || !b) return std::nullopt;
  return std::array<std::uint64_t, 2>{*a, *b};
}

struct ImportedTable {
  std::string path;  // the table's JSON pointer in the TorchRec plan
  TablePlacement placement;
  std::vector<std::uint32_t> ranks;  // "ranks", when given
  bool has_ranks = false;
  bool full_on_every_rank = false;  // data_parallel without shards: one full shard per group rank
};

const TableSpec* findTable(const ModelSpec* model, const std::string& name) {
  if (!model) return nullptr;
  for (const auto& t : model->tables)
    if (t.name == name) return &t;
  return nullptr;
}

// Reads one ParameterSharding; records problems and returns nullopt when the
// table cannot be used.
// The table is the extent of its shards (gaps and overlaps are found by the
// exact-cover check of planFromJson); it must match the model's table when
// there is a model. False (with the problem added to `r`) when it does not.
bool takeExtent(JsonReader& r, const std::string& spath, const std::string& name, const TorchRecImportOptions& o,
                ImportedTable& t) {
  std::uint64_t rows = 0, dim = 0;
  for (const auto& s : t.placement.shards) {
    rows = std::max(rows, s.row_offset + s.rows);
    dim = std::max(dim, std::uint64_t{s.col_offset} + s.cols);
  }
  if (const TableSpec* spec = findTable(o.model, name); spec && (spec->rows != rows || spec->dim != dim)) {
    r.fail(spath, cat("expected shards spanning table \"", name, "\" of model \"", o.model->name, "\" (", spec->rows,
                      " rows x dim ", spec->dim, "), they span ", rows, " rows x ", dim, " columns"));
    return false;
  }
  if (dim % 4 != 0 || dim > kMaxCols) {
    r.fail(spath, cat("expected shards spanning a dim that is a multiple of 4 and at most ", kMaxCols, ", table \"",
                      name, "\" spans ", dim, " columns"));
    return false;
  }
  t.placement.rows = rows;
  t.placement.dim = static_cast<std::uint32_t>(dim);
  return true;
}

std::optional<ImportedTable> readTable(JsonReader& r, const json& ps, const std::string& path, const std::string& name,
                                       const TorchRecImportOptions& o, std::optional<std::uint64_t>& max_rank) {
  if (!r.expectObject(ps, path)) return std::nullopt;
  const std::size_t before = r.problemCount();
  ImportedTable t;
  t.path = path;
  t.placement.name = name;
  if (name.empty()) r.fail(path, "expected a non-empty table name");
  if (auto st = r.string(ps, path, "sharding_type")) {
    if (auto type = shardingTypeFromString(*st))
      t.placement.sharding_type = *type;
    else
      r.fail(childPath(path, "sharding_type"),
             cat("expected one of table_wise, row_wise, column_wise, table_row_wise, table_column_wise, grid_shard, "
                 "data_parallel, got \"",
                 *st, "\""));
  }
  (void)r.string(ps, path, "compute_kernel", false);  // any kernel; only its type is checked
  const bool dp = t.placement.sharding_type == ShardingType::DataParallel;

  const std::string rpath = childPath(path, "ranks");
  if (const json* ranks = r.member(ps, path, "ranks", false, ""); ranks && r.expectArray(*ranks, rpath)) {
    t.has_ranks = true;
    for (std::size_t i = 0; i < ranks->size(); ++i)
      if (auto x = r.integerValue((*ranks)[i], childPath(rpath, i), 0, kMaxRank)) {
        t.ranks.push_back(static_cast<std::uint32_t>(*x));
        max_rank = std::max(max_rank.value_or(0), *x);
      }
  }

  const std::string spath = childPath(path, "shards");
  const json* shards = r.member(ps, path, "shards", false, "");
  if (shards && !r.expectArray(*shards, spath)) return std::nullopt;
  if (!shards || shards->empty()) {
    if (!dp) {
      r.fail(spath, shards ? std::string("expected at least one shard")
                           : std::string("missing required field (expected an array of shards; only data_parallel "
                                         "tables may have none)"));
      return std::nullopt;
    }
    // TorchRec writes no shards for data_parallel tables: rows and dim come from the model.
    const TableSpec* spec = findTable(o.model, name);
    if (!o.model) {
      r.fail(path, cat("data_parallel table \"", name,
                       "\" has no shards, so its rows and dim are unknown: the model is needed to import it "
                       "(pass the model to take rows and dim from)"));
    } else if (!spec) {
      r.fail(path, cat("data_parallel table \"", name, "\" has no shards, and model \"", o.model->name,
                       "\" has no table of that name to take rows and dim from"));
    } else {
      t.placement.rows = spec->rows;
      t.placement.dim = spec->dim;
      t.full_on_every_rank = true;
    }
    if (r.problemCount() != before) return std::nullopt;
    return t;
  }

  for (std::size_t i = 0; i < shards->size(); ++i) {
    const std::string ipath = childPath(spath, i);
    const json& sj = (*shards)[i];
    if (!r.expectObject(sj, ipath)) continue;
    const auto off =
        readPair(r, sj, ipath, "shard_offsets", {0, 0}, {UINT64_MAX, kMaxColOffset}, "row offset, column offset");
    // Row-wise blocks past the table's end are empty (TorchRec writes them: 5 rows on 4 ranks -> 2,2,1,0).
    const auto size = readPair(r, sj, ipath, "shard_sizes", {0, 1}, {UINT64_MAX, kMaxCols}, "rows, columns");
    std::optional<std::uint64_t> rank;
    if (const json* pl = r.member(sj, ipath, "placement", false, "")) {
      const std::string ppath = childPath(ipath, "placement");
      if (!pl->is_string()) {
        r.fail(ppath, cat("expected a string \"rank:<R>/cuda:<L>\", got ", describe(*pl)));
        continue;
      }
      rank = placementRank(pl->get<std::string>());
      if (!rank) {
        r.fail(ppath, cat("expected \"rank:<R>/cuda:<L>\" or \"rank:<R>\" with integers R in [0, ", kMaxRank,
                          "] and L >= 0, got ", describe(*pl)));
        continue;
      }
    } else if (t.has_ranks && i < t.ranks.size()) {
      rank = t.ranks[i];  // no placement: the ranks list, in shard order
    } else if (!t.has_ranks || r.problemCount() == before) {
      r.fail(ipath, cat("expected a \"placement\" (\"rank:<R>/cuda:<L>\") or an entry ", i, " in ", rpath,
                        " to take the shard's rank from"));
      continue;
    }
    if (!off || !size || !rank) continue;
    if ((*off)[0] > kMaxRows || (*size)[0] > kMaxRows) {
      r.fail(ipath,
             cat("expected a row offset and row count of at most 2^48 each, got ", (*off)[0], " and ", (*size)[0]));
      continue;
    }
    max_rank = std::max(max_rank.value_or(0), *rank);
    Shard s;
    s.group_rank = static_cast<std::uint32_t>(*rank);
    s.row_offset = (*off)[0];
    s.rows = (*size)[0];
    s.col_offset = static_cast<std::uint32_t>((*off)[1]);
    s.cols = static_cast<std::uint32_t>((*size)[1]);
    t.placement.shards.push_back(s);
  }
  if (r.problemCount() != before) return std::nullopt;

  if (!takeExtent(r, spath, name, o, t)) return std::nullopt;
  return t;
}

// planFromJson reports "<source>: /tables/<i>...": name the TorchRec table instead.
Error mapTablePaths(const Error& e, const std::string& source, const std::vector<std::string>& table_paths) {
  const std::string prefix = source + ": /tables/";
  std::string out;
  std::size_t start = 0;
  while (start <= e.message.size()) {
    std::size_t end = e.message.find('\n', start);
    if (end == std::string::npos) end = e.message.size();
    std::string line = e.message.substr(start, end - start);
    if (line.starts_with(prefix)) {
      std::size_t digits = prefix.size();
      while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
      if (const auto i = parseUnsigned(std::string_view(line).substr(prefix.size(), digits - prefix.size()));
          i && *i < table_paths.size()) {
        std::string mapped = source;
        mapped += ": ";
        mapped += table_paths[*i];
        mapped += line.substr(digits);
        line = std::move(mapped);
      }
    }
    if (!out.empty()) out += '\n';
    out += line;
    start = end + 1;
  }
  return Error{out};
}
}  // namespace

bool looksLikeTorchRecPlan(const nlohmann::json& j) {
  return j.is_object() && !j.contains("schema") && j.contains("plan") && j.at("plan").is_object();
}

Result<ShardPlan> shardPlanFromTorchRec(const nlohmann::json& j, const std::string& source,
                                        const TorchRecImportOptions& o) {
  JsonReader r(source);
  if (!r.expectObject(j, "")) return r.error();
  const json* plan =
      r.member(j, "", "plan", true,
               "an object {module path: {table name: parameter sharding}}, as ShardingPlan._serialize() writes");
  if (!plan || !r.expectObject(*plan, "/plan")) return r.error();

  std::vector<ImportedTable> tables;
  std::map<std::string, std::string> seen;  // table name -> its JSON pointer
  std::optional<std::uint64_t> max_rank;
  for (const auto& [module_path, module_plan] : plan->items()) {
    const std::string mpath = childPath("/plan", module_path);
    if (!r.expectObject(module_plan, mpath)) continue;
    for (const auto& [name, ps] : module_plan.items()) {
      const std::string tpath = childPath(mpath, name);
      if (auto [it, inserted] = seen.emplace(name, tpath); !inserted)
        r.fail(tpath, cat("expected table names unique across modules, \"", name, "\" is also at ", it->second));
      if (auto t = readTable(r, ps, tpath, name, o, max_rank)) tables.push_back(std::move(*t));
    }
  }
  if (!r.ok()) return r.error();
  if (tables.empty()) {
    r.fail("/plan", "expected at least one table (an object {module path: {table name: parameter sharding}})");
    return r.error();
  }
  if (!max_rank) {
    r.fail("/plan",
           "expected at least one rank (a shard placement or a \"ranks\" list) to infer the sharding group "
           "size from, found none");
    return r.error();
  }

  const auto M = static_cast<std::uint32_t>(*max_rank + 1);
  const std::uint32_t N = o.world_size ? o.world_size : M;
  if (N > kMaxRank + 1)
    r.fail("", cat("expected world_size in [1, ", kMaxRank + 1, "], got ", N));
  else if (M > N)
    r.fail("/plan", cat("expected ranks below the world size ", N, ", the plan places a shard on rank ", M - 1));
  else if (N % M != 0)
    r.fail("/plan", cat("expected world_size ", N, " to be a multiple of the sharding group size M = ", M,
                        " (group ranks 0..", M - 1, " in the plan)"));
  if (o.gpus_per_node == 0 || o.gpus_per_node > 1024)
    r.fail("", cat("expected gpus_per_node in [1, 1024], got ", o.gpus_per_node));
  else if (N > o.gpus_per_node && N % o.gpus_per_node != 0)
    r.fail("", cat("expected world_size ", N, " to be a multiple of gpus_per_node ", o.gpus_per_node));
  for (auto& t : tables) {
    if (t.placement.sharding_type == ShardingType::DataParallel && t.has_ranks) {
      // A data-parallel table is replicated on the whole sharding group.
      std::vector<std::uint32_t> ranks = t.ranks;
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      if (ranks.size() != M)
        r.fail(childPath(t.path, "ranks"),
               cat("expected every group rank 0..", M - 1, " for a data_parallel table, got ", rankList(t.ranks)));
    }
    if (!t.full_on_every_rank) continue;
    for (std::uint32_t g = 0; g < M; ++g)
      t.placement.shards.push_back(Shard{g, 0, t.placement.rows, 0, t.placement.dim});
  }
  if (!r.ok()) return r.error();

  ShardPlan p;
  p.model = !o.model_name.empty()                 ? o.model_name
            : (o.model && !o.model->name.empty()) ? o.model->name
                                                  : cat("TorchRec plan ", source);
  p.world_size = N;
  p.gpus_per_node = o.gpus_per_node;
  p.sharding_group_size = M;
  p.replicas = N / M;
  p.layout = o.layout;
  p.sharding_groups = shardingGroups(N, M, o.layout);
  p.replica_groups = replicaGroups(N, M, o.layout);
  std::vector<std::string> table_paths;
  for (auto& t : tables) {
    table_paths.push_back(t.path);
    p.tables.push_back(std::move(t.placement));
  }
  p.provenance.tool = "torchrec (imported)";

  // Round trip: the checks every plan gets (exact cover, data-parallel shards).
  auto checked = planFromJson(nlohmann::json(toJson(p)), source);
  if (!checked) return mapTablePaths(checked.error(), source, table_paths);
  return checked;
}

Result<ShardPlan> loadTorchRecPlan(const std::string& path, const TorchRecImportOptions& o) {
  auto j = readJsonFile(path);
  if (!j) return j.error();
  return shardPlanFromTorchRec(*j, path, o);
}

}  // namespace shardscope::core
