// The local machine's GPUs as a cluster (`shardscope.cluster/1`, one node),
// and what `shardscope-cli devices` and the desktop's "From this machine's
// GPUs" show of them: the nvidia-smi-style topology matrix, the JSON form. Everything here is a pure
// function of a device list (tests feed synthetic ones) except
// queryLocalCluster(), which asks the GPUs first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/cluster.h"
#include "shardscope/core/result.h"
#include "shardscope/profiler/engine/gpu_devices.h"

namespace shardscope::profiler {

[[nodiscard]] std::string_view linkKindName(GpuLinkKind kind);  // "self", "nvlink", "pcie", "unknown"
[[nodiscard]] std::string_view pciePathLabel(PciePath path);    // "PIX", "PXB", "PHB", "NODE", "SYS", "?"
// The pair's cell of `nvidia-smi topo -m`: "X", "NV18", "PIX" ... "SYS";
// "PCIe" when the path is unknown, "?" when the kind is.
[[nodiscard]] std::string topologyLabel(const GpuPeerLink& link);

// One direction of a PCIe link, GB/s: lanes x the generation's rate after
// encoding (Gen3 0.985, Gen4 1.969, Gen5 3.938, Gen6 7.563 GB/s per lane);
// 0 for a generation outside 1..6.
[[nodiscard]] double pcieGbps(int generation, int lanes);

// The devices as text: one row per GPU, then the topology matrix and its
// legend (and the note when link kinds are unknown). "no CUDA GPU visible"
// for an empty list.
[[nodiscard]] std::string formatLocalGpus(const LocalGpus& gpus);
// {"devices": [...], "topology": {"link_kinds_known", "note", "links": [every ordered pair]}}; docs/cli.md.
[[nodiscard]] nlohmann::ordered_json localGpusToJson(const LocalGpus& gpus);

// The machine as a cluster, and where its figures came from.
struct LocalCluster {
  core::ClusterSpec cluster;
  bool nvlink = false;             // intra-node bandwidth is NVLink (every pair NVLink-connected), else PCIe
  std::vector<std::string> notes;  // one line per figure that is not read off the GPUs as is
};

// One node of every visible GPU: GPUs per node = device count; the GPU kind
// from the name and memory (the presets' spec-sheet figures for A100 SXM
// 80GB, H100 SXM, H200 SXM, B200) else from the GPU itself (memory, HBM
// bandwidth from its clocks, dense BF16 peak estimated from SMs x clock);
// intra-node bandwidth per GPU, one direction: its NVLinks x the link rate
// when every pair is NVLink-connected, else its PCIe link. Latencies and the
// inter-node link are the presets' defaults (docs/formats/cluster.md). The
// name says the host, the count, the GPU and "NVLink", "PCIe" or (link kinds
// unknown) "PCIe assumed": "node7: 8 x H100 SXM 80GB, NVLink".
// Errors (kind Io): an empty list ("no GPU visible: ..."), GPUs of two
// models (naming both), a GPU that reports no memory clock.
[[nodiscard]] core::Result<LocalCluster> localCluster(const LocalGpus& gpus, const std::string& host_name);

// queryLocalGpus() and hostName() into localCluster(). Blocks for the
// device queries (up to seconds on a cold driver): call off the GUI thread.
[[nodiscard]] core::Result<LocalCluster> queryLocalCluster();

}  // namespace shardscope::profiler
