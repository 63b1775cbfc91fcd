// Import of a TorchRec sharding plan, in the form `ShardingPlan._serialize()`
// writes:
//   {"plan": {"<module path>": {"<table>": {"sharding_type": "row_wise",
//     "compute_kernel": "fused", "ranks": [0, 1],
//     "shards": [{"shard_offsets": [row, col], "shard_sizes": [rows, cols],
//                 "placement": "rank:1/cuda:1"}, ...]}}}}
// The plan is one sharding group's (group-local ranks 0..M-1, as
// DMPCollection generates it); the import spreads it over N = M x R GPUs in
// the chosen layout and validates the result like any `shardscope.plan/1`
// (docs/formats/plan.md), so the exact-cover checks apply.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

struct TorchRecImportOptions {
  std::uint32_t world_size = 0;  // N; 0 = the sharding group size (R = 1)
  std::uint32_t gpus_per_node = 8;
  RankLayout layout = RankLayout::Strided;
  std::string model_name;  // the plan's "model"; empty = the model's name, else "TorchRec plan <source>"
  // Where data_parallel tables without shards take rows and dim from (TorchRec
  // writes no shards for them). Also checks that sharded tables span the
  // model's rows x dim. Not owned; may be null.
  const ModelSpec* model = nullptr;
};

// `source` names the input in messages. Every problem is reported as
// "<source>: <JSON pointer into the TorchRec plan>: <expectation>".
[[nodiscard]] Result<ShardPlan> shardPlanFromTorchRec(const nlohmann::json& j, const std::string& source,
                                                      const TorchRecImportOptions& o);
[[nodiscard]] Result<ShardPlan> loadTorchRecPlan(const std::string& path, const TorchRecImportOptions& o);

// A top-level "plan" object and no "schema": a TorchRec serialized plan
// rather than a ShardScope document.
[[nodiscard]] bool looksLikeTorchRecPlan(const nlohmann::json& j);

}  // namespace shardscope::core
