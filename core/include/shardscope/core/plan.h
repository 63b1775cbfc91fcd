// A shard plan: the 2D grid (sharding group of M GPUs replicated R times),
// the explicit rank groups, and where every piece of every table lives inside
// a sharding group. This is what trainers read: `shardscope.plan/1`, keys
// fixed by docs/ARCHITECTURE.md and documented in docs/formats/plan.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/model.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

enum class ShardingType {
  TableWise,
  RowWise,
  ColumnWise,
  TableRowWise,
  TableColumnWise,
  GridShard,
  DataParallel,
};

// TorchRec's spelling: table_wise, row_wise, ..., grid_shard, data_parallel.
[[nodiscard]] const char* toString(ShardingType t);
[[nodiscard]] std::optional<ShardingType> shardingTypeFromString(std::string_view s);

// The trainer a plan is made for. TorchRec runs only its own layouts (row
// blocks in rank order, table_row_wise and grid blocks in order on one node
// group: core/torchrec_sharding.h); ShardScope's engine runs any placement
// that tiles each table, e.g. row blocks permuted over the ranks.
enum class PlanTarget {
  TorchRec,
  ShardScope,
};

[[nodiscard]] const char* toString(PlanTarget t);  // "torchrec", "shardscope"
[[nodiscard]] std::optional<PlanTarget> planTargetFromString(std::string_view s);

struct Shard {
  std::uint32_t group_rank = 0;  // 0..M-1 inside a sharding group
  std::uint64_t row_offset = 0;
  std::uint64_t rows = 0;  // 0 only for an empty row block (TorchRec's trailing blocks)
  std::uint32_t col_offset = 0;
  std::uint32_t cols = 0;
  bool operator==(const Shard&) const = default;
};

struct TablePlacement {
  std::string name;
  std::uint64_t rows = 0;
  std::uint32_t dim = 0;
  ShardingType sharding_type = ShardingType::TableWise;
  std::vector<Shard> shards;
  bool operator==(const TablePlacement&) const = default;
};

struct RankPrediction {
  std::uint32_t group_rank = 0;
  double compute_ms = 0.0;
  double comm_ms = 0.0;
  std::uint64_t memory_bytes = 0;
  bool operator==(const RankPrediction&) const = default;
};

struct PlanPrediction {
  double step_ms = 0.0;
  double lower_bound_ms = 0.0;
  std::vector<RankPrediction> ranks;
  double max_over_mean = 1.0;
  // Everything step_ms was priced from (model, cluster, the cost model's
  // constants, sync interval, batch), as compact JSON: `predicted.inputs` in
  // plan.json; "" when not known (a plan read from TorchRec, an old file).
  std::string inputs_json;
  bool operator==(const PlanPrediction&) const = default;
};

struct Provenance {
  std::string tool;
  std::optional<std::string> calibration;  // the calibration's source, null when defaults were used
  std::string created;                     // ISO 8601 UTC
  bool operator==(const Provenance&) const = default;
};

struct ShardPlan {
  std::string model;
  std::uint32_t world_size = 0;
  std::uint32_t gpus_per_node = 0;
  std::uint32_t sharding_group_size = 0;  // M
  std::uint32_t replicas = 0;             // R = N / M
  RankLayout layout = RankLayout::Strided;
  PlanTarget target = PlanTarget::TorchRec;
  // Replicas sync weights + optimizer state every k steps (TorchRec's
  // dmp_collection_sync_interval_batches); the prediction assumes it.
  std::uint32_t sync_interval = 1;
  std::vector<std::vector<std::uint32_t>> sharding_groups;  // R lists of M global ranks
  std::vector<std::vector<std::uint32_t>> replica_groups;   // M lists of R global ranks
  std::vector<TablePlacement> tables;
  PlanPrediction predicted;
  Provenance provenance;
  bool operator==(const ShardPlan&) const = default;
};

// Problems pricing `plan` against `model` would hide: a plan table whose rows
// or dim differ from the model's table of that name, one message per table as
// "<source>: /tables/<i>: ...". Tables missing on either side are not
// problems here (the evaluation reports them).
[[nodiscard]] Status planMatchesModel(const ShardPlan& plan, const ModelSpec& model, const std::string& source);

}  // namespace shardscope::core
