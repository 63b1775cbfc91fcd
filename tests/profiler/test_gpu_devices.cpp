// GPU checks: run where a GPU is present (scripts/gpu-check), skipped elsewhere.
#include <QtTest>

#include "shardscope/profiler/engine/gpu_devices.h"

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
    }
  }

  void kernelRunsAndWritesExpectedValues() {
    auto s = runDeviceSelfTest(0, 1u << 20);
    QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
  }
};

QTEST_APPLESS_MAIN(TestGpuDevices)
#include "test_gpu_devices.moc"
