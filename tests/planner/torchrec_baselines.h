// TorchRec's own planner's plans for fixture models and grids
// (tests/data/torchrec/planner, written by tests/torchrec/make_plans.py):
// loaded with the model, cluster and grid they were made for, then compared
// with our optimizer under our cost model. Shared by the unit test that
// holds the "never slower" line and the benchmark that records the table.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/result.h"
#include "shardscope/core/torchrec_plan.h"
#include "shardscope/planner/plan_comparison.h"

namespace shardscope::testing {

struct TorchRecBaseline {
  std::string name;             // the case, e.g. "dcnv2_h100x64_m16"
  std::string topology;         // "cluster" or "torchrec defaults": the constants TorchRec planned with
  double torchrec_seconds = 0;  // TorchRec's planning time for this one grid
  core::ModelSpec model;
  core::ClusterSpec cluster;
  core::ShardPlan plan;  // TorchRec's plan as a shardscope plan (target torchrec)
};

inline std::vector<std::string> torchRecBaselineFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.ends_with(".json") && !p.ends_with(".model.json")) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline core::Result<TorchRecBaseline> loadTorchRecBaseline(const std::string& path) {
  auto j = core::readJsonFile(path);
  if (!j) return j.error();
  TorchRecBaseline b;
  try {
    b.name = j->at("case").get<std::string>();
    b.topology = j->value("topology", std::string("cluster"));
    b.torchrec_seconds = j->at("planning_seconds").get<double>();
    std::string model = j->at("model").get<std::string>();
    if (model.ends_with(".json")) model = (std::filesystem::path(path).parent_path() / model).string();
    auto m = core::loadModelByNameOrFile(model);
    if (!m) return m.error();
    b.model = std::move(m).value();
    auto c = core::clusterPreset(j->at("cluster").get<std::string>());
    if (!c) return c.error();
    b.cluster = std::move(c).value();
    core::TorchRecImportOptions o;
    o.world_size = j->at("world_size").get<std::uint32_t>();
    o.gpus_per_node = b.cluster.gpus_per_node;
    o.layout = *core::rankLayoutFromString(j->at("layout").get<std::string>());
    o.model = &b.model;
    auto p = core::shardPlanFromTorchRec(j->at("plan"), path, o);
    if (!p) return p.error();
    b.plan = std::move(p).value();
  } catch (const nlohmann::json::exception& e) {
    return core::Error{path + ": " + e.what()};
  }
  return b;
}

// Both plans priced by the default cost model of the baseline's cluster.
inline planner::PlanComparison compareWithTorchRec(const TorchRecBaseline& b) {
  const planner::CostModel cost(b.model, b.cluster, planner::CostConstants::from(b.cluster, nullptr));
  return planner::compareWithOptimized(cost, b.plan, {});
}

}  // namespace shardscope::testing
