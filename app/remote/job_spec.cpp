#include "job_spec.h"

#include <algorithm>

namespace shardscope::app::remote {

namespace proto = core::protocol;

namespace {

core::Error refused(const std::string& what) {
  return core::Error{"cannot run on this agent: " + what, core::ErrorKind::InvalidInput};
}

}  // namespace

std::string cleanJobLabel(const std::string& label) {
  std::string out;
  for (const char c : label)
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
  if (out.size() <= proto::kMaxLabelBytes) return out;
  std::size_t cut = proto::kMaxLabelBytes;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  out.resize(cut);
  return out;
}

std::string defaultJobLabel(const core::Project& project, std::uint32_t grid) {
  const std::string name = project.name.empty() ? std::string("shardscope") : project.name;
  return cleanJobLabel(grid == 0 ? name : name + " M=" + std::to_string(grid));
}

bool agentRunsMode(const proto::Description& agent, const std::string& mode) {
  return std::find(agent.modes.begin(), agent.modes.end(), mode) != agent.modes.end();
}

std::string runTargetText(const std::string& agent_label, const proto::Description& agent) {
  const std::uint32_t n = agent.cluster.worldSize();
  const std::string name = agent.cluster.name.empty() ? std::string("its cluster") : agent.cluster.name;
  return agent_label + " (" + name + ", " + std::to_string(n) + (n == 1 ? " GPU)" : " GPUs)");
}

core::Result<proto::JobSpec> makeJobSpec(const core::Project& project, const proto::Description& agent,
                                         const RemoteRunOptions& options) {
  if (agent.cluster.worldSize() == 0) return refused("it describes no cluster (its config's \"cluster\" is empty)");
  if (options.nodes > agent.cluster.nodes)
    return refused("it has " + std::to_string(agent.cluster.nodes) + " nodes; " + std::to_string(options.nodes) +
                   " asked");
  const std::uint32_t n = options.nodes == 0 ? agent.cluster.worldSize() : options.nodes * agent.cluster.gpus_per_node;
  if (options.nodes != 0 && !agent.shapes.empty() &&
      std::none_of(agent.shapes.begin(), agent.shapes.end(), [&](const auto& s) { return s.nodes == options.nodes; }))
    return refused("it does not run jobs on " + std::to_string(options.nodes) +
                   " nodes (remote describe lists the node counts it offers)");
  if (!agentRunsMode(agent, options.mode))
    return refused("it does not run " + options.mode + " jobs (its launcher is " + agent.launcher +
                   "); choose emulate");
  if (options.cuda && !agent.gpu_engine)
    return refused("its engine was built without CUDA, NCCL and CUPTI; choose the CPU device");
  if (options.steps < 1 || options.steps > proto::kMaxJobSteps ||
      (agent.max_steps > 0 && options.steps > agent.max_steps))
    return refused(
        std::to_string(options.steps) + " measured steps; it allows 1 to " +
        std::to_string(agent.max_steps > 0 ? std::min(agent.max_steps, proto::kMaxJobSteps) : proto::kMaxJobSteps));
  if (options.warmup > proto::kMaxJobWarmup)
    return refused(std::to_string(options.warmup) + " warm-up steps; at most " + std::to_string(proto::kMaxJobWarmup));
  if (agent.max_ranks > 0 && n > agent.max_ranks)
    return refused("its cluster has " + std::to_string(n) + " GPUs but it runs at most " +
                   std::to_string(agent.max_ranks) + " ranks");
  if (options.seed < 1 || options.seed > proto::kMaxMessageInteger) return refused("the seed must be 1 to 2^53 - 1");

  proto::JobSpec spec;
  spec.project = project;
  spec.project.cluster = agent.cluster;
  if (options.nodes != 0) {
    spec.nodes = options.nodes;
    spec.project.cluster = core::resizedCluster(agent.cluster, n);
  }
  spec.project.trace_store.clear();
  spec.project.access.reset();
  spec.project.chosen_group_size.reset();
  spec.project.chosen_layout.reset();
  if (options.plan) {
    if (options.plan->world_size != n)
      return refused("the plan is for " + std::to_string(options.plan->world_size) + " GPUs, the agent's cluster has " +
                     std::to_string(n) + "; choose a plan planned for the agent's cluster");
    spec.plan = options.plan;
  } else if (options.grid != 0) {
    if (n % options.grid != 0)
      return refused("M = " + std::to_string(options.grid) + " does not divide the agent's " + std::to_string(n) +
                     " GPUs");
    spec.grid = options.grid;
  }
  spec.label = options.label.empty() ? defaultJobLabel(project, options.grid) : cleanJobLabel(options.label);
  spec.mode = options.mode == "mpi" ? proto::JobMode::Mpi : proto::JobMode::Emulate;
  spec.device = options.cuda ? proto::JobDevice::Cuda : proto::JobDevice::Cpu;
  spec.steps = options.steps;
  spec.warmup = options.warmup;
  spec.seed = options.seed;
  spec.batch = options.batch;
  spec.sync_interval = options.sync_interval;
  spec.trace_spans = options.trace_spans;
  return spec;
}

}  // namespace shardscope::app::remote
