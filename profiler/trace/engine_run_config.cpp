#include "shardscope/profiler/trace/engine_run_config.h"

#include <nlohmann/json.hpp>

#include "shardscope/core/time_text.h"

namespace shardscope::profiler {

std::string engineRunConfigJson(const EngineRunConfig& c) {
  nlohmann::ordered_json j;
  j["schema"] = "shardscope.engine-run/1";
  j["mode"] = c.mode;
  j["steps"] = c.steps;
  j["warmup"] = c.warmup;
  j["seed"] = c.seed;
  j["threads"] = c.threads;
  j["batch_size_per_gpu"] = c.batch_size_per_gpu;
  j["sync_interval"] = c.sync_interval;
  j["pooling"] = c.pooling;
  j["learning_rate"] = c.learning_rate;
  j["eps"] = c.eps;
  j["tracing"] = c.tracing;
  j["replay"] = c.replay;
  j["grid"] = {{"sharding_group_size", c.sharding_group_size}, {"replicas", c.replicas}};
  j["groups_measured"] = c.groups_measured;
  j["ranks_measured"] = c.ranks_measured;
  if (c.world_size) j["world_size"] = *c.world_size;
  j["memory_budget_bytes"] = c.memory_budget_bytes;
  nlohmann::ordered_json capped = nlohmann::ordered_json::array();
  for (const CappedShard& s : c.capped)
    capped.push_back({{"table", s.table},
                      {"group_rank", s.group_rank},
                      {"row_offset", s.row_offset},
                      {"col_offset", s.col_offset},
                      {"rows", s.rows},
                      {"physical_rows", s.physical_rows}});
  j["capped"] = std::move(capped);
  j["host"] = c.host;
  if (c.hosts) j["hosts"] = *c.hosts;
  j["cpu"] = c.cpu;
  if (c.device) j["device"] = *c.device;
  if (!c.gpus.empty()) j["gpus"] = c.gpus;
  if (c.gpu_tracing) {
    const GpuTracing& g = *c.gpu_tracing;
    nlohmann::ordered_json t;
    t["cupti"] = g.cupti;
    t["records"] = g.records;
    t["dropped_records"] = g.dropped_records;
    t["buffers"] = g.buffers;
    t["buffer_bytes"] = g.buffer_bytes;
    if (g.untraced_step_ms) t["untraced_step_ms"] = *g.untraced_step_ms;
    if (g.traced_step_ms) t["traced_step_ms"] = *g.traced_step_ms;
    if (g.overhead_pct) t["overhead_pct"] = *g.overhead_pct;
    if (!g.note.empty()) t["note"] = g.note;
    j["gpu_tracing"] = std::move(t);
  }
  j["started"] = core::utcNowIso8601();
  return j.dump();
}

}  // namespace shardscope::profiler
