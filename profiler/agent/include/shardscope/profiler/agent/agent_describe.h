// What shardscope-agent's describe answers (docs/agent-protocol.md
// "describe"): this host, its GPUs and versions, the engine, the launcher and
// the modes it allows, the cluster jobs run on, the shapes a job may ask for
// (whole nodes and the grids of each) and the limits. Made once at start.
#pragma once

#include "shardscope/core/cluster.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/profiler/agent/agent_config.h"

namespace shardscope::profiler {

[[nodiscard]] core::protocol::Description describeAgent(const AgentConfig& config, const core::ClusterSpec& cluster);

}  // namespace shardscope::profiler
