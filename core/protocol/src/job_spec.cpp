#include "shardscope/core/protocol/job_spec.h"

#include <algorithm>

namespace shardscope::core::protocol {

namespace {

Error refused(const std::string& what) { return Error{"cannot run on this agent: " + what, ErrorKind::InvalidInput}; }

// What `agent` would refuse of `options`, before anything is built; N: the
// world size the job runs on (the agent's cluster, or `nodes` of its nodes).
std::optional<Error> checkAgainst(const Description& agent, const JobOptions& options, std::uint32_t n) {
  if (agent.cluster.worldSize() == 0) return refused("it describes no cluster (its config's \"cluster\" is empty)");
  if (options.nodes > agent.cluster.nodes)
    return refused("it has " + std::to_string(agent.cluster.nodes) + " nodes; " + std::to_string(options.nodes) +
                   " asked");
  if (options.nodes != 0 && !agent.shapes.empty() &&
      std::none_of(agent.shapes.begin(), agent.shapes.end(), [&](const auto& s) { return s.nodes == options.nodes; }))
    return refused("it does not run jobs on " + std::to_string(options.nodes) +
                   " nodes (remote describe lists the node counts it offers)");
  if (!agentRunsMode(agent, options.mode))
    return refused("it does not run " + options.mode + " jobs (its launcher is " + agent.launcher +
                   "); choose emulate");
  if (options.cuda && !agent.gpu_engine)
    return refused("its engine was built without CUDA, NCCL and CUPTI; choose the CPU device");
  if (agent.max_steps > 0 && options.steps > agent.max_steps)
    return refused(std::to_string(options.steps) + " measured steps; it allows 1 to " +
                   std::to_string(std::min(agent.max_steps, kMaxJobSteps)));
  if (agent.max_ranks > 0 && n > agent.max_ranks)
    return refused("its cluster has " + std::to_string(n) + " GPUs but it runs at most " +
                   std::to_string(agent.max_ranks) + " ranks");
  if (options.plan && options.plan->world_size != n)
    return refused("the plan is for " + std::to_string(options.plan->world_size) + " GPUs, the agent's cluster has " +
                   std::to_string(n) + "; choose a plan planned for the agent's cluster");
  if (!options.plan && options.grid != 0 && n % options.grid != 0)
    return refused("M = " + std::to_string(options.grid) + " does not divide the agent's " + std::to_string(n) +
                   " GPUs");
  return std::nullopt;
}

}  // namespace

std::string cleanJobLabel(const std::string& label) {
  std::string out;
  for (const char c : label)
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
  if (out.size() <= kMaxLabelBytes) return out;
  std::size_t cut = kMaxLabelBytes;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  out.resize(cut);
  return out;
}

std::string defaultJobLabel(const Project& project, std::uint32_t grid) {
  const std::string name = project.name.empty() ? std::string("shardscope") : project.name;
  return cleanJobLabel(grid == 0 ? name : name + " M=" + std::to_string(grid));
}

bool agentRunsMode(const Description& agent, const std::string& mode) {
  return std::find(agent.modes.begin(), agent.modes.end(), mode) != agent.modes.end();
}

std::string runTargetText(const std::string& agent_label, const Description& agent) {
  const std::uint32_t n = agent.cluster.worldSize();
  const std::string name = agent.cluster.name.empty() ? std::string("its cluster") : agent.cluster.name;
  return agent_label + " (" + name + ", " + std::to_string(n) + (n == 1 ? " GPU)" : " GPUs)");
}

Result<JobSpec> makeJobSpec(const Project& project, const JobOptions& options) {
  if (options.mode != "emulate" && options.mode != "mpi")
    return refused("no mode \"" + options.mode + "\"; expected emulate or mpi");
  if (options.steps < 1 || options.steps > kMaxJobSteps)
    return refused(std::to_string(options.steps) + " measured steps; it allows 1 to " + std::to_string(kMaxJobSteps));
  if (options.warmup > kMaxJobWarmup)
    return refused(std::to_string(options.warmup) + " warm-up steps; at most " + std::to_string(kMaxJobWarmup));
  if (options.seed < 1 || options.seed > kMaxJobSeed) return refused("the seed must be 1 to 2^53");
  JobSpec spec;
  spec.project = project;
  spec.project.trace_store.clear();
  spec.project.access.reset();
  spec.project.chosen_group_size.reset();
  spec.project.chosen_layout.reset();
  if (options.plan)
    spec.plan = options.plan;
  else if (options.grid != 0)
    spec.grid = options.grid;
  if (options.nodes != 0) spec.nodes = options.nodes;
  spec.label = cleanJobLabel(options.label);
  spec.mode = options.mode == "mpi" ? JobMode::Mpi : JobMode::Emulate;
  spec.device = options.cuda ? JobDevice::Cuda : JobDevice::Cpu;
  spec.steps = options.steps;
  spec.warmup = options.warmup;
  spec.seed = options.seed;
  spec.batch = options.batch;
  spec.sync_interval = options.sync_interval;
  spec.trace_spans = options.trace_spans;
  spec.all_groups = options.all_groups;
  return spec;
}

Result<JobSpec> makeJobSpecFor(const Project& project, const Description& agent, const JobOptions& options) {
  const std::uint32_t n = options.nodes == 0 ? agent.cluster.worldSize() : options.nodes * agent.cluster.gpus_per_node;
  if (auto e = checkAgainst(agent, options, n)) return *e;
  auto spec = makeJobSpec(project, options);
  if (!spec) return spec;
  spec->project.cluster = options.nodes == 0 ? agent.cluster : resizedCluster(agent.cluster, n);
  return spec;
}

}  // namespace shardscope::core::protocol
