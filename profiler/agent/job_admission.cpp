#include "shardscope/profiler/agent/job_admission.h"

#include <algorithm>
#include <filesystem>

#include "shardscope/core/summary.h"

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;

JobRefusal refuse(proto::ErrorCode code, std::string message, std::string path = {}) {
  return {code, core::Error{std::move(message), core::ErrorKind::InvalidInput, {}, std::move(path)}};
}

// "1, 2 or 4", "1"
std::string alternatives(const std::vector<std::uint32_t>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i)
    s += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::to_string(values[i]);
  return s;
}

std::vector<std::uint32_t> divisors(std::uint32_t n) {
  std::vector<std::uint32_t> d;
  for (std::uint32_t m = 1; m <= n; ++m)
    if (n % m == 0) d.push_back(m);
  return d;
}

std::uint32_t maxNodes(const core::ClusterSpec& cluster, std::uint32_t max_ranks) {
  return std::min(cluster.nodes, max_ranks / std::max(1u, cluster.gpus_per_node));
}

// The cluster the spec runs on: `nodes` whole nodes of the agent's.
std::variant<core::ClusterSpec, JobRefusal> jobCluster(const proto::JobSpec& spec, const core::ClusterSpec& cluster,
                                                       std::uint32_t max_ranks) {
  const std::uint32_t gpn = std::max(1u, cluster.gpus_per_node);
  const std::uint32_t most = maxNodes(cluster, max_ranks);
  const std::string shape = "this agent's cluster \"" + cluster.name + "\" has " + std::to_string(cluster.nodes) +
                            (cluster.nodes == 1 ? " node of " : " nodes of ") + std::to_string(gpn) + " GPUs";
  if (most == 0)
    return refuse(proto::ErrorCode::LimitExceeded,
                  shape + ": one node exceeds its " + std::to_string(max_ranks) + " ranks (limits.max_ranks)");
  const std::uint32_t nodes = spec.nodes.value_or(cluster.nodes);
  if (nodes > cluster.nodes)
    return refuse(
        proto::ErrorCode::InvalidJob,
        "a job of " + std::to_string(nodes) + " nodes: " + shape + "; ask for 1 to " + std::to_string(most) + " nodes",
        "/job/nodes");
  if (nodes > most)
    return refuse(proto::ErrorCode::LimitExceeded,
                  "a job of " + std::to_string(nodes) + " nodes (" + std::to_string(nodes * gpn) + " ranks) exceeds " +
                      std::to_string(max_ranks) + " ranks (limits.max_ranks); ask for at most " + std::to_string(most) +
                      (spec.nodes ? "" : " with the spec's nodes"),
                  spec.nodes ? "/job/nodes" : "");
  if (nodes == cluster.nodes) return cluster;
  return core::resizedCluster(cluster, nodes * gpn, gpn);
}

// The plan that runs: the spec's (its world size the job's) or the planner's for its grid.
std::variant<core::ShardPlan, JobRefusal> jobPlan(const proto::JobSpec& spec, const ProfileRequest& req) {
  const std::uint32_t world = req.project.cluster.worldSize();
  const std::string on = " (" + std::to_string(req.project.cluster.nodes) +
                         (req.project.cluster.nodes == 1 ? " node of " : " nodes of ") +
                         std::to_string(req.project.cluster.gpus_per_node) + " GPUs of this agent's cluster)";
  if (spec.plan) {
    if (spec.plan->world_size != world)
      return refuse(proto::ErrorCode::InvalidJob,
                    "the plan is for " + std::to_string(spec.plan->world_size) + " GPUs but the job runs on " +
                        std::to_string(world) + on + "; plan for that, or ask for other nodes",
                    "/job/plan/world_size");
    return *spec.plan;
  }
  if (spec.grid && world % *spec.grid != 0)
    return refuse(proto::ErrorCode::InvalidJob,
                  "grid " + std::to_string(*spec.grid) + " does not divide the job's " + std::to_string(world) +
                      " GPUs" + on + "; expected " + alternatives(divisors(world)),
                  "/job/grid");
  auto plan = plannedProfilePlan(req, spec.grid);
  if (!plan) return refuse(proto::ErrorCode::InvalidJob, "planning failed: " + plan.error().message);
  return std::move(plan).value();
}

// The estimate against the per-job limit and what is left of the total.
std::optional<JobRefusal> checkMemory(const JobMemoryEstimate& e, const AgentLimits& l, std::uint64_t reserved) {
  if (e.bytes > l.job_memory_bytes)
    return refuse(proto::ErrorCode::LimitExceeded, "this job needs an estimated " + describeEstimate(e) +
                                                       "; this agent allows " + core::formatBytes(l.job_memory_bytes) +
                                                       " per job (limits.job_memory_bytes)");
  const std::uint64_t left = l.total_memory_bytes > reserved ? l.total_memory_bytes - reserved : 0;
  if (e.bytes > left)
    return refuse(proto::ErrorCode::LimitExceeded,
                  "this job needs an estimated " + describeEstimate(e) + "; of this agent's " +
                      core::formatBytes(l.total_memory_bytes) + " for all jobs (limits.total_memory_bytes) only " +
                      core::formatBytes(left) + " are left (the jobs queued or running are estimated at " +
                      core::formatBytes(reserved) + "); try again when one has ended");
  return std::nullopt;
}

JobRefusal limitExceeded(std::string message) {
  return {proto::ErrorCode::LimitExceeded, core::Error{std::move(message), core::ErrorKind::Usage}};
}

JobRefusal notRunHere(std::string message) {
  return {proto::ErrorCode::InvalidJob, core::Error{std::move(message), core::ErrorKind::Usage}};
}

}  // namespace

std::optional<JobRefusal> checkJobRequest(const proto::JobSpec& spec, const AgentConfig& config, std::size_t in_flight,
                                          std::size_t local_gpus) {
  const AgentLimits& l = config.limits;
  if (spec.steps > l.max_steps)
    return limitExceeded(std::to_string(spec.steps) + " steps exceed this agent's " + std::to_string(l.max_steps) +
                         " (limits.max_steps)");
  if (spec.project.model.tables.size() > l.max_tables)
    return limitExceeded("a model of " + std::to_string(spec.project.model.tables.size()) +
                         " tables exceeds this agent's " + std::to_string(l.max_tables) + " (limits.max_tables)");
  if (in_flight >= l.max_jobs)
    return limitExceeded("this agent already has " + std::to_string(l.max_jobs) +
                         " jobs queued or running (limits.max_jobs)");
  if (spec.mode == proto::JobMode::Mpi && config.launcher == LauncherKind::None)
    return notRunHere("this agent runs emulate jobs only (its config names no launcher)");
  if (spec.device == proto::JobDevice::Cuda && !gpuEngineBuilt())
    return notRunHere("this agent's engine was built without CUDA, NCCL and CUPTI");
  // An emulate job runs on this machine: its GPUs, not the cluster's (mpi
  // jobs' ranks run where the launcher puts them).
  if (spec.device == proto::JobDevice::Cuda && spec.mode == proto::JobMode::Emulate && local_gpus == 0)
    return notRunHere(
        "this agent's machine has no GPU for an emulate job on the cuda device; choose the cpu device, or mpi where "
        "its launcher reaches GPU nodes");
  return std::nullopt;
}

ProfileRequest jobProfileRequest(const proto::JobSpec& spec, const std::string& dir, const AgentConfig& config) {
  ProfileRequest req;
  req.project = spec.project;
  req.batch = spec.batch;
  req.sync_interval = spec.sync_interval;
  req.steps = spec.steps;
  req.warmup = spec.warmup;
  req.seed = spec.seed;
  req.trace_spans = spec.trace_spans;
  req.all_groups = spec.all_groups;
  if (!spec.label.empty()) req.label = spec.label;
  req.store = (fs::path(dir) / "store.sqlite").string();
  req.mode = spec.mode == proto::JobMode::Mpi ? ProfileMode::Mpi : ProfileMode::Emulate;
  req.device = spec.device == proto::JobDevice::Cuda ? ProfileDevice::Cuda : ProfileDevice::Cpu;
  req.engine = config.engine;
  req.emulate_in_engine = true;
  req.cancel_reason = "cancelled by a client of the agent";
  // limits.job_threads for the job: split between the ranks of a node in mpi mode.
  const std::uint32_t per_node =
      std::max(1u, std::min(spec.project.cluster.worldSize(), spec.project.cluster.gpus_per_node));
  req.threads =
      req.mode == ProfileMode::Mpi ? std::max(1u, config.limits.job_threads / per_node) : config.limits.job_threads;
  if (spec.plan) req.plan = *spec.plan;
  return req;
}

std::variant<Admission, JobRefusal> admitJob(const proto::JobSpec& spec, const AgentConfig& config,
                                             const core::ClusterSpec& cluster, std::uint64_t reserved_bytes) {
  Admission a;
  a.spec = spec;
  auto on = jobCluster(spec, cluster, config.limits.max_ranks);
  if (auto* r = std::get_if<JobRefusal>(&on)) return *r;
  a.spec.project.cluster = std::get<core::ClusterSpec>(std::move(on));
  a.spec.nodes = a.spec.project.cluster.nodes;
  ProfileRequest req = jobProfileRequest(a.spec, {}, config);
  auto plan = jobPlan(a.spec, req);
  if (auto* r = std::get_if<JobRefusal>(&plan)) return *r;
  req.plan = std::get<core::ShardPlan>(std::move(plan));
  a.spec.plan = req.plan;
  a.spec.grid.reset();
  auto memory = estimateJobMemory(req);
  if (!memory) return refuse(proto::ErrorCode::InvalidJob, memory.error().message, "/job/plan");
  if (auto r = checkMemory(*memory, config.limits, reserved_bytes)) return *r;
  a.memory = std::move(memory).value();
  return a;
}

std::vector<proto::JobShape> jobShapes(const core::ClusterSpec& cluster, std::uint32_t max_ranks) {
  std::vector<proto::JobShape> shapes;
  const std::uint32_t gpn = std::max(1u, cluster.gpus_per_node);
  for (std::uint32_t nodes = 1; nodes <= maxNodes(cluster, max_ranks); ++nodes)
    shapes.push_back({nodes, nodes * gpn, divisors(nodes * gpn)});
  return shapes;
}

}  // namespace shardscope::profiler
