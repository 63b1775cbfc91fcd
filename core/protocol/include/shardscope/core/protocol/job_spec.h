// The one builder of the job spec a client submits (docs/agent-protocol.md
// "Job spec"): `shardscope-cli remote submit` fills JobOptions from its
// command line, the desktop's Profile dialog from its form, and both turn
// them into a JobSpec here. The project travels without its local parts (the
// trace store, the access file's path, the chosen grid): the agent reads no
// file a client names, and runs the job on its own cluster. The desktop,
// which knows the agent's Description, builds for it (makeJobSpecFor): the
// spec is checked against the agent's modes, limits and cluster before
// anything is sent, and carries the agent's cluster; the CLI lets the agent
// check (makeJobSpec), so one submit needs one connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardscope/core/plan.h"
#include "shardscope/core/project.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/result.h"

namespace shardscope::core::protocol {

// What a client asks to run, as its form or command line says it.
struct JobOptions {
  std::string label;                    // cleaned (cleanJobLabel); "": none (the run's label is the engine's)
  std::optional<core::ShardPlan> plan;  // what runs; its world size must be the agent cluster's
  std::uint32_t grid = 0;               // without a plan: the planner's plan for this M (0: the sweep's best)
  std::uint32_t nodes = 0;              // whole nodes of the agent's cluster (0: all of them)
  std::string mode = "emulate";         // "emulate" | "mpi": one of the agent's modes
  bool cuda = false;                    // the agent's GPUs (needs its GPU engine)
  std::uint32_t steps = 5;              // 1..kMaxJobSteps
  std::uint32_t warmup = 1;             // 0..kMaxJobWarmup
  std::uint64_t seed = 1;               // 1..kMaxJobSeed
  std::uint32_t batch = 0;              // 0: the model's
  std::uint32_t sync_interval = 0;      // 0: the project's
  bool trace_spans = true;
  bool all_groups = false;  // emulate every sharding group, not only group 0
};

// The spec of `project` with `options`. The project's cluster stays (the
// agent replaces it with its own); a plan wins over a grid. Errors
// (InvalidInput, "cannot run on this agent: ..."): a mode other than
// emulate or mpi, steps, warm-up or seed out of the protocol's ranges.
[[nodiscard]] Result<JobSpec> makeJobSpec(const Project& project, const JobOptions& options);

// makeJobSpec for `agent`, on its cluster (or `nodes` of its nodes); an
// error (InvalidInput) names what the agent would refuse: a mode it does not
// run, a GPU engine it lacks, too many steps or ranks, a node count it does
// not offer, a plan for another world size, a grid that does not divide N.
[[nodiscard]] Result<JobSpec> makeJobSpecFor(const Project& project, const Description& agent,
                                             const JobOptions& options);

// "<project> M=<grid>" (or "<project>"), cut to the protocol's label limit,
// control characters dropped.
[[nodiscard]] std::string defaultJobLabel(const Project& project, std::uint32_t grid);
// A label the agent accepts: control characters dropped, at most
// kMaxLabelBytes bytes (cut at a UTF-8 character boundary).
[[nodiscard]] std::string cleanJobLabel(const std::string& label);

// "gpu01 cluster (cluster name, 16 GPUs)" for a run-target list.
[[nodiscard]] std::string runTargetText(const std::string& agent_label, const Description& agent);

// Whether `agent` accepts jobs of `mode`.
[[nodiscard]] bool agentRunsMode(const Description& agent, const std::string& mode);

}  // namespace shardscope::core::protocol
