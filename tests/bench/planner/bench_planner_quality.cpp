// bench_planner_quality: how good the optimizing partitioner's plans are on a
// seeded suite of 50 synthetic models.
//   instance i (0..49): T = round(10 * 100^(i/49)) tables (log-uniform in
//   [10, 1000]), N = {8,16,...,4096}[i mod 10] H100s (8 per node),
//   model = syntheticModel({.tables=T, .seed=1000+i}).
// For each instance: the full sweep (optimized) and its best grid (the first
// that fits, else the first); its gap to the lower bound; then every baseline
// of planner::baselineAlgorithms() on that same grid (same M and layout), and
// a win/tie/loss of our max load against each (relative tolerance 1e-9).
// Bars: median gap <= 2%; no loss against the best baseline of any instance.
// A measurement tool: it always exits 0 and ends with "bars: N passed, M failed".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "bench_common.h"
#include "shardscope/core/constraints.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/planner/partitioner.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/planner/synthetic.h"

namespace {

using namespace shardscope;
using bench::Clock;

constexpr std::uint32_t kSuite = 50;
constexpr std::uint32_t kGpus[] = {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
constexpr double kTol = 1e-9;

std::uint32_t tablesOf(std::uint32_t i) {
  const double f = static_cast<double>(i % kSuite) / static_cast<double>(kSuite - 1);
  return static_cast<std::uint32_t>(std::lround(10.0 * std::pow(100.0, f)));
}
std::uint32_t gpusOf(std::uint32_t i) { return kGpus[i % 10]; }

enum class Verdict { Win, Tie, Loss };
Verdict compare(double ours, double theirs) {
  if (ours < theirs * (1 - kTol)) return Verdict::Win;
  if (ours > theirs * (1 + kTol)) return Verdict::Loss;
  return Verdict::Tie;
}
const char* toString(Verdict v) { return v == Verdict::Win ? "win" : v == Verdict::Tie ? "tie" : "LOSS"; }

struct Tally {
  int win = 0, tie = 0, loss = 0;
  double log_ratio_sum = 0;  // sum of log(ours / theirs), for the geometric mean
  int n = 0;
  void add(double ours, double theirs) {
    switch (compare(ours, theirs)) {
      case Verdict::Win:
        ++win;
        break;
      case Verdict::Tie:
        ++tie;
        break;
      case Verdict::Loss:
        ++loss;
        break;
    }
    if (ours > 0 && theirs > 0) {
      log_ratio_sum += std::log(ours / theirs);
      ++n;
    }
  }
};

void usage() {
  std::printf(
      "usage: bench_planner_quality [--instances K] [--quick] [--balance-compute] [--target torchrec|shardscope]\n"
      "  --instances K  run instances 0..K-1 of the suite (default 50; above 50 the T pattern repeats, seeds do not)\n"
      "  --quick        10 instances spread over every N and T (i = 7j mod 50, j = 0..9)\n"
      "  --balance-compute  balance compute + all-to-all only (the sync priced, not balanced)\n"
      "  --target T     plans for torchrec (default) or shardscope (free row-block placement)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t instances = kSuite;
  bool quick = false;
  planner::SweepOptions base;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (s == "--instances" && a + 1 < argc) {
      const long k = std::atol(argv[++a]);
      instances = static_cast<std::uint32_t>(std::max(1L, k));
    } else if (s == "--quick") {
      quick = true;
    } else if (s == "--balance-compute") {
      base.balance_replica_sync = false;
    } else if (s == "--target" && a + 1 < argc) {
      const auto target = core::planTargetFromString(argv[++a]);
      if (!target) {
        std::fprintf(stderr, "--target: expected torchrec or shardscope, got %s\n", argv[a]);
        return 2;
      }
      base.planner.target = *target;
    } else if (s == "-h" || s == "--help") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", s.c_str());
      usage();
      return 2;
    }
  }
  std::vector<std::uint32_t> ids;
  if (quick) {
    for (std::uint32_t j = 0; j < 10; ++j) ids.push_back((7 * j) % kSuite);
  } else {
    for (std::uint32_t i = 0; i < instances; ++i) ids.push_back(i);
  }

  const auto& baselines = planner::baselineAlgorithms();
  std::vector<Tally> per_baseline(baselines.size());
  Tally vs_best;
  std::vector<double> gaps;
  int fitting = 0;
  const core::Constraints constraints;

  std::printf(
      "bench_planner_quality: %zu instance(s)%s, %s objective, plans for %s; baselines run on the optimized "
      "sweep's best grid\n\n",
      ids.size(), quick ? " (--quick)" : "", base.balance_replica_sync ? "step-time" : "compute-balance",
      core::toString(base.planner.target));
  std::printf("%3s %5s %5s %5s %-10s %-4s %8s | %-18s %12s %-4s | %12s | %-4s %7s\n", "i", "T", "N", "M", "layout",
              "fits", "gap", "best baseline", "its max load", "fits", "ours", "vs", "time");
  std::printf("%s\n", std::string(124, '-').c_str());
  const auto suite_start = Clock::now();
  for (const std::uint32_t i : ids) {
    const auto start = Clock::now();
    const std::uint32_t T = tablesOf(i);
    const core::ClusterSpec cluster = bench::h100Cluster(gpusOf(i));
    const core::ModelSpec model = planner::syntheticModel({.tables = T, .seed = 1000 + static_cast<std::uint64_t>(i)});

    const planner::SweepOptions opt = base;
    const planner::SweepResult res = planner::sweep(model, cluster, nullptr, constraints, opt);
    if (res.grids.empty()) {
      std::printf("%3u %5u %5u  (no grids)\n", i, T, cluster.worldSize());
      continue;
    }
    const planner::GridResult& ours = res.best() ? *res.best() : res.grids.front();
    if (ours.fits) ++fitting;
    gaps.push_back(ours.gap);

    planner::SweepOptions same = base;
    same.only_group_size = ours.grid.group_size;
    same.only_layout = ours.grid.layout;
    double best_load = std::numeric_limits<double>::infinity();
    std::string best_name = "-";
    bool best_fits = false;
    for (std::size_t b = 0; b < baselines.size(); ++b) {
      same.planner.algorithm = baselines[b];
      const planner::SweepResult br = planner::sweep(model, cluster, nullptr, constraints, same);
      if (br.grids.empty()) continue;
      const planner::GridResult& g = br.grids.front();
      per_baseline[b].add(ours.max_load_ms, g.max_load_ms);
      if (g.max_load_ms < best_load) {
        best_load = g.max_load_ms;
        best_name = planner::toString(baselines[b]);
        best_fits = g.fits;
      }
    }
    vs_best.add(ours.max_load_ms, best_load);
    std::printf("%3u %5u %5u %5u %-10s %-4s %7.3f%% | %-18s %9.4f ms %-4s | %9.4f ms | %-4s %5.0fms\n", i, T,
                cluster.worldSize(), ours.grid.group_size, core::toString(ours.grid.layout), ours.fits ? "yes" : "no",
                100.0 * ours.gap, best_name.c_str(), best_load, best_fits ? "yes" : "no", ours.max_load_ms,
                toString(compare(ours.max_load_ms, best_load)), bench::msSince(start));
  }
  const double suite_ms = bench::msSince(suite_start);

  std::printf("\nbest grid fits memory: %d of %zu\n", fitting, gaps.size());
  std::printf("gap to the lower bound (max_load / lower_bound - 1), %zu instances:\n", gaps.size());
  std::printf("  min %.3f%%  p25 %.3f%%  median %.3f%%  p75 %.3f%%  p90 %.3f%%  max %.3f%%\n",
              100.0 * bench::quantile(gaps, 0), 100.0 * bench::quantile(gaps, 0.25), 100.0 * bench::quantile(gaps, 0.5),
              100.0 * bench::quantile(gaps, 0.75), 100.0 * bench::quantile(gaps, 0.9),
              100.0 * bench::quantile(gaps, 1));

  std::printf("\nmax load, optimized vs each baseline on the same grid (win = ours lower by > 1e-9 relative):\n");
  std::printf("  %-22s %5s %5s %5s  %s\n", "baseline", "win", "tie", "loss", "geomean ours/theirs");
  auto row = [](const char* name, const Tally& t) {
    std::printf("  %-22s %5d %5d %5d  %.4f\n", name, t.win, t.tie, t.loss,
                t.n > 0 ? std::exp(t.log_ratio_sum / t.n) : 1.0);
  };
  for (std::size_t b = 0; b < baselines.size(); ++b) row(planner::toString(baselines[b]), per_baseline[b]);
  row("best of all (per inst.)", vs_best);

  int passed = 0;
  int failed = 0;
  const double med = bench::quantile(gaps, 0.5);
  const bool gap_ok = !gaps.empty() && med <= 0.02;
  const bool loss_ok = vs_best.loss == 0;
  (gap_ok ? passed : failed) += 1;
  (loss_ok ? passed : failed) += 1;
  std::printf("\nsuite time: %.2f s (%zu instances, sweep + %zu baselines each)\n", suite_ms / 1000.0, gaps.size(),
              baselines.size());
  std::printf("bar: median gap <= 2%%                           %8.3f%%    %s\n", 100.0 * med,
              gap_ok ? "PASS" : "FAIL");
  std::printf("bar: no loss vs the best baseline per instance  %3d loss(es) %s\n", vs_best.loss,
              loss_ok ? "PASS" : "FAIL");
  std::printf("bars: %d passed, %d failed\n", passed, failed);
  return 0;
}
