#include "trainer_plan.h"

#include <algorithm>
#include <iostream>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/torchrec_plan.h"

namespace shardscope::app::cli {

const char* const kTrainerPlanHelp =
    R"(  --plan P      the plan the trainer ran: a shardscope.plan/1 file or TorchRec's
                ShardingPlan._serialize() JSON (one sharding group's ranks)
  --model M     the trainer's model (preset or file); needed with --plan
  --cluster C   its cluster (preset or file); default: the built-in cluster's GPU,
                resized to the plan's world size
  --world-size N, --layout strided|contiguous
                for a TorchRec plan: N = M x R (default: the number of ranks imported)
                and how the sharding groups lie on the ranks
)";

TrainerPlanArgs takeTrainerPlanArgs(Args& args) {
  TrainerPlanArgs a;
  a.plan = args.option("--plan");
  a.model = args.option("--model");
  a.cluster = args.option("--cluster");
  a.world_size = args.option("--world-size");
  a.layout = args.option("--layout");
  return a;
}

core::Result<profiler::RunInputs> loadTrainerPlan(const TrainerPlanArgs& a, std::uint32_t ranks, bool* usage) {
  auto usageErr = [&](std::string m) -> core::Result<profiler::RunInputs> {
    if (usage) *usage = true;
    return core::Error{std::move(m)};
  };
  if (usage) *usage = false;
  if (!a.plan) return usageErr("--model/--cluster/--world-size/--layout describe a plan: give --plan too");
  if (!a.model) return usageErr("--plan needs --model: the model the trainer ran (a preset or a file)");
  profiler::RunInputs in;
  auto model = core::loadModelByNameOrFile(*a.model);
  if (!model) return model.error();
  in.model = std::move(model).value();
  core::ClusterSpec cluster = core::defaultProject().cluster;
  if (a.cluster) {
    auto c = core::loadClusterByNameOrFile(*a.cluster);
    if (!c) return c.error();
    cluster = std::move(c).value();
  }

  auto j = core::readJsonFile(*a.plan);
  if (!j) return j.error();
  if (core::looksLikeTorchRecPlan(*j)) {
    core::TorchRecImportOptions o;
    o.model = &*in.model;
    o.gpus_per_node = cluster.gpus_per_node;
    o.world_size = a.cluster ? cluster.worldSize() : ranks;
    if (a.world_size) {
      const auto w = parsePositive(*a.world_size, 1u << 24);
      if (!w) return usageErr("--world-size must be a positive integer, got " + *a.world_size);
      o.world_size = static_cast<std::uint32_t>(*w);
    }
    if (a.layout) {
      auto l = core::rankLayoutFromString(*a.layout);
      if (!l) return usageErr("--layout must be strided or contiguous, got " + *a.layout);
      o.layout = *l;
    }
    auto p = core::shardPlanFromTorchRec(*j, *a.plan, o);
    if (!p) return p.error();
    in.plan = std::move(p).value();
  } else {
    if (a.world_size || a.layout) return usageErr("--world-size/--layout apply to TorchRec plans only");
    auto p = core::planFromJson(*j, *a.plan);
    if (!p) return p.error();
    in.plan = std::move(p).value();
  }
  if (cluster.worldSize() != in.plan->world_size) {
    if (a.cluster)
      return core::Error{*a.plan + ": the plan is for " + std::to_string(in.plan->world_size) + " GPUs but cluster " +
                         cluster.name + " has " + std::to_string(cluster.worldSize())};
    cluster = core::resizedCluster(cluster, in.plan->world_size, in.plan->gpus_per_node);
    cluster.name = cluster.gpu.name + " x " + std::to_string(in.plan->world_size) + " (resized to the plan)";
  }
  in.cluster = std::move(cluster);
  return in;
}

int trainerPlanForRun(const TrainerPlanArgs& a, const core::store::TraceStore& store, core::store::RunId run,
                      const char* command, std::optional<profiler::RunInputs>& out) {
  if (!a.any()) return kExitOk;
  auto ranks = store.ranks(run);
  bool usage = false;
  auto in = loadTrainerPlan(a, ranks ? static_cast<std::uint32_t>(ranks->size()) : 0u, &usage);
  if (!in) {
    if (usage) return usageError(std::string(command) + ": " + in.error().message);
    std::cerr << in.error().message << "\n";
    return kExitInvalid;
  }
  out = std::move(in).value();
  return kExitOk;
}

}  // namespace shardscope::app::cli
