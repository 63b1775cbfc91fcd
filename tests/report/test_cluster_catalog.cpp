// The Cluster page's preset catalog, without a window: GPU kinds and world
// sizes in the pickers' order, what a cluster's values match, and the name a
// cluster keeps once its values change.
#include <QtTest>
#include <algorithm>

#include "shardscope/core/presets.h"
#include "shardscope/report/cluster_catalog.h"

namespace core = shardscope::core;
using shardscope::report::ClusterCatalog;

class TestClusterCatalog : public QObject {
  Q_OBJECT

 private slots:
  void kindsStartWithH100AndSizesGrow() {
    const ClusterCatalog catalog = ClusterCatalog::builtIn();
    QVERIFY(!catalog.kinds().empty());
    QVERIFY(catalog.kinds().front().gpu.name.starts_with("H100"));
    QVERIFY(std::is_sorted(catalog.sizes().begin(), catalog.sizes().end(), [](const auto& a, const auto& b) {
      return static_cast<std::uint64_t>(a.nodes) * a.gpus_per_node <
             static_cast<std::uint64_t>(b.nodes) * b.gpus_per_node;
    }));
    QCOMPARE(catalog.presets().size(), core::clusterPresetNames().size());
  }

  void everyPresetIsItsKindAtItsSize() {
    const ClusterCatalog catalog = ClusterCatalog::builtIn();
    for (const ClusterCatalog::Preset& p : catalog.presets()) {
      QCOMPARE(catalog.matchingKind(p.cluster), p.kind);
      QCOMPARE(catalog.matchingSize(p.cluster), p.size);
      QVERIFY(catalog.preset(p.kind, p.size) == &p.cluster);
      QVERIFY(catalog.matchingPreset(p.cluster) != nullptr);
    }
    QVERIFY(catalog.preset(-1, 0) == nullptr);
  }

  void aKindCarriesItsNetwork() {
    const ClusterCatalog catalog = ClusterCatalog::builtIn();
    const core::ClusterSpec a100 = core::clusterPreset("a100x64").value();
    const core::ClusterSpec h100 = core::clusterPreset("h100x64").value();
    const auto kindOf = [&](const core::ClusterSpec& c) {
      return catalog.kinds()[static_cast<std::size_t>(catalog.matchingKind(c))];
    };
    QVERIFY(kindOf(a100).network == a100.network);
    QVERIFY(!kindOf(a100).network.nvls);
    QVERIFY(kindOf(h100).network.nvls);
    // Another network is another kind, and no preset.
    core::ClusterSpec sharp = h100;
    sharp.network.sharp = true;
    QCOMPARE(catalog.matchingKind(sharp), -1);
    QVERIFY(catalog.matchingPreset(sharp) == nullptr);
    QCOMPARE(catalog.namedForValues(sharp).name, std::string(ClusterCatalog::kCustomName));
    // "One NIC per GPU" on nodes of 8 GPUs is the presets' 8 NICs.
    core::ClusterSpec per_gpu = h100;
    per_gpu.network.nics_per_node = 0;
    QCOMPARE(catalog.matchingKind(per_gpu), catalog.matchingKind(h100));
    QVERIFY(catalog.matchingPreset(per_gpu) != nullptr);
    per_gpu.network.nics_per_node = 4;
    QVERIFY(catalog.matchingPreset(per_gpu) == nullptr);
  }

  void aPresetNameFollowsTheValuesAUserNameStays() {
    const ClusterCatalog catalog = ClusterCatalog::builtIn();
    core::ClusterSpec c = core::defaultProject().cluster;
    const std::string preset_name = c.name;
    c.nodes += 3;
    QCOMPARE(catalog.namedForValues(c).name, std::string(ClusterCatalog::kCustomName));
    c.nodes -= 3;
    c.name = ClusterCatalog::kCustomName;
    QCOMPARE(catalog.namedForValues(c).name, preset_name);
    c.name = "lab";
    c.nodes += 3;
    QCOMPARE(catalog.namedForValues(c).name, std::string("lab"));
  }

  void divisorsAscend() {
    QVERIFY(shardscope::report::divisors(64) == (std::vector<std::uint32_t>{1, 2, 4, 8, 16, 32, 64}));
    QVERIFY(shardscope::report::divisors(12) == (std::vector<std::uint32_t>{1, 2, 3, 4, 6, 12}));
    QVERIFY(shardscope::report::divisors(0).empty());
  }
};

QTEST_MAIN(TestClusterCatalog)
#include "test_cluster_catalog.moc"
