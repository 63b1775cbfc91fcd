#include "shardscope/core/rank_layout.h"

#include <utility>

#include <cassert>

namespace shardscope::core {

const char* toString(RankLayout l) { return l == RankLayout::Strided ? "strided" : "contiguous"; }

std::optional<RankLayout> rankLayoutFromString(std::string_view s) {
  if (s == "strided") return RankLayout::Strided;
  if (s == "contiguous") return RankLayout::Contiguous;
  return std::nullopt;
}

RankGroups shardingGroups(std::uint32_t world_size, std::uint32_t group_size, RankLayout layout) {
  assert(group_size > 0 && world_size % group_size == 0);
  const std::uint32_t replicas = world_size / group_size;
  RankGroups groups(replicas, std::vector<std::uint32_t>(group_size));
  for (std::uint32_t g = 0; g < replicas; ++g)
    for (std::uint32_t i = 0; i < group_size; ++i)
      groups[g][i] = layout == RankLayout::Strided ? g + i * replicas : g * group_size + i;
  return groups;
}

RankGroups replicaGroups(std::uint32_t world_size, std::uint32_t group_size, RankLayout layout) {
  assert(group_size > 0 && world_size % group_size == 0);
  const std::uint32_t replicas = world_size / group_size;
  RankGroups groups(group_size, std::vector<std::uint32_t>(replicas));
  for (std::uint32_t i = 0; i < group_size; ++i)
    for (std::uint32_t g = 0; g < replicas; ++g)
      groups[i][g] = layout == RankLayout::Strided ? i * replicas + g : g * group_size + i;
  return groups;
}

std::uint32_t nodeGroupSize(std::uint32_t world_size, std::uint32_t gpus_per_node, std::uint32_t group_size,
                            RankLayout layout) {
  if (group_size == 0 || gpus_per_node == 0 || world_size % group_size != 0) return 1;
  const RankGroups groups = shardingGroups(world_size, group_size, layout);
  auto staysOnNodes = [&](std::uint32_t size) {
    for (const auto& g : groups)
      for (std::uint32_t b = 0; b < group_size; b += size)
        for (std::uint32_t i = b + 1; i < b + size; ++i)
          if (g[i] / gpus_per_node != g[b] / gpus_per_node) return false;
    return true;
  };
  for (std::uint32_t size = group_size; size > 1; --size)
    if (group_size % size == 0 && staysOnNodes(size)) return size;
  return 1;
}

namespace {
// (group index, position) of `rank` when it is in exactly one group.
std::optional<std::pair<int, int>> placeOf(const RankGroups& groups, std::uint32_t rank) {
  std::optional<std::pair<int, int>> found;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i = 0; i < groups[g].size(); ++i)
      if (groups[g][i] == rank) {
        if (found) return std::nullopt;  // in two places: not a partition
        found = std::pair{static_cast<int>(g), static_cast<int>(i)};
      }
  return found;
}
}  // namespace

std::optional<CommSplit> commSplitOf(const RankGroups& sharding, const RankGroups& replica, std::uint32_t rank) {
  const auto s = placeOf(sharding, rank);
  const auto r = placeOf(replica, rank);
  if (!s || !r) return std::nullopt;
  return CommSplit{s->first, s->second, r->first, r->second};
}

}  // namespace shardscope::core
