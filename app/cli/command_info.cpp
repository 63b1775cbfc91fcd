// shardscope-cli summary | presets | devices: what is loaded, built in and
// visible (devices: also this machine as a cluster file).
#include <iostream>
#include <optional>

#include "cli.h"
#include "common_options.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/summary.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/engine/local_cluster.h"

namespace shardscope::app::cli {

int runSummary(Args args) {
  if (args.flag("--help")) {
    std::cout << "usage: shardscope-cli summary [--project F] [--model NAME|FILE] [--cluster NAME|FILE]\n"
                 "Prints the model and cluster. Without options: the built-in default project.\n";
    return kExitOk;
  }
  const profiler::ProjectSources sources = takeProjectSources(args, false);
  if (!args.error().empty()) return usageError("summary: " + args.error());
  if (auto u = args.unknownOption()) return usageError("summary: unknown option " + *u);
  if (!args.positional().empty()) return usageError("summary: unexpected argument " + args.positional().front());
  auto resolved = profiler::resolveProject(sources);
  if (!resolved) return fail(resolved.error());
  const core::Project& project = *resolved;
  std::cout << core::formatModelSummary(project.model) << "\n" << core::formatClusterSummary(project.cluster);
  const double per_gpu = static_cast<double>(project.model.totalWeightBytes()) / project.cluster.worldSize();
  std::cout << "\nEmbedding weights per GPU if sharded over all " << project.cluster.worldSize()
            << " GPUs: " << core::formatBytes(static_cast<std::uint64_t>(per_gpu)) << " of "
            << core::formatBytes(project.cluster.gpu.hbm_bytes) << " HBM\n";
  return kExitOk;
}

int runPresets(Args args) {
  if (args.flag("--help")) {
    std::cout << "usage: shardscope-cli presets\n"
                 "Lists the built-in models and clusters, loadable by name with --model/--cluster.\n";
    return kExitOk;
  }
  if (auto u = args.unknownOption()) return usageError("presets: unknown option " + *u);
  std::cout << "models:\n";
  for (const auto& n : core::modelPresetNames()) {
    auto m = core::modelPreset(n);
    std::cout << "  " << n << "  "
              << (m ? m->name + ", " + std::to_string(m->tables.size()) + " tables" : m.error().message) << "\n";
  }
  std::cout << "clusters (name = GPU kind x GPU count; 8 GPUs per node):\n";
  for (const auto& n : core::clusterPresetNames()) {
    auto c = core::clusterPreset(n);
    std::cout << "  " << n << "  "
              << (c ? std::to_string(c->nodes) + " x " + std::to_string(c->gpus_per_node) + " " + c->gpu.name
                    : c.error().message)
              << "\n";
  }
  return kExitOk;
}

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
  if (!args.error().empty()) return usageError("devices: " + args.error());
  if (auto u = args.unknownOption()) return usageError("devices: unknown option " + *u);
  if (!args.positional().empty()) return usageError("devices: unexpected argument " + args.positional().front());
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
              << core::formatClusterSummary(cluster->cluster);
    for (const std::string& note : cluster->notes) std::cout << "  note: " << note << "\n";
  }
  return kExitOk;
}

}  // namespace shardscope::app::cli
