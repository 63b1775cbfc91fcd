#include "shardscope/report/sweep_output.h"

#include <algorithm>
#include <string>

#include "shardscope/core/device.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/text_table.h"

namespace shardscope::report {

namespace {
std::string gib(std::uint64_t b) { return core::formatBytes(b, {.unit = core::ByteUnit::GiB, .unit_name = false}); }
std::string ms(double v) { return core::formatf("%.3f", v); }
}  // namespace

void printSweep(std::ostream& out, const planner::SweepResult& result, const core::Project& project) {
  const auto& c = project.cluster;
  out << "Model \"" << project.model.name << "\" (" << project.model.tables.size() << " tables, "
      << core::formatBytes(project.model.totalWeightBytes()) << ") on " << c.name << ": N = " << c.worldSize() << " ("
      << c.nodes << " x " << c.gpus_per_node << " " << c.gpu.name << "), batch " << project.model.batch_size_per_gpu
      << " per GPU"
      << (project.calibration ? ", " + core::calibratedOnText(&*project.calibration)
                              : std::string(", default constants"))
      << "\n";
  // A calibration of another kind of device prices for that device: said once, above the figures it changes.
  if (const std::string mismatch = core::calibrationMismatch(c, project.calibration ? &*project.calibration : nullptr);
      !mismatch.empty())
    out << "warning: " << mismatch << ": the figures it changes are for that device, the others for the cluster's\n";
  out << "\n";
  TextTable table({"rank", "M", "R", "layout", "step ms", "emb ms", "a2a ms", "sync ms", "dense ms", "samples/s",
                   "mem GiB/GPU", "max/mean", "gap", "fits"});
  table.separator(" ")
      .separatorBefore(13, "  ")
      .minWidths({4, 6, 6, 10, 9, 9, 9, 9, 9, 11, 12, 8, 7})
      .align(0, TextTable::Align::Right)
      .align(3, TextTable::Align::Left)
      .align(13, TextTable::Align::Left);
  int i = 0;
  for (const auto& g : result.grids) {
    const std::uint64_t mem = g.peakMemoryBytes();
    table.add({std::to_string(++i), std::to_string(g.grid.group_size), std::to_string(g.grid.replicas),
               core::toString(g.grid.layout), ms(g.step.step_ms), ms(g.step.embedding_ms), ms(g.step.all_to_all_ms),
               ms(g.step.replica_sync_ms), ms(g.step.dense_ms), core::formatf("%.3g", g.samples_per_second),
               gib(mem) + "/" + gib(c.gpu.hbm_bytes), core::formatf("%.3f", g.imbalance.max_over_mean),
               core::formatf("%.1f%%", g.gap * 100.0), g.fits ? "yes" : "NO"});
  }
  table.print(out, "");
}

void printGridDetail(std::ostream& out, const planner::GridResult& g) {
  out << "\nGrid M = " << g.grid.group_size << ", R = " << g.grid.replicas << " (" << core::toString(g.grid.layout)
      << ", " << g.algorithm << ", for " << core::toString(g.plan.target) << "): step "
      << core::formatf("%.3f", g.step.step_ms) << " ms = embedding " << core::formatf("%.3f", g.step.embedding_ms)
      << " + all-to-all " << core::formatf("%.3f", g.step.all_to_all_ms) << " + dense "
      << core::formatf("%.3f", g.step.dense_ms) << " + replica sync " << core::formatf("%.3f", g.step.replica_sync_ms)
      << "\n";
  out << "slowest rank " << g.critical_rank << ": load " << core::formatf("%.3f", g.max_load_ms) << " ms, lower bound "
      << core::formatf("%.3f", g.lower_bound_ms) << " ms (gap " << core::formatf("%.2f", g.gap * 100) << "%)\n";
  out << "imbalance: max/mean " << core::formatf("%.4f", g.imbalance.max_over_mean) << ", total variation "
      << core::formatf("%.4f", g.imbalance.total_variation) << ", total distance "
      << core::formatf("%.4f", g.imbalance.total_distance) << ", chi-square "
      << core::formatf("%.4f", g.imbalance.chi_divergence) << ", KL "
      << core::formatf("%.4f", g.imbalance.kl_divergence) << "\n";
  if (!g.critical_tables.empty()) {
    out << "heaviest tables on rank " << g.critical_rank << ":";
    for (std::size_t i = 0; i < g.critical_tables.size() && i < 5; ++i)
      out << " " << g.critical_tables[i].table << " (" << core::formatf("%.3f", g.critical_tables[i].load_ms) << " ms)";
    out << "\n";
  }
  TextTable table({"rank", "fwd ms", "bwd ms", "comm ms", "load ms", "sync ms", "memory GiB", "usable GiB", "shards"});
  table.separator(" ")
      .separatorBefore(9, "  ")
      .minWidths({6, 9, 9, 9, 9, 9, 12, 12, 7})
      .align(0, TextTable::Align::Right);
  // Past 40 ranks: the first and last 20, the slowest rank and every rank
  // over its memory, with a line for each run of ranks left out.
  const std::size_t n = g.ranks.size();
  std::size_t left_out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = g.ranks[i];
    const bool shown =
        n <= 40 || i < 20 || i >= n - 20 || r.group_rank == g.critical_rank || r.memory_bytes > r.capacity_bytes;
    if (!shown) {
      ++left_out;
      continue;
    }
    if (left_out > 0) table.addLine("   ... " + std::to_string(left_out) + " more ranks ...");
    left_out = 0;
    table.add({std::to_string(r.group_rank), ms(r.fwd_ms), ms(r.bwd_ms), ms(r.served_comm_ms), ms(r.load_ms),
               ms(r.sync_ms), gib(r.memory_bytes), gib(r.capacity_bytes), std::to_string(r.shards),
               r.group_rank == g.critical_rank ? "<- slowest" : ""});
  }
  out << "\n";
  table.print(out, "");
  if (!g.problems.empty()) {
    out << "\nproblems:\n";
    for (const auto& p : g.problems) out << "  " << p << "\n";
  }
}

nlohmann::ordered_json gridToJson(const planner::GridResult& g, bool with_plan) {
  nlohmann::ordered_json j;
  j["sharding_group_size"] = g.grid.group_size;
  j["replicas"] = g.grid.replicas;
  j["layout"] = core::toString(g.grid.layout);
  j["algorithm"] = g.algorithm;
  j["target"] = core::toString(g.plan.target);
  j["node_group_size"] = g.grid.node_group_size;
  j["fits"] = g.fits;
  j["step"] = {{"step_ms", g.step.step_ms},
               {"embedding_ms", g.step.embedding_ms},
               {"all_to_all_ms", g.step.all_to_all_ms},
               {"replica_sync_ms", g.step.replica_sync_ms},
               {"dense_ms", g.step.dense_ms},
               {"dense_allreduce_ms", g.step.dense_allreduce_ms}};
  j["samples_per_second"] = g.samples_per_second;
  j["max_load_ms"] = g.max_load_ms;
  j["lower_bound_ms"] = g.lower_bound_ms;
  j["gap"] = g.gap;
  j["critical_rank"] = g.critical_rank;
  j["imbalance"] = {{"max_over_mean", g.imbalance.max_over_mean},
                    {"total_variation", g.imbalance.total_variation},
                    {"total_distance", g.imbalance.total_distance},
                    {"chi_divergence", g.imbalance.chi_divergence},
                    {"kl_divergence", g.imbalance.kl_divergence}};
  auto& ranks = j["ranks"] = nlohmann::ordered_json::array();
  for (const auto& r : g.ranks)
    ranks.push_back({{"group_rank", r.group_rank},
                     {"fwd_ms", r.fwd_ms},
                     {"bwd_ms", r.bwd_ms},
                     {"comm_ms", r.served_comm_ms},
                     {"load_ms", r.load_ms},
                     {"sync_ms", r.sync_ms},
                     {"memory_bytes", r.memory_bytes},
                     {"capacity_bytes", r.capacity_bytes},
                     {"shards", r.shards}});
  j["problems"] = g.problems;
  j["critical_path"] = g.critical_path;
  if (with_plan) j["plan"] = core::toJson(g.plan);
  return j;
}

nlohmann::ordered_json sweepToJson(const planner::SweepResult& result, const core::Project& project) {
  nlohmann::ordered_json j;
  j["model"] = project.model.name;
  j["cluster"] = project.cluster.name;
  j["world_size"] = project.cluster.worldSize();
  j["cancelled"] = result.cancelled;
  auto& grids = j["grids"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < result.grids.size(); ++i) grids.push_back(gridToJson(result.grids[i], i == 0));
  return j;
}

}  // namespace shardscope::report
