#include "shardscope/profiler/workflow/run_catalog.h"

#include <algorithm>
#include <limits>
#include <set>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/profiler/analysis/step_time.h"
#include "shardscope/profiler/trace/engine_run_config.h"
#include "shardscope/profiler/trace/run_device.h"

namespace shardscope::profiler {

namespace st = core::store;

namespace {

// The object `text` holds, or an empty object (missing, not JSON, not an
// object): a run whose stored model or plan is bad still lists.
nlohmann::json objectOf(const std::string& text, const std::string& source) {
  if (text.empty()) return nlohmann::json::object();
  auto j = core::parseJsonText(text, source);
  return j && j->is_object() ? std::move(j).value() : nlohmann::json::object();
}

template <class T>
T valueOr(const nlohmann::json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else {
    return it->is_number_unsigned() ? it->template get<T>() : fallback;
  }
}

// M and R from the engine's run configuration, else from the plan the run
// carries; the layout from the plan (the configuration does not name it).
void readGrid(const EngineRunConfig& config, const st::RunRecord& record, RunRow& row) {
  row.sharding_group_size = config.sharding_group_size;
  row.replicas = config.replicas;
  row.world_size = config.world_size.value_or(0);
  const nlohmann::json plan = objectOf(record.plan_json, "plan_json");
  if (const auto g = plan.find("grid"); g != plan.end() && g->is_object()) {
    if (row.sharding_group_size == 0) {
      row.sharding_group_size = valueOr<std::uint32_t>(*g, "sharding_group_size", 0);
      row.replicas = valueOr<std::uint32_t>(*g, "replicas", 0);
    }
    row.layout = valueOr<std::string>(*g, "layout", std::string());
  }
  if (row.world_size == 0) row.world_size = valueOr<std::uint32_t>(plan, "world_size", 0);
  if (row.world_size == 0)
    row.world_size = static_cast<std::uint32_t>(std::min<std::uint64_t>(
        std::uint64_t{row.sharding_group_size} * row.replicas, std::numeric_limits<std::uint32_t>::max()));
}

core::Status readSteps(const st::TraceStore& store, RunRow& row) {
  auto summaries = store.stepSummaries(row.id);
  if (!summaries) return summaries.error();
  std::set<std::int64_t> steps;
  std::set<int> ranks;
  for (const auto& s : *summaries) {
    steps.insert(s.step);
    ranks.insert(s.rank);
  }
  row.steps = static_cast<std::int64_t>(steps.size());
  row.measured_ranks = static_cast<std::uint32_t>(ranks.size());
  row.step_ms = stepTimeMs(*summaries);
  return core::Ok{};
}

core::Result<RunRow> rowOf(const st::TraceStore& store, const st::RunRecord& record) {
  RunRow row;
  row.id = record.id;
  row.kind = record.kind_text;
  row.label = record.label;
  row.status = record.status;
  row.error = record.error;
  row.created_at = record.created_at;
  const EngineRunConfig config = storedRunConfig(record.config_json);
  row.batch_size_per_gpu = config.batch_size_per_gpu;
  row.device = runDevice(config);
  row.model = valueOr<std::string>(objectOf(record.model_json, "model_json"), "name", std::string());
  readGrid(config, record, row);
  if (auto s = readSteps(store, row); !s) return s.error();
  return row;
}

}  // namespace

core::Result<std::vector<RunRow>> listRunRows(const st::TraceStore& store) {
  auto runs = store.listRuns();
  if (!runs) return runs.error();
  std::vector<RunRow> rows;
  rows.reserve(runs->size());
  for (const auto& record : *runs) {
    auto row = rowOf(store, record);
    if (!row) return row.error();
    rows.push_back(std::move(row).value());
  }
  std::sort(rows.begin(), rows.end(), [](const RunRow& a, const RunRow& b) {
    return static_cast<std::int64_t>(a.id) > static_cast<std::int64_t>(b.id);
  });
  return rows;
}

core::Result<RunRow> runRow(const st::TraceStore& store, st::RunId id) {
  auto record = store.run(id);
  if (!record) return record.error();
  return rowOf(store, *record);
}

}  // namespace shardscope::profiler
