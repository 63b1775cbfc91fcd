// A model and a cluster as a few lines of text (`shardscope-cli summary`,
// `devices`): the model's totals and its largest tables as a table, the
// cluster's shape, GPU, links and switches.
#pragma once

#include <string>

#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"

namespace shardscope::report {

// Multi-line: totals, then the 30 largest tables (weights), largest first.
[[nodiscard]] std::string formatModelSummary(const core::ModelSpec& m);
// Multi-line: nodes x GPUs, the GPU, intra- and inter-node links, switches, aggregate HBM.
[[nodiscard]] std::string formatClusterSummary(const core::ClusterSpec& c);

}  // namespace shardscope::report
