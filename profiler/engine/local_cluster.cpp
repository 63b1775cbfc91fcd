// The local machine's GPUs as text, JSON and a one-node cluster
// (local_cluster.h). Figures that the GPUs do not report come from the
// cluster presets (spec sheets) or from the tables below, and every such
// figure adds a note saying so.
#include "shardscope/profiler/engine/local_cluster.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <optional>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/summary.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/report/text_table.h"

namespace shardscope::profiler {

namespace {

using core::formatf;

// The presets' defaults for what one machine cannot measure of itself
// (docs/formats/cluster.md): intra- and inter-node latency, and one 400 Gb/s
// NIC per GPU across nodes (unused by a one-node cluster, but a cluster names it).
constexpr double kIntraLatencyUs = 3.0;
constexpr core::LinkSpec kInterNode{50.0, 5.0};  // one 400G NIC per GPU, as the presets

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool has(const std::string& haystack, std::string_view needle) { return haystack.find(needle) != std::string::npos; }

// The cluster preset whose GPU this is, judged by CUDA's name ("NVIDIA
// H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA H200", "NVIDIA B200").
// PCIe and NVL boards and Grace superchips differ from the SXM parts'
// figures and are left to the GPU's own.
std::optional<std::string_view> presetForName(const std::string& name) {
  const std::string n = upper(name);
  if (has(n, "GH200") || has(n, "GB200") || has(n, "PCIE") || has(n, "NVL")) return std::nullopt;
  if (has(n, "H100") && (has(n, "SXM") || has(n, "HBM3"))) return "h100x8";
  if (has(n, "H200")) return "h200x8";
  if (has(n, "A100") && has(n, "SXM") && has(n, "80GB")) return "a100x8";
  if (has(n, "B200")) return "b200x8";
  return std::nullopt;
}

// Dense BF16 (FP16 before sm_80) tensor FLOP per clock and SM, from the
// spec sheets' peaks divided by SMs x boost clock: V100/T4 1024, A100 2048,
// A10/L40S/consumer parts 1024, H100 4096, B200 8192.
int flopsPerClockPerSm(const GpuDevice& d) {
  switch (d.compute_major) {
    case 7:
      return 1024;
    case 8:
      return d.compute_minor == 0 ? 2048 : 1024;
    case 9:
      return 4096;
    case 10:
      return 8192;
    case 12:
      return 1024;
    default:
      return d.compute_major < 7 ? 256 : 1024;
  }
}

// NVLink GB/s per link and direction by generation, for when NVML does not
// report the link speed: NVLink 1 (sm_60) 20, NVLink 2-4 (sm_70..sm_90) 25, NVLink 5 (sm_100) 50.
double defaultNvLinkGbps(const GpuDevice& d) {
  if (d.compute_major >= 10) return 50.0;
  if (d.compute_major >= 7) return 25.0;
  return 20.0;
}

// The PCIe generation a GPU of this architecture has, for when NVML does not say.
int defaultPcieGeneration(const GpuDevice& d) {
  if (d.compute_major >= 9) return 5;
  if (d.compute_major == 8) return 4;
  return 3;
}

std::string gbps(double v) { return v >= 100.0 ? formatf("%.0f", v) : formatf("%.1f", v); }

std::string withoutVendor(const std::string& name) {
  constexpr std::string_view kVendor = "NVIDIA ";
  return name.starts_with(kVendor) && name.size() > kVendor.size() ? name.substr(kVendor.size()) : name;
}

struct KindAndNotes {
  core::GpuKind kind;
  std::vector<std::string> notes;
};

core::Result<KindAndNotes> gpuKindOf(const GpuDevice& d) {
  KindAndNotes out;
  if (auto preset_name = presetForName(d.name)) {
    auto preset = core::clusterPreset(*preset_name);
    const double memory = static_cast<double>(d.total_memory_bytes);
    // CUDA reports a little less than the nominal size (the driver keeps some); another size is another part.
    if (preset && memory >= 0.85 * static_cast<double>(preset->gpu.hbm_bytes) &&
        memory <= 1.02 * static_cast<double>(preset->gpu.hbm_bytes)) {
      out.kind = preset->gpu;
      out.notes.push_back("GPU: " + d.name + " is the presets' " + out.kind.name + ": spec-sheet HBM " +
                          core::formatBytes(out.kind.hbm_bytes) + ", " + gbps(out.kind.hbm_bandwidth_gbps) + " GB/s, " +
                          gbps(out.kind.peak_dense_tflops) + " TFLOP/s dense BF16");
      return out;
    }
  }
  if (d.peak_memory_bandwidth_gbps <= 0.0)
    return core::Error{"GPU " + std::to_string(d.index) + " (" + d.name +
                           ") reports no memory clock or bus width: its HBM bandwidth is unknown",
                       core::ErrorKind::Io};
  out.kind.name = withoutVendor(d.name);
  out.kind.hbm_bytes = d.total_memory_bytes;
  out.kind.hbm_bandwidth_gbps = d.peak_memory_bandwidth_gbps;
  out.notes.push_back(formatf("HBM bandwidth: 2 x %.0f MHz x %d bits / 8 = %s GB/s (peak from the memory clock)",
                              d.memory_clock_khz / 1000.0, d.memory_bus_width_bits,
                              gbps(d.peak_memory_bandwidth_gbps).c_str()));
  const int per_clock = flopsPerClockPerSm(d);
  double ghz = d.sm_clock_khz / 1.0e6;
  std::string clock_source = "peak clock";
  if (ghz <= 0.0) {
    ghz = 1.5;
    clock_source = "assumed clock: the GPU reports none";
  }
  out.kind.peak_dense_tflops = d.multiprocessors * ghz * per_clock / 1000.0;
  out.notes.push_back(formatf("peak dense BF16 estimated: %d SMs x %.2f GHz (%s) x %d FLOP/clock (%s) = %s TFLOP/s",
                              d.multiprocessors, ghz, clock_source.c_str(), per_clock, smName(d).c_str(),
                              gbps(out.kind.peak_dense_tflops).c_str()));
  if (out.kind.peak_dense_tflops <= 0.0)
    return core::Error{"GPU " + std::to_string(d.index) + " (" + d.name + ") reports no SMs", core::ErrorKind::Io};
  return out;
}

// The pairs that are not NVLink-connected, "0-3, 1-3" (each unordered pair once), and how many pairs there are.
std::pair<std::vector<std::string>, int> pairsWithoutNvLink(const LocalGpus& g) {
  std::vector<std::string> missing;
  int pairs = 0;
  const int n = g.topology.device_count;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      ++pairs;
      if (g.topology.link(a, b).kind != GpuLinkKind::NvLink || g.topology.link(b, a).kind != GpuLinkKind::NvLink)
        missing.push_back(std::to_string(a) + "-" + std::to_string(b));
    }
  return {missing, pairs};
}

// Per GPU, one direction: its NVLinks x the link rate; the slowest GPU counts.
double nvlinkBandwidth(const LocalGpus& g, std::vector<std::string>& notes) {
  double slowest = std::numeric_limits<double>::infinity();
  std::string how;
  for (const GpuDevice& d : g.devices) {
    int links = d.nvlinks;
    bool switched = false;
    double rate = d.nvlink_gbps_per_link;
    for (const GpuDevice& peer : g.devices) {
      if (peer.index == d.index) continue;
      const GpuPeerLink& l = g.topology.link(d.index, peer.index);
      switched = switched || l.through_nvswitch;
      if (rate <= 0.0) rate = l.nvlink_gbps_per_link;
    }
    if (links <= 0) {  // NVML counted pair links but not the GPU's: add them up (a switch's once)
      for (const GpuDevice& peer : g.devices)
        if (peer.index != d.index) {
          const GpuPeerLink& l = g.topology.link(d.index, peer.index);
          links = l.through_nvswitch ? std::max(links, l.nvlinks) : links + l.nvlinks;
        }
    }
    const bool rate_known = rate > 0.0;
    if (!rate_known) rate = defaultNvLinkGbps(d);
    const double bw = links * rate;
    if (bw < slowest) {
      slowest = bw;
      how = formatf("intra-node: NVLink%s between every pair, %d links x %s GB/s%s = %s GB/s per GPU and direction",
                    switched ? " through NVSwitch" : "", links, gbps(rate).c_str(),
                    rate_known ? "" : (" (NVLink rate of " + smName(d) + " assumed: NVML does not report it)").c_str(),
                    gbps(bw).c_str());
    }
  }
  notes.push_back(how);
  return slowest;
}

// Per GPU, one direction: its PCIe link; the slowest GPU counts.
double pcieBandwidth(const LocalGpus& g, const std::string& why, std::vector<std::string>& notes) {
  double slowest = std::numeric_limits<double>::infinity();
  std::string how;
  for (const GpuDevice& d : g.devices) {
    // NVML's link when it reports one this table knows, else the architecture's x16.
    const bool known = pcieGbps(d.pcie_generation, d.pcie_width) > 0.0;
    const int gen = known ? d.pcie_generation : defaultPcieGeneration(d);
    const int lanes = known ? d.pcie_width : 16;
    const double bw = pcieGbps(gen, lanes);
    if (bw < slowest) {
      slowest = bw;
      how = formatf("intra-node: PCIe Gen%d x%d%s = %s GB/s per GPU and direction (theoretical), %s", gen, lanes,
                    known ? "" : (" (assumed for " + smName(d) + ": NVML does not report the link)").c_str(),
                    gbps(bw).c_str(), why.c_str());
    }
  }
  notes.push_back(how);
  return slowest;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

std::string nvlinkText(const GpuDevice& d) {
  if (d.nvlinks <= 0) return "-";
  return d.nvlink_gbps_per_link > 0.0 ? formatf("%d x %s GB/s", d.nvlinks, gbps(d.nvlink_gbps_per_link).c_str())
                                      : std::to_string(d.nvlinks);
}

std::string pcieText(const GpuDevice& d) {
  return d.pcie_generation > 0 ? formatf("Gen%d x%d", d.pcie_generation, d.pcie_width) : "?";
}

std::string deviceTable(const LocalGpus& g) {
  using Align = report::TextTable::Align;
  report::TextTable t(
      {"GPU", "name", "arch", "SMs", "memory", "free", "HBM GB/s", "L2", "PCI", "NUMA", "NVLink", "PCIe"});
  t.align(0, Align::Right).align(1, Align::Left).align(2, Align::Left).leftFrom(8);
  for (const GpuDevice& d : g.devices)
    t.add({std::to_string(d.index), d.name, smName(d), std::to_string(d.multiprocessors),
           core::formatBytes(d.total_memory_bytes), core::formatBytes(d.free_memory_bytes),
           d.peak_memory_bandwidth_gbps > 0.0 ? gbps(d.peak_memory_bandwidth_gbps) : "?",
           core::formatBytes(d.l2_cache_bytes), d.pci_bus_id.empty() ? "?" : d.pci_bus_id,
           d.numa_node >= 0 ? std::to_string(d.numa_node) : "-", nvlinkText(d), pcieText(d)});
  return t.text("");
}

std::string topologyMatrix(const LocalGpus& g) {
  const int n = g.topology.device_count;
  std::vector<std::string> header{""};
  for (int b = 0; b < n; ++b) header.push_back("GPU" + std::to_string(b));
  report::TextTable t(std::move(header));
  t.leftFrom(0);
  std::vector<std::string> no_peer_access;
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> row{"GPU" + std::to_string(a)};
    for (int b = 0; b < n; ++b) {
      row.push_back(topologyLabel(g.topology.link(a, b)));
      if (a != b && !g.topology.link(a, b).p2p_access)
        no_peer_access.push_back(std::to_string(a) + "->" + std::to_string(b));
    }
    t.add(std::move(row));
  }
  std::string out = "topology:\n" + t.text("");
  out +=
      "  X = the GPU itself, NV<n> = n NVLinks (direct or through NVSwitch), PIX = one PCIe switch,\n"
      "  PXB = several PCIe switches, PHB = a PCIe host bridge, NODE = host bridges in one NUMA node,\n"
      "  SYS = across NUMA nodes (CPU interconnect)";
  out += g.topology.link_kinds_known ? "\n" : ", ? = link kind unknown: " + g.topology.note + "\n";
  if (n > 1)
    out += no_peer_access.empty() ? "CUDA peer access: every pair\n"
                                  : "CUDA peer access missing: " + joined(no_peer_access) + "\n";
  return out;
}

}  // namespace

void classifyNvLinks(GpuPeerLink& link, const GpuDevice& b, const std::vector<NvLinkEnd>& a_ends,
                     const std::vector<NvLinkEnd>& b_ends, bool nvlink_p2p) {
  int direct = 0;
  int a_switch = 0;
  for (const NvLinkEnd& e : a_ends) {
    if (e.nvswitch)
      ++a_switch;
    else if (e.pci_domain == b.pci_domain && e.pci_bus == b.pci_bus && e.pci_device == b.pci_device)
      ++direct;
  }
  const auto b_switch =
      static_cast<int>(std::count_if(b_ends.begin(), b_ends.end(), [](const NvLinkEnd& e) { return e.nvswitch; }));
  link.through_nvswitch = false;
  if (direct > 0) {
    link.kind = GpuLinkKind::NvLink;
    link.nvlinks = direct;
  } else if (a_switch > 0 && b_switch > 0 && nvlink_p2p) {
    link.kind = GpuLinkKind::NvLink;
    link.nvlinks = std::min(a_switch, b_switch);
    link.through_nvswitch = true;
  } else {
    link.kind = GpuLinkKind::Pcie;
    link.nvlinks = 0;
  }
}

std::string_view linkKindName(GpuLinkKind kind) {
  switch (kind) {
    case GpuLinkKind::Self:
      return "self";
    case GpuLinkKind::NvLink:
      return "nvlink";
    case GpuLinkKind::Pcie:
      return "pcie";
    case GpuLinkKind::Unknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view pciePathLabel(PciePath path) {
  switch (path) {
    case PciePath::SingleSwitch:
      return "PIX";
    case PciePath::MultipleSwitches:
      return "PXB";
    case PciePath::HostBridge:
      return "PHB";
    case PciePath::NumaNode:
      return "NODE";
    case PciePath::System:
      return "SYS";
    case PciePath::Unknown:
      return "?";
  }
  return "?";
}

std::string topologyLabel(const GpuPeerLink& link) {
  switch (link.kind) {
    case GpuLinkKind::Self:
      return "X";
    case GpuLinkKind::NvLink:
      return "NV" + std::to_string(link.nvlinks);
    case GpuLinkKind::Pcie:
      return link.pcie_path == PciePath::Unknown ? "PCIe" : std::string(pciePathLabel(link.pcie_path));
    case GpuLinkKind::Unknown:
      return "?";
  }
  return "?";
}

double pcieGbps(int generation, int lanes) {
  constexpr std::array<double, 6> kPerLane = {0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
  if (generation < 1 || generation > static_cast<int>(kPerLane.size()) || lanes <= 0) return 0.0;
  return kPerLane[static_cast<std::size_t>(generation - 1)] * lanes;
}

std::string formatLocalGpus(const LocalGpus& gpus) {
  if (gpus.devices.empty()) return "no CUDA GPU visible\n";
  return deviceTable(gpus) + "\n" + topologyMatrix(gpus);
}

nlohmann::ordered_json localGpusToJson(const LocalGpus& gpus) {
  nlohmann::ordered_json out;
  auto& devices = out["devices"] = nlohmann::ordered_json::array();
  for (const GpuDevice& d : gpus.devices) {
    nlohmann::ordered_json j;
    j["index"] = d.index;
    j["name"] = d.name;
    j["sm"] = smName(d);
    j["multiprocessors"] = d.multiprocessors;
    j["sm_clock_mhz"] = d.sm_clock_khz / 1000.0;
    j["memory_total_bytes"] = d.total_memory_bytes;
    j["memory_free_bytes"] = d.free_memory_bytes;
    j["memory_clock_mhz"] = d.memory_clock_khz / 1000.0;
    j["memory_bus_width_bits"] = d.memory_bus_width_bits;
    j["peak_memory_bandwidth_gbps"] = d.peak_memory_bandwidth_gbps;
    j["l2_cache_bytes"] = d.l2_cache_bytes;
    j["pci_bus_id"] = d.pci_bus_id;
    j["pci"] = {{"domain", d.pci_domain}, {"bus", d.pci_bus}, {"device", d.pci_device}};
    j["numa_node"] = d.numa_node >= 0 ? nlohmann::ordered_json(d.numa_node) : nlohmann::ordered_json(nullptr);
    j["nvlinks"] = d.nvlinks;
    j["nvlink_gbps_per_link"] = d.nvlink_gbps_per_link;
    j["pcie"] = {{"generation", d.pcie_generation}, {"width", d.pcie_width}};
    devices.push_back(std::move(j));
  }
  auto& topo = out["topology"];
  topo["link_kinds_known"] = gpus.topology.link_kinds_known;
  topo["note"] = gpus.topology.note;
  auto& links = topo["links"] = nlohmann::ordered_json::array();
  const int n = gpus.topology.device_count;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const GpuPeerLink& l = gpus.topology.link(a, b);
      links.push_back({{"from", a},
                       {"to", b},
                       {"kind", linkKindName(l.kind)},
                       {"label", topologyLabel(l)},
                       {"nvlinks", l.nvlinks},
                       {"through_nvswitch", l.through_nvswitch},
                       {"nvlink_gbps_per_link", l.nvlink_gbps_per_link},
                       {"pcie_path", pciePathLabel(l.pcie_path)},
                       {"p2p_access", l.p2p_access},
                       {"native_atomics", l.native_atomics},
                       {"performance_rank", l.performance_rank}});
    }
  return out;
}

core::Result<LocalCluster> localCluster(const LocalGpus& gpus, const std::string& host_name) {
  const std::vector<GpuDevice>& devices = gpus.devices;
  if (devices.empty())
    return core::Error{
        "no GPU visible: CUDA sees no device on this machine (check the driver with nvidia-smi, and "
        "CUDA_VISIBLE_DEVICES)",
        core::ErrorKind::Io};
  for (const GpuDevice& d : devices)
    if (d.name != devices.front().name)
      return core::Error{"GPU " + std::to_string(devices.front().index) + " is " + devices.front().name + " but GPU " +
                             std::to_string(d.index) + " is " + d.name +
                             ": a cluster has one GPU kind (choose GPUs of one model with CUDA_VISIBLE_DEVICES)",
                         core::ErrorKind::Io};
  if (gpus.topology.device_count != static_cast<int>(devices.size()) ||
      gpus.topology.links.size() != devices.size() * devices.size())
    return core::Error{"the GPU topology covers " + std::to_string(gpus.topology.device_count) + " GPUs, not " +
                           std::to_string(devices.size()),
                       core::ErrorKind::Internal};
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (devices[i].index != static_cast<int>(i))
      return core::Error{"GPU " + std::to_string(i) + " of the list has index " + std::to_string(devices[i].index),
                         core::ErrorKind::Internal};

  auto kind = gpuKindOf(devices.front());
  if (!kind) return kind.error();
  LocalCluster out;
  out.notes = std::move(kind->notes);
  core::ClusterSpec& c = out.cluster;
  c.nodes = 1;
  c.gpus_per_node = static_cast<std::uint32_t>(devices.size());
  c.gpu = kind->kind;
  c.intra_node.latency_us = kIntraLatencyUs;
  c.inter_node = kInterNode;

  const auto [no_nvlink, pairs] = pairsWithoutNvLink(gpus);
  out.nvlink = pairs > 0 && no_nvlink.empty();
  c.network.nics_per_node = c.gpus_per_node;
  if (out.nvlink) {
    c.intra_node.bandwidth_gbps = nvlinkBandwidth(gpus, out.notes);
    // NVLS: NVSwitch reduction, from Hopper on (NCCL's rule).
    const bool switched = std::any_of(gpus.topology.links.begin(), gpus.topology.links.end(),
                                      [](const auto& l) { return l.through_nvswitch; });
    c.network.nvls = switched && devices.front().compute_major >= 9;
  } else {
    std::string why;
    if (pairs == 0)
      why = "one GPU: no GPU-to-GPU link, its host link stands in";
    else if (!gpus.topology.link_kinds_known)
      why = "link kinds unknown (" + gpus.topology.note + ")";
    else
      why = std::to_string(no_nvlink.size()) + " of " + std::to_string(pairs) + " GPU pairs have no NVLink (" +
            no_nvlink.front() + (no_nvlink.size() > 1 ? ", ..." : "") + ")";
    c.intra_node.bandwidth_gbps = pcieBandwidth(gpus, why, out.notes);
  }
  out.notes.push_back(
      formatf("latencies (intra-node %.0f us, inter-node %.0f us) and the inter-node link (one %.0f GB/s "
              "NIC per GPU) are the presets' defaults, not measured",
              kIntraLatencyUs, kInterNode.latency_us, kInterNode.bandwidth_gbps));
  c.name = (host_name.empty() ? std::string("localhost") : host_name) + ": " + std::to_string(devices.size()) + " x " +
           c.gpu.name +
           (out.nvlink                                     ? ", NVLink"
            : pairs > 0 && !gpus.topology.link_kinds_known ? ", PCIe assumed"
                                                           : ", PCIe");

  // What the cluster reader would say of it: a cluster that does not load again is not handed out.
  if (auto checked = core::clusterFromJson(core::toJson(c), "<local GPUs>"); !checked)
    return core::Error{checked.error().message, core::ErrorKind::Internal};
  return out;
}

core::Result<LocalCluster> queryLocalCluster() {
  auto gpus = queryLocalGpus();
  if (!gpus) return gpus.error();
  return localCluster(*gpus, hostName());
}

}  // namespace shardscope::profiler
