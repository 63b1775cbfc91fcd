// The local machine as a cluster, from synthetic device lists: an HGX H100
// (NVSwitch), a PCIe box, one GPU, a partly bridged box, no NVML, mixed
// models and none; NVLink classification from NVML's link ends; the text
// and JSON of `shardscope-cli devices`. Every cluster made must load again.
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/profiler/engine/local_cluster.h"

using namespace shardscope::profiler;
namespace core = shardscope::core;

namespace {

GpuDevice h100(int index) {
  GpuDevice d;
  d.index = index;
  d.name = "NVIDIA H100 80GB HBM3";
  d.compute_major = 9;
  d.compute_minor = 0;
  d.total_memory_bytes = 85'029'158'912ull;  // what CUDA reports of "80GB"
  d.free_memory_bytes = 84'500'000'000ull;
  d.multiprocessors = 132;
  d.memory_bus_width_bits = 5120;
  d.memory_clock_khz = 2'619'000;
  d.sm_clock_khz = 1'980'000;
  d.peak_memory_bandwidth_gbps = 2.0 * 2.619e9 * 5120 / 8 / 1e9;
  d.l2_cache_bytes = 50ull << 20;
  d.pci_bus = 0x18 + 0x10 * index;
  d.pci_bus_id = QString::asprintf("0000:%02x:00.0", d.pci_bus).toStdString();
  d.numa_node = index < 4 ? 0 : 1;
  d.nvlinks = 18;
  d.nvlink_gbps_per_link = 26.5625;
  d.pcie_generation = 5;
  d.pcie_width = 16;
  return d;
}

GpuDevice l40s(int index) {
  GpuDevice d;
  d.index = index;
  d.name = "NVIDIA L40S";
  d.compute_major = 8;
  d.compute_minor = 9;
  d.total_memory_bytes = 47'697'362'944ull;
  d.free_memory_bytes = 47'000'000'000ull;
  d.multiprocessors = 142;
  d.memory_bus_width_bits = 384;
  d.memory_clock_khz = 9'001'000;
  d.sm_clock_khz = 2'520'000;
  d.peak_memory_bandwidth_gbps = 2.0 * 9.001e9 * 384 / 8 / 1e9;
  d.l2_cache_bytes = 96ull << 20;
  d.pci_bus = 0x1b + 0x10 * index;
  d.pci_bus_id = QString::asprintf("0000:%02x:00.0", d.pci_bus).toStdString();
  d.numa_node = index < 4 ? 0 : 1;
  d.pcie_generation = 4;
  d.pcie_width = 16;
  return d;
}

// The topology as queryLocalGpus() builds it: NVML's link ends through
// classifyNvLinks(), CUDA's peer access everywhere.
GpuTopology topologyFrom(const std::vector<GpuDevice>& devices, const std::vector<std::vector<NvLinkEnd>>& ends,
                         bool nvlink_p2p) {
  GpuTopology t;
  t.device_count = static_cast<int>(devices.size());
  t.links.resize(devices.size() * devices.size());
  t.link_kinds_known = true;
  for (std::size_t a = 0; a < devices.size(); ++a)
    for (std::size_t b = 0; b < devices.size(); ++b) {
      GpuPeerLink& l = t.links[a * devices.size() + b];
      if (a == b) {
        l.kind = GpuLinkKind::Self;
        continue;
      }
      l.p2p_access = true;
      l.pcie_path = devices[a].numa_node == devices[b].numa_node ? PciePath::NumaNode : PciePath::System;
      classifyNvLinks(l, devices[b], ends[a], ends[b], nvlink_p2p);
      if (l.kind == GpuLinkKind::NvLink) l.nvlink_gbps_per_link = devices[a].nvlink_gbps_per_link;
    }
  return t;
}

// Eight H100 SXM, each with 18 NVLinks to the NVSwitches.
LocalGpus hgxH100() {
  LocalGpus g;
  for (int i = 0; i < 8; ++i) g.devices.push_back(h100(i));
  NvLinkEnd to_switch;
  to_switch.nvswitch = true;
  const std::vector<std::vector<NvLinkEnd>> ends(8, std::vector<NvLinkEnd>(18, to_switch));
  g.topology = topologyFrom(g.devices, ends, true);
  return g;
}

// Eight L40S on PCIe, four per CPU socket.
LocalGpus pcieBox() {
  LocalGpus g;
  for (int i = 0; i < 8; ++i) g.devices.push_back(l40s(i));
  g.topology = topologyFrom(g.devices, std::vector<std::vector<NvLinkEnd>>(8), false);
  return g;
}

NvLinkEnd endAt(const GpuDevice& d) {
  NvLinkEnd e;
  e.pci_domain = d.pci_domain;
  e.pci_bus = d.pci_bus;
  e.pci_device = d.pci_device;
  return e;
}

// What the cluster reader makes of the cluster's JSON text.
core::Result<core::ClusterSpec> reloaded(const core::ClusterSpec& c) {
  auto j = core::parseJsonText(core::toJson(c).dump(1), "local.json");
  if (!j) return j.error();
  return core::clusterFromJson(*j, "local.json");
}

bool anyNoteHas(const LocalCluster& c, const char* text) {
  for (const auto& n : c.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

class TestLocalCluster : public QObject {
  Q_OBJECT

 private slots:
  void nvlinkThroughSwitchNeedsBothSidesAndNvmlPeerStatus() {
    const GpuDevice b = h100(1);
    NvLinkEnd sw;
    sw.nvswitch = true;
    GpuPeerLink l;
    classifyNvLinks(l, b, {sw, sw, sw}, {sw, sw}, true);
    QCOMPARE(l.kind, GpuLinkKind::NvLink);
    QCOMPARE(l.nvlinks, 2);
    QVERIFY(l.through_nvswitch);
    classifyNvLinks(l, b, {sw, sw, sw}, {sw, sw}, false);  // NVML: no NVLink P2P between them
    QCOMPARE(l.kind, GpuLinkKind::Pcie);
    QCOMPARE(l.nvlinks, 0);
    QVERIFY(!l.through_nvswitch);
    classifyNvLinks(l, b, {sw}, {}, true);
    QCOMPARE(l.kind, GpuLinkKind::Pcie);
  }

  void directNvLinksCountOnlyTheLinksToThePeer() {
    const GpuDevice b = h100(1);
    const GpuDevice c = h100(2);
    GpuPeerLink l;
    classifyNvLinks(l, b, {endAt(b), endAt(c), endAt(b), endAt(b)}, {}, false);
    QCOMPARE(l.kind, GpuLinkKind::NvLink);
    QCOMPARE(l.nvlinks, 3);
    QVERIFY(!l.through_nvswitch);
    QCOMPARE(topologyLabel(l), std::string("NV3"));
    classifyNvLinks(l, b, {endAt(c)}, {}, true);
    QCOMPARE(l.kind, GpuLinkKind::Pcie);
  }

  void labelsFollowNvidiaSmi() {
    GpuPeerLink l;
    QCOMPARE(topologyLabel(l), std::string("?"));
    l.kind = GpuLinkKind::Self;
    QCOMPARE(topologyLabel(l), std::string("X"));
    l.kind = GpuLinkKind::Pcie;
    QCOMPARE(topologyLabel(l), std::string("PCIe"));
    const std::pair<PciePath, const char*> paths[] = {{PciePath::SingleSwitch, "PIX"},
                                                      {PciePath::MultipleSwitches, "PXB"},
                                                      {PciePath::HostBridge, "PHB"},
                                                      {PciePath::NumaNode, "NODE"},
                                                      {PciePath::System, "SYS"}};
    for (const auto& [path, label] : paths) {
      l.pcie_path = path;
      QCOMPARE(topologyLabel(l), std::string(label));
    }
    QCOMPARE(pcieGbps(4, 16), 1.969 * 16);
    QCOMPARE(pcieGbps(5, 8), 3.938 * 8);
    QCOMPARE(pcieGbps(0, 16), 0.0);
    QCOMPARE(pcieGbps(7, 16), 0.0);
  }

  void hgxH100IsOneNodeOfNvLinkedPresetGpus() {
    auto c = localCluster(hgxH100(), "node7");
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    const core::ClusterSpec h100x8 = core::clusterPreset("h100x8").value();
    QVERIFY(c->nvlink);
    QCOMPARE(c->cluster.name, std::string("node7: 8 x H100 SXM 80GB, NVLink"));
    QCOMPARE(c->cluster.nodes, 1u);
    QCOMPARE(c->cluster.gpus_per_node, 8u);
    QVERIFY(c->cluster.gpu == h100x8.gpu);  // the presets' spec-sheet figures
    QCOMPARE(c->cluster.intra_node.bandwidth_gbps, 18 * 26.5625);
    QCOMPARE(c->cluster.intra_node.latency_us, h100x8.intra_node.latency_us);
    QVERIFY(c->cluster.inter_node == h100x8.inter_node);
    QVERIFY(anyNoteHas(*c, "NVLink through NVSwitch between every pair, 18 links x 26.6 GB/s"));
    auto back = reloaded(c->cluster);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QVERIFY(*back == c->cluster);
  }

  void nvlinkRateFromTheArchitectureWhenNvmlDoesNotSayIt() {
    LocalGpus g = hgxH100();
    for (auto& d : g.devices) d.nvlink_gbps_per_link = 0.0;
    for (auto& l : g.topology.links) l.nvlink_gbps_per_link = 0.0;
    auto c = localCluster(g, "node7");
    QVERIFY(c.ok());
    // 18 links x 25 GB/s: exactly the h100x8 preset, apart from the name.
    core::ClusterSpec expected = core::clusterPreset("h100x8").value();
    expected.name = c->cluster.name;
    QVERIFY(c->cluster == expected);
    QVERIFY(anyNoteHas(*c, "NVLink rate of sm_90 assumed"));
  }

  void slowestGpuSetsTheNvLinkBandwidth() {
    LocalGpus g = hgxH100();
    g.devices[5].nvlinks = 12;  // six links down
    auto c = localCluster(g, "node7");
    QVERIFY(c.ok());
    QCOMPARE(c->cluster.intra_node.bandwidth_gbps, 12 * 26.5625);
  }

  void pcieBoxUsesThePcieLinkAndTheGpusOwnFigures() {
    auto c = localCluster(pcieBox(), "ws");
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QVERIFY(!c->nvlink);
    QCOMPARE(c->cluster.name, std::string("ws: 8 x L40S, PCIe"));
    QCOMPARE(c->cluster.gpus_per_node, 8u);
    QCOMPARE(c->cluster.gpu.name, std::string("L40S"));
    QCOMPARE(c->cluster.gpu.hbm_bytes, 47'697'362'944ull);
    QCOMPARE(c->cluster.gpu.hbm_bandwidth_gbps, 2.0 * 9.001e9 * 384 / 8 / 1e9);
    QVERIFY(qAbs(c->cluster.gpu.peak_dense_tflops - 142 * 2.52 * 1024 / 1000) < 1e-9);
    QCOMPARE(c->cluster.intra_node.bandwidth_gbps, pcieGbps(4, 16));
    QVERIFY(anyNoteHas(*c, "28 of 28 GPU pairs have no NVLink"));
    QVERIFY(anyNoteHas(*c, "peak dense BF16 estimated: 142 SMs x 2.52 GHz"));
    auto back = reloaded(c->cluster);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QVERIFY(*back == c->cluster);
  }

  void partlyBridgedGpusCountAsPcie() {
    // Four GPUs, NVLink bridges between 0-1 and 2-3 only.
    LocalGpus g;
    for (int i = 0; i < 4; ++i) g.devices.push_back(h100(i));
    for (auto& d : g.devices) d.nvlinks = 4;
    std::vector<std::vector<NvLinkEnd>> ends(4);
    for (int i = 0; i < 4; ++i)
      ends[static_cast<std::size_t>(i)].assign(4, endAt(g.devices[static_cast<std::size_t>(i ^ 1)]));
    g.topology = topologyFrom(g.devices, ends, false);
    QCOMPARE(topologyLabel(g.topology.link(0, 1)), std::string("NV4"));
    QCOMPARE(topologyLabel(g.topology.link(0, 2)), std::string("NODE"));
    auto c = localCluster(g, "box");
    QVERIFY(c.ok());
    QVERIFY(!c->nvlink);
    QCOMPARE(c->cluster.intra_node.bandwidth_gbps, pcieGbps(5, 16));
    QVERIFY(anyNoteHas(*c, "4 of 6 GPU pairs have no NVLink (0-2, ...)"));
  }

  void oneGpuIsOneNodeOfOne() {
    LocalGpus g;
    g.devices.push_back(h100(0));
    g.devices[0].pcie_generation = 0;  // NVML did not say: Gen5 x16 for sm_90
    g.devices[0].pcie_width = 0;
    g.topology = topologyFrom(g.devices, {{}}, false);
    auto c = localCluster(g, "");
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QCOMPARE(c->cluster.name, std::string("localhost: 1 x H100 SXM 80GB, PCIe"));
    QCOMPARE(c->cluster.worldSize(), 1u);
    QCOMPARE(c->cluster.intra_node.bandwidth_gbps, pcieGbps(5, 16));
    QVERIFY(anyNoteHas(*c, "one GPU: no GPU-to-GPU link"));
    QVERIFY(anyNoteHas(*c, "assumed for sm_90"));
    QVERIFY(reloaded(c->cluster).ok());
  }

  void withoutNvmlTheLinksAreUnknownNotAnError() {
    LocalGpus g;
    for (int i = 0; i < 2; ++i) g.devices.push_back(h100(i));
    g.topology.device_count = 2;
    g.topology.links.resize(4);
    g.topology.links[0].kind = GpuLinkKind::Self;
    g.topology.links[3].kind = GpuLinkKind::Self;
    g.topology.note = "NVML (libnvidia-ml.so.1) is not loadable";
    auto c = localCluster(g, "h");
    QVERIFY(c.ok());
    QVERIFY(!c->nvlink);
    QCOMPARE(c->cluster.name, std::string("h: 2 x H100 SXM 80GB, PCIe assumed"));
    QVERIFY(anyNoteHas(*c, "link kinds unknown (NVML (libnvidia-ml.so.1) is not loadable)"));
    const std::string text = formatLocalGpus(g);
    QVERIFY(text.find("? = link kind unknown: NVML (libnvidia-ml.so.1) is not loadable") != std::string::npos);
    QVERIFY(text.find("CUDA peer access missing: 0->1, 1->0") != std::string::npos);
    QCOMPARE(localGpusToJson(g)["topology"]["links"][0]["kind"].get<std::string>(), std::string("unknown"));
  }

  void mixedModelsAreAnErrorNamingBoth() {
    LocalGpus g = pcieBox();
    g.devices[3] = h100(3);
    auto c = localCluster(g, "ws");
    QVERIFY(!c.ok());
    QVERIFY(c.error().kind == core::ErrorKind::Io);
    QVERIFY(c.error().message.find("NVIDIA L40S") != std::string::npos);
    QVERIFY(c.error().message.find("GPU 3 is NVIDIA H100 80GB HBM3") != std::string::npos);
  }

  void noGpuIsAnError() {
    auto c = localCluster(LocalGpus{}, "ws");
    QVERIFY(!c.ok());
    QVERIFY(c.error().kind == core::ErrorKind::Io);
    QVERIFY(c.error().message.starts_with("no GPU visible: "));
    QCOMPARE(formatLocalGpus(LocalGpus{}), std::string("no CUDA GPU visible\n"));
  }

  void gpuWithoutMemoryClockIsAnError() {
    LocalGpus g = pcieBox();
    for (auto& d : g.devices) d.peak_memory_bandwidth_gbps = 0.0;
    auto c = localCluster(g, "ws");
    QVERIFY(!c.ok());
    QVERIFY(c.error().message.find("reports no memory clock") != std::string::npos);
  }

  void textShowsDevicesAndTheMatrix() {
    const std::string text = formatLocalGpus(hgxH100());
    QVERIFY(text.find("NVIDIA H100 80GB HBM3  sm_90  132") != std::string::npos);
    QVERIFY(text.find("0000:88:00.0") != std::string::npos);
    QVERIFY(text.find("18 x 26.6 GB/s  Gen5 x16") != std::string::npos);
    QVERIFY(text.find("GPU7  NV18  NV18  NV18  NV18  NV18  NV18  NV18  X\n") != std::string::npos);
    QVERIFY(text.find("CUDA peer access: every pair") != std::string::npos);
    const std::string pcie = formatLocalGpus(pcieBox());
    QVERIFY(pcie.find("GPU0  X     NODE  NODE  NODE  SYS") != std::string::npos);
  }

  void jsonListsDevicesAndEveryOrderedPair() {
    const auto j = localGpusToJson(hgxH100());
    QCOMPARE(j["devices"].size(), std::size_t{8});
    QCOMPARE(j["devices"][2]["sm"].get<std::string>(), std::string("sm_90"));
    QCOMPARE(j["devices"][2]["pci_bus_id"].get<std::string>(), std::string("0000:38:00.0"));
    QCOMPARE(j["devices"][2]["numa_node"].get<int>(), 0);
    QCOMPARE(j["topology"]["links"].size(), std::size_t{56});
    const auto& l = j["topology"]["links"][0];
    QCOMPARE(l["from"].get<int>(), 0);
    QCOMPARE(l["to"].get<int>(), 1);
    QCOMPARE(l["label"].get<std::string>(), std::string("NV18"));
    QVERIFY(l["through_nvswitch"].get<bool>());
    QCOMPARE(l["pcie_path"].get<std::string>(), std::string("NODE"));
  }
};

QTEST_APPLESS_MAIN(TestLocalCluster)
#include "test_local_cluster.moc"
