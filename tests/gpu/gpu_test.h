// A tiny harness for the gpu-labelled checks: plain executables (no Qt), so
// that scripts/gpu-check builds them on a bare GPU machine. A check program
// calls GPU_SKIP_WITHOUT_DEVICE() first (exit 77: ctest reports "skipped"),
// then GPU_CHECK(...) / GPU_CHECK_MSG(...); main returns gpuTestExit().
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace shardscope::gputest {

inline int& failures() {
  static int n = 0;
  return n;
}

inline void fail(const char* file, int line, const char* expr, const std::string& msg) {
  ++failures();
  std::fprintf(stderr, "FAIL %s:%d: %s%s%s\n", file, line, expr, msg.empty() ? "" : ": ", msg.c_str());
}

inline int gpuTestExit() {
  if (failures() == 0) {
    std::printf("PASS\n");
    return 0;
  }
  std::printf("%d check(s) failed\n", failures());
  return 1;
}

// Exits 77 (skipped) when no CUDA device can be used.
inline void skipWithoutDevice() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    std::printf("SKIP: no CUDA device\n");
    std::exit(77);
  }
}

}  // namespace shardscope::gputest

#define GPU_SKIP_WITHOUT_DEVICE() ::shardscope::gputest::skipWithoutDevice()
#define GPU_CHECK(expr) ((expr) ? (void)0 : ::shardscope::gputest::fail(__FILE__, __LINE__, #expr, std::string()))
#define GPU_CHECK_MSG(expr, msg) ((expr) ? (void)0 : ::shardscope::gputest::fail(__FILE__, __LINE__, #expr, (msg)))
#define GPU_CHECK_CUDA(call)                                                                               \
  do {                                                                                                     \
    const cudaError_t e_ = (call);                                                                         \
    if (e_ != cudaSuccess) ::shardscope::gputest::fail(__FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
  } while (0)
