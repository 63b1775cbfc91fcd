// Benchmark of the CUDA embedding kernels on one table: the pooled forward
// and backward + fused row-wise AdaGrad, each timed with CUDA events (warm-up
// runs, then the median of --iters), against this device's own device-to-
// device cudaMemcpy bandwidth measured in the same run. Defaults: 10M rows of
// dim 128 fp32 (5 GB: far beyond L2), 65536 bags of 20 ids, zipf alpha 1.05.
//
//   bench_cuda_kernels [--rows N] [--dim D] [--dtype f32|f16|bf16] [--bags B]
//                      [--pooling P] [--alpha A] [--iters N] [--warmup N]
//                      [--seed S] [--json PATH] [--dump-inputs PATH]
//
// Bytes counted: forward = rows read (lookups x dim x element bytes) + output
// written (bags x dim x 4); memcpy = bytes read + bytes written. Hot rows hit
// L2, so the forward's effective rate can exceed DRAM's. --dump-inputs
// writes the ids, offsets and gradient for scripts/bench_torch_embedding.py
// (its header documents the format). Not a test: no pass/fail on timings.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernel_inputs.h"
#include "shardscope/profiler/cuda/embedding_cuda.h"

using namespace shardscope;
using namespace shardscope::profiler;
using namespace shardscope::profiler::cuda;

namespace {

struct Options {
  std::uint64_t rows = 10'000'000;
  std::uint32_t dim = 128;
  DeviceWeightType dtype = DeviceWeightType::F32;
  std::uint32_t bags = 65536;
  std::uint32_t pooling = 20;
  double alpha = 1.05;
  int iters = 20;
  int warmup = 5;
  std::uint64_t seed = 1;
  std::string json;
  std::string dump_inputs;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    const std::string v = has_value ? argv[i + 1] : "";
    if (!has_value) {
      std::fprintf(stderr, "%s needs a value\n", a.c_str());
      return false;
    }
    ++i;
    if (a == "--rows") {
      o.rows = std::stoull(v);
    } else if (a == "--dim") {
      o.dim = static_cast<std::uint32_t>(std::stoul(v));
    } else if (a == "--dtype") {
      if (v != "f32" && v != "f16" && v != "bf16") return false;
      o.dtype = v == "f32" ? DeviceWeightType::F32 : (v == "f16" ? DeviceWeightType::F16 : DeviceWeightType::BF16);
    } else if (a == "--bags") {
      o.bags = static_cast<std::uint32_t>(std::stoul(v));
    } else if (a == "--pooling") {
      o.pooling = static_cast<std::uint32_t>(std::stoul(v));
    } else if (a == "--alpha") {
      o.alpha = std::stod(v);
    } else if (a == "--iters") {
      o.iters = std::max(1, std::stoi(v));
    } else if (a == "--warmup") {
      o.warmup = std::max(0, std::stoi(v));
    } else if (a == "--seed") {
      o.seed = std::stoull(v);
    } else if (a == "--json") {
      o.json = v;
    } else if (a == "--dump-inputs") {
      o.dump_inputs = v;
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return false;
    }
  }
  return o.rows > 0 && o.rows <= 0xffffffffULL && dimSupported(o.dim) && o.bags > 0;
}

bool cudaOk(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
  return false;
}

template <class T>
bool deviceAlloc(T*& p, std::size_t n) {
  void* raw = nullptr;
  if (!cudaOk(cudaMalloc(&raw, std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc")) return false;
  p = static_cast<T*>(raw);
  return true;
}

template <class R>
bool ok(const R& r) {
  if (r.ok()) return true;
  std::fprintf(stderr, "%s\n", r.error().message.c_str());
  return false;
}

// Median milliseconds of `iters` runs of `op` after `warmup` runs, each between two events.
double medianMs(const Options& o, cudaStream_t stream, const std::function<bool()>& op) {
  cudaEvent_t start = nullptr, stop = nullptr;
  if (!cudaOk(cudaEventCreate(&start), "cudaEventCreate") || !cudaOk(cudaEventCreate(&stop), "cudaEventCreate"))
    return -1;
  std::vector<double> ms;
  for (int i = 0; i < o.warmup + o.iters; ++i) {
    cudaEventRecord(start, stream);
    if (!op()) return -1;
    cudaEventRecord(stop, stream);
    if (!cudaOk(cudaEventSynchronize(stop), "cudaEventSynchronize")) return -1;
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    if (i >= o.warmup) ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The inputs for torch: "SSKB" u32 version 1, u32 dtype (0 f32, 1 f16, 2
// bf16), u32 dim, u32 bags, u64 rows, u64 ids, f32 learning rate, f32 eps,
// then bags + 1 u32 offsets, ids u32 ids, bags x dim f32 gradient.
bool dumpInputs(const Options& o, const gputest::HostBags& b, const std::vector<float>& grad,
                const AdagradConfig& config) {
  std::ofstream f(o.dump_inputs, std::ios::binary);
  const auto put = [&f](const void* p, std::size_t n) { f.write(static_cast<const char*>(p), static_cast<long>(n)); };
  const std::uint32_t head[] = {0x424b5353u, 1, static_cast<std::uint32_t>(o.dtype), o.dim, o.bags};
  const std::uint64_t sizes[] = {o.rows, b.ids.size()};
  const float adagrad[] = {config.learning_rate, config.eps};
  put(head, sizeof head);
  put(sizes, sizeof sizes);
  put(adagrad, sizeof adagrad);
  put(b.offsets.data(), b.offsets.size() * 4);
  put(b.ids.data(), b.ids.size() * 4);
  put(grad.data(), grad.size() * 4);
  return static_cast<bool>(f);
}

struct Figures {
  std::string device;
  double memcpy_ms = 0, memcpy_gbps = 0;
  double forward_ms = 0, forward_gbps = 0;
  double backward_ms = 0, backward_gbps = 0;
  std::uint64_t lookups = 0, unique_rows = 0;
};

bool writeJson(const Options& o, const Figures& f) {
  std::FILE* out = std::fopen(o.json.c_str(), "w");
  if (out == nullptr) return false;
  std::fprintf(out,
               "{\n  \"device\": \"%s\",\n  \"rows\": %llu,\n  \"dim\": %u,\n  \"dtype\": \"%s\",\n"
               "  \"bags\": %u,\n  \"pooling\": %u,\n  \"zipf_alpha\": %.4f,\n  \"lookups\": %llu,\n"
               "  \"iterations\": %d,\n  \"memcpy_d2d_ms\": %.4f,\n  \"memcpy_d2d_gbps\": %.2f,\n"
               "  \"forward_ms\": %.4f,\n  \"forward_gbps\": %.2f,\n  \"forward_vs_memcpy\": %.4f,\n"
               "  \"backward_adagrad_ms\": %.4f,\n  \"backward_unique_rows\": %llu,\n"
               "  \"backward_gbps\": %.2f,\n  \"backward_vs_memcpy\": %.4f,\n"
               "  \"bytes_counted\": \"forward: rows read + output written; backward: gradient rows read + unique rows "
               "read and written + momentum read and written; memcpy: read + written\"\n}\n",
               f.device.c_str(), static_cast<unsigned long long>(o.rows), o.dim, weightTypeName(o.dtype), o.bags,
               o.pooling, o.alpha, static_cast<unsigned long long>(f.lookups), o.iters, f.memcpy_ms, f.memcpy_gbps,
               f.forward_ms, f.forward_gbps, f.forward_gbps / f.memcpy_gbps, f.backward_ms,
               static_cast<unsigned long long>(f.unique_rows), f.backward_gbps, f.backward_gbps / f.memcpy_gbps);
  return std::fclose(out) == 0;
}

// Device-to-device copy of 1 GiB (or 2 x the table's bytes when smaller).
bool measureMemcpy(const Options& o, cudaStream_t stream, std::size_t table_bytes, Figures& f) {
  const std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 30, std::max<std::size_t>(table_bytes, 1 << 26));
  void* a = nullptr;
  void* b = nullptr;
  if (!cudaOk(cudaMalloc(&a, bytes), "cudaMalloc (memcpy source)") ||
      !cudaOk(cudaMalloc(&b, bytes), "cudaMalloc (memcpy destination)"))
    return false;
  cudaMemset(a, 1, bytes);
  f.memcpy_ms = medianMs(o, stream, [&] {
    return cudaOk(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  });
  cudaFree(a);
  cudaFree(b);
  f.memcpy_gbps = 2.0 * static_cast<double>(bytes) / (f.memcpy_ms * 1e6);
  return f.memcpy_ms > 0;
}

int run(const Options& o) {
  // The inputs first (no GPU needed): --dump-inputs works anywhere.
  Figures fig;
  std::mt19937_64 rng(o.seed);
  gputest::HostBags host;
  gputest::appendBags(host, o.bags, o.rows, o.alpha, o.pooling, o.pooling, 0.0, rng);
  fig.lookups = host.ids.size();
  std::vector<float> grad(std::size_t{o.bags} * o.dim);
  for (float& g : grad) g = static_cast<float>(gputest::uniform01(rng) * 2.0 - 1.0);
  const AdagradConfig config{0.01f, 1e-8f};
  if (!o.dump_inputs.empty() && !dumpInputs(o, host, grad, config)) {
    std::fprintf(stderr, "cannot write %s\n", o.dump_inputs.c_str());
    return 1;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  fig.device = prop.name;
  cudaStream_t stream = nullptr;
  if (!cudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) return 1;

  const DeviceShardSpec spec[] = {{o.rows, o.dim, o.dtype}};
  auto tables = DeviceTables::create(spec);
  if (!ok(tables) || !ok(tables->initialize(0, o.seed, 0, 0, stream))) return 1;
  std::uint32_t *offsets = nullptr, *ids = nullptr;
  float *out = nullptr, *dgrad = nullptr;
  if (!deviceAlloc(offsets, host.offsets.size()) || !deviceAlloc(ids, host.ids.size()) ||
      !deviceAlloc(out, grad.size()) || !deviceAlloc(dgrad, grad.size()))
    return 1;
  cudaMemcpy(offsets, host.offsets.data(), host.offsets.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(ids, host.ids.data(), host.ids.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dgrad, grad.data(), grad.size() * 4, cudaMemcpyHostToDevice);
  if (!cudaOk(cudaStreamSynchronize(stream), "initialize")) return 1;

  if (!measureMemcpy(o, stream, tables->memoryBytes(), fig)) return 1;
  const BatchLayout layout{{0, o.bags}, {0}, {o.dim}};
  const DeviceBags bags{offsets, ids, o.bags, static_cast<std::uint32_t>(host.ids.size())};
  KernelWorkspace ws;
  fig.forward_ms =
      medianMs(o, stream, [&] { return ok(forward(*tables, layout, bags, Pooling::Sum, out, ws, stream)); });
  BackwardCounts counts;
  fig.backward_ms = medianMs(o, stream, [&] {
    return ok(backwardAdagrad(*tables, layout, bags, Pooling::Sum, dgrad, config, ws, stream, &counts));
  });
  if (fig.forward_ms <= 0 || fig.backward_ms <= 0) return 1;
  fig.unique_rows = counts.unique_rows;
  const double row_bytes = static_cast<double>(o.dim) * static_cast<double>(elementBytes(o.dtype));
  const double out_bytes = static_cast<double>(o.bags) * o.dim * 4.0;
  fig.forward_gbps = (static_cast<double>(fig.lookups) * row_bytes + out_bytes) / (fig.forward_ms * 1e6);
  const double backward_bytes =
      static_cast<double>(fig.lookups) * o.dim * 4.0 + static_cast<double>(fig.unique_rows) * (2.0 * row_bytes + 8.0);
  fig.backward_gbps = backward_bytes / (fig.backward_ms * 1e6);

  std::printf("%s: %llu rows x %u %s, %u bags x %u ids, zipf %.2f (%llu distinct rows)\n", fig.device.c_str(),
              static_cast<unsigned long long>(o.rows), o.dim, weightTypeName(o.dtype), o.bags, o.pooling, o.alpha,
              static_cast<unsigned long long>(fig.unique_rows));
  std::printf("memcpy d2d   %8.3f ms  %8.1f GB/s\n", fig.memcpy_ms, fig.memcpy_gbps);
  std::printf("forward      %8.3f ms  %8.1f GB/s  (%.2f of memcpy)\n", fig.forward_ms, fig.forward_gbps,
              fig.forward_gbps / fig.memcpy_gbps);
  std::printf("backward+ada %8.3f ms  %8.1f GB/s  (%.2f of memcpy)\n", fig.backward_ms, fig.backward_gbps,
              fig.backward_gbps / fig.memcpy_gbps);
  cudaFree(offsets);
  cudaFree(ids);
  cudaFree(out);
  cudaFree(dgrad);
  cudaStreamDestroy(stream);
  if (!o.json.empty() && !writeJson(o, fig)) {
    std::fprintf(stderr, "cannot write %s\n", o.json.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: bench_cuda_kernels [--rows N] [--dim D] [--dtype f32|f16|bf16] [--bags B] [--pooling P]\n"
                 "       [--alpha A] [--iters N] [--warmup N] [--seed S] [--json PATH] [--dump-inputs PATH]\n");
    return 2;
  }
  return run(o);
}
