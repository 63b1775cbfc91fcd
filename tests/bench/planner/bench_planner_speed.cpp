// bench_planner_speed: wall clock of the planner's full grid sweep (every M
// dividing N, both rank layouts, default SweepOptions) on one thread.
//   (a) a 1,000-table synthetic model on 4,096 H100s     bar: < 1 s
//   (b) DCNv2 on 8, 64, 512 and 4,096 H100s (each)       bar: < 50 ms
// Every measurement is repeated (--reps, default 3); min and median are
// reported. The in-process baseline is the same sweep with the greedy
// TorchRec-style partitioner (PlannerOptions.algorithm = TorchRecGreedy).
// A measurement tool: it always exits 0 and ends with "bars: N passed, M failed".
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <vector>

#include "bench_common.h"
#include "shardscope/core/constraints.h"
#include "shardscope/planner/partitioner.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/planner/synthetic.h"

namespace {

using namespace shardscope;
using bench::Clock;

struct Timing {
  std::vector<double> ms;
  std::size_t grids = 0;
  double best_step_ms = 0;  // also keeps the work observable
  bool best_fits = false;
};

Timing timeSweep(const core::ModelSpec& model, const core::ClusterSpec& cluster, planner::Algorithm algo, int reps) {
  Timing t;
  planner::SweepOptions opt;
  opt.planner.algorithm = algo;
  const core::Constraints constraints;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    const planner::SweepResult res = planner::sweep(model, cluster, nullptr, constraints, opt);
    t.ms.push_back(bench::msSince(start));
    t.grids = res.grids.size();
    if (!res.grids.empty()) {
      t.best_step_ms = res.grids.front().step.step_ms;
      t.best_fits = res.grids.front().fits;
    }
  }
  return t;
}

struct Row {
  std::string name;
  std::size_t tables = 0;
  std::uint32_t gpus = 0;
  Timing opt;
  Timing greedy;
  double bar_ms = 0;
};

void usage() {
  std::printf(
      "usage: bench_planner_speed [--reps R] [--seed S]\n"
      "  --reps R   repetitions per measurement (default 3); min and median are reported\n"
      "  --seed S   seed of the 1,000-table synthetic model (default 1)\n");
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", a.c_str());
      usage();
      return 2;
    }
  }

  const planner::PlannerOptions defaults;
  std::printf("bench_planner_speed: full sweep (every M | N, strided + contiguous), one thread, %d reps\n", reps);
  std::printf("planner defaults: max_improvement_steps=%u time_budget_ms=%.0f compare_baselines=%s\n",
              defaults.max_improvement_steps, defaults.time_budget_ms, defaults.compare_baselines ? "on" : "off");
  std::printf("baseline: the same sweep with algorithm=%s\n\n", planner::toString(planner::Algorithm::TorchRecGreedy));

  std::vector<Row> rows;
  {
    Row r;
    r.name = "synthetic(seed=";
    r.name += std::to_string(seed);
    r.name += ")";
    const core::ModelSpec m = planner::syntheticModel({.tables = 1000, .seed = seed});
    const core::ClusterSpec c = bench::clusterOrDie("h100x4096");
    r.tables = m.tables.size();
    r.gpus = c.worldSize();
    r.bar_ms = 1000;
    r.opt = timeSweep(m, c, planner::Algorithm::Optimized, reps);
    r.greedy = timeSweep(m, c, planner::Algorithm::TorchRecGreedy, reps);
    rows.push_back(std::move(r));
  }
  const core::ModelSpec dcn = bench::modelOrDie("dcnv2");
  for (const char* cname : {"h100x8", "h100x64", "h100x512", "h100x4096"}) {
    Row r;
    r.name = "dcnv2";
    const core::ClusterSpec c = bench::clusterOrDie(cname);
    r.tables = dcn.tables.size();
    r.gpus = c.worldSize();
    r.bar_ms = 50;
    r.opt = timeSweep(dcn, c, planner::Algorithm::Optimized, reps);
    r.greedy = timeSweep(dcn, c, planner::Algorithm::TorchRecGreedy, reps);
    rows.push_back(std::move(r));
  }

  std::printf("%-20s %6s %5s %5s | %10s %10s | %10s %10s | %8s | %9s %-6s | %s\n", "model", "tables", "GPUs", "grids",
              "opt min", "opt med", "greedy min", "greedy med", "opt/grdy", "bar", "result", "best grid step (fits)");
  std::printf("%s\n", std::string(140, '-').c_str());
  int passed = 0;
  int failed = 0;
  for (const Row& r : rows) {
    const double med = bench::median(r.opt.ms);
    const double gmed = bench::median(r.greedy.ms);
    const bool ok = med < r.bar_ms;
    (ok ? passed : failed) += 1;
    std::printf("%-20s %6zu %5u %5zu | %8.2fms %8.2fms | %8.3fms %8.3fms | %7.1fx | <%6.0fms %-6s | %.3f ms (%s)\n",
                r.name.c_str(), r.tables, r.gpus, r.opt.grids, bench::minimum(r.opt.ms), med,
                bench::minimum(r.greedy.ms), gmed, gmed > 0 ? med / gmed : 0.0, r.bar_ms, ok ? "PASS" : "FAIL",
                r.opt.best_step_ms, r.opt.best_fits ? "fits" : "does not fit");
  }
  std::printf("\nbars are judged on the median of the optimized sweep.\n");
  for (const Row& r : rows) {
    const double med = bench::median(r.opt.ms);
    const double gmed = bench::median(r.greedy.ms);
    std::printf("%s on %u GPUs: optimized sweep takes %.2f ms = %.1f x the greedy-baseline sweep (%.3f ms)\n",
                r.name.c_str(), r.gpus, med, gmed > 0 ? med / gmed : 0.0, gmed);
  }
  std::printf("bars: %d passed, %d failed\n", passed, failed);
  return 0;
}
