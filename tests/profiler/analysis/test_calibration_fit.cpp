// The calibration fit (docs/analysis.md): the non-negative least squares, the
// recovery of constants from runs the cost model itself generated, the
// held-out check as the planner would predict, dropped zero terms, errors on
// unusable runs, and one end-to-end fit on emulate runs.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/profiler/analysis/calibration_fit.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/analysis/run_analysis.h"

#include "cpu_cluster.h"

using namespace shardscope;
namespace st = core::store;

namespace {

core::TableSpec table(std::string name, std::uint64_t rows, std::uint32_t dim, double pooling, bool zipf) {
  core::TableSpec t;
  t.name = std::move(name);
  t.rows = rows;
  t.dim = dim;
  t.pooling.mean = pooling;
  if (zipf) {
    t.access.kind = core::AccessKind::Zipf;
    t.access.alpha = 1.05;
  }
  return t;
}

core::ModelSpec mixedModel(std::uint32_t batch) {
  core::ModelSpec m;
  m.name = "mixed";
  m.tables = {table("u16", 50'000, 16, 4, false),  table("z32", 200'000, 32, 12, true),
              table("u64", 20'000, 64, 2, false),  table("z128", 100'000, 128, 6, true),
              table("u256", 5'000, 256, 1, false), table("z64", 400'000, 64, 20, true),
              table("tiny", 8, 16, 1, false)};
  m.batch_size_per_gpu = batch;
  m.dense.parameters = 1000;
  m.dense.flops_per_sample = 1000;
  return m;
}

using test::cpu4;
using test::h100ImportConfig;
using test::h100Ranks4;

core::ShardPlan planFor(const core::ModelSpec& model, std::uint32_t M) {
  planner::SweepOptions o;
  o.only_group_size = M;
  o.only_layout = core::RankLayout::Strided;
  const auto r = planner::sweep(model, cpu4(), nullptr, {}, o);
  if (r.grids.empty()) qFatal("no grid for M=%u", M);
  return r.grids.front().plan;
}

core::Calibration trueConstants(double lookup_ns = 50.0) {
  core::Calibration c;
  c.source = "truth";
  c.coefficients["embedding_bandwidth_gbps"] = {5.0, 0};
  c.coefficients["backward_scale"] = {1.5, 0};
  c.coefficients["kernel_overhead_us"] = {20.0, 0};
  if (lookup_ns > 0) c.coefficients["lookup_overhead_ns"] = {lookup_ns, 0};
  return c;
}

// Deterministic noise in [-amplitude, amplitude].
double noise(std::uint64_t i, double amplitude) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + 12345;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return amplitude * (2.0 * static_cast<double>(x % 1'000'000) / 1e6 - 1.0);
}

// A run whose every shard of sharding group 0 takes exactly what the cost
// model with `truth` says (times (1 + noise)), with the model's expected
// lookups and unique rows as its measured ones.
st::RunId writeModelledRun(const std::filesystem::path& path, const core::ModelSpec& model, const core::ShardPlan& plan,
                           const core::Calibration& truth, bool spans, double noise_amplitude = 0.0) {
  constexpr std::int64_t kSteps = 1000;
  const auto cluster = cpu4();
  st::RunHeader h;
  h.kind = st::RunKind::Emulate;
  h.model_json = core::toJson(model).dump();
  h.cluster_json = core::toJson(cluster).dump();
  h.plan_json = core::toJson(plan).dump();
  h.config_json = nlohmann::json{
      {"schema", "shardscope.engine-run/1"},
      {"mode", "emulate"},
      {"batch_size_per_gpu", model.batch_size_per_gpu},
      {"host",
       "testhost"}}.dump();
  auto w = st::RunWriter::begin(path, h);
  if (!w) qFatal("%s", w.error().message.c_str());
  const planner::CostModel cm(model, cluster, planner::CostConstants::from(cluster, &truth));
  const planner::Grid grid =
      planner::makeGrid(plan.world_size, plan.gpus_per_node, plan.sharding_group_size, plan.layout);
  const planner::GridCosts gc = cm.gridCosts(grid);
  std::uint64_t n = static_cast<std::uint64_t>(static_cast<std::int64_t>(w->run())) * 1000;
  for (std::uint32_t gr = 0; gr < plan.sharding_group_size; ++gr) {
    const int rank = static_cast<int>(plan.sharding_groups[0][gr]);
    if (!w->addRank({rank, "testhost", -1, 0, static_cast<int>(gr)}).ok()) qFatal("addRank");
    double fwd_ms = 0, bwd_ms = 0;
    for (const auto& p : plan.tables)
      for (const auto& sh : p.shards) {
        if (sh.group_rank != gr) continue;
        std::size_t t = 0;
        while (model.tables[t].name != p.name) ++t;
        const planner::ShardCost c = p.sharding_type == core::ShardingType::DataParallel
                                         ? cm.dataParallelCost(t, grid, gc)
                                         : cm.shardCost(t, sh.row_offset, sh.rows, sh.cols, grid, gc);
        const double f = c.fwd_ms * (1.0 + noise(++n, noise_amplitude));
        const double b = c.bwd_ms * (1.0 + noise(++n, noise_amplitude));
        fwd_ms += f;
        bwd_ms += b;
        const auto tid = w->intern(p.name).value();
        const auto total = [&](double ms) { return std::llround(ms * 1e6 * kSteps); };
        if (spans) {
          st::Span s;
          s.rank = rank;
          s.kind = w->intern("emb_fwd").value();
          s.name = tid;
          s.table = tid;
          s.step = 0;
          s.end_ns = total(f);
          if (!w->addSpan(s).ok()) qFatal("addSpan");
          s.kind = w->intern("emb_bwd").value();
          s.start_ns = s.end_ns;
          s.end_ns = s.start_ns + total(b);
          if (!w->addSpan(s).ok()) qFatal("addSpan");
        }
        if (!w->addTableStat(
                  {rank, tid, std::llround(c.ids * kSteps), std::llround(c.unique_rows * kSteps), total(f) + total(b)})
                 .ok())
          qFatal("addTableStat");
      }
    for (std::int64_t step = 0; step < kSteps; ++step) {
      st::StepSummary s;
      s.step = step;
      s.rank = rank;
      s.emb_fwd_ns = std::llround(fwd_ms * 1e6);
      s.emb_bwd_ns = std::llround(bwd_ms * 1e6);
      s.total_ns = s.emb_fwd_ns + s.emb_bwd_ns;
      if (!w->addStepSummary(s).ok()) qFatal("addStepSummary");
    }
  }
  const st::RunId id = w->run();
  if (!w->finish().ok()) qFatal("finish");
  return id;
}

// An imported trace of a trainer that ran `plan`: every rank of every
// sharding group takes what the cost model with `truth` gives its shards in
// sum (times 1 + noise), as step summaries only; no model, cluster or plan
// in the run, no table statistics (what `import kineto` writes).
st::RunId writeImportedRun(const std::filesystem::path& path, const core::ModelSpec& model, const core::ShardPlan& plan,
                           const core::Calibration& truth, double noise_amplitude = 0.0, int rank_without_bwd = -1) {
  const auto cluster = cpu4();
  st::RunHeader h;
  h.kind = st::RunKind::ImportKineto;
  h.label = "kineto rank0.json";
  h.config_json = h100ImportConfig(plan.world_size);
  auto w = st::RunWriter::begin(path, h);
  if (!w) qFatal("%s", w.error().message.c_str());
  const planner::CostModel cm(model, cluster, planner::CostConstants::from(cluster, &truth));
  const planner::Grid grid =
      planner::makeGrid(plan.world_size, plan.gpus_per_node, plan.sharding_group_size, plan.layout);
  const planner::GridCosts gc = cm.gridCosts(grid);
  std::uint64_t n = static_cast<std::uint64_t>(static_cast<std::int64_t>(w->run())) * 7919;
  for (std::uint32_t rank = 0; rank < plan.world_size; ++rank) {
    const int gr = profiler::groupRankOf(plan, static_cast<int>(rank));
    if (!w->addRank({static_cast<int>(rank), "", -1, 0, 0}).ok()) qFatal("addRank");
    double fwd_ms = 0, bwd_ms = 0;
    for (const auto& p : plan.tables)
      for (const auto& sh : p.shards) {
        if (static_cast<int>(sh.group_rank) != gr) continue;
        std::size_t t = 0;
        while (model.tables[t].name != p.name) ++t;
        const planner::ShardCost c = p.sharding_type == core::ShardingType::DataParallel
                                         ? cm.dataParallelCost(t, grid, gc)
                                         : cm.shardCost(t, sh.row_offset, sh.rows, sh.cols, grid, gc);
        fwd_ms += c.fwd_ms;
        bwd_ms += c.bwd_ms;
      }
    for (std::int64_t step = 3; step < 8; ++step) {
      st::StepSummary s;
      s.step = step;
      s.rank = static_cast<int>(rank);
      s.emb_fwd_ns = std::llround(fwd_ms * (1.0 + noise(++n, noise_amplitude)) * 1e6);
      s.emb_bwd_ns = static_cast<int>(rank) == rank_without_bwd
                         ? 0
                         : std::llround(bwd_ms * (1.0 + noise(++n, noise_amplitude)) * 1e6);
      s.total_ns = 2 * (s.emb_fwd_ns + s.emb_bwd_ns);
      if (!w->addStepSummary(s).ok()) qFatal("addStepSummary");
    }
  }
  const st::RunId id = w->run();
  if (!w->finish().ok()) qFatal("finish");
  return id;
}

double coefficient(const profiler::CalibrationReport& r, const char* name) {
  const auto it = r.calibration.coefficients.find(name);
  return it == r.calibration.coefficients.end() ? -1.0 : it->second.value;
}

bool near(double a, double b, double rel) { return std::abs(a - b) <= rel * std::abs(b); }

struct Fixture {
  QTemporaryDir dir;
  std::filesystem::path path;
  Fixture() : path(std::filesystem::path(dir.path().toStdString()) / "runs.db") {}
};

}  // namespace

class TestCalibrationFit : public QObject {
  Q_OBJECT
 private slots:
  void nonNegativeFitRecoversAnExactSolution() {
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    const std::vector<double> x{1e-6, 2.0, 3e3, 0.5};
    for (std::uint64_t i = 0; i < 30; ++i) {
      std::vector<double> r{1e5 * (1 + noise(i, 0.9)), 1 + noise(i + 100, 0.9), 1e-3 * (1 + noise(i + 200, 0.9)),
                            3 + noise(i + 300, 2.0)};
      double v = 0;
      for (std::size_t j = 0; j < 4; ++j) v += r[j] * x[j];
      rows.push_back(r);
      y.push_back(v);
    }
    auto fit = profiler::fitNonNegative(rows, y);
    QVERIFY(fit.ok());
    for (std::size_t j = 0; j < 4; ++j) QVERIFY(near(fit->x[j], x[j], 1e-9));
    QVERIFY(fit->rss < 1e-12);
  }

  void nonNegativeFitHoldsANegativeTermAtZero() {
    // y = 2 a0 - a1: unconstrained least squares gives x1 = -1.
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    for (std::uint64_t i = 0; i < 20; ++i) {
      const double a0 = 1 + noise(i, 0.5), a1 = 1 + noise(i + 50, 0.5);
      rows.push_back({a0, a1});
      y.push_back(2 * a0 - a1);
    }
    auto fit = profiler::fitNonNegative(rows, y);
    QVERIFY(fit.ok());
    QVERIFY(fit->at_zero[1]);
    QCOMPARE(fit->x[1], 0.0);
    QCOMPARE(fit->std_error[1], 0.0);
    // x0 is then the one-column least squares, and the KKT gradient of x1 is <= 0.
    double num = 0, den = 0, grad1 = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      num += rows[i][0] * y[i];
      den += rows[i][0] * rows[i][0];
    }
    QVERIFY(near(fit->x[0], num / den, 1e-9));
    for (std::size_t i = 0; i < rows.size(); ++i) grad1 += rows[i][1] * (y[i] - rows[i][0] * fit->x[0]);
    QVERIFY(grad1 <= 1e-9);
    QVERIFY(fit->std_error[0] > 0);
  }

  void nonNegativeFitRefusesBadInput() {
    QVERIFY(!profiler::fitNonNegative({}, {}).ok());
    QVERIFY(!profiler::fitNonNegative({{1.0, 2.0}, {1.0}}, {1.0, 2.0}).ok());
    QVERIFY(!profiler::fitNonNegative({{1.0}}, {std::nan("")}).ok());
  }

  void fitRecoversTheConstantsThatMadeTheRuns() {
    Fixture f;
    const auto model = mixedModel(64);
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), trueConstants(), true);
    const st::RunId b = writeModelledRun(f.path, model, planFor(model, 2), trueConstants(), true);
    const std::vector<st::RunId> fit{a, b};
    auto r = profiler::calibrateFromRuns(f.path, fit, {});
    if (!r) QFAIL(r.error().message.c_str());
    QVERIFY(near(coefficient(*r, "embedding_bandwidth_gbps"), 5.0, 1e-3));
    QVERIFY(near(coefficient(*r, "backward_scale"), 1.5, 1e-3));
    QVERIFY(near(coefficient(*r, "kernel_overhead_us"), 20.0, 1e-3));
    QVERIFY(near(coefficient(*r, "lookup_overhead_ns"), 50.0, 1e-3));
    QVERIFY(r->fit_mape < 1e-4);
    QVERIFY(r->fit_mape_default > 0.2);
    QCOMPARE(r->measurements, 2 * r->samples.size());
    QCOMPARE(r->calibration.fit.samples, std::uint64_t{r->measurements});
    QVERIFY(r->calibration.fit.holdout_mape < 0);
    // No cache term and no backward-only lookup cost in the truth: none fitted;
    // TorchRec's dim penalties found on the grid.
    QCOMPARE(r->cache_bytes, 0.0);
    QCOMPARE(r->dropped, (std::vector<std::string>{"cache_miss_ns", "backward_lookup_ns"}));
    QCOMPARE(coefficient(*r, "dim_penalty_narrow"), 1.75);
    QCOMPARE(coefficient(*r, "dim_penalty_mid"), 1.15);
    QVERIFY(r->calibration.source.find("engine runs 1,2 of") != std::string::npos);
    QVERIFY(r->calibration.source.find("host testhost") != std::string::npos);
  }

  // Runs made with a cache term (hot rows of 4 MiB resident, 80 ns per missed
  // line), a backward-only cost per id and CPU-like dim penalties: the fit
  // picks that cache size and those penalties among its candidates and
  // recovers the constants, and the planner's held-out predictions are exact.
  void fitRecoversACacheTermAndItsSize() {
    Fixture f;
    auto truth = trueConstants();
    truth.coefficients["cache_bytes"] = {4.0 * 1024 * 1024, 0};
    truth.coefficients["cache_miss_ns"] = {80.0, 0};
    truth.coefficients["backward_lookup_ns"] = {30.0, 0};
    truth.coefficients["dim_penalty_narrow"] = {1.0, 0};
    truth.coefficients["dim_penalty_mid"] = {0.875, 0};
    const auto model = mixedModel(64);
    const auto other = mixedModel(256);
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), truth, true);
    const st::RunId b = writeModelledRun(f.path, model, planFor(model, 2), truth, true);
    const st::RunId h = writeModelledRun(f.path, other, planFor(other, 4), truth, true);
    const std::vector<st::RunId> fit{a, b}, held{h};
    auto r = profiler::calibrateFromRuns(f.path, fit, held);
    if (!r) QFAIL(r.error().message.c_str());
    QCOMPARE(r->cache_bytes, 4.0 * 1024 * 1024);
    QVERIFY(near(coefficient(*r, "cache_miss_ns"), 80.0, 1e-3));
    QVERIFY(near(coefficient(*r, "embedding_bandwidth_gbps"), 5.0, 1e-3));
    QVERIFY(near(coefficient(*r, "lookup_overhead_ns"), 50.0, 1e-3));
    QVERIFY(near(coefficient(*r, "backward_lookup_ns"), 30.0, 1e-3));
    QCOMPARE(coefficient(*r, "dim_penalty_narrow"), 1.0);
    QCOMPARE(coefficient(*r, "dim_penalty_mid"), 0.875);
    QVERIFY(r->dropped.empty());
    QVERIFY(r->fit_mape < 1e-4);
    QVERIFY(r->holdout_mape >= 0 && r->holdout_mape < 1e-3);
    bool some_miss = false;
    for (const auto& s : r->samples) some_miss = some_miss || s.miss_ids > 0.1;
    QVERIFY2(some_miss, "the mixed model has shards larger than the cache");
  }

  void fitWithoutSpansUsesForwardPlusBackward() {
    Fixture f;
    const auto model = mixedModel(64);
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), trueConstants(), false);
    const st::RunId b = writeModelledRun(f.path, model, planFor(model, 1), trueConstants(), false);
    const std::vector<st::RunId> fit{a, b};
    auto r = profiler::calibrateFromRuns(f.path, fit, {});
    if (!r) QFAIL(r.error().message.c_str());
    QCOMPARE(r->measurements, r->samples.size());
    QVERIFY(r->samples.front().measured_fwd_ms < 0);
    QVERIFY(near(coefficient(*r, "embedding_bandwidth_gbps"), 5.0, 1e-2));
    QVERIFY(near(coefficient(*r, "kernel_overhead_us"), 20.0, 1e-2));
  }

  void heldOutRunsArePredictedAsThePlannerWould() {
    Fixture f;
    const auto model = mixedModel(64);
    const auto other = mixedModel(256);  // another batch size and grid: new lookups, unique rows, shards
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), trueConstants(), true);
    const st::RunId h = writeModelledRun(f.path, other, planFor(other, 2), trueConstants(), true);
    const std::vector<st::RunId> fit{a}, held{h};
    auto r = profiler::calibrateFromRuns(f.path, fit, held);
    if (!r) QFAIL(r.error().message.c_str());
    QCOMPARE(r->holdout.size(), std::size_t{2});
    QVERIFY(r->holdout_mape >= 0 && r->holdout_mape < 1e-3);
    QVERIFY(r->holdout_mape_default > 0.2);
    QCOMPARE(r->calibration.fit.holdout_mape, r->holdout_mape);
    QVERIFY(r->fit_rank_mape < 1e-3);
    const std::string text = profiler::formatCalibrationReport(*r);
    QVERIFY(text.find("Held-out check on runs 2 (2 ranks)") != std::string::npos);
  }

  void noisyRunsGiveStdErrorsAndAFitError() {
    Fixture f;
    const auto model = mixedModel(64);
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), trueConstants(), true, 0.05);
    const st::RunId b = writeModelledRun(f.path, model, planFor(model, 2), trueConstants(), true, 0.05);
    const std::vector<st::RunId> fit{a, b};
    auto r = profiler::calibrateFromRuns(f.path, fit, {});
    if (!r) QFAIL(r.error().message.c_str());
    QVERIFY(r->fit_mape > 0.005 && r->fit_mape < 0.05);
    QVERIFY(near(coefficient(*r, "embedding_bandwidth_gbps"), 5.0, 0.15));
    for (const char* name :
         {"embedding_bandwidth_gbps", "backward_scale", "kernel_overhead_us", "lookup_overhead_ns"}) {
      const auto& c = r->calibration.coefficients.at(name);  // the truth's terms
      QVERIFY2(c.std_error > 0, name);
      QVERIFY2(c.std_error < c.value, name);
    }
  }

  void aTermThatFitsToZeroIsDropped() {
    Fixture f;
    const auto model = mixedModel(64);
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), trueConstants(0.0), true);
    const std::vector<st::RunId> fit{a};
    auto r = profiler::calibrateFromRuns(f.path, fit, {});
    if (!r) QFAIL(r.error().message.c_str());
    QCOMPARE(r->dropped, (std::vector<std::string>{"lookup_overhead_ns", "cache_miss_ns", "backward_lookup_ns"}));
    QVERIFY(!r->calibration.coefficients.contains("lookup_overhead_ns"));
    QVERIFY(near(coefficient(*r, "embedding_bandwidth_gbps"), 5.0, 1e-3));
  }

  void theCalibrationIsAValidFile() {
    Fixture f;
    const auto model = mixedModel(64);
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), trueConstants(), true, 0.02);
    const std::vector<st::RunId> fit{a};
    auto r = profiler::calibrateFromRuns(f.path, fit, {});
    if (!r) QFAIL(r.error().message.c_str());
    const auto j = core::toJson(r->calibration);
    auto back = core::calibrationFromJson(nlohmann::json::parse(j.dump()), "cal.json");
    if (!back) QFAIL(back.error().message.c_str());
    QCOMPARE(back->coefficients.size(), r->calibration.coefficients.size());
    QCOMPARE(back->fit.samples, r->calibration.fit.samples);
    const auto rj = profiler::calibrationReportJson(*r);
    QCOMPARE(rj["samples"].size(), r->samples.size());
    QCOMPARE(rj["terms"].size(), std::size_t{6});
  }

  void importedRunsFitPerRankWithTheTrainersPlan() {
    Fixture f;
    const auto model = mixedModel(64);
    const auto plan4 = planFor(model, 4), plan2 = planFor(model, 2);
    const st::RunId a = writeImportedRun(f.path, model, plan4, trueConstants());
    const std::vector<st::RunId> fit{a};
    // Without the plan the trainer ran: an error that says what to give.
    auto bare = profiler::calibrateFromRuns(f.path, fit, {});
    QVERIFY(!bare.ok());
    QVERIFY2(bare.error().message.find("give --plan, --model and --cluster") != std::string::npos,
             bare.error().message.c_str());

    profiler::RunInputs in;
    in.model = model;
    in.cluster = h100Ranks4();
    in.plan = plan4;
    auto r = profiler::calibrateFromRuns(f.path, fit, {}, &in);
    if (!r) QFAIL(r.error().message.c_str());
    // One measurement per rank (fwd and bwd rows), priced as the sum of its shards.
    QCOMPARE(r->measured.size(), std::size_t{4});
    for (const auto& m : r->measured) {
      QVERIFY(m.table.empty());
      QVERIFY(!m.shards.empty());
      QVERIFY(m.measured_fwd_ms > 0 && m.measured_bwd_ms > 0);
    }
    QCOMPARE(r->measurements, std::size_t{8});
    for (const auto& smp : r->samples) QVERIFY(smp.expected);
    QVERIFY(near(coefficient(*r, "embedding_bandwidth_gbps"), 5.0, 1e-3));
    QVERIFY(near(coefficient(*r, "backward_scale"), 1.5, 1e-3));
    QVERIFY(near(coefficient(*r, "kernel_overhead_us"), 20.0, 1e-3));
    QVERIFY(near(coefficient(*r, "lookup_overhead_ns"), 50.0, 1e-3));
    // Penalties and the cache term are not searched on whole ranks.
    QCOMPARE(coefficient(*r, "dim_penalty_narrow"), -1.0);
    QCOMPARE(coefficient(*r, "cache_bytes"), -1.0);
    QVERIFY(r->fit_rank_mape < 1e-4);
    QVERIFY(r->fit_rank_mape_default > 0.2);
    QVERIFY(r->calibration.source.find("imported runs") != std::string::npos);
    const std::string text = profiler::formatCalibrationReport(*r);
    QVERIFY(text.find("whole ranks") != std::string::npos);
    QVERIFY(text.find("(all)") != std::string::npos);
    QVERIFY(profiler::calibrationReportJson(*r)["measured"][0]["table"].is_null());

    // A rank without backward kernels (a rule missed them) is left out, not fitted as fwd = fwd + bwd.
    {
      Fixture h;
      const std::vector<st::RunId> one{writeImportedRun(h.path, model, plan4, trueConstants(), 0.0, 2)};
      auto partial = profiler::calibrateFromRuns(h.path, one, {}, &in);
      if (!partial) QFAIL(partial.error().message.c_str());
      QCOMPARE(partial->measured.size(), std::size_t{3});
      bool warned = false;
      for (const auto& w : partial->warnings)
        warned = warned || w.find("rank 2 has no embedding backward") != std::string::npos;
      QVERIFY(warned);
      QVERIFY(partial->fit_mape < 1e-4);  // the other ranks still fit exactly
    }

    // Noisy ranks; the calibration then prices another plan's import (the
    // report's re-priced prediction) better than the defaults do.
    Fixture g;
    const st::RunId n4 = writeImportedRun(g.path, model, plan4, trueConstants(), 0.05);
    const st::RunId h2 = writeImportedRun(g.path, model, plan2, trueConstants(), 0.05);
    const std::vector<st::RunId> fit4{n4};
    auto noisy = profiler::calibrateFromRuns(g.path, fit4, {}, &in);
    if (!noisy) QFAIL(noisy.error().message.c_str());
    QVERIFY(noisy->fit_mape > 0 && noisy->fit_mape < 0.1);
    QVERIFY(near(coefficient(*noisy, "embedding_bandwidth_gbps"), 5.0, 0.25));
    auto store = st::openStore(g.path);
    QVERIFY(store.ok());
    profiler::RunInputs other = in;
    other.plan = plan2;
    profiler::AnalysisOptions calibrated, defaults;
    calibrated.supplied = defaults.supplied = &other;
    calibrated.calibration = &noisy->calibration;
    auto with = profiler::analyzeRun(*store, h2, calibrated);
    auto without = profiler::analyzeRun(*store, h2, defaults);
    QVERIFY(with.ok() && without.ok());
    QVERIFY(with->model_mape >= 0 && with->model_mape < 0.1);
    QVERIFY(with->model_mape < without->model_mape);
  }

  // Default constants priced for the cluster's CPU ranks say nothing of runs on an H100: the fit
  // is reported, its comparison with the defaults is not, and the report says why.
  void defaultsPricedForAnotherDeviceAreNotCompared() {
    Fixture f;
    const auto model = mixedModel(64);
    const auto plan4 = planFor(model, 4);
    const st::RunId a = writeImportedRun(f.path, model, plan4, trueConstants());
    const std::vector<st::RunId> fit{a};
    profiler::RunInputs in;
    in.model = model;
    in.cluster = cpu4();
    in.plan = plan4;
    auto across = profiler::calibrateFromRuns(f.path, fit, {}, &in);
    if (!across) QFAIL(across.error().message.c_str());
    QVERIFY2(across->defaults_not_compared.find("this run ran on H100") != std::string::npos,
             across->defaults_not_compared.c_str());
    const std::string text = profiler::formatCalibrationReport(*across);
    QVERIFY2(text.find("default constants not compared: this run ran on H100") != std::string::npos, text.c_str());
    QVERIFY(text.find("default constants on the same") == std::string::npos);
    QVERIFY(profiler::calibrationReportJson(*across)["fit_mape_default"].is_null());
    in.cluster = h100Ranks4();
    auto alike = profiler::calibrateFromRuns(f.path, fit, {}, &in);
    if (!alike) QFAIL(alike.error().message.c_str());
    QVERIFY(alike->defaults_not_compared.empty());
    QVERIFY(profiler::formatCalibrationReport(*alike).find("default constants on the same") != std::string::npos);
  }

  void unusableRunsAreErrors() {
    Fixture f;
    const auto model = mixedModel(64);
    const st::RunId a = writeModelledRun(f.path, model, planFor(model, 4), trueConstants(), true);
    {
      auto w = st::RunWriter::begin(f.path, st::RunHeader{st::RunKind::ImportKineto, "import", "", "", "", ""});
      QVERIFY(w.ok());
      QVERIFY(w->finish().ok());
    }
    const std::vector<st::RunId> missing{st::RunId{42}}, imported{st::RunId{2}}, ok{a}, bad_holdout{st::RunId{2}};
    QVERIFY(!profiler::calibrateFromRuns(f.path, missing, {}).ok());
    auto r = profiler::calibrateFromRuns(f.path, imported, {});
    QVERIFY(!r.ok());
    // An import without the trainer's plan says what to give.
    QVERIFY2(r.error().message.find("lacks the plan the trainer ran: give --plan, --model and --cluster") !=
                 std::string::npos,
             r.error().message.c_str());
    QVERIFY(!profiler::calibrateFromRuns(f.path, ok, bad_holdout).ok());
    QVERIFY(!profiler::calibrateFromRuns(f.path, std::span<const st::RunId>{}, {}).ok());
    QVERIFY(!profiler::calibrateFromRuns(f.path / "nope.db", ok, {}).ok());
  }

  void fitAndReportOnEmulateRunsEndToEnd() {
    Fixture f;
    core::ModelSpec model = mixedModel(32);
    model.tables.resize(4);
    model.tables.push_back(table("tiny", 8, 16, 1, false));
    const auto plan = planFor(model, 4);
    profiler::EmulateOptions o;
    o.steps = 2;
    o.warmup = 1;
    o.threads = 1;
    auto r1 = profiler::runEmulate(model, cpu4(), plan, o, f.path);
    if (!r1) QFAIL(r1.error().message.c_str());
    o.batch_size_override = 96;
    auto r2 = profiler::runEmulate(model, cpu4(), planFor(model, 2), o, f.path);
    if (!r2) QFAIL(r2.error().message.c_str());
    const std::vector<st::RunId> fit{r1->run}, held{r2->run};
    auto rep = profiler::calibrateFromRuns(f.path, fit, held);
    if (!rep) QFAIL(rep.error().message.c_str());
    QVERIFY(!rep->samples.empty());
    for (const auto& s : rep->samples) {
      QVERIFY(s.measured_fwd_ms > 0 && s.measured_bwd_ms > 0);
      QVERIFY(s.lookups_per_step > 0);
    }
    QCOMPARE(rep->holdout.size(), std::size_t{2});
    QVERIFY(!rep->calibration.coefficients.empty());
    QVERIFY(core::calibrationFromJson(nlohmann::json::parse(core::toJson(rep->calibration).dump()), "cal").ok());

    auto store = st::openStore(f.path);
    QVERIFY(store.ok());
    auto a = profiler::analyzeRun(*store, r2->run);
    if (!a) QFAIL(a.error().message.c_str());
    QCOMPARE(a->mode, std::string("emulate"));
    QCOMPARE(a->ranks.size(), std::size_t{2});
    QCOMPARE(a->steps, std::int64_t{2});
    for (const auto& rank : a->ranks) {
      QVERIFY(rank.compute_ms > 0);
      QVERIFY(rank.predicted_model_ms > 0);
      QVERIFY(rank.predicted_plan_ms > 0);
    }
    QVERIFY(!a->tables.empty());
  }
};

QTEST_GUILESS_MAIN(TestCalibrationFit)
#include "test_calibration_fit.moc"
