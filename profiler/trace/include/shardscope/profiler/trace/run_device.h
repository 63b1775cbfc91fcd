// The device a stored run ran on, read from its configuration
// (runs.config_json, engine_run_config.h): engine runs name their CPU and
// threads or their GPUs, imports the GPUs their traces' device properties name.
#pragma once

#include <string>

#include "shardscope/core/device.h"
#include "shardscope/profiler/trace/engine_run_config.h"

namespace shardscope::profiler {

// Unknown when the configuration does not say (an import of a trace without
// device properties, a run written before runs named their device).
[[nodiscard]] core::DeviceInfo runDevice(const EngineRunConfig& config);

// "NVIDIA H100 80GB HBM3 (GPU 3)" -> "NVIDIA H100 80GB HBM3": the engine's per-rank GPU entries name the index too.
[[nodiscard]] std::string gpuNameOf(const std::string& entry);

}  // namespace shardscope::profiler
