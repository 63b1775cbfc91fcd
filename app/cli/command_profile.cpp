// shardscope-cli profile: run the engine on a plan and store what it measured
// (profiler/workflow/profile_run.h), then print the analysis; --calibrate also
// fits and writes a calibration. Ctrl-C cancels: the run is marked failed,
// every other run in the store is untouched.
#include <atomic>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "common_options.h"
#include "profiling_commands.h"
#include "progress.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/units.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::app::cli {

namespace {
std::atomic<bool> g_cancel{false};

constexpr const char* kProfileHelp =
    R"(usage: shardscope-cli profile [--project F] [--model M] [--cluster C] [--calibration F]
                             [--plan P | --grid M] [--mode emulate|mpi] [--device cpu|cuda]
                             [--no-cupti] [--steps S] [--warmup W]
                             [--seed N] [--threads T] [--batch B] [--sync-interval K]
                             [--memory-budget SIZE] [--all-groups] [--no-trace] [--label L]
                             [--launcher CMD] [--engine PATH] [--calibrate] [--calibration-out F]
                             [--json] [--quiet] --store F

Runs the engine on a plan and writes the measured run into the trace store F
(created when missing), then prints the analysis (as `report` would).

  --plan P            a shardscope.plan/1 file; --grid M plans with sharding group size M;
                      neither: the best grid of a sweep
  --mode emulate      (default) one process: each rank of sharding group 0 (all groups with
                      --all-groups) runs its shards on its real share of lookups, rank after rank
  --mode mpi          starts shardscope-engine with N processes through the launcher:
                      --launcher "mpirun -np {N}" (default; --oversubscribe added when N exceeds
                      this machine's cores) or e.g. "srun -n {N}"; {N} is the world size
  --device cuda       run on GPUs (a build with CUDA, NCCL and CUPTI): emulate mode runs every
                      rank in this process, one per local GPU (the plan's world size must not
                      exceed them); mpi mode one engine process per GPU. CUPTI traces kernels,
                      copies and API calls after 3 untraced steps that measure its overhead
                      (--no-cupti: phase timings from CUDA events only). Default cpu.
  --steps S           measured steps (default 5) after --warmup W steps (default 1)
  --memory-budget SIZE  bytes of embedding state per process (e.g. 6G, 512M); larger shards run
                      with fewer physical rows (recorded in the run); default: 60% of available
                      memory, split over the N processes in mpi mode
  --calibrate         also emulate the plan at batch sizes B/4 and B/2, fit the cost model's
                      coefficients on the B/4 and B runs, check them on the held-out B/2 run,
                      and write shardscope.calibration/1 (--calibration-out, default
                      <store>.calibration.json); `plan --calibration F` uses it
A progress bar goes to stderr (--quiet: none). Ctrl-C cancels: exit 130, the run is marked failed.
)";

// What the command line says, parsed.
struct ProfileOptions {
  profiler::ProfileRequest request;
  core::ProjectSources sources;
  std::optional<std::string> plan_file;
  std::optional<std::string> grid;
  std::optional<std::string> calibration_out;
  bool json = false;
  bool quiet = false;
  bool calibrate = false;
};

std::optional<unsigned long long> numberOption(const std::optional<std::string>& text, unsigned long long fallback,
                                               unsigned long long max, const char* name, bool allow_zero = false) {
  return wholeNumberOption(text, fallback, max, "profile", name, allow_zero);
}

// The number options' texts, taken before the checks of the others.
struct NumberTexts {
  std::optional<std::string> steps, warmup, seed, threads, batch, sync, budget;
};

// The numbers into `r`; every bad one is reported. The exit code of a usage error, else kExitOk.
int parseNumbers(const NumberTexts& t, profiler::ProfileRequest& r) {
  const auto steps = numberOption(t.steps, 5, 100000, "--steps");
  const auto warmup = numberOption(t.warmup, 1, 10000, "--warmup", true);
  const auto seed = numberOption(t.seed, 1, ~0ull >> 1, "--seed");
  const auto threads = numberOption(t.threads, 0, 4096, "--threads");
  const auto batch = numberOption(t.batch, 0, core::kMaxBatchPerGpu, "--batch");
  const auto sync = numberOption(t.sync, 0, core::kMaxSyncInterval, "--sync-interval");
  if (!steps || !warmup || !seed || !threads || !batch || !sync)
    return exitCodeFor(core::Error{"a bad number", core::ErrorKind::Usage});
  r.steps = static_cast<std::uint32_t>(*steps);
  r.warmup = static_cast<std::uint32_t>(*warmup);
  r.seed = *seed;
  r.threads = static_cast<unsigned>(*threads);
  r.batch = static_cast<std::uint32_t>(*batch);
  r.sync_interval = static_cast<std::uint32_t>(*sync);
  if (t.budget) {
    r.memory_budget_bytes = core::parseSize(*t.budget);
    if (!r.memory_budget_bytes || *r.memory_budget_bytes == 0)
      return usageError("profile: --memory-budget must be a size such as 6G, 512M or 1048576, got '" + *t.budget + "'");
  }
  return kExitOk;
}

// Parses the command line into `o`: the exit code of a usage error, else kExitOk.
int parseProfileArgs(Args& args, ProfileOptions& o) {
  profiler::ProfileRequest& r = o.request;
  o.json = args.flag("--json");
  o.quiet = args.flag("--quiet");
  r.all_groups = args.flag("--all-groups");
  r.trace_spans = !args.flag("--no-trace");
  o.calibrate = args.flag("--calibrate");
  auto store_arg = args.option("--store");
  o.plan_file = args.option("--plan");
  o.grid = args.option("--grid");
  auto mode_arg = args.option("--mode");
  auto device_arg = args.option("--device");
  r.cupti = !args.flag("--no-cupti");
  NumberTexts numbers;
  numbers.steps = args.option("--steps");
  numbers.warmup = args.option("--warmup");
  numbers.seed = args.option("--seed");
  numbers.threads = args.option("--threads");
  numbers.batch = args.option("--batch");
  numbers.sync = args.option("--sync-interval");
  numbers.budget = args.option("--memory-budget");
  r.label = args.option("--label");
  r.launcher = args.option("--launcher");
  r.engine = args.option("--engine");
  o.calibration_out = args.option("--calibration-out");
  o.sources = takeProjectSources(args);
  if (auto bad = args.problem()) return usageError("profile: " + *bad);
  if (!store_arg) return usageError("profile: --store F is required (the trace store to write the run into)");
  if (o.plan_file && o.grid) return usageError("profile: give --plan or --grid, not both");
  const std::string mode = mode_arg.value_or("emulate");
  if (mode != "emulate" && mode != "mpi") return usageError("profile: --mode must be emulate or mpi, got " + mode);
  if (o.calibrate && o.calibration_out && o.calibration_out->empty())
    return usageError("profile: --calibration-out needs a file");
  const std::string device = device_arg.value_or("cpu");
  if (device != "cpu" && device != "cuda") return usageError("profile: --device must be cpu or cuda, got " + device);
  if (device == "cuda" && o.calibrate)
    return usageError("profile: --calibrate fits the CPU engine's cost model; run it with --device cpu");
  r.device = device == "cuda" ? profiler::ProfileDevice::Cuda : profiler::ProfileDevice::Cpu;
  r.store = *store_arg;
  r.mode = mode == "mpi" ? profiler::ProfileMode::Mpi : profiler::ProfileMode::Emulate;
  return parseNumbers(numbers, r);
}

// "profile: " before the message, as every error of a running profile reads.
core::Error inProfile(core::Error error) {
  error.message = "profile: " + error.message;
  return error;
}

// The plan to run into `r`: --plan's file, --grid's plan, or the sweep's best.
int choosePlan(const ProfileOptions& o, profiler::ProfileRequest& r) {
  if (o.plan_file) {
    auto plan = profiler::profilePlanFromFile(r, *o.plan_file);
    if (!plan) return fail(plan.error());
    r.plan = std::move(plan).value();
    return kExitOk;
  }
  std::optional<std::uint32_t> group_size;
  if (o.grid) {
    const std::uint32_t n = r.project.cluster.worldSize();
    const auto m = parsePositive(*o.grid, n);
    if (!m || n % *m != 0)
      return usageError("profile: --grid must be a divisor of N = " + std::to_string(n) + ", got " + *o.grid);
    group_size = static_cast<std::uint32_t>(*m);
  }
  auto plan = profiler::plannedProfilePlan(r, group_size);
  if (!plan) return fail(inProfile(plan.error()));
  r.plan = std::move(plan).value();
  return kExitOk;
}

// A profile's stages as progress bars on stderr (drawn only when enabled).
class ProgressView {
 public:
  explicit ProgressView(bool enabled) : enabled_(enabled) {}
  void show(const profiler::ProfileProgress& p) {
    using Kind = profiler::ProfileProgress::Kind;
    switch (p.kind) {
      case Kind::Begin:
        bar_.emplace(p.stage, enabled_);
        break;
      case Kind::Step:
        if (bar_) bar_->update(p.done, p.total, p.text);
        break;
      case Kind::End:
        bar_.reset();
        break;
      case Kind::EngineOutput:
        if (bar_) bar_->finish();
        std::cerr << p.text << "\n";
        break;
    }
  }

 private:
  bool enabled_;
  std::optional<ProgressBar> bar_;
};
}  // namespace

int runProfile(Args args) {
  if (args.flag("--help")) {
    std::cout << kProfileHelp;
    return kExitOk;
  }
  ProfileOptions o;
  if (const int code = parseProfileArgs(args, o); code != kExitOk) return code;
  auto project = core::resolveProject(o.sources);
  if (!project) return fail(project.error());
  profiler::ProfileRequest& request = o.request;
  request.project = std::move(project).value();
  if (const int code = choosePlan(o, request); code != kExitOk) return code;

  const CancelOnSignals on_signals(g_cancel);
  ProgressView view(!o.quiet);
  const profiler::ProfileProgressFn progress = [&view](const profiler::ProfileProgress& p) { view.show(p); };
  auto outcome = profiler::runProfile(request, progress, &g_cancel);
  if (!outcome) return fail(inProfile(outcome.error()));
  nlohmann::ordered_json out_json;
  if (o.json) {
    out_json["run"] = static_cast<long long>(outcome->run);
    out_json["report"] = profiler::reportJson(outcome->analysis);
  } else {
    std::cout << profiler::formatReport(outcome->analysis);
  }
  if (o.calibrate) {
    auto cal = profiler::calibrateProfile(request, outcome->run, o.calibration_out, progress, &g_cancel);
    if (!cal) return fail(inProfile(cal.error()));
    if (o.json) {
      out_json["calibration"] = profiler::calibrationReportJson(cal->report);
      out_json["calibration_file"] = cal->path;
    } else {
      std::cout << "\n"
                << profiler::formatCalibrationReport(cal->report) << "calibration written to " << cal->path
                << " (use: shardscope-cli plan --calibration " << cal->path << ")\n";
    }
  }
  if (o.json) std::cout << out_json.dump(2) << "\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
