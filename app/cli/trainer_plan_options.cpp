#include "trainer_plan_options.h"

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

core::TrainerPlanSpec takeTrainerPlanSpec(Args& args) {
  core::TrainerPlanSpec a;
  a.plan = args.option("--plan");
  a.model = args.option("--model");
  a.cluster = args.option("--cluster");
  a.world_size = args.option("--world-size");
  a.layout = args.option("--layout");
  return a;
}

}  // namespace shardscope::app::cli
