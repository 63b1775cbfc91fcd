#include "shardscope/report/scaling_output.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "shardscope/core/summary.h"
#include "shardscope/report/text_table.h"

namespace shardscope::report {

namespace {
nlohmann::ordered_json pointsToJson(const std::vector<planner::WeakScalingPoint>& points) {
  auto arr = nlohmann::ordered_json::array();
  for (const auto& p : points) {
    nlohmann::ordered_json j;
    j["world_size"] = p.world_size;
    j["fits"] = p.best != nullptr;
    if (p.best) {
      const planner::ScalingCell& c = *p.best;
      j["group_size"] = c.group_size;
      j["replicas"] = p.world_size / c.group_size;
      j["layout"] = core::toString(c.layout);
      j["step_ms"] = c.step_ms;
      j["embedding_ms"] = c.step.embedding_ms;
      j["all_to_all_ms"] = c.step.all_to_all_ms;
      j["replica_sync_ms"] = c.step.replica_sync_ms;
      j["dense_ms"] = c.step.dense_ms;
      j["dense_allreduce_ms"] = c.step.dense_allreduce_ms;
      j["samples_per_second_per_gpu"] = c.samples_per_second_per_gpu;
      j["efficiency"] = p.efficiency;
    }
    j["drop"] = p.drop;
    if (p.drop) {
      j["cause"] = std::string(planner::toString(p.cause));
      if (p.best) j["cause_ms"] = p.cause_ms;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

std::string ms(double v) { return core::formatf("%.3f", v); }
}  // namespace

void printWeakScaling(std::ostream& out, const std::vector<planner::WeakScalingPoint>& points,
                      const core::Project& project) {
  out << "Weak scaling of \"" << project.model.name << "\" on " << project.cluster.name << " nodes ("
      << project.cluster.gpus_per_node << " " << project.cluster.gpu.name << " per node), batch "
      << project.model.batch_size_per_gpu << " per GPU, sync every "
      << std::max<std::uint32_t>(1, project.sync_interval) << " step(s), "
      << (project.calibration ? "calibrated: " + project.calibration->source : "default constants") << "\n\n";
  TextTable table({"N", "M", "R", "layout", "step ms", "emb ms", "a2a ms", "sync ms", "dense ms", "AR ms",
                   "samples/s/GPU", "eff", "drop caused by"});
  table.separator(" ")
      .separatorBefore(12, "  ")
      .minWidths({6, 6, 5, 10, 9, 8, 8, 8, 8, 8, 13, 5})
      .align(0, TextTable::Align::Right)
      .align(3, TextTable::Align::Left)
      .align(12, TextTable::Align::Left);
  for (const auto& p : points) {
    if (!p.best) {
      table.add({std::to_string(p.world_size), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-",
                 "memory: no grid fits in HBM"});
      continue;
    }
    const planner::ScalingCell& c = *p.best;
    table.add({std::to_string(p.world_size), std::to_string(c.group_size), std::to_string(p.world_size / c.group_size),
               core::toString(c.layout), ms(c.step_ms), ms(c.step.embedding_ms), ms(c.step.all_to_all_ms),
               ms(c.step.replica_sync_ms), ms(c.step.dense_ms), ms(c.step.dense_allreduce_ms),
               core::formatf("%.3g", c.samples_per_second_per_gpu), core::formatf("%.0f%%", p.efficiency * 100.0),
               p.drop ? std::string(planner::toString(p.cause)) + core::formatf(" (+%.3f ms)", p.cause_ms) : ""});
  }
  table.print(out, "");
}

nlohmann::ordered_json weakScalingToJson(const std::vector<planner::WeakScalingPoint>& points,
                                         const core::Project& project, bool cancelled) {
  nlohmann::ordered_json j;
  j["model"] = project.model.name;
  j["cluster"] = project.cluster.name;
  j["sync_interval"] = std::max<std::uint32_t>(1, project.sync_interval);
  j["calibration"] = project.calibration ? nlohmann::ordered_json(project.calibration->source) : nullptr;
  j["cancelled"] = cancelled;
  j["world_sizes"] = pointsToJson(points);
  return j;
}

}  // namespace shardscope::report
