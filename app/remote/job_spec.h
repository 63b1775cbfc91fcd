// The job an agent runs for a project (docs/agent-protocol.md "Job spec"):
// the desktop's Profile dialog fills RemoteRunOptions from its form and the
// agent's Description, and this turns them into the JobSpec it submits.
// The agent's cluster is the run target: the project's model, constraints,
// calibration and sync interval travel; its cluster is replaced by the
// agent's and nothing local (the trace store, the access file's path) goes
// along. Plain C++ (no Qt): checked against the agent's modes and limits
// before anything is sent, each error saying what to change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardscope/core/plan.h"
#include "shardscope/core/project.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/result.h"

namespace shardscope::app::remote {

struct RemoteRunOptions {
  std::string label;                    // "": defaultJobLabel
  std::optional<core::ShardPlan> plan;  // what runs; its world size must be the agent cluster's
  std::uint32_t grid = 0;               // without a plan: the planner's plan for this M (0: the sweep's best)
  std::uint32_t nodes = 0;              // whole nodes of the agent's cluster (0: all of them)
  std::string mode = "emulate";         // "emulate" | "mpi": one of the agent's modes
  bool cuda = false;                    // the agent's GPUs (needs its GPU engine)
  std::uint32_t steps = 5;
  std::uint32_t warmup = 1;
  std::uint64_t seed = 1;
  std::uint32_t batch = 0;          // 0: the model's
  std::uint32_t sync_interval = 0;  // 0: the project's
  bool trace_spans = true;
};

// `project` on `agent`'s cluster with `options`; an error (InvalidInput)
// names what the agent would refuse: a mode it does not run, too many steps
// or ranks, a node count it does not offer, a plan for another world size, a
// grid that does not divide N (N: the agent's cluster, or `nodes` of its nodes).
[[nodiscard]] core::Result<core::protocol::JobSpec> makeJobSpec(const core::Project& project,
                                                                const core::protocol::Description& agent,
                                                                const RemoteRunOptions& options);

// "<project> M=<grid>" (or "<project>"), cut to the protocol's label limit,
// control characters dropped.
[[nodiscard]] std::string defaultJobLabel(const core::Project& project, std::uint32_t grid);
// A label the agent accepts: control characters dropped, at most
// kMaxLabelBytes bytes (cut at a UTF-8 character boundary).
[[nodiscard]] std::string cleanJobLabel(const std::string& label);

// "gpu01 cluster (cluster name, 16 GPUs)" for a run-target list.
[[nodiscard]] std::string runTargetText(const std::string& agent_label, const core::protocol::Description& agent);

// Whether `agent` accepts jobs of `mode`.
[[nodiscard]] bool agentRunsMode(const core::protocol::Description& agent, const std::string& mode);

}  // namespace shardscope::app::remote
