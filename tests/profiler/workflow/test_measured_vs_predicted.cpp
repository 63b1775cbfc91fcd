// Measured vs predicted per rank and phase on a real emulate run: the
// measured side is the analysis's, the predicted side the planner's pricing of
// the plan the run ran, with the run's sync interval and the calibration given.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <map>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/profiler/analysis/measured_vs_predicted.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/workflow/stored_runs.h"
#include "test_workflow_support.h"

using namespace shardscope;
namespace st = core::store;

namespace {

struct Measured {
  profiler::RunAnalysis analysis;
  profiler::RunInputs inputs;
};

Measured profiledRun(QTemporaryDir& dir, std::uint32_t group_size, std::uint32_t sync_interval) {
  profiler::ProfileRequest r = test::tinyProfileRequest(dir);
  r.sync_interval = sync_interval;
  r.plan = profiler::plannedProfilePlan(r, group_size).value();
  auto outcome = profiler::runProfile(r, {}, nullptr);
  if (!outcome) qFatal("%s", outcome.error().message.c_str());
  auto store = st::openStore(r.store).value();
  const st::RunId id = profiler::latestRun(store).value();
  Measured m;
  m.analysis = profiler::analyzeRun(store, id).value();
  m.inputs = profiler::runInputs(m.analysis.run);
  return m;
}

}  // namespace

class TestMeasuredVsPredicted : public QObject {
  Q_OBJECT

 private slots:
  void everyRankBesideThePlannersPricingOfItsPlan() {
    QTemporaryDir dir;
    const Measured m = profiledRun(dir, 2, 4);
    QVERIFY(m.inputs.plan.has_value());
    auto v = profiler::measuredVsPredicted(m.analysis, m.inputs, nullptr);
    QVERIFY2(v.ok(), v.ok() ? "" : v.error().message.c_str());
    QCOMPARE(v->sync_interval, 4u);  // the run's, from its configuration
    QCOMPARE(v->plan_summary, std::string("M=2 R=2 strided"));
    QCOMPARE(v->constants, std::string("default constants"));
    QCOMPARE(v->ranks.size(), m.analysis.ranks.size());

    auto priced = profiler::pricePlan(*m.inputs.model, *m.inputs.cluster, *m.inputs.plan, nullptr, 4);
    QVERIFY(priced.ok());
    QCOMPARE(v->predicted_step_ms, priced->result.step.step_ms);
    const auto compute = profiler::predictedComputeMs(*m.inputs.model, *m.inputs.cluster, *m.inputs.plan, nullptr);
    QVERIFY(compute.ok());
    double abs_error = 0.0;
    std::vector<double> measured_load;
    for (std::size_t i = 0; i < v->ranks.size(); ++i) {
      const auto& row = v->ranks[i];
      const auto& rank = m.analysis.ranks[i];
      QCOMPARE(row.rank, rank.rank);
      QCOMPARE(row.group_rank, profiler::groupRankOf(*m.inputs.plan, rank.rank));
      // Measured: the analysis's means; collectives by kind add up to the phases.
      QCOMPARE(row.measured.emb_fwd, rank.emb_fwd_ms);
      QCOMPARE(row.measured.emb_bwd, rank.emb_bwd_ms);
      double a2a = 0, sync = 0, dense = rank.dense_ms;
      for (const auto& c : rank.comm) {
        if (c.kind == "replica_sync")
          sync += c.ms;
        else if (c.kind == "dense_allreduce")
          dense += c.ms;
        else
          a2a += c.ms;
      }
      QCOMPARE(row.measured.all_to_all, a2a);
      QCOMPARE(row.measured.replica_sync, sync);
      QCOMPARE(row.measured.dense, dense);
      // Predicted: the planner's rank, as the analysis prices embedding compute.
      const auto& rr = priced->result.ranks[static_cast<std::size_t>(row.group_rank)];
      QCOMPARE(row.predicted.emb_fwd, rr.fwd_ms);
      QCOMPARE(row.predicted.emb_bwd, rr.bwd_ms);
      QCOMPARE(row.predicted.replica_sync, rr.sync_ms);
      QVERIFY(row.predicted.replica_sync > 0);  // two replicas
      QCOMPARE(row.predicted.embedding(), (*compute)[static_cast<std::size_t>(row.group_rank)]);
      // Emulate runs no collectives: the errors compare embedding compute and dense only.
      QCOMPARE(row.measured_ms, row.measured.emb_fwd + row.measured.emb_bwd + (v->measured_phases[4] ? dense : 0.0));
      QCOMPARE(row.error, row.measured_ms / row.predicted_ms - 1.0);
      abs_error += std::abs(row.error);
      measured_load.push_back(row.measured.embedding());
    }
    QVERIFY(v->measured_phases[0] && v->measured_phases[1]);
    QVERIFY(!v->measured_phases[2] && !v->measured_phases[3]);
    // A CPU run against the cluster of CPU ranks it modelled: like for like, the errors compare.
    QVERIFY2(v->devices.absolute, v->devices.reason.c_str());
    QVERIFY(v->devices.run.kind == core::DeviceClass::Cpu);
    QVERIFY(std::abs(v->mape - abs_error / static_cast<double>(v->ranks.size())) < 1e-12);
    QVERIFY(abs_error > 0);
    const auto stats = planner::imbalanceOf(measured_load);
    QCOMPARE(v->measured_imbalance.max_over_mean, stats.max_over_mean);
    QCOMPARE(v->measured_imbalance.kl_divergence, stats.kl_divergence);
    QVERIFY(v->measured_imbalance.max_over_mean >= 1.0);
    QCOMPARE(v->stragglers, m.analysis.stragglers);
  }

  void theSyncIntervalAndACalibrationChangeThePrediction() {
    QTemporaryDir dir;
    const Measured m = profiledRun(dir, 2, 1);
    auto every = profiler::measuredVsPredicted(m.analysis, m.inputs, nullptr).value();
    QCOMPARE(every.sync_interval, 1u);
    QCOMPARE(m.inputs.plan->sync_interval, 1u);
    // Amortised over 4 steps, the replica sync is a quarter.
    auto priced4 = profiler::pricePlan(*m.inputs.model, *m.inputs.cluster, *m.inputs.plan, nullptr, 4).value();
    const double sync1 = every.ranks.front().predicted.replica_sync;
    const double sync4 = priced4.result.ranks[static_cast<std::size_t>(every.ranks.front().group_rank)].sync_ms;
    QVERIFY(sync1 > 0);
    QVERIFY(std::abs(sync4 - sync1 / 4.0) < 1e-9 * std::max(1.0, sync1));

    core::Calibration cal;
    cal.source = "half bandwidth";
    cal.coefficients["embedding_bandwidth_gbps"] = {m.inputs.cluster->gpu.hbm_bandwidth_gbps / 2.0, 0.0};
    auto slow = profiler::measuredVsPredicted(m.analysis, m.inputs, &cal).value();
    QCOMPARE(slow.constants, std::string("calibration half bandwidth"));
    QVERIFY(slow.ranks.front().predicted.embedding() > every.ranks.front().predicted.embedding());
    QCOMPARE(slow.ranks.front().measured.emb_fwd, every.ranks.front().measured.emb_fwd);
  }

  void acrossDevicesEachRanksShareOfItsGroupIsCompared() {
    QTemporaryDir dir;
    Measured m = profiledRun(dir, 2, 1);
    // The same plan priced for H100s: a CPU run is not compared in milliseconds with it.
    m.inputs.cluster->gpu.device = core::DeviceClass::Gpu;
    m.inputs.cluster->gpu.name = "H100 SXM 80GB";
    auto v = profiler::measuredVsPredicted(m.analysis, m.inputs, nullptr).value();
    QVERIFY(!v.devices.absolute);
    QVERIFY2(v.devices.reason.find("this run ran on CPU") != std::string::npos &&
                 v.devices.reason.find("predictions are for H100 (the cluster's GPU)") != std::string::npos,
             v.devices.reason.c_str());
    QCOMPARE(v.mape, -1.0);  // no error figure across devices
    QCOMPARE(v.embedding_mape, -1.0);
    // A calibration fitted on this CPU prices for it: like for like again.
    core::Calibration same;
    same.source = "this machine";
    same.device = v.devices.run;
    auto calibrated = profiler::measuredVsPredicted(m.analysis, m.inputs, &same).value();
    QVERIFY(calibrated.devices.absolute);
    QVERIFY(calibrated.mape >= 0);
    // Shares of each sharding group's embedding work add up to 1 per group, measured and predicted.
    std::map<int, double> measured, predicted;
    for (const auto& r : v.ranks) {
      QVERIFY(r.measured_share > 0 && r.measured_share <= 1);
      QVERIFY(r.predicted_share > 0 && r.predicted_share <= 1);
      measured[r.sharding_group] += r.measured_share;
      predicted[r.sharding_group] += r.predicted_share;
    }
    for (const auto& [g, sum] : measured) QVERIFY2(std::abs(sum - 1.0) < 1e-9, qPrintable(QString::number(sum)));
    for (const auto& [g, sum] : predicted) QVERIFY(std::abs(sum - 1.0) < 1e-9);
    // The gap is the mean |measured - predicted| share, and names the rank where it is widest.
    double gap = 0.0, widest = -1.0;
    int widest_rank = -1;
    for (const auto& r : v.ranks) {
      const double d = std::abs(r.measured_share - r.predicted_share);
      gap += d;
      if (d > widest) widest = d, widest_rank = r.rank;
    }
    QVERIFY(std::abs(v.share_gap - gap / static_cast<double>(v.ranks.size())) < 1e-12);
    QCOMPARE(v.widest_share_gap_rank, widest_rank);
  }

  void aRunWithoutAPlanSaysWhatIsMissing() {
    QTemporaryDir dir;
    Measured m = profiledRun(dir, 4, 1);
    m.inputs.plan.reset();
    auto v = profiler::measuredVsPredicted(m.analysis, m.inputs, nullptr);
    QVERIFY(!v.ok());
    QVERIFY2(v.error().message.find("has no plan") != std::string::npos, v.error().message.c_str());
  }

  void theNewestRunOfAPlanGivesTheOverlay() {
    QTemporaryDir dir;
    profiler::ProfileRequest r = test::tinyProfileRequest(dir);
    QVERIFY(!profiler::latestRunOfPlan(r.store, profiler::plannedProfilePlan(r, 2).value()).value().has_value());
    std::vector<core::ShardPlan> plans;
    for (const std::uint32_t m : {2u, 4u, 2u}) {
      r.plan = profiler::plannedProfilePlan(r, m).value();
      plans.push_back(r.plan);
      QVERIFY(profiler::runProfile(r, {}, nullptr).ok());
    }
    QVERIFY(profiler::samePlacement(plans[0], plans[2]));
    QVERIFY(!profiler::samePlacement(plans[0], plans[1]));
    auto load = profiler::latestRunOfPlan(r.store, plans[0]);
    QVERIFY2(load.ok(), load.ok() ? "" : load.error().message.c_str());
    QVERIFY(load->has_value());
    QCOMPARE(static_cast<std::int64_t>((*load)->run), std::int64_t{3});  // the newest of the two M = 2 runs
    QCOMPARE((*load)->compute_ms.size(), std::size_t{2});
    auto store = st::openStore(r.store).value();
    const auto analysis = profiler::analyzeRun(store, (*load)->run).value();
    for (std::size_t g = 0; g < 2; ++g) {
      double sum = 0;
      int n = 0;
      for (const auto& rank : analysis.ranks)
        if (rank.group_rank == static_cast<int>(g)) {
          sum += rank.compute_ms;
          ++n;
        }
      QVERIFY(n > 0);
      QCOMPARE((*load)->compute_ms[g], sum / n);
    }
    // Another placement of the same grid has no run.
    core::ShardPlan moved = plans[0];
    std::swap(moved.tables.front().shards, moved.tables.back().shards);
    QVERIFY(!profiler::samePlacement(moved, plans[0]));
    QVERIFY(!profiler::latestRunOfPlan(r.store, moved).value().has_value());
  }

  void phasesByIndexMatchTheFields() {
    profiler::PhaseMs p{1, 2, 3, 4, 5};
    double sum = 0;
    for (int i = 0; i < profiler::kPhases; ++i) {
      sum += profiler::phaseValue(p, i);
      QVERIFY(std::string(profiler::phaseName(i)).size() > 0);
    }
    QCOMPARE(sum, p.total());
    QCOMPARE(profiler::phaseValue(p, 2), 3.0);
    QCOMPARE(profiler::phaseValue(p, 9), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestMeasuredVsPredicted)
#include "test_measured_vs_predicted.moc"
