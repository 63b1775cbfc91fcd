#include "common_options.h"

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

profiler::ProjectSources takeProjectSources(Args& args, bool planning) {
  profiler::ProjectSources s;
  s.project = args.option("--project");
  s.model = args.option("--model");
  s.cluster = args.option("--cluster");
  if (planning) {
    s.calibration = args.option("--calibration");
    s.constraints = args.option("--constraints");
  }
  return s;
}

profiler::TrainerPlanSpec takeTrainerPlanSpec(Args& args) {
  profiler::TrainerPlanSpec a;
  a.plan = args.option("--plan");
  a.model = args.option("--model");
  a.cluster = args.option("--cluster");
  a.world_size = args.option("--world-size");
  a.layout = args.option("--layout");
  return a;
}

std::optional<unsigned long long> wholeNumberOption(const std::optional<std::string>& text, unsigned long long fallback,
                                                    unsigned long long max, const std::string& command,
                                                    const char* name, bool allow_zero) {
  if (!text) return fallback;
  if (allow_zero && *text == "0") return 0ull;
  auto v = parsePositive(*text, max);
  if (!v) {
    usageError(command + ": " + name + " must be a whole number in " + (allow_zero ? "0" : "1") + ".." +
               std::to_string(max) + ", got '" + *text + "'");
    return std::nullopt;
  }
  return v;
}

}  // namespace shardscope::app::cli
