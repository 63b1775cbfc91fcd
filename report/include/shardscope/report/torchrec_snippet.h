// The Python a TorchRec trainer pastes to run a ShardScope plan: load the
// saved shardscope.plan/1 with the shardscope_torchrec adapter
// (packaging/python), build DMPCollection with the plan's sharding group and
// sync the replicas at the interval the plan was priced with. Qt-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardscope/core/plan.h"

namespace shardscope::report {

// A Python string literal for `text` (double quotes; backslashes, quotes and
// control characters escaped, other UTF-8 kept as is).
[[nodiscard]] std::string pythonStringLiteral(std::string_view text);

// The snippet for `plan` saved at `plan_path`; replicas sync every
// plan.sync_interval steps, as the plan's prediction assumes.
[[nodiscard]] std::string torchRecSnippet(const core::ShardPlan& plan, const std::string& plan_path);

}  // namespace shardscope::report
