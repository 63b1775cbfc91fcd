// CUDA implementation of gpu_devices.h.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "shardscope/profiler/engine/gpu_devices.h"

namespace shardscope::profiler {

namespace {
std::string cudaMessage(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

__global__ void fillAndScale(float* data, std::uint32_t n) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = 2.0f * static_cast<float>(i) + 1.0f;
}
}  // namespace

bool builtWithCuda() { return true; }

core::Result<std::vector<GpuDevice>> queryGpuDevices() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return std::vector<GpuDevice>{};
  }
  if (e != cudaSuccess) return core::Error{cudaMessage("cudaGetDeviceCount", e), core::ErrorKind::Io};
  std::vector<GpuDevice> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (auto pe = cudaGetDeviceProperties(&p, i); pe != cudaSuccess)
      return core::Error{cudaMessage("cudaGetDeviceProperties", pe), core::ErrorKind::Io};
    GpuDevice d;
    d.index = i;
    d.name = p.name;
    d.compute_major = p.major;
    d.compute_minor = p.minor;
    d.total_memory_bytes = p.totalGlobalMem;
    d.multiprocessors = p.multiProcessorCount;
    d.memory_bus_width_bits = p.memoryBusWidth;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.pci_bus_id = bus;
    size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
      d.free_memory_bytes = free_b;
    out.push_back(std::move(d));
  }
  return out;
}

core::Status runDeviceSelfTest(int device, std::uint32_t n) {
  if (auto e = cudaSetDevice(device); e != cudaSuccess) return core::Error{cudaMessage("cudaSetDevice", e)};
  float* d = nullptr;
  if (auto e = cudaMalloc(&d, n * sizeof(float)); e != cudaSuccess) return core::Error{cudaMessage("cudaMalloc", e)};
  const std::uint32_t block = 256;
  fillAndScale<<<(n + block - 1) / block, block>>>(d, n);
  std::vector<float> host(n);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(host.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (e != cudaSuccess) return core::Error{cudaMessage("self-test kernel", e)};
  for (std::uint32_t i = 0; i < n; ++i)
    if (host[i] != 2.0f * static_cast<float>(i) + 1.0f)
      return core::Error{"self-test kernel wrote a wrong value at index " + std::to_string(i)};
  return core::Ok{};
}

}  // namespace shardscope::profiler
