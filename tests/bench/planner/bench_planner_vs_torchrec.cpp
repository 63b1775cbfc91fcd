// Our optimizer against TorchRec's own planner (fixtures written by
// tests/torchrec/make_plans.py): per case, both plans' step times under our
// cost model, the ratio, and the geometric mean; plus the time our optimizer
// takes for that one grid next to TorchRec's recorded planning time.
//
//   build/ci/tests/bench/planner/bench_planner_vs_torchrec [fixture dir]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "torchrec_baselines.h"

int main(int argc, char** argv) {
  using namespace shardscope;
  const std::string dir = argc > 1 ? argv[1] : std::string(SHARDSCOPE_TEST_DATA_DIR) + "/torchrec/planner";
  std::printf(
      "| case | M x R | TorchRec topology | TorchRec's plan (ms/step) | ours (ms/step) | ours / TorchRec | "
      "ours fits | TorchRec planning | our grid planning |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  double log_sum = 0;
  int n = 0, losses = 0;
  for (const auto& f : testing::torchRecBaselineFiles(dir)) {
    auto b = testing::loadTorchRecBaseline(f);
    if (!b) {
      std::fprintf(stderr, "%s\n", b.error().message.c_str());
      return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    const planner::PlanComparison c = testing::compareWithTorchRec(*b);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const double ratio = c.stepRatio();
    log_sum += std::log(ratio);
    ++n;
    losses += ratio > 1 + 1e-9;
    std::printf("| %s | %u x %u | %s | %.4f | %.4f | %.3f | %s | %.2f s | %.1f ms |\n", b->name.c_str(),
                b->plan.sharding_group_size, b->plan.replicas, b->topology.c_str(), c.given.step.step_ms,
                c.optimized.step.step_ms, ratio, c.optimized.fits ? "yes" : "no", b->torchrec_seconds, ms);
  }
  if (n == 0) {
    std::fprintf(stderr, "no fixtures in %s\n", dir.c_str());
    return 1;
  }
  std::printf("\n%d cases, %d where ours is slower; geometric mean of ours / TorchRec's: %.3f\n", n, losses,
              std::exp(log_sum / n));
  return 0;
}
