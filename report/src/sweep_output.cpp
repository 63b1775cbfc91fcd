#include "shardscope/report/sweep_output.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "shardscope/core/device.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/summary.h"

namespace shardscope::report {

namespace {
std::string gib(std::uint64_t b) { return core::formatBytes(b, {.unit = core::ByteUnit::GiB, .unit_name = false}); }
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
  char line[256];
  std::snprintf(line, sizeof line, "%4s %6s %6s %-10s %9s %9s %9s %9s %9s %11s %12s %8s %7s  %s\n", "rank", "M", "R",
                "layout", "step ms", "emb ms", "a2a ms", "sync ms", "dense ms", "samples/s", "mem GiB/GPU", "max/mean",
                "gap", "fits");
  out << line;
  int i = 0;
  for (const auto& g : result.grids) {
    const std::uint64_t mem = g.peakMemoryBytes();
    std::snprintf(line, sizeof line, "%4d %6u %6u %-10s %9.3f %9.3f %9.3f %9.3f %9.3f %11.3g %12s %8.3f %6.1f%%  %s\n",
                  ++i, g.grid.group_size, g.grid.replicas, core::toString(g.grid.layout), g.step.step_ms,
                  g.step.embedding_ms, g.step.all_to_all_ms, g.step.replica_sync_ms, g.step.dense_ms,
                  g.samples_per_second, (gib(mem) + "/" + gib(c.gpu.hbm_bytes)).c_str(), g.imbalance.max_over_mean,
                  g.gap * 100.0, g.fits ? "yes" : "NO");
    out << line;
  }
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
  char line[256];
  std::snprintf(line, sizeof line, "\n%6s %9s %9s %9s %9s %9s %12s %12s %7s\n", "rank", "fwd ms", "bwd ms", "comm ms",
                "load ms", "sync ms", "memory GiB", "usable GiB", "shards");
  out << line;
  const std::size_t n = g.ranks.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 40 && i == 20) {
      out << "   ... " << (n - 40) << " more ranks ...\n";
      i = n - 20;
    }
    const auto& r = g.ranks[i];
    std::snprintf(line, sizeof line, "%6u %9.3f %9.3f %9.3f %9.3f %9.3f %12s %12s %7u%s\n", r.group_rank, r.fwd_ms,
                  r.bwd_ms, r.served_comm_ms, r.load_ms, r.sync_ms, gib(r.memory_bytes).c_str(),
                  gib(r.capacity_bytes).c_str(), r.shards, r.group_rank == g.critical_rank ? "  <- slowest" : "");
    out << line;
  }
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
