// shardscope-cli: the command-line face of ShardScope.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "profiling_commands.h"
#include "shardscope/core/version.h"
#include "shardscope/profiler/engine/gpu_devices.h"

namespace shardscope::app::cli {

namespace {
constexpr const char* kUsage = R"(usage: shardscope-cli <command> [options]

Plan and profile 2D sparse parallelism (sharding group M x replicas R) for DLRM-style models.

commands:
  summary [--model M] [--cluster C] [--project F]
                         print the model and cluster (presets or files); default: the built-in project
  plan [--model M] [--cluster C] [--grid M] [--layout L] [--algorithm A] [--calibration F] [--balance-compute]
       [--constraints F] [--sync-interval K] [--target torchrec|shardscope] [--out plan.json] [--json]
                         sweep every grid (M x R), rank them, show the chosen grid per rank
  scaling [--project F] [--model M] [--cluster C] [--calibration F] [--constraints F] [--sync-interval K] [--json]
                         weak scaling from 8 to 4,096 GPUs: the best grid per world size, per-GPU
                         throughput, and the phase that causes each drop
  evaluate --plan P (--model M | --project F) [--cluster C] [--calibration F] [--constraints F]
           [--world-size N] [--layout L] [--balance-compute] [--json]
                         price a shardscope or TorchRec plan; compare with the optimized plan
  gen-model --tables T [--seed S] [--batch B] [--out F]
                         write a seeded synthetic model (log-normal rows, dims 32..512, zipf skew)
  profile [--model M] [--cluster C] [--plan P | --grid M] [--mode emulate|mpi] [--device cpu|cuda]
          [--steps S] [--calibrate] --store F
                         run the engine on a plan (in-process emulation or shardscope-engine under
                         mpirun/srun; on the CPU or this machine's GPUs) and store the measured
                         per-rank load; prints the analysis
  report --store F [--run ID] [--json]
                         measured per-rank load, all-to-all waits, stragglers, imbalance,
                         predicted vs measured (the latest run when no id is given)
  calibrate --store F --runs IDS [--holdout IDS] --out cal.json
                         fit the cost model's coefficients from emulate runs; held-out error
  import kineto|nsys|nccl FILE|DIR... --store F [--label L] [--rules R.json] [--json]
                         import a trainer's PyTorch-profiler (Kineto), Nsight Systems or NCCL
                         profiler-plugin traces, one file per rank, as one run; then `report`
  export-trace --store F [--run ID] [--ranks R] [--from-ms A --to-ms B] (--out F.json | --per-rank-dir DIR)
                         a stored run as Chrome trace JSON (Perfetto, chrome://tracing)
  remote --agent HOST:PORT describe|list|submit|watch|cancel|fetch
                         drive a shardscope-agent on a cluster (remote --help)
  validate <file>...     check shardscope model/cluster/plan/calibration/project/constraints files
  store info <file> [--check] [--json]
                         describe a trace store: schema, runs (complete or not), ranks, spans
  presets                list the built-in models and clusters
  devices                list the GPUs and their topology (--json, --cluster-out F)

options:
  -h, --help             this text (also: shardscope-cli <command> --help, shardscope-cli help <command>)
  --version              print the version and what the build includes

exit codes: 0 ok, 1 invalid or unreadable input file, 2 bad command line,
            3 runtime failure (store, device), 130 cancelled. See docs/cli.md.
)";
}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return exitCodeFor(core::Error{"no command", core::ErrorKind::Usage});
  }
  if (args.size() == 2 && args.front() == "help") args = {args[1], "--help"};  // help <command>
  const std::string cmd = args.front();
  const bool general = cmd == "-h" || cmd == "--help" || cmd == "help" || cmd == "--version";
  if (general && args.size() > 1) return usageError(cmd + ": unexpected argument " + args[1]);
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << kUsage;
    return kExitOk;
  }
  if (cmd == "--version") {
    std::cout << "shardscope-cli " << core::versionLine() << "\n"
              << "  CUDA: " << (profiler::builtWithCuda() ? "compiled in" : "not compiled in") << "\n"
              << "  MPI:  " << (SHARDSCOPE_HAVE_MPI ? "compiled in" : "not compiled in") << "\n";
    return kExitOk;
  }
  Args rest(std::vector<std::string>(args.begin() + 1, args.end()));
  if (cmd == "validate") return runValidate(std::move(rest));
  if (cmd == "store") return runStore(std::move(rest));
  if (cmd == "summary") return runSummary(std::move(rest));
  if (cmd == "presets") return runPresets(std::move(rest));
  if (cmd == "devices") return runDevices(std::move(rest));
  if (cmd == "plan") return runPlan(std::move(rest));
  if (cmd == "scaling") return runScaling(std::move(rest));
  if (cmd == "gen-model") return runGenModel(std::move(rest));
  if (cmd == "evaluate") return runEvaluate(std::move(rest));
  if (cmd == "profile") return runProfile(std::move(rest));
  if (cmd == "report") return runReport(std::move(rest));
  if (cmd == "calibrate") return runCalibrate(std::move(rest));
  if (cmd == "import") return runImport(std::move(rest));
  if (cmd == "export-trace") return runExportTrace(std::move(rest));
#ifdef SHARDSCOPE_HAVE_REMOTE
  if (cmd == "remote") return runRemote(std::move(rest));
#endif
  return usageError("unknown command '" + cmd + "'");
}

}  // namespace shardscope::app::cli

int main(int argc, char** argv) {
  try {
    return shardscope::app::cli::run(argc, argv);
  } catch (const std::exception& e) {
    namespace core = shardscope::core;
    return shardscope::app::cli::fail(
        core::Error{std::string("shardscope-cli: internal error: ") + e.what(), core::ErrorKind::Internal});
  }
}
