// shardscope-cli profile: run the engine on a plan and store what it measured.
// --mode emulate runs every rank of a sharding group in this process, one
// after another; --mode mpi starts shardscope-engine through a launcher
// (mpirun, srun, ...) and follows its progress. Ctrl-C cancels either: the run
// is marked failed, every other run in the store is untouched.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli.h"
#include "plan_output.h"
#include "progress.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/profiler/analysis/calibration_fit.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/analysis/run_analysis.h"

extern char** environ;

namespace shardscope::app::cli {

namespace {
namespace fs = std::filesystem;
namespace st = core::store;

std::atomic<bool> g_cancel{false};

constexpr const char* kProfileHelp = R"(usage: shardscope-cli profile [--project F] [--model M] [--cluster C] [--calibration F]
                             [--plan P | --grid M] [--mode emulate|mpi] [--steps S] [--warmup W]
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

std::optional<std::uint64_t> parseSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0 || pos > 15) return std::nullopt;
  std::uint64_t v = std::stoull(text.substr(0, pos));
  const std::string suffix = text.substr(pos);
  std::uint64_t mult = 1;
  if (suffix.empty() || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "KiB") mult = 1ull << 10;
  else if (suffix == "M" || suffix == "MiB") mult = 1ull << 20;
  else if (suffix == "G" || suffix == "GiB") mult = 1ull << 30;
  else if (suffix == "T" || suffix == "TiB") mult = 1ull << 40;
  else return std::nullopt;
  if (v == 0 || v > (~0ull) / mult) return std::nullopt;
  return v * mult;
}

std::vector<std::string> splitWords(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The engine binary: --engine, $SHARDSCOPE_ENGINE, next to this program (installed),
// ../engine/ (build tree), else PATH.
std::string findEngine(const std::optional<std::string>& given) {
  if (given) return *given;
  if (const char* env = std::getenv("SHARDSCOPE_ENGINE"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& candidate : {self.parent_path() / "shardscope-engine",
                                      self.parent_path().parent_path() / "engine" / "shardscope-engine"})
      if (fs::exists(candidate, ec)) return candidate.string();
  }
  return "shardscope-engine";
}

struct LaunchOutcome {
  int exit_code = 0;         // of the launcher; 128 + signal when killed
  bool cancelled = false;
  std::optional<st::RunId> run;
};

// Starts argv in its own process group (so Ctrl-C reaches only us), follows
// "run <id>" and "progress <done> <total> [what]" lines on its stdout, passes
// other lines to stderr. On cancel it sends SIGUSR1 to the group: mpirun and
// srun pass it on to the ranks, and the engine stops every rank after the same
// step and marks its run failed (SIGTERM would make mpirun kill the ranks
// after 1 s, possibly while rank 0 writes). SIGTERM after 30 s, SIGKILL after 45 s.
core::Result<LaunchOutcome> launchEngine(const std::vector<std::string>& argv, ProgressBar& bar) {
  int fds[2];
  if (pipe(fds) != 0) return core::Error{std::string("cannot create a pipe: ") + std::strerror(errno)};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return core::Error{"cannot start the launcher '" + argv.front() + "': " + std::strerror(rc)};
  }

  LaunchOutcome out;
  std::string buffer;
  bool eof = false;
  std::chrono::steady_clock::time_point cancel_sent{};
  int escalation = 0;  // 0 SIGUSR1 sent, 1 SIGTERM sent, 2 SIGKILL sent
  auto handleLine = [&](const std::string& line) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "run") {
      long long id = 0;
      if (in >> id && id > 0) out.run = st::RunId{id};
      return;
    }
    if (word == "progress") {
      unsigned long long done = 0, total = 0;
      if (in >> done >> total) {
        std::string what;
        std::getline(in >> std::ws, what);
        if (what.empty()) what = "step " + std::to_string(done) + " of " + std::to_string(total);
        bar.update(done, total, what);
        return;
      }
    }
    bar.finish();
    std::cerr << line << "\n";
  };
  while (!eof) {
    if (g_cancel.load() && !out.cancelled) {
      out.cancelled = true;
      cancel_sent = std::chrono::steady_clock::now();
      kill(-pid, SIGUSR1);
    }
    if (out.cancelled) {
      const auto waited = std::chrono::steady_clock::now() - cancel_sent;
      if (escalation == 0 && waited > std::chrono::seconds(30)) {
        escalation = 1;
        kill(-pid, SIGTERM);
      } else if (escalation == 1 && waited > std::chrono::seconds(45)) {
        escalation = 2;
        kill(-pid, SIGKILL);
      }
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, 200);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char chunk[4096];
    const ssize_t got = read(fds[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      eof = true;
      break;
    }
    buffer.append(chunk, static_cast<std::size_t>(got));
    for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      handleLine(buffer.substr(0, nl));
      buffer.erase(0, nl + 1);
    }
  }
  if (!buffer.empty()) handleLine(buffer);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  bar.finish();
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return out;
}

core::Status writeText(const fs::path& path, const std::string& text) {
  return core::writeFileAtomic(path.string(), text);
}

}  // namespace

int runProfile(Args args) {
  if (args.flag("--help")) {
    std::cout << kProfileHelp;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  const bool quiet = args.flag("--quiet");
  const bool all_groups = args.flag("--all-groups");
  const bool no_trace = args.flag("--no-trace");
  const bool calibrate = args.flag("--calibrate");
  auto store_arg = args.option("--store");
  auto plan_arg = args.option("--plan");
  auto grid_arg = args.option("--grid");
  auto mode_arg = args.option("--mode");
  auto steps_arg = args.option("--steps");
  auto warmup_arg = args.option("--warmup");
  auto seed_arg = args.option("--seed");
  auto threads_arg = args.option("--threads");
  auto batch_arg = args.option("--batch");
  auto sync_arg = args.option("--sync-interval");
  auto budget_arg = args.option("--memory-budget");
  auto label_arg = args.option("--label");
  auto launcher_arg = args.option("--launcher");
  auto engine_arg = args.option("--engine");
  auto cal_out_arg = args.option("--calibration-out");
  auto project = projectFromArgs(args);
  if (!args.error().empty()) return usageError("profile: " + args.error());
  if (auto u = args.unknownOption()) return usageError("profile: unknown option " + *u);
  if (!args.positional().empty()) return usageError("profile: unexpected argument " + args.positional().front());
  if (!store_arg) return usageError("profile: --store F is required (the trace store to write the run into)");
  if (plan_arg && grid_arg) return usageError("profile: give --plan or --grid, not both");
  const std::string mode = mode_arg.value_or("emulate");
  if (mode != "emulate" && mode != "mpi") return usageError("profile: --mode must be emulate or mpi, got " + mode);
  if (calibrate && cal_out_arg && cal_out_arg->empty()) return usageError("profile: --calibration-out needs a file");

  auto number = [](const std::optional<std::string>& text, unsigned long long fallback, unsigned long long max,
                   const char* name, bool allow_zero = false) -> std::optional<unsigned long long> {
    if (!text) return fallback;
    if (allow_zero && *text == "0") return 0ull;
    auto v = parsePositive(*text, max);
    if (!v) {
      usageError(std::string("profile: ") + name + " must be a whole number in " + (allow_zero ? "0" : "1") + ".." +
                 std::to_string(max) + ", got '" + *text + "'");
      return std::nullopt;
    }
    return v;
  };
  const auto steps = number(steps_arg, 5, 100000, "--steps");
  const auto warmup = number(warmup_arg, 1, 10000, "--warmup", true);
  const auto seed = number(seed_arg, 1, ~0ull >> 1, "--seed");
  const auto threads = number(threads_arg, 0, 4096, "--threads");
  const auto batch = number(batch_arg, 0, 1u << 24, "--batch");
  const auto sync = number(sync_arg, 0, 1u << 20, "--sync-interval");
  if (!steps || !warmup || !seed || !threads || !batch || !sync) return kExitUsage;
  std::optional<std::uint64_t> budget;
  if (budget_arg) {
    budget = parseSize(*budget_arg);
    if (!budget) return usageError("profile: --memory-budget must be a size such as 6G, 512M or 1048576, got '" + *budget_arg + "'");
  }
  if (!project) {
    std::cerr << project.error().message << "\n";
    return kExitInvalid;
  }
  if (*batch > 0) project->model.batch_size_per_gpu = static_cast<std::uint32_t>(*batch);
  const std::uint32_t sync_interval =
      *sync > 0 ? static_cast<std::uint32_t>(*sync) : std::max<std::uint32_t>(1, project->sync_interval);

  // The plan: a file, one grid, or the sweep's best.
  core::ShardPlan plan;
  if (plan_arg) {
    auto p = core::loadPlan(*plan_arg);
    if (!p) {
      std::cerr << p.error().message << "\n";
      return kExitInvalid;
    }
    plan = std::move(p).value();
    if (plan.world_size != project->cluster.worldSize()) {
      std::cerr << *plan_arg << ": /world_size: the plan is for " << plan.world_size << " GPUs but the cluster has "
                << project->cluster.worldSize() << " (give the cluster the plan was made for with --cluster)\n";
      return kExitInvalid;
    }
  } else {
    planner::SweepOptions options;
    options.sync_interval = sync_interval;
    if (grid_arg) {
      const auto m = parsePositive(*grid_arg, project->cluster.worldSize());
      if (!m || project->cluster.worldSize() % *m != 0)
        return usageError("profile: --grid must be a divisor of N = " + std::to_string(project->cluster.worldSize()) +
                          ", got " + *grid_arg);
      options.only_group_size = static_cast<std::uint32_t>(*m);
    }
    const core::Calibration* cal = project->calibration ? &*project->calibration : nullptr;
    const auto swept = planner::sweep(project->model, project->cluster, cal, project->constraints, options);
    if (swept.grids.empty()) {
      std::cerr << "profile: no feasible grid for this model and cluster\n";
      return kExitInvalid;
    }
    plan = swept.grids.front().plan;
  }
  const std::uint32_t N = plan.world_size;

  const CancelOnSignals on_signals(g_cancel);

  const fs::path store_path = *store_arg;
  std::optional<st::RunId> run;

  // One emulate run of `model` (used for the main run and the calibration runs).
  auto emulate = [&](const core::ModelSpec& model, const std::string& label, const std::string& title)
      -> std::pair<int, std::optional<st::RunId>> {
    profiler::EmulateOptions o;
    o.steps = static_cast<std::uint32_t>(*steps);
    o.warmup = static_cast<std::uint32_t>(*warmup);
    o.seed = *seed;
    o.threads = static_cast<unsigned>(*threads);
    o.memory_budget_bytes = budget.value_or(0);
    o.trace_spans = !no_trace;
    o.all_groups = all_groups;
    o.label = label;
    o.cancel = &g_cancel;
    ProgressBar bar(title, !quiet);
    o.progress = [&bar](std::uint64_t done, std::uint64_t total, std::string_view what) { bar.update(done, total, what); };
    auto r = profiler::runEmulate(model, project->cluster, plan, o, store_path);
    bar.finish();
    if (!r) {
      std::cerr << "profile: " << r.error().message << "\n";
      return {kExitFailure, std::nullopt};
    }
    if (r->cancelled) {
      std::cerr << "profile: cancelled; run " << static_cast<long long>(r->run) << " in " << store_path.string()
                << " is marked failed\n";
      return {kExitCancelled, r->run};
    }
    return {kExitOk, r->run};
  };

  if (mode == "emulate") {
    const std::string label = label_arg.value_or("emulate " + project->model.name + " M=" +
                                                 std::to_string(plan.sharding_group_size) + " R=" +
                                                 std::to_string(plan.replicas));
    auto [code, id] = emulate(project->model, label, "emulate");
    if (code != kExitOk) return code;
    run = id;
  } else {
    // Inputs for the engine, exactly as resolved here.
    std::error_code ec;
    const fs::path dir = fs::temp_directory_path(ec) / ("shardscope-profile-" + std::to_string(getpid()));
    fs::create_directories(dir, ec);
    struct Cleanup {
      fs::path dir;
      ~Cleanup() {
        std::error_code e;
        fs::remove_all(dir, e);
      }
    } cleanup{dir};
    for (const auto& [name, text] : {std::pair{"model.json", core::toJson(project->model).dump(1)},
                                     std::pair{"cluster.json", core::toJson(project->cluster).dump(1)},
                                     std::pair{"plan.json", core::toJson(plan).dump(1)}}) {
      if (auto s = writeText(dir / name, text); !s) {
        std::cerr << "profile: " << s.error().message << "\n";
        return kExitFailure;
      }
    }
    std::string launcher = launcher_arg.value_or("mpirun -np {N}");
    if (!launcher_arg && N > std::max(1u, std::thread::hardware_concurrency())) launcher += " --oversubscribe";
    std::vector<std::string> argv;
    for (std::string w : splitWords(launcher)) {
      for (std::size_t p; (p = w.find("{N}")) != std::string::npos;) w.replace(p, 3, std::to_string(N));
      argv.push_back(w);
    }
    if (argv.empty()) return usageError("profile: --launcher is empty");
    const std::uint64_t per_process = budget.value_or(profiler::availableMemoryBytes() * 6 / 10 / std::max(1u, N));
    argv.push_back(findEngine(engine_arg));
    for (const std::string& a : std::vector<std::string>{"--model", (dir / "model.json").string(), "--cluster", (dir / "cluster.json").string(),
                          "--plan", (dir / "plan.json").string(), "--store", fs::absolute(store_path, ec).string(),
                          "--steps", std::to_string(*steps), "--warmup", std::to_string(*warmup), "--seed",
                          std::to_string(*seed), "--sync-interval", std::to_string(sync_interval), "--progress"})
      argv.push_back(a);
    if (per_process > 0) {
      argv.push_back("--memory-budget");
      argv.push_back(std::to_string(per_process));
    }
    if (*threads > 0) {
      argv.push_back("--threads");
      argv.push_back(std::to_string(*threads));
    }
    if (no_trace) argv.push_back("--no-trace");
    if (label_arg) {
      argv.push_back("--label");
      argv.push_back(*label_arg);
    }
    ProgressBar bar("mpi x" + std::to_string(N), !quiet);
    auto outcome = launchEngine(argv, bar);
    if (!outcome) {
      std::cerr << "profile: " << outcome.error().message << "\n";
      return kExitFailure;
    }
    run = outcome->run;
    if (outcome->cancelled || outcome->exit_code != 0) {
      const std::string reason = outcome->cancelled ? std::string("cancelled (Ctrl-C in shardscope-cli profile)")
                                                    : "the launcher exited with status " + std::to_string(outcome->exit_code);
      if (run) {
        auto store = st::openStore(store_path, st::OpenMode::ReadWrite);
        if (store) (void)store->failStaleRun(*run, reason);
        std::cerr << "profile: " << reason << "; run " << static_cast<long long>(*run) << " in " << store_path.string()
                  << " is marked failed\n";
      } else {
        std::cerr << "profile: " << reason << " before the engine created a run\n";
      }
      return outcome->cancelled ? kExitCancelled : kExitFailure;
    }
    if (!run) {
      std::cerr << "profile: the engine finished but never said which run it wrote\n";
      return kExitFailure;
    }
  }

  // What was measured.
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) {
    std::cerr << "profile: " << store.error().message << "\n";
    return kExitFailure;
  }
  const core::Calibration* cal = project->calibration ? &*project->calibration : nullptr;
  profiler::AnalysisOptions analysis_options;
  analysis_options.calibration = cal;
  auto analysis = profiler::analyzeRun(*store, *run, analysis_options);
  if (!analysis) {
    std::cerr << "profile: " << analysis.error().message << "\n";
    return kExitFailure;
  }
  nlohmann::ordered_json out_json;
  if (json) {
    out_json["run"] = static_cast<long long>(*run);
    out_json["report"] = profiler::reportJson(*analysis);
  } else {
    std::cout << profiler::formatReport(*analysis);
  }

  if (calibrate) {
    // Many shards x three batch sizes: fit on B/4 and B, hold out B/2.
    const std::uint32_t B = project->model.batch_size_per_gpu;
    std::vector<st::RunId> fit{*run};
    std::vector<st::RunId> holdout;
    if (mode != "emulate") fit.clear();  // calibrate the CPU cost model from emulate runs only
    for (const std::uint32_t b : {std::max<std::uint32_t>(1, B / 4), std::max<std::uint32_t>(1, B / 2), B}) {
      if (b == B && mode == "emulate") continue;
      core::ModelSpec m = project->model;
      m.batch_size_per_gpu = b;
      auto [code, id] = emulate(m, "calibration B=" + std::to_string(b), "calibrate B=" + std::to_string(b));
      if (code != kExitOk) return code;
      (b == std::max<std::uint32_t>(1, B / 2) && b != B ? holdout : fit).push_back(*id);
    }
    auto report = profiler::calibrateFromRuns(store_path, fit, holdout);
    if (!report) {
      std::cerr << "profile: calibration: " << report.error().message << "\n";
      return kExitFailure;
    }
    const std::string cal_path = cal_out_arg.value_or(store_path.string() + ".calibration.json");
    if (auto s = core::writeJsonFile(cal_path, core::toJson(report->calibration)); !s) {
      std::cerr << "profile: " << s.error().message << "\n";
      return kExitFailure;
    }
    if (json) {
      out_json["calibration"] = profiler::calibrationReportJson(*report);
      out_json["calibration_file"] = cal_path;
    } else {
      std::cout << "\n" << profiler::formatCalibrationReport(*report) << "calibration written to " << cal_path
                << " (use: shardscope-cli plan --calibration " << cal_path << ")\n";
    }
  }
  if (json) std::cout << out_json.dump(2) << "\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
