// GPU checks: run where a GPU is present (scripts/gpu-check), skipped elsewhere.
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/engine/local_cluster.h"

using namespace shardscope::profiler;

class TestGpuDevices : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!builtWithCuda()) QSKIP("built without CUDA: GPU tests skipped");
    auto d = queryGpuDevices();
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().message.c_str());
    if (d->empty()) QSKIP("no CUDA GPU visible: GPU tests skipped");
  }

  void devicesReportSaneProperties() {
    auto d = queryGpuDevices();
    QVERIFY(d.ok());
    for (const auto& g : *d) {
      QVERIFY(!g.name.empty());
      QVERIFY(g.total_memory_bytes > (1ull << 30));
      QVERIFY(g.multiprocessors > 0);
      QVERIFY(g.compute_major >= 7);
      QVERIFY(g.memory_clock_khz > 0);
      QVERIFY(g.peak_memory_bandwidth_gbps > 100.0);
      QVERIFY(g.l2_cache_bytes > 0);
      QVERIFY(g.sm_clock_khz > 0);
      // CUDA's bus id string and its PCI attributes name the same slot.
      const QString expected = QString::asprintf("%04x:%02x:%02x.0", g.pci_domain, g.pci_bus, g.pci_device);
      QVERIFY2(QString::fromStdString(g.pci_bus_id).compare(expected, Qt::CaseInsensitive) == 0, g.pci_bus_id.c_str());
    }
  }

  void topologyCoversEveryPair() {
    auto local = queryLocalGpus();
    QVERIFY2(local.ok(), local.ok() ? "" : local.error().message.c_str());
    const int n = static_cast<int>(local->devices.size());
    QCOMPARE(local->topology.device_count, n);
    QCOMPARE(local->topology.links.size(), static_cast<std::size_t>(n * n));
    QCOMPARE(local->topology.link_kinds_known, local->topology.note.empty());
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        const GpuPeerLink& l = local->topology.link(a, b);
        if (a == b) {
          QVERIFY(l.kind == GpuLinkKind::Self);
          continue;
        }
        QVERIFY(l.kind == local->topology.link(b, a).kind);
        if (local->topology.link_kinds_known) QVERIFY(l.kind == GpuLinkKind::NvLink || l.kind == GpuLinkKind::Pcie);
        if (l.kind == GpuLinkKind::NvLink) QVERIFY(l.nvlinks > 0);
      }
    qInfo("%s", formatLocalGpus(*local).c_str());
  }

  void thisMachineIsAClusterThatLoads() {
    auto local = queryLocalGpus();
    QVERIFY(local.ok());
    for (const auto& g : local->devices)
      if (g.name != local->devices.front().name) QSKIP("GPUs of several models: no one-kind cluster");
    auto c = queryLocalCluster();
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QCOMPARE(c->cluster.gpus_per_node, static_cast<std::uint32_t>(local->devices.size()));
    auto back = shardscope::core::clusterFromJson(shardscope::core::toJson(c->cluster), "local");
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QVERIFY(*back == c->cluster);
  }

  void kernelRunsAndWritesExpectedValues() {
    auto s = runDeviceSelfTest(0, 1u << 20);
    QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
  }
};

QTEST_APPLESS_MAIN(TestGpuDevices)
#include "test_gpu_devices.moc"
