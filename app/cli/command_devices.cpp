// shardscope-cli devices: the GPUs this build can see and how they are
// linked, and this machine as a cluster file (profiler/engine/local_cluster.h).
#include <iostream>
#include <optional>

#include "profiling_commands.h"
#include "shardscope/core/json_io.h"
#include "shardscope/report/project_summary.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/engine/local_cluster.h"

namespace shardscope::app::cli {

int runDevices(Args args) {
  if (args.flag("--help")) {
    std::cout << "usage: shardscope-cli devices [--json] [--cluster-out FILE]\n"
                 "Lists the CUDA GPUs this build can see and how each pair is linked (NVLink or PCIe, from\n"
                 "NVML). --json: the same as one JSON object. --cluster-out FILE: writes this machine as a\n"
                 "shardscope.cluster/1 file (one node of all its GPUs). Exit 3 when built without CUDA, and\n"
                 "with --cluster-out when no GPU is visible or the GPUs are of different models.\n";
    return kExitOk;
  }
  const bool json = args.flag("--json");
  const auto cluster_out = args.option("--cluster-out");
  if (auto bad = args.problem()) return usageError("devices: " + *bad);
  auto gpus = profiler::queryLocalGpus();
  if (!gpus) return fail(core::Error{"shardscope-cli: " + gpus.error().message, gpus.error().kind});
  std::optional<profiler::LocalCluster> cluster;
  if (cluster_out) {
    auto made = profiler::localCluster(*gpus, profiler::hostName());
    if (!made) return fail(core::Error{"shardscope-cli: devices: " + made.error().message, made.error().kind});
    if (auto s = core::writeJsonFile(*cluster_out, core::toJson(made->cluster)); !s) return fail(s.error());
    cluster = std::move(*made);
  }
  if (json) {
    auto j = profiler::localGpusToJson(*gpus);
    if (cluster)
      j["cluster"] = {{"file", *cluster_out},
                      {"nvlink", cluster->nvlink},
                      {"notes", cluster->notes},
                      {"spec", core::toJson(cluster->cluster)}};
    std::cout << j.dump(1) << "\n";
    return kExitOk;
  }
  std::cout << profiler::formatLocalGpus(*gpus);
  if (cluster) {
    std::cout << "\nwrote " << *cluster_out << " (shardscope.cluster/1)\n"
              << report::formatClusterSummary(cluster->cluster);
    for (const std::string& note : cluster->notes) std::cout << "  note: " << note << "\n";
  }
  return kExitOk;
}

}  // namespace shardscope::app::cli
