// Rank layouts of a 2D grid, matching TorchRec's DMPCollection: which global
// ranks form each sharding group and each replica group. One place for the
// formulas so the planner, the engine and plan validation agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace shardscope::core {

enum class RankLayout {
  Strided,     // DMPCollection default: group g = [g, g+R, ..., g+(M-1)R]
  Contiguous,  // use_inter_host_allreduce: group g = [g*M, ..., g*M+M-1]
};

[[nodiscard]] const char* toString(RankLayout l);
[[nodiscard]] std::optional<RankLayout> rankLayoutFromString(std::string_view s);

using RankGroups = std::vector<std::vector<std::uint32_t>>;

// N = world size, M = sharding group size (must divide N). R = N / M groups of M ranks.
[[nodiscard]] RankGroups shardingGroups(std::uint32_t world_size, std::uint32_t group_size, RankLayout layout);
// M groups of R ranks: member i of every sharding group forms replica group i.
[[nodiscard]] RankGroups replicaGroups(std::uint32_t world_size, std::uint32_t group_size, RankLayout layout);

}  // namespace shardscope::core
