// The sweep ranks grids, keeps non-fitting ones last, and can be cancelled.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"

#include "shardscope/core/presets.h"
#include "shardscope/planner/sweep.h"

using namespace shardscope;
using namespace shardscope::planner;

class TestSweep : public QObject {
  Q_OBJECT
 private slots:
  void dcnv2On64GpusRanksEveryGrid() {
    const auto p = core::defaultProject();
    const SweepResult r = sweep(p.model, p.cluster, nullptr, {}, {});
    QCOMPARE(r.grids.size(), 14u);
    QVERIFY(r.best());
    bool seen_unfit = false;
    for (std::size_t i = 0; i < r.grids.size(); ++i) {
      const auto& g = r.grids[i];
      if (!g.fits)
        seen_unfit = true;
      else
        QVERIFY(!seen_unfit);  // fitting grids first
      if (i > 0 && g.fits && r.grids[i - 1].fits) QVERIFY(r.grids[i - 1].step.step_ms <= g.step.step_ms);
      const double parts = g.step.embedding_ms + g.step.all_to_all_ms + g.step.dense_ms + g.step.replica_sync_ms;
      QVERIFY(std::abs(parts - g.step.step_ms) < 1e-9);
      QVERIFY(g.samples_per_second > 0);
    }
    // M = 1 would hold all 97 GiB of tables on each GPU.
    QVERIFY(!r.grids.back().fits);
    QCOMPARE(r.grids.back().grid.group_size, 1u);
  }

  void filtersByGroupSizeAndLayout() {
    const auto p = core::defaultProject();
    SweepOptions o;
    o.only_group_size = 16;
    o.only_layout = core::RankLayout::Contiguous;
    const SweepResult r = sweep(p.model, p.cluster, nullptr, {}, o);
    QCOMPARE(r.grids.size(), 1u);
    QCOMPARE(r.grids[0].plan.sharding_group_size, 16u);
    QCOMPARE(r.grids[0].plan.layout, core::RankLayout::Contiguous);
  }

  void progressCanCancel() {
    const auto p = core::defaultProject();
    std::size_t calls = 0;
    const SweepResult r =
        sweep(p.model, p.cluster, nullptr, {}, {}, [&](std::size_t, std::size_t) { return ++calls < 3; });
    QVERIFY(r.cancelled);
    QCOMPARE(r.grids.size(), 3u);
    std::atomic<bool> cancel{true};
    QVERIFY(sweep(p.model, p.cluster, nullptr, {}, {}, {}, &cancel).grids.empty());
  }

  void calibrationChangesThePredictionAndIsRecorded() {
    const auto p = core::defaultProject();
    core::Calibration slow;
    slow.source = "test calibration";
    slow.coefficients["embedding_bandwidth_gbps"] = {500, 0};
    SweepOptions o;
    o.only_group_size = 64;
    o.only_layout = core::RankLayout::Strided;
    const SweepResult base = sweep(p.model, p.cluster, nullptr, {}, o);
    const SweepResult cal = sweep(p.model, p.cluster, &slow, {}, o);
    QVERIFY(cal.grids[0].step.embedding_ms > 3 * base.grids[0].step.embedding_ms);
    QCOMPARE(cal.grids[0].plan.provenance.calibration, std::optional<std::string>("test calibration"));
    QVERIFY(!base.grids[0].plan.provenance.calibration);
  }

  void balancingReplicaSyncShortensStepsWithReplicas() {
    const auto p = core::defaultProject();
    SweepOptions o;
    o.only_group_size = 32;  // R = 2: the weight sync matters
    o.only_layout = core::RankLayout::Strided;
    QVERIFY(o.balance_replica_sync);  // the step-time objective is the default
    const GridResult balanced = sweep(p.model, p.cluster, nullptr, {}, o).grids[0];
    o.balance_replica_sync = false;
    const GridResult plain = sweep(p.model, p.cluster, nullptr, {}, o).grids[0];
    QVERIFY2(balanced.step.step_ms < 0.5 * plain.step.step_ms,
             qPrintable(QString("%1 vs %2").arg(balanced.step.step_ms).arg(plain.step.step_ms)));
    QVERIFY(balanced.step.replica_sync_ms < plain.step.replica_sync_ms);
  }

  void syncIntervalAmortisesReplicaSync() {
    const auto p = core::defaultProject();
    SweepOptions o;
    o.only_group_size = 8;
    o.only_layout = core::RankLayout::Strided;
    const double every = sweep(p.model, p.cluster, nullptr, {}, o).grids[0].step.replica_sync_ms;
    o.sync_interval = 10;
    const double tenth = sweep(p.model, p.cluster, nullptr, {}, o).grids[0].step.replica_sync_ms;
    QVERIFY(every > 0);
    QVERIFY(std::abs(tenth - every / 10) < 1e-6 * every);
  }

  void plansCarryTheirSyncIntervalAndTheStepAtAnotherOne() {
    const auto p = core::defaultProject();
    SweepOptions o;
    o.only_group_size = 8;
    o.only_layout = core::RankLayout::Strided;
    o.balance_replica_sync = false;  // the placement does not depend on k: the formula is exact
    o.sync_interval = 1;
    const GridResult every = sweep(p.model, p.cluster, nullptr, {}, o).grids[0];
    o.sync_interval = 8;
    const GridResult eighth = sweep(p.model, p.cluster, nullptr, {}, o).grids[0];
    QCOMPARE(every.plan.sync_interval, 1u);
    QCOMPARE(eighth.plan.sync_interval, 8u);
    QCOMPARE(every.plan.tables, eighth.plan.tables);
    QVERIFY(std::abs(stepMsAtSyncInterval(every, 8) - eighth.step.step_ms) < 1e-9 * eighth.step.step_ms);
    QVERIFY(std::abs(stepMsAtSyncInterval(eighth, 1) - every.step.step_ms) < 1e-9 * every.step.step_ms);
    QCOMPARE(stepMsAtSyncInterval(every, 1), every.step.step_ms);
    // What the step was priced from travels with the plan.
    const auto inputs = nlohmann::json::parse(eighth.plan.predicted.inputs_json);
    QCOMPARE(inputs.at("sync_interval").get<int>(), 8);
    QCOMPARE(inputs.at("batch_size_per_gpu").get<std::uint32_t>(), p.model.batch_size_per_gpu);
    QCOMPARE(inputs.at("model").at("tables").size(), p.model.tables.size());
    QCOMPARE(inputs.at("cluster").at("gpus_per_node").get<std::uint32_t>(), p.cluster.gpus_per_node);
    QVERIFY(inputs.at("constants").contains("embedding_bandwidth_gbps"));
    // ... and through plan.json.
    const auto again = core::planFromJson(core::toJson(eighth.plan), "plan.json");
    QVERIFY(again.ok());
    QCOMPARE(again->sync_interval, 8u);
    QCOMPARE(nlohmann::json::parse(again->predicted.inputs_json), inputs);
  }
};

QTEST_APPLESS_MAIN(TestSweep)
#include "test_sweep.moc"
