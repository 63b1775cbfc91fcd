// shardscope-cli gen-model: a seeded synthetic shardscope.model/1.
#include <iostream>

#include "cli.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/planner/synthetic.h"

namespace shardscope::app::cli {

int runGenModel(Args args) {
  if (args.flag("--help")) {
    std::cout << "usage: shardscope-cli gen-model --tables T [--seed S] [--batch B] [--out model.json]\n"
                 "Writes a synthetic model: log-normal rows in 1e3..1e9, dims 32..512, pooling 1..100,\n"
                 "zipf skew on ~70% of tables. The same seed gives the same model.\n";
    return kExitOk;
  }
  auto tables = args.option("--tables");
  auto seed = args.option("--seed");
  auto batch = args.option("--batch");
  auto out = args.option("--out");
  if (auto bad = args.problem()) return usageError("gen-model: " + *bad);
  if (!tables) return usageError("gen-model needs --tables T");
  planner::SyntheticModelOptions o;
  const auto t = parsePositive(*tables, core::kMaxTables);  // what the model reader accepts
  if (!t)
    return usageError("gen-model: --tables must be in 1.." + std::to_string(core::kMaxTables) + ", got " + *tables);
  o.tables = static_cast<std::uint32_t>(*t);
  if (seed) {
    const auto v = parsePositive(*seed, ~0ull);
    if (!v) return usageError("gen-model: --seed must be a positive integer, got " + *seed);
    o.seed = *v;
  }
  if (batch) {
    const auto v = parsePositive(*batch, 1u << 20);
    if (!v) return usageError("gen-model: --batch must be in 1..1048576, got " + *batch);
    o.batch_size_per_gpu = static_cast<std::uint32_t>(*v);
  }
  const auto j = core::toJson(planner::syntheticModel(o));
  if (out) {
    if (auto s = core::writeJsonFile(*out, j); !s) return fail(s.error());
    return kExitOk;
  }
  std::cout << j.dump(1) << "\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
