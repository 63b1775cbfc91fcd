// shardscope.plan/1 <-> ShardPlan, with the checks a trainer relies on: the
// groups partition the ranks as the layout says, and every table's shards
// tile it exactly once. Format: docs/formats/plan.md.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "json_parts.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/torchrec_sharding.h"

namespace shardscope::core {

namespace {
using detail::childPath;
using detail::json;
using detail::JsonReader;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string rankList(const std::vector<std::uint32_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 8) s += ", ...";
  return s + "]";
}

RankGroups readGroups(JsonReader& r, const json& j, std::string_view key, std::size_t count, std::size_t size,
                      std::uint32_t world) {
  RankGroups groups;
  const std::string path = childPath("", key);
  const json* v = r.member(j, "", key, true, "an array of rank lists");
  if (!v || !r.expectArray(*v, path)) return groups;
  if (count && v->size() != count)
    r.fail(path, "expected " + std::to_string(count) + " groups, got " + std::to_string(v->size()));
  for (std::size_t g = 0; g < v->size(); ++g) {
    const std::string gpath = childPath(path, g);
    const json& list = (*v)[g];
    std::vector<std::uint32_t> ranks;
    if (r.expectArray(list, gpath)) {
      if (size && list.size() != size)
        r.fail(gpath, "expected " + std::to_string(size) + " ranks, got " + std::to_string(list.size()));
      for (std::size_t i = 0; i < list.size(); ++i)
        if (auto x = r.integerValue(list[i], childPath(gpath, i), 0, world ? world - 1 : 0))
          ranks.push_back(static_cast<std::uint32_t>(*x));
    }
    groups.push_back(std::move(ranks));
  }
  return groups;
}

// Shards tile rows x dim exactly once: for every elementary column strip the
// row intervals of the shards spanning it are contiguous from 0 to rows.
void checkTiling(JsonReader& r, const TablePlacement& t, const std::string& path) {
  std::vector<std::uint32_t> cuts = {0, t.dim};
  for (const auto& s : t.shards) {
    cuts.push_back(s.col_offset);
    cuts.push_back(s.col_offset + s.cols);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
    const std::uint32_t c0 = cuts[c], c1 = cuts[c + 1];
    if (c0 >= t.dim) break;
    spans.clear();
    for (const auto& s : t.shards)
      if (s.col_offset <= c0 && s.col_offset + s.cols >= c1) spans.emplace_back(s.row_offset, s.row_offset + s.rows);
    std::sort(spans.begin(), spans.end());
    std::uint64_t covered = 0;
    for (const auto& [a, b] : spans) {
      if (a > covered) {
        r.fail(path, "expected shards to cover table \"" + t.name + "\" exactly once: rows [" +
                         std::to_string(covered) + ", " + std::to_string(a) + ") of columns [" + std::to_string(c0) +
                         ", " + std::to_string(c1) + ") are not covered");
        return;
      }
      if (a < covered) {
        r.fail(path, "expected shards to cover table \"" + t.name + "\" exactly once: rows [" + std::to_string(a) +
                         ", " + std::to_string(std::min(covered, b)) + ") of columns [" + std::to_string(c0) + ", " +
                         std::to_string(c1) + ") are covered twice");
        return;
      }
      covered = b;
    }
    if (covered != t.rows) {
      r.fail(path, "expected shards to cover table \"" + t.name + "\" exactly once: rows [" + std::to_string(covered) +
                       ", " + std::to_string(t.rows) + ") of columns [" + std::to_string(c0) + ", " +
                       std::to_string(c1) + ") are not covered");
      return;
    }
  }
}

TablePlacement readTablePlacement(JsonReader& r, const json& t, const std::string& path, std::uint32_t group_size) {
  TablePlacement p;
  if (!r.expectObject(t, path)) return p;
  if (auto s = r.string(t, path, "name")) p.name = *s;
  if (auto x = r.integer(t, path, "rows", true, 1, kMaxRows)) p.rows = *x;
  if (auto x = r.integer(t, path, "dim", true, 1, kMaxDim)) {
    if (*x % 4) r.fail(childPath(path, "dim"), "expected a positive multiple of 4, got " + std::to_string(*x));
    p.dim = static_cast<std::uint32_t>(*x);
  }
  if (auto st = r.string(t, path, "sharding_type")) {
    if (auto type = shardingTypeFromString(*st))
      p.sharding_type = *type;
    else
      r.fail(childPath(path, "sharding_type"),
             "expected one of table_wise, row_wise, column_wise, table_row_wise, table_column_wise, grid_shard, "
             "data_parallel, got \"" +
                 *st + "\"");
  }
  const json* shards = r.member(t, path, "shards", true, "an array of shards");
  const std::string spath = childPath(path, "shards");
  if (!shards || !r.expectArray(*shards, spath)) return p;
  if (shards->empty()) r.fail(spath, "expected at least one shard");
  const std::size_t before = r.problemCount();
  for (std::size_t i = 0; i < shards->size(); ++i) {
    const std::string ipath = childPath(spath, i);
    const json& sj = (*shards)[i];
    if (!r.expectObject(sj, ipath)) continue;
    Shard s;
    if (auto x = r.integer(sj, ipath, "group_rank", true, 0, group_size ? group_size - 1 : 0))
      s.group_rank = static_cast<std::uint32_t>(*x);
    if (auto x = r.integer(sj, ipath, "row_offset", true, 0, kMaxRows)) s.row_offset = *x;
    if (auto x = r.integer(sj, ipath, "rows", true, 0, kMaxRows)) {
      s.rows = *x;
      const bool row_blocks = p.sharding_type == ShardingType::RowWise ||
                              p.sharding_type == ShardingType::TableRowWise ||
                              p.sharding_type == ShardingType::GridShard;
      if (s.rows == 0 && !row_blocks)
        r.fail(childPath(ipath, "rows"), std::string("expected an integer >= 1 (only row_wise, table_row_wise and "
                                                     "grid_shard row blocks may be empty), got 0 for a ") +
                                             toString(p.sharding_type) + " table");
    }
    if (auto x = r.integer(sj, ipath, "col_offset", true, 0, kMaxDim - 1))
      s.col_offset = static_cast<std::uint32_t>(*x);
    if (auto x = r.integer(sj, ipath, "cols", true, 1, kMaxDim)) s.cols = static_cast<std::uint32_t>(*x);
    if (p.rows && s.row_offset + s.rows > p.rows)
      r.fail(ipath, "expected rows [row_offset, row_offset + rows) inside the table's " + std::to_string(p.rows) +
                        " rows, got [" + std::to_string(s.row_offset) + ", " + std::to_string(s.row_offset + s.rows) +
                        ")");
    if (p.dim && s.cols && s.col_offset + s.cols > p.dim)
      r.fail(ipath, "expected columns [col_offset, col_offset + cols) inside the table's dim " + std::to_string(p.dim) +
                        ", got [" + std::to_string(s.col_offset) + ", " + std::to_string(s.col_offset + s.cols) + ")");
    p.shards.push_back(s);
  }
  if (r.problemCount() != before || p.rows == 0 || p.dim == 0) return p;
  if (p.sharding_type == ShardingType::DataParallel) {
    // A data-parallel table has one full shard on every group rank.
    std::vector<int> seen(group_size, 0);
    for (std::size_t i = 0; i < p.shards.size(); ++i) {
      const Shard& s = p.shards[i];
      if (s.row_offset != 0 || s.rows != p.rows || s.col_offset != 0 || s.cols != p.dim)
        r.fail(childPath(spath, i), "expected a full-table shard (data_parallel), got a partial one");
      if (s.group_rank < group_size && seen[s.group_rank]++)
        r.fail(childPath(spath, i), "expected one data_parallel shard per group rank, group_rank " +
                                        std::to_string(s.group_rank) + " has two");
    }
    for (std::uint32_t g = 0; g < group_size; ++g)
      if (!seen[g]) {
        r.fail(spath,
               "expected a data_parallel shard on every group rank, group_rank " + std::to_string(g) + " has none");
        break;
      }
  } else {
    checkTiling(r, p, spath);
  }
  return p;
}

PlanPrediction readPrediction(JsonReader& r, const json& j, std::uint32_t group_size) {
  PlanPrediction pred;
  const json* v = r.member(j, "", "predicted", false, "");
  if (!v || !r.expectObject(*v, "/predicted")) return pred;
  if (auto x = r.number(*v, "/predicted", "step_ms", true, 0.0, kInf)) pred.step_ms = *x;
  if (auto x = r.number(*v, "/predicted", "lower_bound_ms", false, 0.0, kInf)) pred.lower_bound_ms = *x;
  if (const json* ranks = r.member(*v, "/predicted", "ranks", false, "");
      ranks && r.expectArray(*ranks, "/predicted/ranks")) {
    for (std::size_t i = 0; i < ranks->size(); ++i) {
      const std::string ipath = childPath("/predicted/ranks", i);
      if (!r.expectObject((*ranks)[i], ipath)) continue;
      RankPrediction rp;
      if (auto x = r.integer((*ranks)[i], ipath, "group_rank", true, 0, group_size ? group_size - 1 : 0))
        rp.group_rank = static_cast<std::uint32_t>(*x);
      if (auto x = r.number((*ranks)[i], ipath, "compute_ms", true, 0.0, kInf)) rp.compute_ms = *x;
      if (auto x = r.number((*ranks)[i], ipath, "comm_ms", true, 0.0, kInf)) rp.comm_ms = *x;
      if (auto x = r.integer((*ranks)[i], ipath, "memory_bytes", true, 0)) rp.memory_bytes = *x;
      pred.ranks.push_back(rp);
    }
  }
  if (const json* imb = r.member(*v, "/predicted", "imbalance", false, "");
      imb && r.expectObject(*imb, "/predicted/imbalance")) {
    // max / mean is at least 1; a float sum can put it a rounding error below (0.9999999999999999),
    // and a writer of ours once wrote that: read as 1.
    if (auto x = r.number(*imb, "/predicted/imbalance", "max_over_mean", true, 1.0 - 1e-9, kInf))
      pred.max_over_mean = std::max(1.0, *x);
  }
  if (const json* inputs = r.member(*v, "/predicted", "inputs", false, "");
      inputs && r.expectObject(*inputs, "/predicted/inputs"))
    pred.inputs_json = inputs->dump();
  return pred;
}
}  // namespace

nlohmann::ordered_json toJson(const ShardPlan& p) {
  nlohmann::ordered_json j;
  j["schema"] = kPlanSchema;
  j["model"] = p.model;
  j["target"] = toString(p.target);
  j["world_size"] = p.world_size;
  j["gpus_per_node"] = p.gpus_per_node;
  j["sync_interval"] = p.sync_interval;
  j["grid"] = {
      {"sharding_group_size", p.sharding_group_size}, {"replicas", p.replicas}, {"layout", toString(p.layout)}};
  if (p.world_size && p.sharding_group_size && p.gpus_per_node && p.world_size % p.sharding_group_size == 0)
    j["grid"]["node_group_size"] = nodeGroupSize(p.world_size, p.gpus_per_node, p.sharding_group_size, p.layout);
  j["sharding_groups"] = p.sharding_groups;
  j["replica_groups"] = p.replica_groups;
  auto& tables = j["tables"] = nlohmann::ordered_json::array();
  for (const auto& t : p.tables) {
    nlohmann::ordered_json tj;
    tj["name"] = t.name;
    tj["rows"] = t.rows;
    tj["dim"] = t.dim;
    tj["sharding_type"] = toString(t.sharding_type);
    auto& shards = tj["shards"] = nlohmann::ordered_json::array();
    for (const auto& s : t.shards)
      shards.push_back({{"group_rank", s.group_rank},
                        {"row_offset", s.row_offset},
                        {"rows", s.rows},
                        {"col_offset", s.col_offset},
                        {"cols", s.cols}});
    tables.push_back(std::move(tj));
  }
  nlohmann::ordered_json pred;
  pred["step_ms"] = p.predicted.step_ms;
  pred["lower_bound_ms"] = p.predicted.lower_bound_ms;
  auto& ranks = pred["ranks"] = nlohmann::ordered_json::array();
  for (const auto& r : p.predicted.ranks)
    ranks.push_back({{"group_rank", r.group_rank},
                     {"compute_ms", r.compute_ms},
                     {"comm_ms", r.comm_ms},
                     {"memory_bytes", r.memory_bytes}});
  pred["imbalance"] = {{"max_over_mean", std::max(1.0, p.predicted.max_over_mean)}};
  if (!p.predicted.inputs_json.empty()) {
    auto inputs = nlohmann::ordered_json::parse(p.predicted.inputs_json, nullptr, false);
    if (!inputs.is_discarded()) pred["inputs"] = std::move(inputs);
  }
  j["predicted"] = pred;
  nlohmann::ordered_json prov;
  prov["tool"] = p.provenance.tool;
  prov["calibration"] = p.provenance.calibration ? nlohmann::ordered_json(*p.provenance.calibration) : nullptr;
  prov["created"] = p.provenance.created;
  j["provenance"] = prov;
  return j;
}

Result<ShardPlan> planFromJson(const nlohmann::json& j, const std::string& source) {
  JsonReader r(source);
  if (!r.schema(j, kPlanSchema)) return r.error();
  ShardPlan p;
  if (auto s = r.string(j, "", "model")) p.model = *s;
  // Plans written before the key existed name no target: they are held to
  // TorchRec's rules, the strict default.
  if (auto t = r.string(j, "", "target", false)) {
    if (auto target = planTargetFromString(*t))
      p.target = *target;
    else
      r.fail("/target", "expected \"torchrec\" or \"shardscope\", got \"" + *t + "\"");
  }
  if (auto x = r.integer(j, "", "world_size", true, 1, kMaxWorldSize)) p.world_size = static_cast<std::uint32_t>(*x);
  if (auto x = r.integer(j, "", "gpus_per_node", true, 1, kMaxGpusPerNode))
    p.gpus_per_node = static_cast<std::uint32_t>(*x);
  if (auto x = r.integer(j, "", "sync_interval", false, 1, kMaxSyncInterval))
    p.sync_interval = static_cast<std::uint32_t>(*x);
  const json* grid = r.member(j, "", "grid", true, "an object {sharding_group_size, replicas, layout}");
  if (grid && r.expectObject(*grid, "/grid")) {
    if (auto x = r.integer(*grid, "/grid", "sharding_group_size", true, 1, kMaxWorldSize))
      p.sharding_group_size = static_cast<std::uint32_t>(*x);
    if (auto x = r.integer(*grid, "/grid", "replicas", true, 1, kMaxWorldSize))
      p.replicas = static_cast<std::uint32_t>(*x);
    if (auto l = r.string(*grid, "/grid", "layout")) {
      if (auto layout = rankLayoutFromString(*l))
        p.layout = *layout;
      else
        r.fail("/grid/layout", "expected \"strided\" or \"contiguous\", got \"" + *l + "\"");
    }
  }
  const std::uint32_t M = p.sharding_group_size, R = p.replicas, N = p.world_size;
  if (N && p.gpus_per_node && N > p.gpus_per_node && N % p.gpus_per_node != 0)
    r.fail("/world_size",
           "expected a multiple of gpus_per_node (" + std::to_string(p.gpus_per_node) + "), got " + std::to_string(N));
  const bool grid_ok = r.ok() && M && R && N;
  if (grid_ok && static_cast<std::uint64_t>(M) * R != N)
    r.fail("/grid", "expected sharding_group_size x replicas = world_size, got " + std::to_string(M) + " x " +
                        std::to_string(R) + " != " + std::to_string(N));
  const bool shape_ok = r.ok();
  if (shape_ok && grid) {
    const std::uint32_t L = nodeGroupSize(N, p.gpus_per_node, M, p.layout);
    if (auto x = r.integer(*grid, "/grid", "node_group_size", false, 1, kMaxWorldSize); x && *x != L)
      r.fail("/grid/node_group_size", "expected " + std::to_string(L) + ", the node group size of " +
                                          std::to_string(N) + " GPUs (" + std::to_string(p.gpus_per_node) +
                                          " per node) as " + std::to_string(M) + " x " + std::to_string(R) + " " +
                                          toString(p.layout) + ", got " + std::to_string(*x));
  }
  p.sharding_groups = readGroups(r, j, "sharding_groups", shape_ok ? R : 0, shape_ok ? M : 0, N);
  p.replica_groups = readGroups(r, j, "replica_groups", shape_ok ? M : 0, shape_ok ? R : 0, N);
  if (r.ok() && shape_ok) {
    // The groups are spelled out for trainers; they must be the layout's groups.
    const RankGroups expect_s = shardingGroups(N, M, p.layout);
    const RankGroups expect_r = replicaGroups(N, M, p.layout);
    for (std::size_t g = 0; g < R; ++g)
      if (p.sharding_groups[g] != expect_s[g]) {
        r.fail(childPath("/sharding_groups", g), std::string("expected the ") + toString(p.layout) +
                                                     " layout's group " + rankList(expect_s[g]) + ", got " +
                                                     rankList(p.sharding_groups[g]));
        break;
      }
    for (std::size_t i = 0; i < M; ++i)
      if (p.replica_groups[i] != expect_r[i]) {
        r.fail(childPath("/replica_groups", i), std::string("expected the ") + toString(p.layout) + " layout's group " +
                                                    rankList(expect_r[i]) + ", got " + rankList(p.replica_groups[i]));
        break;
      }
  }
  const json* tables = r.member(j, "", "tables", true, "an array of tables");
  if (tables && r.expectArray(*tables, "/tables")) {
    if (tables->empty()) r.fail("/tables", "expected at least one table");
    if (tables->size() > kMaxTables)
      r.fail("/tables",
             "expected at most " + std::to_string(kMaxTables) + " tables, got " + std::to_string(tables->size()));
    std::unordered_map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < tables->size() && i < kMaxTables; ++i) {
      p.tables.push_back(readTablePlacement(r, (*tables)[i], childPath("/tables", i), M));
      const std::string& name = p.tables.back().name;
      if (name.empty()) continue;
      if (auto [it, inserted] = seen.emplace(name, i); !inserted)
        r.fail(childPath(childPath("/tables", i), "name"),
               "expected a unique table name, \"" + name + "\" is also at " + childPath("/tables", it->second));
    }
  }
  // The placement rules of the target trainer, once the shards tile their tables.
  if (r.ok() && p.target == PlanTarget::TorchRec) {
    const auto problems = torchRecLayoutProblems(p);
    for (const auto& problem : problems) r.fail(problem.path, problem.expectation);
    if (!problems.empty() && !j.contains("target"))
      r.fail("/target",
             "missing, so the plan is held to TorchRec's layout rules; a plan for ShardScope's engine, "
             "which runs any placement that tiles each table, says \"target\": \"shardscope\"");
  }
  p.predicted = readPrediction(r, j, M);
  if (const json* prov = r.member(j, "", "provenance", false, ""); prov && r.expectObject(*prov, "/provenance")) {
    if (auto s = r.string(*prov, "/provenance", "tool", false, true)) p.provenance.tool = *s;
    if (auto s = r.string(*prov, "/provenance", "calibration", false, true)) p.provenance.calibration = *s;
    if (auto s = r.string(*prov, "/provenance", "created", false, true)) p.provenance.created = *s;
  }
  if (!r.ok()) return r.error();
  return p;
}

}  // namespace shardscope::core
