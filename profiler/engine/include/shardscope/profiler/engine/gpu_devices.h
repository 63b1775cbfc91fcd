// The GPUs this process can see, as the CUDA runtime reports them, and how
// they are joined (NVLink or PCIe, from NVML when the driver's library is
// there). Used by the CLI (`shardscope-cli devices`), the engine, GPU checks
// and local_cluster.h (the machine as a cluster). Built without CUDA, it
// reports that instead of failing to link. gpu_devices.cu includes it under
// nvcc's C++17: keep it C++17.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

struct GpuDevice {
  int index = 0;  // CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::uint64_t total_memory_bytes = 0;
  std::uint64_t free_memory_bytes = 0;
  int multiprocessors = 0;
  int memory_bus_width_bits = 0;
  std::string pci_bus_id;    // "0000:18:00.0"
  int sm_clock_khz = 0;      // peak SM clock; 0 when not reported
  int memory_clock_khz = 0;  // peak memory clock; 0 when not reported
  // 2 (double data rate) x memory clock x bus width / 8, in GB/s (1e9 bytes/s); 0 when not reported.
  double peak_memory_bandwidth_gbps = 0.0;
  std::uint64_t l2_cache_bytes = 0;
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;
  int numa_node = -1;  // host NUMA node nearest the GPU; -1 when unknown or not NUMA
  // From NVML; 0 when NVML is not loadable, does not say, or the GPU has none.
  int nvlinks = 0;                    // active NVLinks of this GPU (to peers or NVSwitches)
  double nvlink_gbps_per_link = 0.0;  // GB/s per link, one direction
  int pcie_generation = 0;            // highest PCIe generation the GPU and its slot both support
  int pcie_width = 0;                 // lanes of that link
};

// "sm_90": the compute capability as nvcc names the architecture.
[[nodiscard]] inline std::string smName(const GpuDevice& device) {
  return "sm_" + std::to_string(device.compute_major) + std::to_string(device.compute_minor);
}

enum class GpuLinkKind {
  Self,     // a device and itself (the matrix's diagonal)
  NvLink,   // direct NVLinks or NVLink through NVSwitch
  Pcie,     // no NVLink between the two: PCIe (and the CPU interconnect where the path says so)
  Unknown,  // NVML is not there to say
};

// The PCIe path between two GPUs, as NVML's common ancestor and nvidia-smi
// `topo -m` name it.
enum class PciePath {
  Unknown,
  SingleSwitch,      // PIX: one PCIe switch (or one board)
  MultipleSwitches,  // PXB: several PCIe switches, no host bridge
  HostBridge,        // PHB: a PCIe host bridge (the CPU's root complex)
  NumaNode,          // NODE: several host bridges inside one NUMA node
  System,            // SYS: across NUMA nodes (the CPU interconnect)
};

// How one GPU reaches another (a -> b; CUDA's answers may differ by direction).
struct GpuPeerLink {
  GpuLinkKind kind = GpuLinkKind::Unknown;
  // CUDA (cudaDeviceGetP2PAttribute): a can map b's memory, native atomics
  // over the link, and CUDA's relative performance rank of the link (lower is faster).
  bool p2p_access = false;
  bool native_atomics = false;
  int performance_rank = 0;
  // NVLink only: links between the two (direct links; through NVSwitch, the
  // fewer of the two GPUs' switch links), and the rate of one link.
  int nvlinks = 0;
  bool through_nvswitch = false;
  double nvlink_gbps_per_link = 0.0;       // GB/s per link, one direction; 0 when NVML does not say
  PciePath pcie_path = PciePath::Unknown;  // known for NVLink pairs too
};

struct GpuTopology {
  int device_count = 0;
  std::vector<GpuPeerLink> links;  // device_count x device_count, row a = from device a
  bool link_kinds_known = false;   // NVML answered; else every pair's kind is Unknown
  std::string note;                // why link kinds are unknown; empty when known

  // The link from a to b; both must be in [0, device_count).
  [[nodiscard]] const GpuPeerLink& link(int a, int b) const {
    return links[static_cast<std::size_t>(a) * static_cast<std::size_t>(device_count) + static_cast<std::size_t>(b)];
  }
};

// The visible GPUs with what NVML adds, and the links between every pair.
struct LocalGpus {
  std::vector<GpuDevice> devices;
  GpuTopology topology;
};

// The far end of one active NVLink of a GPU, as NVML reports it.
struct NvLinkEnd {
  bool nvswitch = false;  // the link goes to an NVSwitch; else to the GPU at the PCI address below
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;
};

// Sets link.kind, nvlinks and through_nvswitch for the pair a -> b from the
// ends of a's and b's active NVLinks: links from a that end at b's PCI
// address make a direct NVLink pair; else, when both have NVSwitch links and
// NVML reports NVLink peer-to-peer between them (`nvlink_p2p`), NVLink
// through NVSwitch with the fewer of the two GPUs' switch links; else PCIe.
// Pure (local_cluster.cpp, in every build), so tests feed it synthetic ends.
void classifyNvLinks(GpuPeerLink& link, const GpuDevice& b, const std::vector<NvLinkEnd>& a_ends,
                     const std::vector<NvLinkEnd>& b_ends, bool nvlink_p2p);

// True when this build has the CUDA backend compiled in.
[[nodiscard]] bool builtWithCuda();

// The visible GPUs (CUDA's facts only: cheap); an empty list when CUDA is
// compiled in but no GPU or driver is present; an Error when the runtime
// fails for another reason or the build has no CUDA.
[[nodiscard]] core::Result<std::vector<GpuDevice>> queryGpuDevices();

// queryGpuDevices(), then NVML (libnvidia-ml.so.1, opened at run time) for
// NVLinks, PCIe links and paths, and CUDA's peer attributes for every pair.
// Without NVML the link kinds are Unknown and topology.note says why: not an
// error. Errors as queryGpuDevices().
[[nodiscard]] core::Result<LocalGpus> queryLocalGpus();

// Runs a small kernel on `device` that writes and reads back `n` floats; the
// first sign that a GPU really executes our code. Error without CUDA.
[[nodiscard]] core::Status runDeviceSelfTest(int device, std::uint32_t n);

}  // namespace shardscope::profiler
