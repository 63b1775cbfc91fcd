#include "shardscope/profiler/trace/engine_run_config.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/json_reader.h"
#include "shardscope/core/time_text.h"

namespace shardscope::profiler {

namespace {
using nlohmann::json;

// A member of the kind asked for, else nullptr (absent, or of another kind: passed over).
const json* member(const json& obj, const char* key, bool (json::*kind)() const noexcept) {
  const auto it = obj.find(key);
  return it != obj.end() && ((*it).*kind)() ? &*it : nullptr;
}

std::string text(const json& obj, const char* key) {
  const json* v = member(obj, key, &json::is_string);
  return v != nullptr ? v->get<std::string>() : std::string();
}

std::optional<std::uint64_t> whole(const json& obj, const char* key,
                                   std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  const json* v = member(obj, key, &json::is_number_unsigned);
  if (v == nullptr || v->get<std::uint64_t>() > max) return std::nullopt;
  return v->get<std::uint64_t>();
}

std::uint32_t whole32(const json& obj, const char* key) {
  return static_cast<std::uint32_t>(whole(obj, key, std::numeric_limits<std::uint32_t>::max()).value_or(0));
}

std::optional<double> number(const json& obj, const char* key) {
  const json* v = member(obj, key, &json::is_number);
  return v != nullptr ? std::optional<double>(v->get<double>()) : std::nullopt;
}

bool flag(const json& obj, const char* key) {
  const json* v = member(obj, key, &json::is_boolean);
  return v != nullptr && v->get<bool>();
}

// The strings of an array member (other elements passed over); nullopt when it is not an array.
std::optional<std::vector<std::string>> texts(const json& obj, const char* key) {
  const json* v = member(obj, key, &json::is_array);
  if (v == nullptr) return std::nullopt;
  std::vector<std::string> out;
  for (const json& e : *v)
    if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

std::vector<CappedShard> cappedShards(const json& config) {
  std::vector<CappedShard> out;
  const json* v = member(config, "capped", &json::is_array);
  if (v == nullptr) return out;
  for (const json& e : *v) {
    if (!e.is_object()) continue;
    CappedShard s;
    s.table = text(e, "table");
    s.group_rank = whole32(e, "group_rank");
    s.row_offset = whole(e, "row_offset").value_or(0);
    s.col_offset = whole32(e, "col_offset");
    s.rows = whole(e, "rows").value_or(0);
    s.physical_rows = whole(e, "physical_rows").value_or(0);
    out.push_back(std::move(s));
  }
  return out;
}

GpuTracing gpuTracing(const json& t) {
  GpuTracing g;
  g.cupti = flag(t, "cupti");
  g.records = whole(t, "records").value_or(0);
  g.dropped_records = whole(t, "dropped_records").value_or(0);
  g.buffers = whole(t, "buffers").value_or(0);
  g.buffer_bytes = whole(t, "buffer_bytes").value_or(0);
  g.untraced_step_ms = number(t, "untraced_step_ms");
  g.traced_step_ms = number(t, "traced_step_ms");
  g.overhead_pct = number(t, "overhead_pct");
  g.note = text(t, "note");
  return g;
}

// What the engine and the run say of themselves: mode, steps, grid and how it ran.
void readRun(const json& j, EngineRunConfig& c) {
  c.mode = text(j, "mode");
  c.steps = whole32(j, "steps");
  c.warmup = whole32(j, "warmup");
  c.seed = whole(j, "seed").value_or(0);
  c.threads = whole32(j, "threads");
  c.batch_size_per_gpu = whole32(j, "batch_size_per_gpu");
  c.sync_interval = whole32(j, "sync_interval");
  c.pooling = text(j, "pooling");
  c.learning_rate = number(j, "learning_rate").value_or(0);
  c.eps = number(j, "eps").value_or(0);
  c.tracing = flag(j, "tracing");
  c.replay = flag(j, "replay");
  if (const json* g = member(j, "grid", &json::is_object)) {
    c.sharding_group_size = whole32(*g, "sharding_group_size");
    c.replicas = whole32(*g, "replicas");
  }
  c.groups_measured = whole32(j, "groups_measured");
  if (const json* r = member(j, "ranks_measured", &json::is_array))
    for (const json& e : *r)
      if (e.is_number_unsigned() && e.get<std::uint64_t>() <= std::numeric_limits<std::uint32_t>::max())
        c.ranks_measured.push_back(e.get<std::uint32_t>());
  if (auto w = whole(j, "world_size", std::numeric_limits<std::uint32_t>::max()))
    c.world_size = static_cast<std::uint32_t>(*w);
  c.memory_budget_bytes = whole(j, "memory_budget_bytes").value_or(0);
  c.capped = cappedShards(j);
}

// Where it ran: hosts, CPU, GPUs, the GPU tracer.
void readPlace(const json& j, EngineRunConfig& c) {
  c.host = text(j, "host");
  c.hosts = texts(j, "hosts");
  c.cpu = text(j, "cpu");
  if (member(j, "device", &json::is_string) != nullptr) c.device = text(j, "device");
  c.gpus = texts(j, "gpus").value_or(std::vector<std::string>{});
  if (const json* t = member(j, "gpu_tracing", &json::is_object)) c.gpu_tracing = gpuTracing(*t);
  c.started = text(j, "started");
  c.schema = text(j, "schema");
}

// Nothing said: not the writer's defaults.
EngineRunConfig unsaid() {
  EngineRunConfig c;
  c.sync_interval = 0;
  c.pooling.clear();
  return c;
}

}  // namespace

core::Result<EngineRunConfig> readEngineRunConfig(std::string_view text, const std::string& source) {
  auto j = core::parseJsonText(text, source);
  if (!j) return j.error();
  core::JsonReader r(source);
  if (!r.expectObject(*j, "")) return r.error();
  EngineRunConfig c = unsaid();
  readRun(*j, c);
  readPlace(*j, c);
  return c;
}

EngineRunConfig storedRunConfig(std::string_view text) {
  if (text.empty()) return unsaid();
  auto c = readEngineRunConfig(text, "runs.config_json");
  return c ? std::move(c).value() : unsaid();
}

std::string engineRunConfigJson(const EngineRunConfig& c) {
  nlohmann::ordered_json j;
  j["schema"] = std::string(kEngineRunSchema);
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
  j["started"] = c.started.empty() ? core::utcNowIso8601() : c.started;
  return j.dump();
}

}  // namespace shardscope::profiler
