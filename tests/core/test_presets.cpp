// Built-in presets: every one loads, and the DCNv2 model is MLPerf's.
#include <QtTest>

#include <numeric>

#include "shardscope/core/presets.h"

using namespace shardscope::core;

class TestPresets : public QObject {
  Q_OBJECT
 private slots:
  void everyPresetLoads() {
    QVERIFY(modelPresetNames().size() >= 2);
    for (const auto& n : modelPresetNames()) QVERIFY2(modelPreset(n).ok(), n.c_str());
    QCOMPARE(clusterPresetNames().size(), 16u);
    for (const auto& n : clusterPresetNames()) {
      auto c = clusterPreset(n);
      QVERIFY2(c.ok(), n.c_str());
      QCOMPARE(c->gpus_per_node, 8u);
      QCOMPARE(QString::fromStdString(n), QString::fromStdString(c->name));
    }
  }

  void dcnv2MatchesMlperf() {
    auto m = modelPreset("dcnv2");
    QVERIFY(m.ok());
    QCOMPARE(m->tables.size(), 26u);
    const std::vector<std::uint64_t> rows = {40000000, 39060,    17295,    7424,     20265,  3,     7122, 1543, 63,
                                             40000000, 3067956,  405282,   10,       2209,   11938, 155,  4,    976,
                                             14,       40000000, 40000000, 40000000, 590152, 12973, 108,  36};
    double pooling = 0;
    for (std::size_t i = 0; i < 26; ++i) {
      QCOMPARE(m->tables[i].rows, rows[i]);
      QCOMPARE(m->tables[i].dim, 128u);
      pooling += m->tables[i].pooling.mean;
    }
    QCOMPARE(pooling, 214.0);
    QCOMPARE(m->tables[20].pooling.mean, 100.0);
    // 65,536 global batch on the default 64 GPUs.
    QCOMPARE(m->batch_size_per_gpu * clusterPreset(kDefaultClusterPreset)->worldSize(), 65536u);
  }

  void clusterNamesCountGpus() {
    QCOMPARE(clusterPreset("h100x64")->worldSize(), 64u);
    QCOMPARE(clusterPreset("b200x4096")->nodes, 512u);
    QCOMPARE(clusterPreset("a100x8")->nodes, 1u);
  }

  void unknownPresetListsTheKnownOnes() {
    auto r = modelPreset("gpt5");
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message)
                .contains("unknown model preset \"gpt5\"; expected one of criteo_kaggle, dcnv2"));
  }

  void namesAndFilesBothLoad() {
    QVERIFY(loadModelByNameOrFile("dcnv2").ok());
    const std::string file = std::string(SHARDSCOPE_SOURCE_DIR) + "/resources/clusters/h200x8.json";
    auto c = loadClusterByNameOrFile(file);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QCOMPARE(c->gpu.hbm_bandwidth_gbps, 4800.0);
  }

  void defaultProjectIsDcnv2OnH100x64() {
    const Project p = defaultProject();
    QCOMPARE(p.model.tables.size(), 26u);
    QCOMPARE(p.cluster.name, std::string("h100x64"));
  }

  void aDefaultNameFollowsTheModelAndClusterAGivenNameStays() {
    const Project before = defaultProject();
    QCOMPARE(before.name, std::string("DLRM-DCNv2 on 64 H100"));
    Project after = before;
    after.cluster = clusterPreset("h200x512").value();
    const Project followed = withFollowedName(before, after);
    QCOMPARE(followed.name, defaultProjectName(followed.model, followed.cluster));
    QCOMPARE(followed.name, std::string("DLRM-DCNv2 on 512 H200"));
    // A name the user gave is kept, and so is a rename made in the same edit.
    Project named = before;
    named.name = "prod job";
    Project moved = named;
    moved.cluster = after.cluster;
    QCOMPARE(withFollowedName(named, moved).name, std::string("prod job"));
    Project renamed = before;
    renamed.name = "renamed";
    QCOMPARE(withFollowedName(before, renamed).name, std::string("renamed"));
  }
};

QTEST_APPLESS_MAIN(TestPresets)
#include "test_presets.moc"
