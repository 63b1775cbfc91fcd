// Runs page benchmark: a store with 200 runs (4 ranks x 20 steps of step
// summaries each, plus each run's model, cluster and plan JSON) opened in the
// Runs page, from setStorePath to the table filled.   bar: < 300 ms
// Baseline in the same process: TraceStore::listRuns alone (the run records
// without the per-run rows). Also the longest GUI-thread gap while it loads.
//   bench_runs_page [--runs N] [--reps R]
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runs_page.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/sweep.h"

namespace core = shardscope::core;
namespace st = shardscope::core::store;

namespace {

void writeStore(const std::string& path, int runs) {
  const core::ModelSpec model = core::loadModelByNameOrFile("dcnv2").value();
  const core::ClusterSpec cluster = core::loadClusterByNameOrFile("h100x64").value();
  const auto sweep = shardscope::planner::sweep(model, cluster, nullptr, core::Constraints{}, {});
  st::RunHeader header;
  header.kind = st::RunKind::Emulate;
  header.model_json = core::toJson(model).dump();
  header.cluster_json = core::toJson(cluster).dump();
  header.plan_json = core::toJson(sweep.grids.front().plan).dump();
  header.config_json = R"({"mode": "emulate", "grid": {"sharding_group_size": 64, "replicas": 1}})";
  for (int i = 0; i < runs; ++i) {
    header.label = "run " + std::to_string(i);
    auto writer = st::RunWriter::begin(path, header);
    for (int s = 0; s < 20; ++s)
      for (int r = 0; r < 4; ++r) {
        st::StepSummary sum;
        sum.step = s;
        sum.rank = r;
        sum.total_ns = 1'000'000 + 1000 * (s * 4 + r);
        (void)writer->addStepSummary(sum);
      }
    (void)writer->finish();
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char* argv[]) {
  QApplication app(argc, argv);
  int runs = 200, reps = 7;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0)
      runs = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--reps") == 0)
      reps = std::atoi(argv[++i]);
  }
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
  writeStore(path.toStdString(), runs);

  std::vector<double> baseline, page_ms, gaps;
  for (int rep = 0; rep < reps; ++rep) {
    QElapsedTimer b;
    b.start();
    auto store = st::openStore(path.toStdString());
    const auto listed = store->listRuns();
    baseline.push_back(static_cast<double>(b.nsecsElapsed()) / 1e6);
    if (!listed || listed->size() != static_cast<std::size_t>(runs)) return 1;

    shardscope::app::RunsPage page;
    QSignalSpy done(&page, &shardscope::app::RunsPage::listed);
    QElapsedTimer gap_clock;
    qint64 last = -1;
    double worst_gap = 0;
    QTimer probe;
    probe.setInterval(2);
    QObject::connect(&probe, &QTimer::timeout, [&] {
      const qint64 now = gap_clock.nsecsElapsed();
      if (last >= 0) worst_gap = std::max(worst_gap, static_cast<double>(now - last) / 1e6);
      last = now;
    });
    gap_clock.start();
    probe.start();
    QElapsedTimer t;
    t.start();
    page.setStorePath(path);
    if (!done.wait(30000) || done.last().at(0).toInt() != runs) return 1;
    page_ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    probe.stop();
    gaps.push_back(worst_gap);
  }
  const double p = median(page_ms), base = median(baseline);
  std::printf("runs page, %d runs: median %.1f ms to a filled table (bar < 300 ms) over %d reps\n", runs, p, reps);
  std::printf("baseline TraceStore::listRuns alone: median %.1f ms (page / baseline = %.1fx)\n", base, p / base);
  std::printf("longest GUI-thread gap while loading: median %.1f ms, worst %.1f ms (bar <= 50 ms)\n", median(gaps),
              *std::max_element(gaps.begin(), gaps.end()));
  return p < 300 ? 0 : 2;
}
