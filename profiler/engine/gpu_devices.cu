// CUDA implementation of gpu_devices.h: device facts from the CUDA runtime,
// peer attributes from cudaDeviceGetP2PAttribute, and NVLinks, PCIe links
// and paths from NVML. NVML (libnvidia-ml.so.1, part of the driver) is opened
// with dlopen at run time: no link dependency and no nvml.h at build time, so
// its few entry points and structs are declared below as its C ABI has them.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <memory>
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

// An attribute of `device`, `fallback` when the runtime does not answer
// (the error is cleared so that later calls start clean).
int attribute(cudaDeviceAttr attr, int device, int fallback = 0) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) {
    cudaGetLastError();
    return fallback;
  }
  return v;
}

int peerAttribute(cudaDeviceP2PAttr attr, int a, int b) {
  int v = 0;
  if (cudaDeviceGetP2PAttribute(&v, attr, a, b) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

// NVML's C ABI (nvml.h of CUDA 12.x; these parts are unchanged since NVML 11).
namespace nvml {
using Return = int;  // nvmlReturn_t
struct DeviceOpaque;
using Device = DeviceOpaque*;  // nvmlDevice_t
constexpr Return kSuccess = 0;
constexpr unsigned kMaxLinks = 18;                // NVML_NVLINK_MAX_LINKS
constexpr int kEnabled = 1;                       // NVML_FEATURE_ENABLED
constexpr int kRemoteSwitch = 2;                  // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr int kP2pCapsNvLink = 2;                 // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2pStatusOk = 0;                   // NVML_P2P_STATUS_OK
constexpr unsigned kFieldNvLinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: MB/s of every active link

struct PciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};

union Value {  // nvmlValue_t
  double d;
  int si;
  unsigned ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  unsigned short us;
};

struct FieldValue {  // nvmlFieldValue_t
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;  // nvmlValueType_t
  Return nvml_return;
  Value value;
};

double number(const FieldValue& f) {
  switch (f.value_type) {
    case 0:
      return f.value.d;
    case 1:
      return f.value.ui;
    case 2:
      return static_cast<double>(f.value.ul);
    case 3:
      return static_cast<double>(f.value.ull);
    case 4:
      return static_cast<double>(f.value.sll);
    case 5:
      return f.value.si;
    case 6:
      return f.value.us;
    default:
      return 0.0;
  }
}

PciePath pathOf(int level) {  // nvmlGpuTopologyLevel_t
  switch (level) {
    case 0:   // INTERNAL: two GPUs of one board
    case 10:  // SINGLE
      return PciePath::SingleSwitch;
    case 20:
      return PciePath::MultipleSwitches;
    case 30:
      return PciePath::HostBridge;
    case 40:
      return PciePath::NumaNode;
    case 50:
      return PciePath::System;
    default:
      return PciePath::Unknown;
  }
}
}  // namespace nvml

// The loaded library, initialised; shut down and closed when it goes.
class Nvml {
 public:
  // nullptr, and `why` says it, when the library, an entry point or nvmlInit fails.
  static std::unique_ptr<Nvml> open(std::string& why) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      why = "NVML (libnvidia-ml.so.1) is not loadable" + (e != nullptr ? ": " + std::string(e) : std::string());
      return nullptr;
    }
    std::unique_ptr<Nvml> n(new Nvml(lib));
    // Required: what names the link kinds. Optional (older drivers): the rest.
    const bool required = n->bind("nvmlInit_v2", n->init) && n->bind("nvmlShutdown", n->shutdown) &&
                          n->bind("nvmlDeviceGetHandleByPciBusId_v2", n->handleByPciBusId) &&
                          n->bind("nvmlDeviceGetNvLinkState", n->nvLinkState) &&
                          n->bind("nvmlDeviceGetNvLinkRemotePciInfo_v2", n->nvLinkRemotePciInfo) &&
                          n->bind("nvmlDeviceGetTopologyCommonAncestor", n->commonAncestor);
    if (!required) {
      why = "NVML (libnvidia-ml.so.1) lacks the NVLink and topology queries: the driver is too old";
      return nullptr;
    }
    n->bind("nvmlDeviceGetNvLinkRemoteDeviceType", n->nvLinkRemoteDeviceType);
    n->bind("nvmlDeviceGetP2PStatus", n->p2pStatus);
    n->bind("nvmlDeviceGetFieldValues", n->fieldValues);
    n->bind("nvmlDeviceGetMaxPcieLinkGeneration", n->maxPcieGeneration);
    n->bind("nvmlDeviceGetMaxPcieLinkWidth", n->maxPcieWidth);
    n->bind("nvmlErrorString", n->errorString);
    if (const nvml::Return r = n->init(); r != nvml::kSuccess) {
      why = "NVML did not start: " + n->message(r);
      return nullptr;
    }
    n->started_ = true;
    return n;
  }

  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  ~Nvml() {
    if (started_) shutdown();
    dlclose(lib_);
  }

  [[nodiscard]] std::string message(nvml::Return r) const {
    const char* s = errorString != nullptr ? errorString(r) : nullptr;
    return s != nullptr ? std::string(s) : "error " + std::to_string(r);
  }

  nvml::Return (*init)() = nullptr;
  nvml::Return (*shutdown)() = nullptr;
  nvml::Return (*handleByPciBusId)(const char*, nvml::Device*) = nullptr;
  nvml::Return (*nvLinkState)(nvml::Device, unsigned, int*) = nullptr;
  nvml::Return (*nvLinkRemotePciInfo)(nvml::Device, unsigned, nvml::PciInfo*) = nullptr;
  nvml::Return (*commonAncestor)(nvml::Device, nvml::Device, int*) = nullptr;
  nvml::Return (*nvLinkRemoteDeviceType)(nvml::Device, unsigned, int*) = nullptr;
  nvml::Return (*p2pStatus)(nvml::Device, nvml::Device, int, int*) = nullptr;
  nvml::Return (*fieldValues)(nvml::Device, int, nvml::FieldValue*) = nullptr;
  nvml::Return (*maxPcieGeneration)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*maxPcieWidth)(nvml::Device, unsigned*) = nullptr;
  const char* (*errorString)(nvml::Return) = nullptr;

 private:
  explicit Nvml(void* lib) : lib_(lib) {}

  template <class F>
  bool bind(const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(lib_, name));
    return f != nullptr;
  }

  void* lib_;
  bool started_ = false;  // nvmlInit succeeded: shut down when done
};

// NVML's view of one GPU: its handle and where its active NVLinks go.
struct NvmlGpu {
  nvml::Device handle = nullptr;
  std::vector<NvLinkEnd> ends;
};

// Fills the NVML-only fields of `d` (NVLinks, their rate, the PCIe link).
NvmlGpu readNvmlGpu(const Nvml& n, GpuDevice& d) {
  NvmlGpu g;
  if (d.pci_bus_id.empty() || n.handleByPciBusId(d.pci_bus_id.c_str(), &g.handle) != nvml::kSuccess) {
    g.handle = nullptr;
    return g;
  }
  for (unsigned link = 0; link < nvml::kMaxLinks; ++link) {
    int state = 0;
    if (n.nvLinkState(g.handle, link, &state) != nvml::kSuccess || state != nvml::kEnabled) continue;
    NvLinkEnd end;
    int type = -1;
    if (n.nvLinkRemoteDeviceType != nullptr && n.nvLinkRemoteDeviceType(g.handle, link, &type) == nvml::kSuccess &&
        type == nvml::kRemoteSwitch) {
      end.nvswitch = true;
    } else {
      nvml::PciInfo pci{};
      if (n.nvLinkRemotePciInfo(g.handle, link, &pci) != nvml::kSuccess) continue;
      end.pci_domain = static_cast<int>(pci.domain);
      end.pci_bus = static_cast<int>(pci.bus);
      end.pci_device = static_cast<int>(pci.device);
    }
    g.ends.push_back(end);
  }
  d.nvlinks = static_cast<int>(g.ends.size());
  if (!g.ends.empty() && n.fieldValues != nullptr) {
    nvml::FieldValue f{};
    f.field_id = nvml::kFieldNvLinkSpeedCommon;
    if (n.fieldValues(g.handle, 1, &f) == nvml::kSuccess && f.nvml_return == nvml::kSuccess)
      d.nvlink_gbps_per_link = nvml::number(f) / 1000.0;  // MB/s -> GB/s
  }
  unsigned gen = 0;
  unsigned width = 0;
  if (n.maxPcieGeneration != nullptr && n.maxPcieWidth != nullptr &&
      n.maxPcieGeneration(g.handle, &gen) == nvml::kSuccess && n.maxPcieWidth(g.handle, &width) == nvml::kSuccess) {
    d.pcie_generation = static_cast<int>(gen);
    d.pcie_width = static_cast<int>(width);
  }
  return g;
}

// The NVML half of a pair's link: kind, NVLinks and the PCIe path.
void readNvmlLink(const Nvml& n, const std::vector<GpuDevice>& devices, const std::vector<NvmlGpu>& g, int a, int b,
                  GpuPeerLink& l) {
  const auto ia = static_cast<std::size_t>(a);
  const auto ib = static_cast<std::size_t>(b);
  int level = -1;
  if (n.commonAncestor(g[ia].handle, g[ib].handle, &level) == nvml::kSuccess) l.pcie_path = nvml::pathOf(level);
  int status = -1;
  const bool nvlink_p2p = n.p2pStatus != nullptr &&
                          n.p2pStatus(g[ia].handle, g[ib].handle, nvml::kP2pCapsNvLink, &status) == nvml::kSuccess &&
                          status == nvml::kP2pStatusOk;
  classifyNvLinks(l, devices[ib], g[ia].ends, g[ib].ends, nvlink_p2p);
  if (l.kind == GpuLinkKind::NvLink) {
    const double ra = devices[ia].nvlink_gbps_per_link;
    const double rb = devices[ib].nvlink_gbps_per_link;
    l.nvlink_gbps_per_link = ra > 0.0 && rb > 0.0 ? std::min(ra, rb) : std::max(ra, rb);
  }
}

GpuTopology queryTopology(std::vector<GpuDevice>& devices) {
  GpuTopology t;
  t.device_count = static_cast<int>(devices.size());
  t.links.resize(devices.size() * devices.size());
  std::string why;
  if (devices.empty()) {  // nothing to link: NVML need not be there
    t.link_kinds_known = true;
    return t;
  }
  const std::unique_ptr<Nvml> n = Nvml::open(why);
  std::vector<NvmlGpu> g(devices.size());
  if (n != nullptr)
    for (std::size_t i = 0; i < devices.size(); ++i) {
      g[i] = readNvmlGpu(*n, devices[i]);
      if (g[i].handle == nullptr && why.empty())
        why = "NVML does not know GPU " + std::to_string(i) + " (PCI " + devices[i].pci_bus_id + ")";
    }
  t.link_kinds_known = n != nullptr && why.empty();
  t.note = why;
  for (int a = 0; a < t.device_count; ++a)
    for (int b = 0; b < t.device_count; ++b) {
      GpuPeerLink& l = t.links[static_cast<std::size_t>(a * t.device_count + b)];
      if (a == b) {
        l.kind = GpuLinkKind::Self;
        continue;
      }
      l.p2p_access = peerAttribute(cudaDevP2PAttrAccessSupported, a, b) != 0;
      l.native_atomics = peerAttribute(cudaDevP2PAttrNativeAtomicSupported, a, b) != 0;
      l.performance_rank = peerAttribute(cudaDevP2PAttrPerformanceRank, a, b);
      if (n != nullptr && g[static_cast<std::size_t>(a)].handle != nullptr &&
          g[static_cast<std::size_t>(b)].handle != nullptr)
        readNvmlLink(*n, devices, g, a, b, l);
    }
  return t;
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
    d.l2_cache_bytes = static_cast<std::uint64_t>(std::max(p.l2CacheSize, 0));
    d.pci_domain = p.pciDomainID;
    d.pci_bus = p.pciBusID;
    d.pci_device = p.pciDeviceID;
    // CUDA 13 dropped clockRate and memoryClockRate from cudaDeviceProp; the attributes remain.
    d.sm_clock_khz = attribute(cudaDevAttrClockRate, i);
    d.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, i);
    d.peak_memory_bandwidth_gbps = 2.0 * d.memory_clock_khz * 1.0e3 * d.memory_bus_width_bits / 8.0 / 1.0e9;
    d.numa_node = attribute(cudaDevAttrHostNumaId, i, -1);
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.pci_bus_id = bus;
    size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
      d.free_memory_bytes = free_b;
    out.push_back(std::move(d));
  }
  return out;
}

core::Result<LocalGpus> queryLocalGpus() {
  auto devices = queryGpuDevices();
  if (!devices) return devices.error();
  LocalGpus out;
  out.devices = std::move(*devices);
  out.topology = queryTopology(out.devices);
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
