// Devices and like for like: a GPU is known by its model whatever its name's
// spelling, a CPU by its model name, and measured times are compared with a
// prediction only when the prediction is priced for the run's kind of device.
#include <QtTest>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/device.h"
#include "shardscope/core/json_io.h"

using namespace shardscope::core;

namespace {

DeviceInfo gpu(std::string name, std::uint32_t count = 0) { return {DeviceClass::Gpu, std::move(name), 0, count}; }
DeviceInfo cpu(std::string name, std::uint32_t threads = 0) { return {DeviceClass::Cpu, std::move(name), threads, 0}; }

ClusterSpec h100Cluster() {
  ClusterSpec c;
  c.name = "h100x8";
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.gpu.name = "H100 SXM 80GB";
  return c;
}

}  // namespace

class TestDevice : public QObject {
  Q_OBJECT
 private slots:
  void gpuModelIsTheFirstWordWithADigitButNotASize() {
    QCOMPARE(gpuModel("NVIDIA H100 80GB HBM3"), std::string("H100"));
    QCOMPARE(gpuModel("H100 SXM 80GB"), std::string("H100"));
    QCOMPARE(gpuModel("NVIDIA A100-SXM4-80GB"), std::string("A100"));
    QCOMPARE(gpuModel("Tesla V100-SXM2-16GB"), std::string("V100"));
    QCOMPARE(gpuModel("NVIDIA GH200 480GB"), std::string("GH200"));
    QCOMPARE(gpuModel("b200 180GB"), std::string("B200"));
    QCOMPARE(gpuModel("80GB"), std::string());
    QCOMPARE(gpuModel("NVIDIA"), std::string());
    QCOMPARE(gpuModel(""), std::string());
  }

  void gpusOfOneModelAreOneKindAndOthersAreNot() {
    QVERIFY(sameDeviceKind(gpu("NVIDIA H100 80GB HBM3"), gpu("H100 SXM 80GB")));
    QVERIFY(!sameDeviceKind(gpu("NVIDIA H100 80GB HBM3"), gpu("H200 SXM 141GB")));
    QVERIFY(!sameDeviceKind(gpu("NVIDIA GH200 480GB"), gpu("H200 SXM 141GB")));
  }

  void cpusCompareByModelNameIgnoringCaseAndSpacing() {
    QVERIFY(sameDeviceKind(cpu("Intel(R) Xeon(R)  Platinum 8480+", 2), cpu("intel(r) xeon(r) platinum 8480+", 16)));
    QVERIFY(!sameDeviceKind(cpu("AMD EPYC 9654"), cpu("Intel(R) Xeon(R) Platinum 8480+")));
    QVERIFY(!sameDeviceKind(cpu("AMD EPYC 9654"), gpu("NVIDIA H100 80GB HBM3")));
  }

  void unknownDevicesMatchNothingNotEvenEachOther() {
    QVERIFY(!sameDeviceKind(DeviceInfo{}, DeviceInfo{}));
    QVERIFY(!sameDeviceKind(gpu("GPU"), gpu("GPU")));  // no model: not vouched for
  }

  void descriptionsNameTheDeviceForOneLine() {
    QCOMPARE(describeDevice(cpu("Intel(R) Xeon(R) Platinum 8480+", 2)),
             std::string("CPU (Intel Xeon Platinum 8480+, 2 threads)"));
    QCOMPARE(describeDevice(gpu("NVIDIA H100 80GB HBM3", 8)), std::string("H100 (NVIDIA H100 80GB HBM3, 8 GPUs)"));
    QCOMPARE(describeDevice(gpu("H100")), std::string("H100"));
    QCOMPARE(describeDevice(DeviceInfo{}), std::string("an unknown device"));
    QCOMPARE(shortDeviceName(cpu("x")), std::string("CPU"));
  }

  void aCpuRunIsNotComparedWithTheClustersGpu() {
    const DeviceComparison c = compareDevices(cpu("Intel(R) Xeon(R) Platinum 8480+", 2), h100Cluster(), nullptr);
    QVERIFY(!c.absolute);
    QCOMPARE(c.reason, std::string("this run ran on CPU (Intel Xeon Platinum 8480+, 2 threads); predictions are for "
                                   "H100 (the cluster's GPU)"));
  }

  void aGpuRunOnTheClustersGpuIsCompared() {
    const DeviceComparison c = compareDevices(gpu("NVIDIA H100 80GB HBM3 (GPU 0)", 8), h100Cluster(), nullptr);
    QVERIFY(c.absolute);
    QVERIFY(c.reason.empty());
  }

  void aCalibrationPricesForItsOwnDevice() {
    Calibration cal;
    cal.source = "run 1";
    cal.device = cpu("AMD EPYC 9654", 4);
    QVERIFY(compareDevices(cpu("AMD EPYC 9654", 2), h100Cluster(), &cal).absolute);
    const DeviceComparison gpu_run = compareDevices(gpu("NVIDIA H100 80GB HBM3"), h100Cluster(), &cal);
    QVERIFY(!gpu_run.absolute);
    QVERIFY(gpu_run.reason.find("the calibration's device, CPU (AMD EPYC 9654, 4 threads)") != std::string::npos);
  }

  void aCalibrationWithoutADeviceVouchesForNothing() {
    Calibration cal;
    cal.source = "old file";
    QVERIFY(!compareDevices(gpu("NVIDIA H100 80GB HBM3"), h100Cluster(), &cal).absolute);
    QCOMPARE(calibrationMismatch(h100Cluster(), &cal),
             std::string("the calibration does not say which device it was fitted on; the cluster is H100"));
  }

  void aCalibrationOnAnotherDeviceIsAMismatchNamingBoth() {
    Calibration cal;
    cal.source = "run 3";
    cal.device = cpu("AMD EPYC 9654", 2);
    QCOMPARE(calibrationMismatch(h100Cluster(), &cal),
             std::string("the calibration was fitted on CPU (AMD EPYC 9654, 2 threads); the cluster is H100"));
    QCOMPARE(calibratedOnText(&cal), std::string("calibrated on CPU (AMD EPYC 9654, 2 threads)"));
    cal.device = gpu("NVIDIA H100 80GB HBM3");
    QCOMPARE(calibrationMismatch(h100Cluster(), &cal), std::string());
    QCOMPARE(calibrationMismatch(h100Cluster(), nullptr), std::string());
    QCOMPARE(calibratedOnText(nullptr), std::string());
  }

  void aCalibrationFileKeepsItsDevice() {
    Calibration cal;
    cal.source = "run 3 of runs.sqlite";
    cal.device = cpu("AMD EPYC 9654", 2);
    cal.device.count = 4;
    auto back = calibrationFromJson(nlohmann::json::parse(toJson(cal).dump()), "cal.json");
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    QVERIFY(back->device == cal.device);
  }

  void aCalibrationFileWithABadDeviceNamesTheField() {
    const auto j = nlohmann::json::parse(
        R"({"schema": "shardscope.calibration/1", "source": "x", "coefficients": {}, "device": {"kind": "tpu"}})");
    auto back = calibrationFromJson(j, "cal.json");
    QVERIFY(!back);
    QVERIFY2(back.error().message.find("/device/kind") != std::string::npos, back.error().message.c_str());
    const auto threads = nlohmann::json::parse(
        R"({"schema": "shardscope.calibration/1", "source": "x", "coefficients": {},
            "device": {"kind": "cpu", "threads": -2}})");
    auto bad = calibrationFromJson(threads, "cal.json");
    QVERIFY(!bad);
    QVERIFY2(bad.error().message.find("/device/threads") != std::string::npos, bad.error().message.c_str());
  }

  void anOldCalibrationFileReadsWithAnUnknownDevice() {
    const auto j =
        nlohmann::json::parse(R"({"schema": "shardscope.calibration/1", "source": "x", "coefficients": {}})");
    auto back = calibrationFromJson(j, "cal.json");
    QVERIFY(back);
    QVERIFY(back->device.kind == DeviceClass::Unknown);
  }
};

QTEST_APPLESS_MAIN(TestDevice)
#include "test_device.moc"
