// shardscope.cluster/1: loading, measured collective curves, and rejections.
#include <QtTest>

#include "shardscope/core/json_io.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
json validCluster() {
  return json::parse(R"({
    "schema": "shardscope.cluster/1", "name": "lab", "nodes": 2, "gpus_per_node": 8, "world_size": 16,
    "gpu": {"name": "H100", "hbm_bytes": 85899345920, "hbm_bandwidth_gbps": 3350, "peak_dense_tflops": 989},
    "intra_node": {"bandwidth_gbps": 450, "latency_us": 3},
    "inter_node": {"bandwidth_gbps": 50, "latency_us": 10},
    "collectives": [{"op": "all_to_all", "scope": "inter_node", "ranks": 16,
                     "points": [{"bytes": 1024, "time_us": 20}, {"bytes": 1048576, "time_us": 90}]}]})");
}
QString errorOf(const json& j) {
  auto r = clusterFromJson(j, "cluster.json");
  return r ? QString() : QString::fromStdString(r.error().message);
}
}  // namespace

class TestJsonCluster : public QObject {
  Q_OBJECT
 private slots:
  void loadsEveryField() {
    auto r = clusterFromJson(validCluster(), "cluster.json");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->worldSize(), 16u);
    QCOMPARE(r->gpu.hbm_bytes, 85899345920ull);
    QCOMPARE(r->inter_node.latency_us, 10.0);
    QCOMPARE(r->collectives.size(), 1u);
    QCOMPARE(r->collectives[0].points[1].bytes, 1048576u);
  }

  void resizedClustersKeepTheNodeShapeAndDropOtherSizesCurves() {
    auto lab = clusterFromJson(validCluster(), "cluster.json");
    QVERIFY(lab.ok());
    const ClusterSpec big = resizedCluster(*lab, 4096);
    QCOMPARE(big.nodes, 512u);
    QCOMPARE(big.gpus_per_node, 8u);
    QVERIFY(big.collectives.empty());  // measured at 16 GPUs
    QCOMPARE(big.gpu, lab->gpu);
    QCOMPARE(big.name, lab->name);
    const ClusterSpec small = resizedCluster(*lab, 4);
    QCOMPARE(small.nodes, 1u);
    QCOMPARE(small.gpus_per_node, 4u);
    const ClusterSpec odd = resizedCluster(*lab, 12);  // 8 does not divide 12: one node
    QCOMPARE(odd.nodes, 1u);
    QCOMPARE(odd.gpus_per_node, 12u);
    const ClusterSpec same = resizedCluster(*lab, 16);
    QVERIFY(same == *lab);                                 // curves kept at their own size
    const ClusterSpec per4 = resizedCluster(*lab, 32, 4);  // a plan's node size
    QCOMPARE(per4.nodes, 8u);
    QCOMPARE(per4.gpus_per_node, 4u);
  }

  void roundTripsThroughJson() {
    auto a = clusterFromJson(validCluster(), "cluster.json");
    QVERIFY(a.ok());
    auto b = clusterFromJson(json::parse(toJson(*a).dump()), "again.json");
    QVERIFY(b.ok());
    QVERIFY(*a == *b);
  }

  void worldSizeIsOptional() {
    json j = validCluster();
    j.erase("world_size");
    QVERIFY(clusterFromJson(j, "c.json").ok());
  }

  void rejectsWorldSizeThatIsNotNodesTimesGpus() {
    json j = validCluster();
    j["world_size"] = 12;
    const QString e = errorOf(j);
    QVERIFY2(e.contains("cluster.json: /world_size: expected nodes x gpus_per_node = 2 x 8 = 16, got 12"),
             qPrintable(e));
  }

  void rejectsZeroNodes() {
    json j = validCluster();
    j["nodes"] = 0;
    QVERIFY(errorOf(j).contains("/nodes: expected an integer in [1, 131072], got 0"));
  }

  void rejectsNonPositiveBandwidth() {
    json j = validCluster();
    j["inter_node"]["bandwidth_gbps"] = 0;
    QVERIFY(errorOf(j).contains("/inter_node/bandwidth_gbps: expected a number > 0, got 0"));
  }

  void rejectsMissingGpu() {
    json j = validCluster();
    j.erase("gpu");
    QVERIFY(errorOf(j).contains("/gpu: missing required field"));
  }

  void rejectsWrongTypeInGpu() {
    json j = validCluster();
    j["gpu"]["hbm_bytes"] = "80GB";
    QVERIFY(errorOf(j).contains("/gpu/hbm_bytes: expected an integer in [1, 17592186044416], got string \"80GB\""));
  }

  void rejectsUnsortedCollectivePoints() {
    json j = validCluster();
    j["collectives"][0]["points"][1]["bytes"] = 512;
    QVERIFY(errorOf(j).contains("/collectives/0/points/1/bytes: expected points sorted by increasing bytes"));
  }

  void rejectsUnknownCollectiveOp() {
    json j = validCluster();
    j["collectives"][0]["op"] = "broadcast";
    QVERIFY(errorOf(j).contains("/collectives/0/op: expected one of \"all_to_all\""));
  }

  void rejectsUnknownSchemaVersion() {
    json j = validCluster();
    j["schema"] = "shardscope.cluster/7";
    QVERIFY(errorOf(j).contains("/schema: version \"shardscope.cluster/7\" is not supported"));
  }
};

QTEST_APPLESS_MAIN(TestJsonCluster)
#include "test_json_cluster.moc"
