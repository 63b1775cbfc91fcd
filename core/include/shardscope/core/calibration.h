// Measured constants that replace the cost model's defaults. Produced by
// fitting profile runs (engine or imported traces); JSON form
// `shardscope.calibration/1` in docs/formats/calibration.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/cluster.h"
#include "shardscope/core/device.h"

namespace shardscope::core {

struct FittedCoefficient {
  double value = 0.0;
  double std_error = 0.0;  // 0 when not known
  bool operator==(const FittedCoefficient&) const = default;
};

struct FitQuality {
  std::uint64_t samples = 0;
  double mape = 0.0;           // mean absolute percentage error on the fit set
  double holdout_mape = -1.0;  // < 0 when no held-out check was run
  bool operator==(const FitQuality&) const = default;
};

struct Calibration {
  std::string source;   // what was measured: run id, trace files, machine
  std::string created;  // ISO 8601 UTC
  DeviceInfo device;    // what the runs ran on (unknown in files written before calibrations named it)
  std::map<std::string, FittedCoefficient> coefficients;  // names from knownCalibrationCoefficients()
  std::vector<CollectiveCurve> collectives;
  FitQuality fit;
  bool operator==(const Calibration&) const = default;
};

// The coefficient names the cost model understands (docs/cost-model.md).
[[nodiscard]] const std::vector<std::string_view>& knownCalibrationCoefficients();

}  // namespace shardscope::core
