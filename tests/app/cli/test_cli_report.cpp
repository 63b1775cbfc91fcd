// shardscope-cli report and calibrate as a user runs them: output, --json,
// written calibration files, and exit codes for malformed input (docs/cli.md).
#include <QtTest>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/planner/sweep.h"

#include "../../profiler/analysis/cpu_cluster.h"
#include "cli_run.h"

using namespace shardscope;
namespace st = core::store;

namespace {
using cli_test::Run;

Run cli(const QStringList& args) { return cli_test::runCli(args); }

core::ModelSpec model(std::uint32_t batch) {
  core::ModelSpec m;
  m.name = "cli fixture";
  const std::uint32_t dims[] = {16, 32, 64, 128, 256};
  for (std::uint32_t i = 0; i < 5; ++i) {
    core::TableSpec t;
    t.name = std::string("t").append(std::to_string(i));
    t.rows = 10'000u * (i + 1);
    t.dim = dims[i];
    t.pooling.mean = 1.0 + 3.0 * i;
    if (i % 2) {
      t.access.kind = core::AccessKind::Zipf;
      t.access.alpha = 1.05;
    }
    m.tables.push_back(t);
  }
  m.batch_size_per_gpu = batch;
  m.dense.parameters = 1000;
  m.dense.flops_per_sample = 1000;
  return m;
}

using test::cpu4;

// An engine run of group 0 whose shards take what the cost model says with
// 4 GB/s embedding bandwidth and 30 us kernel overhead.
void writeRun(const std::filesystem::path& path, std::uint32_t batch, std::uint32_t M) {
  constexpr std::int64_t kSteps = 4;
  const auto m = model(batch);
  const auto cluster = cpu4();
  planner::SweepOptions so;
  so.only_group_size = M;
  so.only_layout = core::RankLayout::Strided;
  const auto plan = planner::sweep(m, cluster, nullptr, {}, so).grids.front().plan;
  core::Calibration truth;
  truth.source = "truth";
  truth.coefficients["embedding_bandwidth_gbps"] = {4.0, 0};
  truth.coefficients["kernel_overhead_us"] = {30.0, 0};
  st::RunHeader h{st::RunKind::Emulate,      "fixture",
                  core::toJson(m).dump(),    core::toJson(cluster).dump(),
                  core::toJson(plan).dump(), R"({"schema": "shardscope.engine-run/1", "mode": "emulate"})"};
  auto w = st::RunWriter::begin(path, h);
  if (!w) qFatal("%s", w.error().message.c_str());
  const planner::CostModel cm(m, cluster, planner::CostConstants::from(cluster, &truth));
  const auto grid = planner::makeGrid(plan.world_size, plan.gpus_per_node, plan.sharding_group_size, plan.layout);
  const auto gc = cm.gridCosts(grid);
  for (std::uint32_t gr = 0; gr < M; ++gr) {
    const int rank = static_cast<int>(plan.sharding_groups[0][gr]);
    if (!w->addRank({rank, "h", -1, 0, static_cast<int>(gr)}).ok()) qFatal("rank");
    std::int64_t fwd = 0, bwd = 0, t = 0;
    for (const auto& p : plan.tables)
      for (const auto& sh : p.shards) {
        if (sh.group_rank != gr) continue;
        const std::size_t ti = static_cast<std::size_t>(p.name[1] - '0');
        const auto c = cm.shardCost(ti, sh.row_offset, sh.rows, sh.cols, grid, gc);
        const std::int64_t f = std::llround(c.fwd_ms * 1e6), b = std::llround(c.bwd_ms * 1e6);
        fwd += f;
        bwd += b;
        const auto tid = w->intern(p.name).value();
        for (std::int64_t step = 0; step < kSteps; ++step) {
          st::Span s;
          s.rank = rank;
          s.step = step;
          s.name = s.table = tid;
          s.kind = w->intern("emb_fwd").value();
          s.start_ns = t;
          s.end_ns = t += f;
          if (!w->addSpan(s).ok()) qFatal("span");
          s.kind = w->intern("emb_bwd").value();
          s.start_ns = t;
          s.end_ns = t += b;
          if (!w->addSpan(s).ok()) qFatal("span");
        }
        if (!w->addTableStat(
                  {rank, tid, std::llround(c.ids * kSteps), std::llround(c.unique_rows * kSteps), (f + b) * kSteps})
                 .ok())
          qFatal("stat");
      }
    for (std::int64_t step = 0; step < kSteps; ++step)
      if (!w->addStepSummary({step, rank, fwd, bwd, 0, 0, 0, fwd + bwd}).ok()) qFatal("summary");
  }
  if (!w->finish().ok()) qFatal("finish");
}

struct Store {
  QTemporaryDir dir;
  QString path;
  Store() : path(dir.filePath("runs.db")) {
    writeRun(path.toStdString(), 64, 4);   // run 1
    writeRun(path.toStdString(), 256, 2);  // run 2
  }
};
}  // namespace

class TestCliReport : public QObject {
  Q_OBJECT
 private slots:
  void reportShowsTheLatestRunByDefault() {
    Store s;
    const Run r = cli({"report", "--store", s.path});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.startsWith("Run 2 of "), qPrintable(r.out));
    QVERIFY(r.out.contains("2 measured rank(s), plan M=2 R=2 strided"));
    QVERIFY(r.out.contains("Imbalance of embedding compute"));
    QVERIFY(r.out.contains("Per table"));
  }

  void reportJsonOfAChosenRun() {
    Store s;
    const Run r = cli({"report", "--store", s.path, "--run", "1", "--json"});
    QCOMPARE(r.code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["run"]["id"].get<int>(), 1);
    QCOMPARE(j["ranks"].size(), std::size_t{4});
    QCOMPARE(j["tables"].size(), std::size_t{5});
    QVERIFY(j["ranks"][0]["predicted_model_ms"].is_number());
  }

  void reportWithACalibrationRepricesThePlan() {
    Store s;
    const QString cal = s.dir.filePath("cal.json");
    QCOMPARE(cli({"calibrate", "--store", s.path, "--runs", "1", "--out", cal}).code, 0);
    const Run r = cli({"report", "--store", s.path, "--run", "2", "--calibration", cal, "--json"});
    QCOMPARE(r.code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(j["model_constants"].get<std::string>().starts_with("calibration engine runs 1 of"));
    // The runs were made by the cost model itself: the calibrated prediction matches.
    QVERIFY(j["prediction_mape"]["model"].get<double>() < 1e-3);
  }

  void reportRefusesBadInput() {
    Store s;
    QTemporaryDir dir;
    const QString text = dir.filePath("notes.txt");
    {
      QFile f(text);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("not a store\n");
    }
    QCOMPARE(cli({"report"}).code, 2);
    QCOMPARE(cli({"report", "--store"}).code, 2);
    QCOMPARE(cli({"report", "--store", s.path, "--frob"}).code, 2);
    QCOMPARE(cli({"report", "--store", s.path, "extra"}).code, 2);
    for (const char* bad : {"abc", "0", "-1", "1.5", ""}) {
      const Run r = cli({"report", "--store", s.path, QString("--run=") + bad});
      QVERIFY2(r.code == 2, bad);
      QVERIFY(r.err.contains("--run must be a positive run id"));
    }
    const Run missing = cli({"report", "--store", dir.filePath("missing.db")});
    QCOMPARE(missing.code, 1);
    QVERIFY(missing.err.contains("missing.db"));
    const Run notStore = cli({"report", "--store", text});
    QCOMPARE(notStore.code, 1);
    QVERIFY(notStore.err.contains("not a ShardScope trace store"));
    const Run unknown = cli({"report", "--store", s.path, "--run", "99"});
    QCOMPARE(unknown.code, 1);
    QVERIFY2(unknown.err.contains("no run 99 in this store (runs: 1, 2)"), qPrintable(unknown.err));
    const Run badCal = cli({"report", "--store", s.path, "--calibration", text});
    QCOMPARE(badCal.code, 1);
  }

  void reportRefusesRunsWithoutEngineData() {
    QTemporaryDir dir;
    const QString path = dir.filePath("import.db");
    {
      auto w = st::RunWriter::begin(path.toStdString(), st::RunHeader{st::RunKind::ImportNsys, "nsys", "", "", "", ""});
      QVERIFY(w.ok());
      QVERIFY(w->finish().ok());
    }
    const Run r = cli({"report", "--store", path});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("has no step summaries: the trace has no profiler steps"), qPrintable(r.err));
    const QString empty = dir.filePath("empty.db");
    QVERIFY(st::openStore(empty.toStdString(), st::OpenMode::Create).ok());
    const Run e = cli({"report", "--store", empty});
    QCOMPARE(e.code, 1);
    QVERIFY(e.err.contains("has no runs"));
  }

  void calibrateWritesACalibrationThePlannerReads() {
    Store s;
    const QString cal = s.dir.filePath("cal.json");
    const Run r = cli({"calibrate", "--store", s.path, "--runs", "1", "--holdout", "2", "--out", cal});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("embedding_bandwidth_gbps"));
    QVERIFY(r.out.contains("Held-out check on runs 2 (2 ranks)"));
    QVERIFY(r.out.contains("calibration written to"));
    auto c = core::loadCalibration(cal.toStdString());
    if (!c) QFAIL(c.error().message.c_str());
    QVERIFY(std::abs(c->coefficients.at("embedding_bandwidth_gbps").value - 4.0) < 0.01);
    QVERIFY(c->fit.holdout_mape >= 0 && c->fit.holdout_mape < 1e-3);
    QCOMPARE(cli({"validate", cal}).code, 0);
    QCOMPARE(cli({"plan", "--calibration", cal, "--cluster", "h100x8"}).code, 0);
  }

  void calibrateJsonCarriesTheReport() {
    Store s;
    const Run r = cli({"calibrate", "--store", s.path, "--runs", "1,2", "--json"});
    QCOMPARE(r.code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["fit_runs"].size(), std::size_t{2});
    QVERIFY(j["holdout_mape"].is_null());
    QCOMPARE(j["calibration"]["schema"].get<std::string>(), std::string("shardscope.calibration/1"));
  }

  void calibrateRefusesBadInput() {
    Store s;
    QCOMPARE(cli({"calibrate", "--store", s.path}).code, 2);
    QCOMPARE(cli({"calibrate", "--runs", "1"}).code, 2);
    for (const char* bad : {"", "1,", ",1", "1,,2", "1,1", "a", "0", "1;2", "-3"}) {
      const Run r = cli({"calibrate", "--store", s.path, QString("--runs=") + bad});
      QVERIFY2(r.code == 2, bad);
    }
    const Run both = cli({"calibrate", "--store", s.path, "--runs", "1,2", "--holdout", "2"});
    QCOMPARE(both.code, 2);
    QVERIFY(both.err.contains("in both --runs and --holdout"));
    const Run unknown = cli({"calibrate", "--store", s.path, "--runs", "1,7"});
    QCOMPARE(unknown.code, 1);
    QVERIFY(unknown.err.contains("7"));
    QCOMPARE(cli({"calibrate", "--store", s.dir.filePath("none.db"), "--runs", "1"}).code, 1);
    const Run unwritable =
        cli({"calibrate", "--store", s.path, "--runs", "1", "--out", s.dir.filePath("no/such/dir/cal.json")});
    QCOMPARE(unwritable.code, 3);
  }
};

QTEST_GUILESS_MAIN(TestCliReport)
#include "test_cli_report.moc"
