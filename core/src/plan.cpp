#include "shardscope/core/plan.h"

#include <array>

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

}  // namespace shardscope::core
