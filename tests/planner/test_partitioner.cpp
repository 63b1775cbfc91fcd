// The partitioner: invariants on random instances, constraints, baselines.
#include <QtTest>

#include <set>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/torchrec_sharding.h"
#include "shardscope/planner/partitioner.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/planner/synthetic.h"

using namespace shardscope;
using namespace shardscope::planner;

namespace {
core::ClusterSpec h100(std::uint32_t gpus) {
  auto c = core::clusterPreset("h100x8").value();
  c.nodes = std::max<std::uint32_t>(1, gpus / 8);
  c.gpus_per_node = gpus < 8 ? gpus : 8;
  c.name = "h100-" + std::to_string(gpus);
  return c;
}

GridResult plan(const core::ModelSpec& m, const core::ClusterSpec& c, std::uint32_t M, core::RankLayout layout,
                const core::Constraints& cons = {}, Algorithm algo = Algorithm::Optimized,
                core::PlanTarget target = core::PlanTarget::TorchRec) {
  CostModel cost(m, c, CostConstants::from(c, nullptr));
  PlannerOptions o;
  o.algorithm = algo;
  o.target = target;
  return planGrid(cost, makeGrid(c.worldSize(), c.gpus_per_node, M, layout), cons, o);
}

bool hasProblem(const GridResult& r, const QString& needle) {
  for (const auto& p : r.problems)
    if (QString::fromStdString(p).contains(needle)) return true;
  return false;
}
}  // namespace

class TestPartitioner : public QObject {
  Q_OBJECT
 private slots:
  void randomInstancesKeepEveryInvariant() {
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      const std::uint32_t T = 10 + static_cast<std::uint32_t>(seed * 17 % 120);
      const std::uint32_t N = 8u << (seed % 5);  // 8..128
      const core::ModelSpec m = syntheticModel({T, seed, 256});
      const auto c = h100(N);
      for (std::uint32_t M : {N / 8 ? N / 8 : 1u, N}) {
        for (auto layout : {core::RankLayout::Strided, core::RankLayout::Contiguous}) {
          const GridResult r = plan(m, c, M, layout);
          // The plan is a valid shardscope.plan/1: groups partition the ranks as the
          // layout says and every table is covered exactly once (planFromJson checks both).
          auto again = core::planFromJson(nlohmann::json::parse(core::toJson(r.plan).dump()), "planned");
          QVERIFY2(again.ok(), again.ok() ? "" : again.error().message.c_str());
          QCOMPARE(r.plan.tables.size(), m.tables.size());
          QCOMPARE(r.plan.sharding_groups, core::shardingGroups(N, M, layout));
          // Memory within HBM whenever the plan says it fits; a plan that does not fit says why.
          for (const auto& rank : r.ranks)
            if (r.fits) QVERIFY(rank.state_bytes + rank.served_buffer_bytes <= rank.capacity_bytes);
          if (!r.fits) QVERIFY(hasProblem(r, "does not fit"));
          // The bound is a bound.
          QVERIFY2(r.max_load_ms >= r.lower_bound_ms * (1 - 1e-9), qPrintable(QString("seed %1 M %2: max %3 < bound %4")
                                                                                  .arg(seed)
                                                                                  .arg(M)
                                                                                  .arg(r.max_load_ms)
                                                                                  .arg(r.lower_bound_ms)));
        }
      }
    }
  }

  // Every algorithm, on grids with node groups of 1, 2, 4 and 8 ranks and
  // skewed tables that invite split and moved row blocks, writes plans that
  // load as valid plans of their target: for TorchRec that means its rank
  // rules (core::torchRecLayoutProblems) hold for every table.
  void everyAlgorithmWritesPlansItsTargetRuns() {
    struct Case {
      std::uint32_t N, M;
      core::RankLayout layout;
    };
    const Case cases[] = {{16, 16, core::RankLayout::Strided},     // L = 8
                          {64, 16, core::RankLayout::Strided},     // R = 4: L = 2
                          {32, 16, core::RankLayout::Strided},     // R = 2: L = 4
                          {64, 32, core::RankLayout::Contiguous},  // L = 8
                          {64, 8, core::RankLayout::Strided}};     // R = 8: L = 1
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      core::ModelSpec m = syntheticModel({24 + static_cast<std::uint32_t>(seed) * 9, seed, 1024});
      for (auto& t : m.tables)  // few rows on some tables: empty row blocks
        if (t.rows % 5 == 0) t.rows = 1 + t.rows % 11;
      for (const Case& k : cases) {
        const auto c = h100(k.N);
        for (auto target : {core::PlanTarget::TorchRec, core::PlanTarget::ShardScope})
          for (auto algo : allAlgorithms()) {
            const GridResult r = plan(m, c, k.M, k.layout, {}, algo, target);
            QCOMPARE(r.plan.target, target);
            auto again = core::planFromJson(nlohmann::json::parse(core::toJson(r.plan).dump()), "planned");
            QVERIFY2(again.ok(), qPrintable(QString("seed %1 N %2 M %3 %4 %5: %6")
                                                .arg(seed)
                                                .arg(k.N)
                                                .arg(k.M)
                                                .arg(toString(algo))
                                                .arg(core::toString(target))
                                                .arg(again.ok() ? "" : again.error().message.c_str())));
            if (target == core::PlanTarget::TorchRec) QVERIFY(core::torchRecLayoutProblems(r.plan).empty());
          }
      }
    }
  }

  void torchRecRowWiseBlocksSitOnTheirOwnRanks() {
    // A table forced row-wise on 8 ranks with 5 rows: TorchRec's blocks 1,1,1,1,1,0,0,0, block k on rank k.
    core::ModelSpec m = syntheticModel({6, 5, 512});
    m.tables[0].rows = 5;
    core::Constraints cons;
    cons.tables.push_back({m.tables[0].name, {}, core::ShardingType::RowWise, {}});
    const GridResult r = plan(m, h100(8), 8, core::RankLayout::Strided, cons);
    const auto& t = r.plan.tables[0];
    QCOMPARE(t.sharding_type, core::ShardingType::RowWise);
    QCOMPARE(t.shards.size(), std::size_t{8});
    for (std::uint32_t k = 0; k < 8; ++k) {
      QCOMPARE(t.shards[k].group_rank, k);
      QCOMPARE(t.shards[k].rows, std::uint64_t{k < 5 ? 1u : 0u});
    }
    // For ShardScope's engine the empty blocks are left out.
    const GridResult ours =
        plan(m, h100(8), 8, core::RankLayout::Strided, cons, Algorithm::Optimized, core::PlanTarget::ShardScope);
    QCOMPARE(ours.plan.tables[0].shards.size(), std::size_t{5});
  }

  void neverWorseThanAnyBaseline() {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const core::ModelSpec m = syntheticModel({40, seed, 512});
      const auto c = h100(32);
      const GridResult ours = plan(m, c, 32, core::RankLayout::Strided);
      for (auto algo : baselineAlgorithms()) {
        const GridResult base = plan(m, c, 32, core::RankLayout::Strided, {}, algo);
        QCOMPARE(QString::fromStdString(base.algorithm), QString(toString(algo)));
        QVERIFY2(ours.max_load_ms <= base.max_load_ms * (1 + 1e-9), toString(algo));
      }
    }
  }

  void dcnv2OnEightGpusIsNearTheBound() {
    const GridResult r =
        plan(core::modelPreset("dcnv2").value(), core::clusterPreset("h100x8").value(), 8, core::RankLayout::Strided);
    QVERIFY(r.fits);
    QVERIFY2(r.gap < 0.05, qPrintable(QString::number(r.gap)));
  }

  void tableTooBigForOneGpuIsSplit() {
    core::ModelSpec m = syntheticModel({5, 3, 512});
    m.tables[0].rows = 400'000'000;  // 400M x dim x 4 B does not fit one 80 GiB GPU
    m.tables[0].dim = 128;
    const GridResult r = plan(m, h100(8), 8, core::RankLayout::Strided);
    QVERIFY(r.fits);
    QVERIFY(r.plan.tables[0].shards.size() > 1);
  }

  void modelThatCannotFitIsReportedWithNumbers() {
    core::ModelSpec m = syntheticModel({3, 3, 512});
    for (auto& t : m.tables) {
      t.rows = 1'000'000'000;
      t.dim = 256;
    }
    const GridResult r = plan(m, h100(8), 8, core::RankLayout::Strided);
    QVERIFY(!r.fits);
    QVERIFY(hasProblem(r, "does not fit: embedding state"));
    QVERIFY(hasProblem(r, "GiB"));
  }

  void pinnedTableLandsOnItsRanks() {
    const core::ModelSpec m = core::modelPreset("dcnv2").value();
    core::Constraints cons;
    cons.tables.push_back({"cat_1", {5}, std::nullopt, {}});
    const GridResult r = plan(m, core::clusterPreset("h100x8").value(), 8, core::RankLayout::Strided, cons);
    for (const auto& t : r.plan.tables)
      if (t.name == "cat_1")
        for (const auto& s : t.shards) QCOMPARE(s.group_rank, 5u);
  }

  void forcedAndForbiddenTypesAreObeyed() {
    const core::ModelSpec m = core::modelPreset("dcnv2").value();
    core::Constraints cons;
    cons.tables.push_back({"cat_0", {}, core::ShardingType::RowWise, {}});
    cons.tables.push_back(
        {"cat_5", {}, std::nullopt, {core::ShardingType::DataParallel, core::ShardingType::TableWise}});
    const GridResult r = plan(m, core::clusterPreset("h100x8").value(), 8, core::RankLayout::Strided, cons);
    for (const auto& t : r.plan.tables) {
      if (t.name == "cat_0") QVERIFY(t.sharding_type == core::ShardingType::RowWise);
      if (t.name == "cat_5") {
        QVERIFY(t.sharding_type != core::ShardingType::DataParallel);
        QVERIFY(t.sharding_type != core::ShardingType::TableWise);
      }
    }
  }

  void unmeetableConstraintsAreReportedNotDropped() {
    const core::ModelSpec m = core::modelPreset("dcnv2").value();
    core::Constraints cons;
    cons.tables.push_back({"cat_3", {12}, std::nullopt, {}});                  // rank 12 of 8
    cons.tables.push_back({"cat_4", {}, core::ShardingType::ColumnWise, {}});  // dim 128: no column split
    cons.tables.push_back({"no_such_table", {1}, std::nullopt, {}});
    cons.rank_memory_caps.push_back({9, 1 << 30});
    const GridResult r = plan(m, core::clusterPreset("h100x8").value(), 8, core::RankLayout::Strided, cons);
    QVERIFY(hasProblem(r, "table cat_3: pin to group rank 12 cannot be met: the sharding group has ranks 0..7"));
    QVERIFY(hasProblem(r, "table cat_4: constraint cannot be met: forced column_wise is not possible here (dim 128"));
    QVERIFY(hasProblem(r, "no_such_table"));
    QVERIFY(hasProblem(r, "memory cap for group rank 9 cannot be met"));
  }

  void memoryCapIsRespected() {
    const core::ModelSpec m = core::modelPreset("dcnv2").value();
    core::Constraints cons;
    cons.rank_memory_caps.push_back({0, 20ull << 30});
    const GridResult r = plan(m, core::clusterPreset("h100x8").value(), 8, core::RankLayout::Strided, cons);
    QVERIFY(r.fits);
    QVERIFY(r.ranks[0].capacity_bytes < (20ull << 30));
    QVERIFY(r.ranks[1].state_bytes > (20ull << 30));  // without the cap rank 0 would hold as much
    QVERIFY(r.ranks[0].state_bytes + r.ranks[0].served_buffer_bytes <= r.ranks[0].capacity_bytes);
  }

  void baselinesAreSelectableByName() {
    for (const char* name : {"random", "round_robin", "dim_greedy", "size_greedy", "lookup_greedy",
                             "size_lookup_greedy", "torchrec_greedy", "optimized"})
      QVERIFY2(algorithmFromString(name).has_value(), name);
    QVERIFY(!algorithmFromString("genetic"));
  }

  void imbalanceStatisticsFollowTorchRec() {
    const ImbalanceStats even = imbalanceOf({1, 1, 1, 1});
    QCOMPARE(even.max_over_mean, 1.0);
    QCOMPARE(even.total_variation, 0.0);
    QCOMPARE(even.kl_divergence, 0.0);
    const ImbalanceStats one = imbalanceOf({4, 0, 0, 0});
    QCOMPARE(one.max_over_mean, 4.0);
    QCOMPARE(one.total_variation, 0.75);
    QCOMPARE(one.total_distance, 1.5);
    QVERIFY(std::abs(one.kl_divergence - 1.0) < 1e-12);  // all mass on one rank: ln(4)/ln(4)
  }

  void sameInputsGiveTheSamePlan() {
    const core::ModelSpec m = syntheticModel({60, 9, 512});
    const GridResult a = plan(m, h100(64), 16, core::RankLayout::Strided);
    const GridResult b = plan(m, h100(64), 16, core::RankLayout::Strided);
    QVERIFY(a.plan.tables == b.plan.tables);
  }

  void aCancelStopsEvenASingleGrid() {
    const core::ModelSpec m = syntheticModel({60, 9, 512});
    const core::ClusterSpec c = h100(64);
    const CostModel cost(m, c, CostConstants::from(c, nullptr));
    std::atomic<bool> cancel{true};
    PlannerOptions o;
    o.cancel = &cancel;
    const GridResult r = planGrid(cost, makeGrid(64, 8, 64, core::RankLayout::Strided), {}, o);
    QVERIFY(r.cancelled);
    QVERIFY(r.ranks.empty() && r.plan.tables.empty());
    // The sweep of that one grid keeps nothing and says it was cancelled.
    SweepOptions s;
    s.only_group_size = 64;
    const SweepResult swept = sweep(m, c, nullptr, {}, s, {}, &cancel);
    QVERIFY(swept.cancelled);
    QVERIFY(swept.grids.empty());
    cancel = false;
    QVERIFY(!planGrid(cost, makeGrid(64, 8, 64, core::RankLayout::Strided), {}, o).cancelled);
  }

  void aPlanThatCannotBePricedSaysWhy() {
    const core::ModelSpec m = syntheticModel({20, 3, 512});
    const core::ClusterSpec c = h100(8);
    GridResult r = plan(m, c, 8, core::RankLayout::Strided);
    QVERIFY(unpricedReason(r).empty());
    r.step.embedding_ms = std::numeric_limits<double>::infinity();
    r.step.step_ms = r.step.embedding_ms;
    QCOMPARE(QString::fromStdString(unpricedReason(r)),
             QString("grid M = 8, R = 1 cannot be priced (embedding compute inf, step inf ms): a constant of the "
                     "cluster or the calibration is out of any real range"));
  }
};

QTEST_APPLESS_MAIN(TestPartitioner)
#include "test_partitioner.moc"
