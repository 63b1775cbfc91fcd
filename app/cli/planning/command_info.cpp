// shardscope-cli summary | presets: what is loaded and built in (devices,
// what is visible, is command_devices.cpp's: it asks the engine).
#include <iostream>

#include "cli.h"
#include "common_options.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/project_inputs.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/project_summary.h"

namespace shardscope::app::cli {

int runSummary(Args args) {
  if (args.flag("--help")) {
    std::cout << "usage: shardscope-cli summary [--project F] [--model NAME|FILE] [--cluster NAME|FILE]\n"
                 "Prints the model and cluster. Without options: the built-in default project.\n";
    return kExitOk;
  }
  const core::ProjectSources sources = takeProjectSources(args, false);
  if (auto bad = args.problem()) return usageError("summary: " + *bad);
  auto resolved = core::resolveProject(sources);
  if (!resolved) return fail(resolved.error());
  const core::Project& project = *resolved;
  std::cout << report::formatModelSummary(project.model) << "\n" << report::formatClusterSummary(project.cluster);
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
  if (auto bad = args.problem()) return usageError("presets: " + *bad);
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

}  // namespace shardscope::app::cli
