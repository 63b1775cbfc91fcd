// Devices and like-for-like comparison (docs/analysis.md#like-for-like).
#include "shardscope/core/device.h"

#include <cctype>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"

namespace shardscope::core {

namespace {

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Lower case, "(R)"/"(TM)" and "CPU @ x GHz" kept but runs of spaces collapsed and ends trimmed.
std::string normalizedCpu(std::string_view name) {
  std::string out;
  bool space = false;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// "Intel(R) Xeon(R) Platinum 8480+" -> "Intel Xeon Platinum 8480+": the trademark marks only clutter a line.
std::string tidyName(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name.substr(i, 3) == "(R)" || name.substr(i, 3) == "(r)") {
      i += 2;
      continue;
    }
    if (name.substr(i, 4) == "(TM)" || name.substr(i, 4) == "(tm)") {
      i += 3;
      continue;
    }
    if (name[i] == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += name[i];
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool isUnknownName(std::string_view name) { return name.empty() || name == "unknown"; }

}  // namespace

std::string_view toString(DeviceClass kind) {
  switch (kind) {
    case DeviceClass::Cpu:
      return "cpu";
    case DeviceClass::Gpu:
      return "gpu";
    case DeviceClass::Unknown:
      break;
  }
  return "unknown";
}

std::string gpuModel(std::string_view name) {
  std::size_t i = 0;
  while (i < name.size()) {
    while (i < name.size() && !isWordChar(name[i])) ++i;
    std::size_t j = i;
    bool digit = false;
    for (; j < name.size() && isWordChar(name[j]); ++j)
      digit = digit || std::isdigit(static_cast<unsigned char>(name[j])) != 0;
    const std::string_view word = name.substr(i, j - i);
    // "80GB" is a memory size, not a model.
    const std::string w = upper(word);
    const bool size = w.size() > 2 && (w.ends_with("GB") || w.ends_with("TB")) &&
                      std::isdigit(static_cast<unsigned char>(w[w.size() - 3])) != 0;
    if (digit && !size) return w;
    i = j;
  }
  return {};
}

std::string deviceKind(const DeviceInfo& device) {
  switch (device.kind) {
    case DeviceClass::Gpu: {
      const std::string model = gpuModel(device.name);
      return model.empty() ? std::string() : "gpu:" + model;
    }
    case DeviceClass::Cpu:
      return isUnknownName(device.name) ? std::string("cpu:?") : "cpu:" + normalizedCpu(device.name);
    case DeviceClass::Unknown:
      break;
  }
  return {};
}

bool sameDeviceKind(const DeviceInfo& a, const DeviceInfo& b) {
  // A CPU without a model name (a cluster of CPU ranks) stands for any CPU.
  if (a.kind == DeviceClass::Cpu && b.kind == DeviceClass::Cpu && (a.name.empty() || b.name.empty())) return true;
  const std::string ka = deviceKind(a);
  return !ka.empty() && ka == deviceKind(b);
}

std::string shortDeviceName(const DeviceInfo& device) {
  switch (device.kind) {
    case DeviceClass::Cpu:
      return "CPU";
    case DeviceClass::Gpu: {
      const std::string model = gpuModel(device.name);
      return model.empty() ? (device.name.empty() ? std::string("GPU") : tidyName(device.name)) : model;
    }
    case DeviceClass::Unknown:
      break;
  }
  return "unknown device";
}

std::string describeDevice(const DeviceInfo& device) {
  if (device.kind == DeviceClass::Unknown) return "an unknown device";
  std::string details;
  const auto add = [&details](const std::string& part) { details += (details.empty() ? "" : ", ") + part; };
  if (!isUnknownName(device.name) && tidyName(device.name) != shortDeviceName(device)) add(tidyName(device.name));
  if (device.kind == DeviceClass::Cpu && device.threads > 0)
    add(std::to_string(device.threads) + (device.threads == 1 ? " thread" : " threads"));
  if (device.kind == DeviceClass::Gpu && device.count > 1) add(std::to_string(device.count) + " GPUs");
  return shortDeviceName(device) + (details.empty() ? "" : " (" + details + ")");
}

DeviceInfo clusterDevice(const ClusterSpec& cluster) {
  DeviceInfo d;
  d.kind = cluster.gpu.device == DeviceClass::Cpu ? DeviceClass::Cpu : DeviceClass::Gpu;
  // A CPU cluster names its ranks, not a processor: it is priced for any CPU.
  if (d.kind == DeviceClass::Gpu) d.name = cluster.gpu.name;
  d.count = cluster.worldSize();
  return d;
}

DeviceInfo pricedDevice(const ClusterSpec& cluster, const Calibration* calibration) {
  return calibration ? calibration->device : clusterDevice(cluster);
}

DeviceComparison compareDevices(const DeviceInfo& run, const ClusterSpec& cluster, const Calibration* calibration) {
  DeviceComparison c;
  c.run = run;
  c.priced = pricedDevice(cluster, calibration);
  c.absolute = sameDeviceKind(run, c.priced);
  if (c.absolute) return c;
  const std::string priced =
      calibration ? "the calibration's device, " + describeDevice(c.priced)
                  : shortDeviceName(c.priced) +
                        (c.priced.kind == DeviceClass::Cpu ? " (the cluster's CPU ranks)" : " (the cluster's GPU)");
  if (run.kind == DeviceClass::Unknown)
    c.reason = "the run does not say which device it ran on; predictions are for " + priced;
  else if (calibration && calibration->device.kind == DeviceClass::Unknown)
    c.reason =
        "this run ran on " + describeDevice(run) + "; the calibration does not say which device it was fitted on";
  else
    c.reason = "this run ran on " + describeDevice(run) + "; predictions are for " + priced;
  return c;
}

std::string calibrationMismatch(const ClusterSpec& cluster, const Calibration* calibration) {
  if (!calibration) return {};
  const DeviceInfo gpu = clusterDevice(cluster);
  if (sameDeviceKind(calibration->device, gpu)) return {};
  if (calibration->device.kind == DeviceClass::Unknown)
    return "the calibration does not say which device it was fitted on; the cluster is " + shortDeviceName(gpu);
  return "the calibration was fitted on " + describeDevice(calibration->device) + "; the cluster is " +
         shortDeviceName(gpu);
}

std::string calibratedOnText(const Calibration* calibration) {
  if (!calibration) return {};
  return "calibrated on " + describeDevice(calibration->device);
}

}  // namespace shardscope::core
