// The GPUs this process can see, as the CUDA runtime reports them. Used by
// the CLI (`shardscope-cli devices`), the engine and GPU checks. Built
// without CUDA, it reports that instead of failing to link.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

struct GpuDevice {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::uint64_t total_memory_bytes = 0;
  std::uint64_t free_memory_bytes = 0;
  int multiprocessors = 0;
  int memory_bus_width_bits = 0;
  std::string pci_bus_id;
};

// True when this build has the CUDA backend compiled in.
[[nodiscard]] bool builtWithCuda();

// The visible GPUs; an empty list when CUDA is compiled in but no GPU or
// driver is present; an Error when the runtime fails for another reason or
// the build has no CUDA.
[[nodiscard]] core::Result<std::vector<GpuDevice>> queryGpuDevices();

// Runs a small kernel on `device` that writes and reads back `n` floats; the
// first sign that a GPU really executes our code. Error without CUDA.
[[nodiscard]] core::Status runDeviceSelfTest(int device, std::uint32_t n);

}  // namespace shardscope::profiler
