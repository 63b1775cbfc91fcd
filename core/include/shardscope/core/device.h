// The device a time was measured on or priced for, and whether two are the
// same kind: measured and predicted times are compared only like for like
// (a CPU emulate run is not an H100). Runs, calibrations and clusters each
// name theirs; docs/analysis.md#like-for-like says how they are matched.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shardscope::core {

struct Calibration;
struct ClusterSpec;

enum class DeviceClass { Unknown, Cpu, Gpu };

struct DeviceInfo {
  DeviceClass kind = DeviceClass::Unknown;
  std::string name;           // as reported: "NVIDIA H100 80GB HBM3", "Intel(R) Xeon(R) Platinum 8480+"
  std::uint32_t threads = 0;  // CPU runs: the engine's threads per process (0: not known)
  std::uint32_t count = 0;    // GPUs or processes that ran (0: not known)
  bool operator==(const DeviceInfo&) const = default;
};

[[nodiscard]] std::string_view toString(DeviceClass kind);  // "unknown", "cpu", "gpu"

// The model of a GPU named any common way ("NVIDIA H100 80GB HBM3", "H100 SXM
// 80GB", "NVIDIA A100-SXM4-80GB" -> "H100", "H100", "A100"): the first word
// with a digit, upper case; "" when there is none.
[[nodiscard]] std::string gpuModel(std::string_view name);

// The kind two devices must share for their times to compare: a GPU's model,
// a CPU's model name (case and spacing ignored); "" when unknown.
[[nodiscard]] std::string deviceKind(const DeviceInfo& device);

// True when both are known and of the same kind.
[[nodiscard]] bool sameDeviceKind(const DeviceInfo& a, const DeviceInfo& b);

// For one line of text: "CPU (Intel Xeon Platinum 8480+, 2 threads)",
// "H100 (NVIDIA H100 80GB HBM3, 8 GPUs)", "an unknown device".
[[nodiscard]] std::string describeDevice(const DeviceInfo& device);

// Short, for labels: "CPU", "H100", "unknown device".
[[nodiscard]] std::string shortDeviceName(const DeviceInfo& device);

// The cluster's GPU as a device.
[[nodiscard]] DeviceInfo clusterDevice(const ClusterSpec& cluster);

// What a prediction is priced for: the calibration's device when a
// calibration prices it (unknown when the calibration does not say), else
// the cluster's GPU.
[[nodiscard]] DeviceInfo pricedDevice(const ClusterSpec& cluster, const Calibration* calibration);

// Whether a run's measured times may be compared with a prediction.
struct DeviceComparison {
  bool absolute = false;  // the prediction is priced for the run's own kind of device
  DeviceInfo run;
  DeviceInfo priced;
  // One line: why absolute times are not compared ("" when they are), e.g.
  // "this run ran on CPU (Xeon ..., 2 threads); predictions are for H100".
  std::string reason;
};
[[nodiscard]] DeviceComparison compareDevices(const DeviceInfo& run, const ClusterSpec& cluster,
                                              const Calibration* calibration);

// A calibration applied to a cluster of another kind of GPU: the one line a
// confirmation and every figure it changes say ("" when it is the same kind,
// or there is no calibration). A calibration that names no device counts as
// another kind: its figures cannot be vouched for.
[[nodiscard]] std::string calibrationMismatch(const ClusterSpec& cluster, const Calibration* calibration);

// "calibrated on CPU (Xeon ..., 2 threads)" / "calibrated on H100 (...)" /
// "calibrated on an unknown device"; "" without a calibration.
[[nodiscard]] std::string calibratedOnText(const Calibration* calibration);

}  // namespace shardscope::core
