// The collective model against published nccl-tests figures
// (tests/data/collectives/nccl_tests_busbw.json): within +-20 % of every
// anchor figure, and the algorithm rules that make it so.
#include <QtTest>

#include <cmath>
#include <map>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/planner/collectives.h"
#include "shardscope/planner/cost_model.h"

using namespace shardscope;
using namespace shardscope::planner;

namespace {
constexpr double kBar = 0.20;

struct Figure {
  std::string system, collective, kind, source, algorithm;
  std::uint32_t gpus = 0;
  double bytes = 0, busbw = 0;
  bool anchor = true;
};

struct Figures {
  std::map<std::string, core::ClusterSpec> systems;
  std::vector<Figure> figures;
};

Figures loadFigures() {
  Figures out;
  const std::string path = std::string(SHARDSCOPE_TEST_DATA_DIR) + "/collectives/nccl_tests_busbw.json";
  auto j = core::readJsonFile(path);
  if (!j) qFatal("%s", j.error().message.c_str());
  for (const auto& [key, sys] : (*j)["systems"].items()) {
    auto c = core::clusterFromJson(sys.at("cluster"), path + " /systems/" + key + "/cluster");
    if (!c) qFatal("%s", c.error().message.c_str());
    out.systems[key] = *c;
  }
  for (const auto& f : (*j)["figures"]) {
    Figure x;
    x.system = f.at("system").get<std::string>();
    x.collective = f.at("collective").get<std::string>();
    x.kind = f.at("kind").get<std::string>();
    x.source = f.at("source").get<std::string>();
    x.algorithm = f.value("algorithm", "");
    x.gpus = f.at("gpus").get<std::uint32_t>();
    x.bytes = f.at("bytes").get<double>();
    x.busbw = f.at("busbw_gbps").get<double>();
    x.anchor = f.at("anchor").get<bool>();
    if (!out.systems.count(x.system)) qFatal("figure names an unknown system %s", x.system.c_str());
    out.figures.push_back(x);
  }
  return out;
}

struct Modelled {
  double busbw = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
};

// The figure's system at its GPU count, its collective over all of them.
Modelled model(const Figures& all, const Figure& f) {
  const core::ClusterSpec& one = all.systems.at(f.system);
  const core::ClusterSpec c = core::resizedCluster(one, f.gpus);
  const CostConstants k = CostConstants::from(c, nullptr);
  const CollectivePricer pricer(k, c.gpus_per_node, c.gpu.device);
  const Grid world = makeGrid(c.worldSize(), c.gpus_per_node, c.worldSize(), core::RankLayout::Contiguous);
  const GroupShape shape = worldShape(world);
  const CollectiveOp op = f.collective == "all_reduce" ? CollectiveOp::AllReduce : CollectiveOp::AllToAll;
  CollectivePrice p = pricer.price(op, shape, f.bytes);
  if (f.algorithm == "ring") {  // NCCL_ALGO=RING: the faster of its protocols
    const auto all_algos = pricer.allReduceCandidates(shape);
    double best = INFINITY;
    for (const auto& q : all_algos)
      if ((q.algorithm == CollectiveAlgorithm::Ring || q.algorithm == CollectiveAlgorithm::RingLL) &&
          q.ms(f.bytes) < best) {
        best = q.ms(f.bytes);
        p = q;
      }
  }
  return {p.busBandwidthGbps(op, shape.ranks, f.bytes), p.algorithm};
}

std::string sizeText(double bytes) {
  const double mib = bytes / (1024.0 * 1024.0);
  return mib >= 1024 ? QString::number(mib / 1024.0).toStdString() + " GiB"
                     : QString::number(mib).toStdString() + " MiB";
}
}  // namespace

class TestCollectives : public QObject {
  Q_OBJECT
 private slots:
  void everyAnchorFigureWithinTwentyPercent() {
    const Figures all = loadFigures();
    QVERIFY(all.figures.size() >= 50);
    int anchors = 0, multi_node = 0, all_to_all = 0, wide = 0;
    QStringList failures;
    qInfo("| system | collective | GPUs | size | published busbw | model | algorithm | error |");
    qInfo("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |");
    for (const auto& f : all.figures) {
      const Modelled m = model(all, f);
      const double err = m.busbw / f.busbw - 1.0;
      qInfo("| %s | %s | %u | %s | %.1f | %.1f | %s | %+.1f %%%s |", f.system.c_str(), f.collective.c_str(), f.gpus,
            sizeText(f.bytes).c_str(), f.busbw, m.busbw, std::string(toString(m.algorithm)).c_str(), err * 100.0,
            f.anchor ? "" : " (context)");
      if (!f.anchor) continue;
      ++anchors;
      multi_node += f.gpus > 8;
      wide += f.gpus >= 64;
      all_to_all += f.collective == "all_to_all";
      if (std::abs(err) > kBar)
        failures << QString("%1 %2 on %3 GPUs at %4: published %5 GB/s, model %6 GB/s (%7 %)")
                        .arg(QString::fromStdString(f.system), QString::fromStdString(f.collective))
                        .arg(f.gpus)
                        .arg(QString::fromStdString(sizeText(f.bytes)))
                        .arg(f.busbw)
                        .arg(m.busbw, 0, 'f', 1)
                        .arg(err * 100.0, 0, 'f', 1);
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
    // The bar's reach: both ops, one node and several, 64 GPUs and more.
    QVERIFY(anchors >= 50);
    QVERIFY(multi_node >= 20);
    QVERIFY(all_to_all >= 10);
    QVERIFY(wide >= 10);
  }

  void everyFigureNamesItsSource() {
    for (const auto& f : loadFigures().figures) {
      QVERIFY2(f.source.starts_with("https://"), f.system.c_str());
      QVERIFY(f.kind == "measured" || f.kind == "maintainer");
    }
  }

  // Across nodes an all-reduce runs over every rail at once: on 8 H100 nodes
  // its bus bandwidth is several NICs', not one (50 GB/s).
  void allReduceAcrossNodesUsesEveryRail() {
    const auto c = core::clusterPreset("h100x64").value();
    const CostConstants k = CostConstants::from(c, nullptr);
    const CollectivePricer pricer(k, c.gpus_per_node, c.gpu.device);
    const Grid g = makeGrid(64, 8, 64, core::RankLayout::Contiguous);
    const double bytes = 1024.0 * 1024 * 1024;
    const CollectivePrice p = pricer.allReduce(worldShape(g), bytes);
    const double busbw = p.busBandwidthGbps(CollectiveOp::AllReduce, 64, bytes);
    QVERIFY2(busbw > 6 * 50.0, qPrintable(QString::number(busbw)));
    QVERIFY(busbw < 8 * 50.0);
  }

  // DCNv2's dense all-reduce on 64 H100 (8 nodes): over every rail with NVLink inside the nodes, a
  // fraction of what one NIC per GPU would take (2 (N-1)/N x parameters x 4 B / 50 GB/s = 2.5 ms).
  void dcnv2DenseAllReduceOn64H100IsPricedOverEveryRail() {
    const auto model = core::modelPreset("dcnv2").value();
    const auto cluster = core::clusterPreset("h100x64").value();
    const CostModel cm(model, cluster, CostConstants::from(cluster, nullptr));
    const GridCosts gc = cm.gridCosts(makeGrid(64, 8, 64, core::RankLayout::Strided));
    const double one_nic_ms = 2.0 * 63 / 64 * static_cast<double>(model.dense.parameters) * 4.0 / 50e9 * 1e3;
    qInfo("dense all-reduce %.3f ms by %s (one NIC per GPU: %.3f ms)", gc.dense_allreduce_ms,
          std::string(toString(gc.dense_allreduce.algorithm)).c_str(), one_nic_ms);
    QVERIFY(gc.dense_allreduce_ms < one_nic_ms / 3.0);
    QVERIFY(gc.dense_allreduce.algorithm == CollectiveAlgorithm::NvlsTree ||
            gc.dense_allreduce.algorithm == CollectiveAlgorithm::Ring);
    // No faster than all eight NICs of a node at line rate allow.
    QVERIFY(gc.dense_allreduce_ms > 2.0 * 63 / 64 * static_cast<double>(model.dense.parameters) * 4.0 / 400e9 * 1e3);
  }

  // An all-to-all leaves each GPU through its own NIC: across many nodes its
  // bus bandwidth is about one NIC's.
  void allToAllAcrossNodesIsOneNicPerGpu() {
    const auto c = core::clusterPreset("h100x512").value();
    const CostConstants k = CostConstants::from(c, nullptr);
    const CollectivePricer pricer(k, c.gpus_per_node, c.gpu.device);
    const Grid g = makeGrid(512, 8, 512, core::RankLayout::Contiguous);
    const double bytes = 2.0 * 1024 * 1024 * 1024;
    const double busbw = pricer.allToAll(worldShape(g), bytes).busBandwidthGbps(CollectiveOp::AllToAll, 512, bytes);
    QVERIFY2(busbw > 0.7 * 50.0 && busbw < 50.0, qPrintable(QString::number(busbw)));
  }

  // Replica groups that hold one GPU per node (M = GPUs per node, contiguous
  // sharding groups): each rides one rail, and every rail is busy at once.
  void replicaSyncWithOneGpuPerNodeRidesOneRailEach() {
    const auto c = core::clusterPreset("h100x64").value();
    const CostConstants k = CostConstants::from(c, nullptr);
    const CollectivePricer pricer(k, c.gpus_per_node, c.gpu.device);
    const Grid g = makeGrid(64, 8, 8, core::RankLayout::Contiguous);  // replica group i = {i, i + 8, ...}
    const GroupShape s = shapeOf(g.worstReplicaTopology(), g.replicas);
    QCOMPARE(s.per_node, 1u);
    QCOMPARE(s.nodes, 8u);
    const double bytes = 1e9;
    const double busbw = pricer.allReduce(s, bytes).busBandwidthGbps(CollectiveOp::AllReduce, s.ranks, bytes);
    QVERIFY2(busbw > 0.8 * 50.0 && busbw <= 50.0, qPrintable(QString::number(busbw)));
  }

  // Two ranks on two nodes exchange through one NIC each: no algorithm beats it.
  void twoRanksOnTwoNodesAreBoundByOneNic() {
    const auto c = core::clusterPreset("h100x64").value();
    const CostConstants k = CostConstants::from(c, nullptr);
    const CollectivePricer pricer(k, 8, c.gpu.device);
    const GroupShape pair{2, 2, 1, 0.0};
    const GroupShape four{4, 2, 2, 1.0 / 3.0};
    for (const double bytes : {1e6, 1e8, 1e10}) {
      QVERIFY(pricer.allReduce(pair, bytes).busBandwidthGbps(CollectiveOp::AllReduce, 2, bytes) <= 50.0);
      QVERIFY(pricer.allReduce(four, bytes).busBandwidthGbps(CollectiveOp::AllReduce, 4, bytes) <= 1.5 * 100.0);
    }
  }

  // What the fabric offers more of never makes a collective slower: NVLS,
  // SHARP, NICs, less congestion; for any group shape and size.
  void moreOfTheFabricIsNeverSlower() {
    const auto base = core::clusterPreset("h100x64").value();
    for (const std::uint32_t gpn : {3u, 8u}) {
      for (const GroupShape& g : {GroupShape{2, 2, 1, 0.0}, GroupShape{4, 2, 2, 1.0 / 3}, GroupShape{6, 2, 3, 0.4},
                                  GroupShape{16, 2, gpn, 0.1}, GroupShape{64, 8, gpn, 0.05}}) {
        if (g.per_node > gpn) continue;
        for (const double bytes : {1e3, 1e6, 3e7, 1e9}) {
          auto time = [&](bool nvls, bool sharp, std::uint32_t nics, double congestion, CollectiveOp op) {
            core::ClusterSpec c = base;
            c.gpus_per_node = gpn;
            c.network = {nics, nvls, sharp, congestion};
            const CostConstants k = CostConstants::from(c, nullptr);
            return CollectivePricer(k, gpn, c.gpu.device).price(op, g, bytes).ms(bytes);
          };
          for (const auto op : {CollectiveOp::AllReduce, CollectiveOp::AllToAll}) {
            QVERIFY(time(true, false, gpn, 0, op) <= time(false, false, gpn, 0, op) * (1 + 1e-12));
            QVERIFY(time(false, true, gpn, 0, op) <= time(false, false, gpn, 0, op) * (1 + 1e-12));
            QVERIFY(time(false, false, 2 * gpn, 0, op) <= time(false, false, gpn, 0, op) * (1 + 1e-12));
            QVERIFY(time(false, false, gpn, 0, op) <= time(false, false, gpn, 0.2, op) * (1 + 1e-12));
          }
        }
      }
    }
  }

  // NCCL's tuner: LL for small messages, a bandwidth algorithm for large ones;
  // NVLS inside an H100 node, never on A100.
  void theFasterAlgorithmIsChosenBySize() {
    const auto h = core::clusterPreset("h100x8").value();
    const CostConstants kh = CostConstants::from(h, nullptr);
    const CollectivePricer ph(kh, 8, h.gpu.device);
    const Grid g = makeGrid(8, 8, 8, core::RankLayout::Contiguous);
    QCOMPARE(toString(ph.allReduce(worldShape(g), 64 * 1024).algorithm), toString(CollectiveAlgorithm::RingLL));
    QCOMPARE(toString(ph.allReduce(worldShape(g), 1e9).algorithm), toString(CollectiveAlgorithm::Nvls));
    const auto a = core::clusterPreset("a100x8").value();
    const CostConstants ka = CostConstants::from(a, nullptr);
    const CollectivePricer pa(ka, 8, a.gpu.device);
    QCOMPARE(toString(pa.allReduce(worldShape(g), 1e9).algorithm), toString(CollectiveAlgorithm::Ring));
    for (const auto& p : pa.allReduceCandidates(worldShape(g))) QVERIFY(p.algorithm != CollectiveAlgorithm::Nvls);
  }

  // SHARP reduces in the switches: across nodes it beats the tree for large
  // messages when the fabric has it.
  void sharpWhereTheFabricHasIt() {
    auto c = core::clusterPreset("h100x64").value();
    const Grid g = makeGrid(64, 8, 64, core::RankLayout::Contiguous);
    const double bytes = 1e9;
    const CostConstants plain = CostConstants::from(c, nullptr);
    const double t_plain = CollectivePricer(plain, 8, c.gpu.device).allReduce(worldShape(g), bytes).ms(bytes);
    c.network.sharp = true;
    const CostConstants with = CostConstants::from(c, nullptr);
    const CollectivePrice p = CollectivePricer(with, 8, c.gpu.device).allReduce(worldShape(g), bytes);
    QCOMPARE(toString(p.algorithm), toString(CollectiveAlgorithm::Sharp));
    QVERIFY(p.ms(bytes) < t_plain);
  }

  // A calibration's per-op, per-link fit replaces the model on that link only.
  void aCalibrationFitReplacesTheModelOnItsLink() {
    const auto c = core::clusterPreset("h100x64").value();
    core::Calibration cal;
    cal.coefficients["all_reduce_inter_node_busbw_gbps"] = {100.0, 1.0};
    cal.coefficients["all_reduce_inter_node_latency_us"] = {40.0, 1.0};
    const CostConstants k = CostConstants::from(c, &cal);
    const CollectivePricer pricer(k, 8, c.gpu.device);
    const double bytes = 1e8;
    const CollectivePrice across =
        pricer.allReduce(worldShape(makeGrid(64, 8, 64, core::RankLayout::Contiguous)), bytes);
    QCOMPARE(toString(across.algorithm), toString(CollectiveAlgorithm::Measured));
    QCOMPARE(across.latency_ms, 0.04);
    QVERIFY(std::abs(across.busBandwidthGbps(CollectiveOp::AllReduce, 64, bytes) -
                     bytes / (0.04e-3 + bytes * 2.0 * 63 / 64 / 100e9) / 1e9 * 2.0 * 63 / 64) < 1e-6);
    const CollectivePrice inside = pricer.allReduce(worldShape(makeGrid(8, 8, 8, core::RankLayout::Contiguous)), bytes);
    QVERIFY(inside.algorithm != CollectiveAlgorithm::Measured);
  }

  // Files written before the network block read as one NIC per GPU, no NVLS, no SHARP.
  void olderClusterFilesReadWithDefaults() {
    nlohmann::json j = core::toJson(core::clusterPreset("h100x64").value());
    j.erase("network");
    const auto c = core::clusterFromJson(j, "old.json");
    QVERIFY(bool(c));
    QCOMPARE(c->nicsPerNode(), 8u);
    QVERIFY(!c->network.nvls);
    QVERIFY(!c->network.sharp);
    QCOMPARE(c->network.congestion_per_doubling, 0.0);
  }

  void badNetworkFieldsNameTheirPath() {
    nlohmann::json j = core::toJson(core::clusterPreset("h100x64").value());
    j["network"]["nics_per_node"] = 0;
    auto c = core::clusterFromJson(j, "c.json");
    QVERIFY(!bool(c));
    QVERIFY2(c.error().message.find("/network/nics_per_node") != std::string::npos, c.error().message.c_str());
    j["network"]["nics_per_node"] = 8;
    j["network"]["nvls"] = "yes";
    c = core::clusterFromJson(j, "c.json");
    QVERIFY(!bool(c));
    QVERIFY2(c.error().message.find("/network/nvls") != std::string::npos, c.error().message.c_str());
    j["network"]["nvls"] = true;
    j["network"]["congestion_per_doubling"] = 2;
    c = core::clusterFromJson(j, "c.json");
    QVERIFY(!bool(c));
    QVERIFY2(c.error().message.find("/network/congestion_per_doubling") != std::string::npos,
             c.error().message.c_str());
    j["network"] = 3;
    c = core::clusterFromJson(j, "c.json");
    QVERIFY(!bool(c));
    QVERIFY2(c.error().message.find("/network") != std::string::npos, c.error().message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCollectives)
#include "test_collectives.moc"
