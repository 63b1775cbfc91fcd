#include "shardscope/core/plan.h"

#include <array>
#include <unordered_map>

#include "shardscope/core/json_reader.h"

namespace shardscope::core {

namespace {
constexpr std::array<std::string_view, 7> kShardingTypeNames = {
    "table_wise", "row_wise", "column_wise", "table_row_wise", "table_column_wise", "grid_shard", "data_parallel"};
}

const char* toString(ShardingType t) { return kShardingTypeNames[static_cast<std::size_t>(t)].data(); }

std::optional<ShardingType> shardingTypeFromString(std::string_view s) {
  for (std::size_t i = 0; i < kShardingTypeNames.size(); ++i)
    if (kShardingTypeNames[i] == s) return static_cast<ShardingType>(i);
  return std::nullopt;
}

const char* toString(PlanTarget t) { return t == PlanTarget::TorchRec ? "torchrec" : "shardscope"; }

std::optional<PlanTarget> planTargetFromString(std::string_view s) {
  if (s == "torchrec") return PlanTarget::TorchRec;
  if (s == "shardscope") return PlanTarget::ShardScope;
  return std::nullopt;
}

Status planMatchesModel(const ShardPlan& plan, const ModelSpec& model, const std::string& source) {
  std::unordered_map<std::string, const TableSpec*> by_name;
  for (const auto& t : model.tables) by_name.emplace(t.name, &t);
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < plan.tables.size(); ++i) {
    const TablePlacement& p = plan.tables[i];
    const auto it = by_name.find(p.name);
    if (it == by_name.end() || (it->second->rows == p.rows && it->second->dim == p.dim)) continue;
    problems.push_back(source + ": /tables/" + std::to_string(i) + ": expected table \"" + p.name + "\" as model \"" +
                       model.name + "\" has it (" + std::to_string(it->second->rows) + " rows x dim " +
                       std::to_string(it->second->dim) + "), the plan has " + std::to_string(p.rows) + " rows x dim " +
                       std::to_string(p.dim) + ": is it the model the plan was made for?");
  }
  if (problems.empty()) return Ok{};
  return detail::problemsError(problems);
}

}  // namespace shardscope::core
