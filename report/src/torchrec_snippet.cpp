#include "shardscope/report/torchrec_snippet.h"

#include <cstdio>

#include "shardscope/core/summary.h"

namespace shardscope::report {

namespace {

// Text for a Python comment: one line, no control characters.
std::string commentText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c);
  return out;
}

}  // namespace

std::string pythonStringLiteral(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(u));
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string torchRecSnippet(const core::ShardPlan& plan, const std::string& plan_path) {
  const std::uint32_t sync_interval = plan.sync_interval;
  const std::string m = std::to_string(plan.sharding_group_size);
  const std::string n = std::to_string(plan.world_size);
  const bool contiguous = plan.layout == core::RankLayout::Contiguous;
  const std::string k = std::to_string(sync_interval == 0 ? 1 : sync_interval);
  std::string s;
  s += "# ShardScope plan for " + commentText(plan.model) + ": N = " + n + " GPUs as sharding groups of\n";
  s += core::formatf("# M = %u GPUs x R = %u replicas, %s rank layout, predicted %.2f ms per step.\n",
                     plan.sharding_group_size, plan.replicas, core::toString(plan.layout), plan.predicted.step_ms);
  if (plan.target == core::PlanTarget::TorchRec) {
    s += "# Planned for TorchRec: every row block sits where TorchRec's sharders put it, so\n";
    s += "# DMPCollection runs exactly the layout that was priced.\n";
  } else {
    s += "# Planned for ShardScope's engine (target shardscope): where a row block sits elsewhere\n";
    s += "# than TorchRec would put it, dmp_collection_kwargs() and to_torchrec_sharding_plan()\n";
    s += "# refuse the plan with the rule; plan for TorchRec to train it with DMPCollection.\n";
  }
  s += "# Needs torch, torchrec and shardscope_torchrec (pip install <ShardScope>/packaging/python).\n";
  s += "import torch\n";
  s += "import torch.distributed as dist\n";
  s += "from torchrec.distributed.model_parallel import DMPCollection\n";
  s += "from torchrec.distributed.train_pipeline import TrainPipelineSparseDist\n";
  s += "\n";
  s += "from shardscope_torchrec import load_plan\n";
  s += "\n";
  s += "PLAN_PATH = " + pythonStringLiteral(plan_path) + "\n";
  s += "SHARDING_GROUP_SIZE = " + m + "  # M: every table is sharded inside a group of " + m + " GPUs\n";
  s += "WORLD_SIZE = " + n + "  # N = M x R\n";
  s += "SYNC_INTERVAL = " + k + "  # replicas average weights + optimizer state every " + k + " step(s), as priced\n";
  s += "# Where the EmbeddingBagCollection sits in your model (adjust to yours).\n";
  s += "EMBEDDING_MODULE = \"sparse_arch.embedding_bag_collection\"\n";
  s += "\n";
  s += "plan = load_plan(PLAN_PATH)  # validates the file; ValueError names the JSON path\n";
  s += "assert plan.sharding_group_size == SHARDING_GROUP_SIZE and plan.world_size == WORLD_SIZE, plan\n";
  s += "assert plan.sync_interval == SYNC_INTERVAL, plan.sync_interval\n";
  s += "\n";
  s += "\n";
  s += "def shard_model(model: torch.nn.Module, device: torch.device) -> DMPCollection:\n";
  s += "    \"\"\"Shards the model's tables inside each sharding group; the R groups hold replicas.\"\"\"\n";
  s += "    if dist.get_world_size() != WORLD_SIZE:\n";
  s += "        raise RuntimeError(f\"this plan is for {WORLD_SIZE} ranks, got {dist.get_world_size()}\")\n";
  s += "    return DMPCollection(\n";
  s += "        module=model,\n";
  s += "        device=device,\n";
  s += "        plan=plan.to_torchrec_sharding_plan(EMBEDDING_MODULE),\n";
  s += "        global_pg=dist.group.WORLD,\n";
  s += "        # world_size=" + n + ", sharding_group_size=" + m + ", node_group_size=" +
       std::to_string(core::nodeGroupSize(plan.world_size, plan.gpus_per_node, plan.sharding_group_size, plan.layout)) +
       ",\n        # use_inter_host_allreduce=" + (contiguous ? "True" : "False") + "\n";
  s += "        **plan.dmp_collection_kwargs(),\n";
  s += "    )\n";
  s += "\n";
  s += "\n";
  s += "def train_pipeline(sharded: DMPCollection, optimizer: torch.optim.Optimizer,\n";
  s += "                   device: torch.device) -> TrainPipelineSparseDist:\n";
  s += "    \"\"\"A training pipeline that syncs the replicas every SYNC_INTERVAL batches.\"\"\"\n";
  s += "    # dmp_collection_sync_interval_batches=SYNC_INTERVAL\n";
  s += "    return TrainPipelineSparseDist(sharded, optimizer, device, **plan.train_pipeline_kwargs())\n";
  return s;
}

}  // namespace shardscope::report
