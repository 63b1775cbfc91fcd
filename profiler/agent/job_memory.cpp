#include "shardscope/profiler/agent/job_memory.h"

#include <algorithm>
#include <vector>

#include "shardscope/core/summary.h"
#include "shardscope/profiler/engine/emulate.h"

namespace shardscope::profiler {

namespace {

// A span record (TraceRecorder::SpanRec) and the vector's doubling.
constexpr std::uint64_t kSpanBytes = 64 * 2;

// Spans one rank keeps over the run: per step its step and input spans, a
// forward and a backward span per shard, and (mpi) a few collectives.
std::uint64_t traceBytes(const ProfileRequest& r, std::size_t shards) {
  if (!r.trace_spans) return 0;
  const std::uint64_t per_step = 2 + 2 * std::uint64_t{shards} + (r.mode == ProfileMode::Mpi ? 6 : 0);
  return (std::uint64_t{r.warmup} + r.steps) * per_step * kSpanBytes;
}

}  // namespace

core::Result<JobMemoryEstimate> estimateJobMemory(const ProfileRequest& r) {
  const core::ModelSpec model = profileModel(r);
  auto ranks = emulateRankMemory(model, r.plan, model.batch_size_per_gpu);
  if (!ranks) return ranks.error();
  const bool gpu = r.device == ProfileDevice::Cuda;
  const std::uint64_t per_process = kEngineProcessBytes + (gpu ? kGpuProcessHostBytes : 0);
  JobMemoryEstimate e;
  if (r.mode == ProfileMode::Emulate) {
    e.processes = 1;
    e.process_bytes = per_process;
    if (gpu) {  // every rank on its own GPU, in threads of this one process
      e.process_bytes += kGpuProcessHostBytes / 4 * (r.plan.world_size > 0 ? r.plan.world_size - 1 : 0);
      e.where = "the process (its tables are in GPU memory)";
    } else {
      const auto largest = std::max_element(ranks->begin(), ranks->end(), [](const auto& a, const auto& b) {
        return a.state_bytes + a.scratch_bytes < b.state_bytes + b.scratch_bytes;
      });
      if (largest != ranks->end()) {
        e.state_bytes = largest->state_bytes;
        e.buffer_bytes = largest->scratch_bytes;
        e.trace_bytes = traceBytes(r, largest->shards);
        e.where = "its largest rank (group rank " + std::to_string(largest->group_rank) + ")";
      }
    }
    e.bytes = e.process_bytes + e.state_bytes + e.buffer_bytes + e.trace_bytes;
    return e;
  }
  // Mpi: global rank g is group rank g's position in its sharding group.
  const std::uint32_t n = r.plan.world_size;
  const std::uint32_t per_node = std::max(1u, std::min(n, r.project.cluster.gpus_per_node));
  std::vector<std::uint32_t> group_rank(n, 0);
  for (const auto& group : r.plan.sharding_groups)
    for (std::size_t i = 0; i < group.size(); ++i)
      if (group[i] < n) group_rank[group[i]] = static_cast<std::uint32_t>(i);
  for (std::uint32_t first = 0; first < n; first += per_node) {
    JobMemoryEstimate node;
    node.processes = std::min(per_node, n - first);
    node.process_bytes = kLauncherBytes + std::uint64_t{node.processes} * per_process;
    for (std::uint32_t g = first; g < first + node.processes; ++g) {
      const EmulateRankMemory& m = (*ranks)[group_rank[g] % ranks->size()];
      if (!gpu) {
        node.state_bytes += m.state_bytes;
        node.buffer_bytes += m.scratch_bytes;
      }
      node.trace_bytes += traceBytes(r, m.shards) * (g == 0 ? 3 : 1);  // rank 0 also holds a peer's, twice
    }
    node.bytes = node.process_bytes + node.state_bytes + node.buffer_bytes + node.trace_bytes;
    node.where = "node " + std::to_string(first / per_node) + " (" + std::to_string(node.processes) + " ranks)";
    if (node.bytes > e.bytes) e = node;
  }
  return e;
}

std::string describeEstimate(const JobMemoryEstimate& e) {
  std::string s = core::formatBytes(e.bytes) + " for " + e.where + ": ";
  if (e.state_bytes > 0) s += core::formatBytes(e.state_bytes) + " of embedding weights and optimizer state, ";
  if (e.buffer_bytes > 0) s += core::formatBytes(e.buffer_bytes) + " of step buffers, ";
  if (e.trace_bytes > 0) s += core::formatBytes(e.trace_bytes) + " of trace, ";
  s += core::formatBytes(e.process_bytes) + " for " + std::to_string(e.processes) +
       (e.processes == 1 ? " process" : " processes");
  return s;
}

}  // namespace shardscope::profiler
