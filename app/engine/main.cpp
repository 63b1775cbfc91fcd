// shardscope-engine: the distributed engine, one MPI process per rank of a
// plan (launched by mpirun or srun), or with --emulate every measured rank in
// this one process without MPI (what shardscope-agent starts for an emulate
// job). Thin: arguments, the MPI session and signals; the runs themselves
// are profiler::runDistributed (docs/engine-distributed.md) and emulate_mode.h.
#include <atomic>
#include <csignal>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/app/args.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/units.h"
#include "shardscope/core/version.h"
#ifdef SHARDSCOPE_ENGINE_MPI
#include "shardscope/profiler/engine_mpi/distributed.h"
#include "shardscope/profiler/engine_mpi/mpi_session.h"
#endif
#include "emulate_mode.h"

namespace {

constexpr const char* kHelp = R"(usage: mpirun -np N shardscope-engine --model M --cluster C (--plan P.json | --grid M)
                         --store F [--steps S] [--warmup W] [--seed N] [--threads T]
                         [--sync-interval K] [--memory-budget SIZE] [--batch B] [--label L]
                         [--progress] [--summary-json F] [--no-trace] [--device cpu|cuda] [--no-cupti]
       shardscope-engine --emulate --model M --cluster C --plan P.json --store F [--all-groups] [...]
       shardscope-engine --help | --version

Runs a shard plan's training steps with one process per rank (N = the plan's
world_size) and writes every rank's trace into one run (kind mpi) of the
trace store F. Rank 0 prints `run <id>` once the run is begun, and with
--progress `progress <done> <total>` after every step (warm-up included), and
`step <i> <ms of rank 0> <ms of rank 1> ...` after every measured step.

  --model M          preset name or shardscope.model/1 file
  --cluster C        preset name or shardscope.cluster/1 file
  --plan P.json      shardscope.plan/1 file, or
  --grid M           plan in-process for sharding group size M (on the cluster)
  --store F          trace store (created when missing)
  --steps S          measured steps (default 10)      --warmup W   unrecorded steps first (default 1)
  --seed N           ids and initial weights (default 1)
  --threads T        kernel threads per rank (default: hardware threads / ranks on the node)
  --sync-interval K  replica weight sync after every K-th measured step (default 1)
  --memory-budget B  weights + optimizer state per process, bytes (suffix B, K/KiB, M/MiB, G/GiB, T/TiB);
                     default 60% of MemAvailable / ranks on the node; the smallest over ranks is used
  --batch B          samples per rank per step (default: the model's batch_size_per_gpu)
  --label L          run label (default "mpi <model> M=<M> R=<R>")
  --summary-json F   rank 0 writes per-rank shard digests and mean step times to F
  --no-trace         record step summaries and table stats only
  --device cuda      each process on its node's GPU (its rank on the node), NCCL collectives split
                     from the world as the plan's groups, CUPTI records as spans; MPI only bootstraps
                     (default cpu: the CPU backend with MPI collectives)
  --no-cupti         with --device cuda: phase timings from CUDA events only
  --emulate          no MPI: run the plan's measured ranks in this one process, one after another
                     (emulate mode; --device cuda: one thread per GPU of this machine); rank 0's
                     lines as above (`run <id>` once begun, `progress <done> <total> <what>`)
  --all-groups       with --emulate: measure every sharding group, not only group 0

SIGTERM, SIGINT or SIGUSR1 stop every rank after the current step; the run is
marked failed ("cancelled"). Exit codes: 0 complete, 1 invalid input,
2 usage, 3 failure, 130 cancelled.
)";

std::atomic<bool> g_cancel{false};
extern "C" void onSignal(int) { g_cancel.store(true); }

// Whole numbers and sizes are read as shardscope-cli reads them (core/units.h).
std::uint64_t numberOption(const std::string& name, const std::string& value, std::uint64_t min, std::uint64_t max,
                           std::string& error) {
  const auto v = shardscope::core::parseWholeNumber(value, min, max);
  if (v) return *v;
  if (error.empty())
    error =
        name + ": expected a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + value;
  return min;
}

struct Parsed {
  shardscope::app::engine::EmulateModeArgs run;  // what both modes read
  std::uint32_t grid = 0;                        // distributed: plan in-process for sharding group size M
  std::string summary_json;                      // distributed: rank 0 writes shardscope.engine-summary/1 here
  bool emulate = false;
  bool help = false;
  bool version = false;
  std::string error;  // usage error
};

// The options both modes share, the numbers checked.
void readNumbers(shardscope::app::Args& args, Parsed& p) {
  auto& c = p.run;
  std::vector<std::pair<std::string, std::string>> numbers;
  for (const char* name :
       {"--grid", "--steps", "--warmup", "--seed", "--threads", "--sync-interval", "--memory-budget", "--batch"})
    if (auto v = args.option(name)) numbers.emplace_back(name, *v);
  for (const auto& option : numbers) {
    const std::string& name = option.first;
    const std::string& value = option.second;
    auto number = [&](std::uint64_t min, std::uint64_t max) { return numberOption(name, value, min, max, p.error); };
    if (name == "--grid")
      p.grid = static_cast<std::uint32_t>(number(1, shardscope::core::kMaxWorldSize));
    else if (name == "--steps")
      c.steps = static_cast<std::uint32_t>(number(1, 1u << 30));
    else if (name == "--warmup")
      c.warmup = static_cast<std::uint32_t>(number(0, 1u << 30));
    else if (name == "--seed")
      c.seed = number(0, UINT64_MAX);
    else if (name == "--threads")
      c.threads = static_cast<unsigned>(number(1, 4096));
    else if (name == "--sync-interval")
      c.sync_interval = static_cast<std::uint32_t>(number(1, shardscope::core::kMaxSyncInterval));
    else if (name == "--batch")
      c.batch = static_cast<std::uint32_t>(number(1, shardscope::core::kMaxBatchPerGpu));
    else if (const auto bytes = shardscope::core::parseSize(value); bytes && *bytes > 0)
      c.memory_budget_bytes = *bytes;
    else if (p.error.empty())
      p.error = name + ": expected a size such as 6G, 512M or 1048576, got " + value;
  }
}

// Options as `--opt value` or `--opt=value` (shardscope::app::Args, as shardscope-cli reads them).
Parsed parseArgs(std::vector<std::string> argv) {
  Parsed p;
  auto& c = p.run;
  shardscope::app::Args args(std::move(argv));
  const bool help = args.flag("--help");
  p.help = args.flag("-h") || help;
  p.version = args.flag("--version");
  p.emulate = args.flag("--emulate");
  c.all_groups = args.flag("--all-groups");
  c.progress = args.flag("--progress");
  if (args.flag("--no-trace")) c.tracing = false;
  const auto text = [&args](const char* name) { return args.option(name).value_or(std::string()); };
  c.model = text("--model");
  c.cluster = text("--cluster");
  c.plan = text("--plan");
  c.store = text("--store");
  c.label = text("--label");
  p.summary_json = text("--summary-json");
  c.device = args.option("--device").value_or("cpu");
  c.cupti = !args.flag("--no-cupti");
  readNumbers(args, p);
  if (auto bad = args.problem())
    p.error = *bad;
  else if (c.device != "cpu" && c.device != "cuda")
    p.error = "--device: expected cpu or cuda, got " + c.device;
  if (p.help || p.version || !p.error.empty()) return p;
  if (c.model.empty())
    p.error = "--model is required";
  else if (c.cluster.empty())
    p.error = "--cluster is required";
  else if (p.emulate && (c.plan.empty() || p.grid != 0))
    p.error = "--emulate runs a plan: give --plan (not --grid)";
  else if (!p.emulate && c.all_groups)
    p.error = "--all-groups belongs to --emulate (a distributed run measures every rank)";
  else if (c.plan.empty() == (p.grid == 0))
    p.error = "give exactly one of --plan and --grid";
  else if (c.store.empty())
    p.error = "--store is required";
  return p;
}

#ifdef SHARDSCOPE_ENGINE_MPI
shardscope::profiler::DistributedConfig distributedConfig(const Parsed& p) {
  shardscope::profiler::DistributedConfig c;
  const auto& a = p.run;
  c.model = a.model;
  c.cluster = a.cluster;
  c.plan = a.plan;
  c.grid = p.grid;
  c.store = a.store;
  c.steps = a.steps;
  c.warmup = a.warmup;
  c.seed = a.seed;
  c.threads = a.threads;
  c.sync_interval = a.sync_interval;
  c.memory_budget_bytes = a.memory_budget_bytes;
  c.batch = a.batch;
  c.label = a.label;
  c.progress = a.progress;
  c.tracing = a.tracing;
  c.summary_json = p.summary_json;
  c.device = a.device;
  c.cupti = a.cupti;
  return c;
}

// One MPI process per rank for the life of an MpiSession: rank 0's help or
// usage error, or the run. The exit code.
int runDistributedMode(int& argc, char**& argv, const Parsed& parsed) {
  const shardscope::profiler::MpiSession mpi(argc, argv);
  const bool speaks = mpi.rank() == 0;
  if (parsed.help) {
    if (speaks) std::cout << kHelp;
    return shardscope::app::kExitOk;
  }
  if (!parsed.error.empty()) {
    if (speaks) std::cerr << "shardscope-engine: " << parsed.error << " (--help for usage)\n";
    return shardscope::app::kExitUsage;
  }
  if (const auto threads = mpi.threadSupport(); !threads) {
    if (speaks) std::cerr << "shardscope-engine: " << threads.error().message << "\n";
    return shardscope::app::exitCodeFor(threads.error());
  }
  const auto outcome =
      shardscope::profiler::runDistributed(mpi.world(), distributedConfig(parsed), g_cancel, std::cout);
  if (speaks && !outcome) std::cerr << "shardscope-engine: " << outcome.error().message << "\n";
  return outcome ? shardscope::app::kExitOk : shardscope::app::exitCodeFor(outcome.error());
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);
  std::signal(SIGUSR1, onSignal);
  const Parsed parsed = parseArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (parsed.version && !parsed.help && parsed.error.empty()) {  // before MPI: no mpirun needed to ask
    std::cout << "shardscope-engine " << shardscope::core::versionLine() << "\n";
    return shardscope::app::kExitOk;
  }
  const bool emulate = parsed.emulate && !parsed.help && parsed.error.empty();
  if (emulate) return shardscope::app::engine::runEmulateMode(parsed.run, g_cancel, std::cout, std::cerr);
#ifdef SHARDSCOPE_ENGINE_MPI
  return runDistributedMode(argc, argv, parsed);
#else
  if (parsed.help) {
    std::cout << kHelp;
    return shardscope::app::kExitOk;
  }
  std::cerr << "shardscope-engine: "
            << (parsed.error.empty() ? "this engine was built without MPI; it runs --emulate only" : parsed.error)
            << " (--help for usage)\n";
  return shardscope::app::kExitUsage;
#endif
}
