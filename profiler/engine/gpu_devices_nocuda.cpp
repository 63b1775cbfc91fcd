// gpu_devices.h for builds without the CUDA toolkit.
#include "shardscope/profiler/engine/gpu_devices.h"

namespace shardscope::profiler {

namespace {
core::Error noCuda() {
  return core::Error{
      "this ShardScope was built without CUDA (configure with SHARDSCOPE_WITH_CUDA=ON on a machine "
      "with the CUDA toolkit)",
      core::ErrorKind::Io};
}
}  // namespace

bool builtWithCuda() { return false; }

core::Result<std::vector<GpuDevice>> queryGpuDevices() { return noCuda(); }

core::Result<LocalGpus> queryLocalGpus() { return noCuda(); }

core::Status runDeviceSelfTest(int, std::uint32_t) { return core::Error{"this ShardScope was built without CUDA"}; }

}  // namespace shardscope::profiler
