// The cost model's behaviour: what grows with what, and where constants come from.
#include <QtTest>

#include "shardscope/core/presets.h"
#include "shardscope/planner/cost_model.h"

using namespace shardscope;
using namespace shardscope::planner;

namespace {
core::ModelSpec oneTable(std::uint64_t rows, std::uint32_t dim, double pooling, core::AccessSpec access = {}) {
  core::ModelSpec m;
  m.name = "one";
  m.batch_size_per_gpu = 1024;
  core::TableSpec t;
  t.name = "t";
  t.rows = rows;
  t.dim = dim;
  t.pooling.mean = pooling;
  t.access = access;
  m.tables.push_back(t);
  m.dense = {1000000, 6e6};
  return m;
}
}  // namespace

class TestCostModel : public QObject {
  Q_OBJECT
 private slots:
  void constantsComeFromClusterThenCalibration() {
    const auto c = core::clusterPreset("h200x64").value();
    CostConstants k = CostConstants::from(c, nullptr);
    QCOMPARE(k.embedding_bandwidth_gbps, 4800.0);
    QCOMPARE(k.inter_node_bandwidth_gbps, 50.0);
    core::Calibration cal;
    cal.coefficients["embedding_bandwidth_gbps"] = {2000, 0};
    cal.coefficients["inter_node_latency_us"] = {25, 0};
    k = CostConstants::from(c, &cal);
    QCOMPARE(k.embedding_bandwidth_gbps, 2000.0);
    QCOMPARE(k.inter_node_latency_us, 25.0);
    QCOMPARE(k.intra_node_bandwidth_gbps, 450.0);  // untouched
  }

  void computeGrowsWithPoolingAndDim() {
    const auto c = core::clusterPreset("h100x8").value();
    const Grid g = makeGrid(8, 8, 8, core::RankLayout::Strided);
    auto cost = [&](double pooling, std::uint32_t dim) {
      CostModel m(oneTable(100000, dim, pooling), c, CostConstants::from(c, nullptr));
      return m.shardCost(0, 0, 100000, dim, g, m.gridCosts(g));
    };
    QVERIFY(cost(10, 128).fwd_ms > cost(1, 128).fwd_ms);
    QVERIFY(cost(10, 256).fwd_ms > cost(10, 128).fwd_ms);
    QVERIFY(cost(10, 128).bwd_ms > 0);
  }

  void narrowDimsPayTorchRecPenalty() {
    QCOMPARE(dimPenalty(32), 1.75);
    QCOMPARE(dimPenalty(64), 1.15);
    QCOMPARE(dimPenalty(128), 1.0);
  }

  void skewedRowShardGetsItsRealShareOfIds() {
    const auto c = core::clusterPreset("h100x8").value();
    const Grid g = makeGrid(8, 8, 8, core::RankLayout::Strided);
    core::AccessSpec zipf;
    zipf.kind = core::AccessKind::Zipf;
    zipf.alpha = 1.05;
    CostModel m(oneTable(8'000'000, 128, 10, zipf), c, CostConstants::from(c, nullptr));
    const auto gc = m.gridCosts(g);
    const ShardCost head = m.shardCost(0, 0, 1'000'000, 128, g, gc);
    const ShardCost tail = m.shardCost(0, 7'000'000, 1'000'000, 128, g, gc);
    const double all_ids = 8.0 * 1024 * 10;
    QVERIFY(head.ids > 0.7 * all_ids);
    QVERIFY(tail.ids < 0.05 * all_ids);
    QVERIFY(head.fwd_ms > 3 * tail.fwd_ms);
  }

  void memoryCountsWeightsAndOptimizerState() {
    const auto c = core::clusterPreset("h100x8").value();
    auto m = oneTable(1000, 128, 1);
    CostModel adagrad(m, c, CostConstants::from(c, nullptr));
    QCOMPARE(adagrad.stateBytes(0, 1000, 128), 1000u * (128 * 4 + 4));
    m.optimizer = core::Optimizer::Adam;
    CostModel adam(m, c, CostConstants::from(c, nullptr));
    QCOMPARE(adam.stateBytes(0, 1000, 128), 1000u * (128 * 4 + 2 * 128 * 4));
    m.optimizer = core::Optimizer::SGD;
    m.tables[0].dtype = core::DType::FP16;
    CostModel sgd(m, c, CostConstants::from(c, nullptr));
    QCOMPARE(sgd.stateBytes(0, 1000, 128), 1000u * 128 * 2);
  }

  void replicaSyncIsIntraNodeForStridedAndAmortised() {
    const auto c = core::clusterPreset("h100x64").value();
    CostModel m(oneTable(1000, 128, 1), c, CostConstants::from(c, nullptr));
    const Grid strided = makeGrid(64, 8, 8, core::RankLayout::Strided);        // replicas inside a node
    const Grid contiguous = makeGrid(64, 8, 8, core::RankLayout::Contiguous);  // replicas across nodes
    const std::uint64_t bytes = 1ull << 30;
    const double s = m.replicaSyncMs(bytes, strided, m.gridCosts(strided));
    const double x = m.replicaSyncMs(bytes, contiguous, m.gridCosts(contiguous));
    QVERIFY(x > 5 * s);  // 50 GB/s vs 450 GB/s
    CostConstants k = CostConstants::from(c, nullptr);
    k.sync_interval = 4;
    CostModel every4(oneTable(1000, 128, 1), c, k);
    QVERIFY(std::abs(every4.replicaSyncMs(bytes, strided, every4.gridCosts(strided)) - s / 4) < 1e-9);
    const Grid one = makeGrid(64, 8, 64, core::RankLayout::Strided);
    QCOMPARE(m.replicaSyncMs(bytes, one, m.gridCosts(one)), 0.0);
  }

  void allToAllIsSlowerAcrossNodes() {
    const auto c = core::clusterPreset("h100x64").value();
    CostModel m(oneTable(100000, 128, 10), c, CostConstants::from(c, nullptr));
    const Grid inside = makeGrid(64, 8, 8, core::RankLayout::Contiguous);
    const Grid across = makeGrid(64, 8, 8, core::RankLayout::Strided);
    const auto a = m.shardCost(0, 0, 100000, 128, inside, m.gridCosts(inside));
    const auto b = m.shardCost(0, 0, 100000, 128, across, m.gridCosts(across));
    QCOMPARE(a.fwd_ms, b.fwd_ms);
    QVERIFY(b.comm_ms > 5 * a.comm_ms);
  }
};

QTEST_APPLESS_MAIN(TestCostModel)
#include "test_cost_model.moc"
