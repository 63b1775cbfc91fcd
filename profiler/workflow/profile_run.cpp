#include "shardscope/profiler/workflow/profile_run.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/profiler/analysis/timeline_window.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/workflow/engine_launch.h"
#include "profile_gpu.h"

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;
namespace st = core::store;

// Tells `progress` that a stage began, and that it ended when it goes.
class Stage {
 public:
  Stage(const ProfileProgressFn& progress, std::string name) : progress_(progress), name_(std::move(name)) {
    send(ProfileProgress::Kind::Begin);
  }
  ~Stage() { send(ProfileProgress::Kind::End); }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  void step(std::uint64_t done, std::uint64_t total, std::string_view what) const {
    if (progress_) progress_({ProfileProgress::Kind::Step, name_, done, total, std::string(what)});
  }
  void output(const std::string& line) const {
    if (progress_) progress_({ProfileProgress::Kind::EngineOutput, name_, 0, 0, line});
  }

 private:
  void send(ProfileProgress::Kind kind) const {
    if (progress_) progress_({kind, name_, 0, 0, {}});
  }
  const ProfileProgressFn& progress_;
  std::string name_;
};

core::Error withKind(core::Error e, core::ErrorKind kind) {
  e.kind = kind;
  return e;
}

// One emulate run of `model` (the profiled run, and each calibration run).
core::Result<st::RunId> emulate(const ProfileRequest& r, const core::ModelSpec& model, const std::string& label,
                                const std::string& stage_name, const ProfileProgressFn& progress,
                                const std::atomic<bool>* cancel) {
  EmulateOptions o;
  o.steps = r.steps;
  o.warmup = r.warmup;
  o.seed = r.seed;
  o.threads = r.threads;
  o.memory_budget_bytes = r.memory_budget_bytes.value_or(0);
  o.trace_spans = r.trace_spans;
  o.all_groups = r.all_groups;
  o.label = label;
  o.cancel = cancel;
  std::optional<core::Result<EmulateResult>> result;
  {
    const Stage stage(progress, stage_name);
    o.on_step = r.on_step;
    o.progress = [&stage](std::uint64_t done, std::uint64_t total, std::string_view what) {
      stage.step(done, total, what);
    };
    result.emplace(runEmulate(model, r.project.cluster, r.plan, o, r.store));
  }
  if (!*result) return withKind(result->error(), core::ErrorKind::Io);
  const EmulateResult& e = result->value();
  if (e.cancelled)
    return core::Error{
        "cancelled; run " + std::to_string(static_cast<long long>(e.run)) + " in " + r.store + " is marked failed",
        core::ErrorKind::Cancelled};
  return e.run;
}

// A large run's timeline summaries (so the timeline opens it at once): a
// failure, or a cancel while they are built, is a warning on the progress
// output, and the run and its analysis stand.
void summariseTimeline(const ProfileRequest& r, st::RunId run, const ProfileProgressFn& progress,
                       const std::atomic<bool>* cancel) {
  std::optional<Stage> stage;  // only when it builds: small runs need no summaries
  auto built = buildTimelineSummariesIfLarge(r.store, run, cancel, [&](int done, int total) {
    if (!stage) stage.emplace(progress, "timeline summaries");
    stage->step(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(total), "ranks");
  });
  if (!built) {
    if (!stage) stage.emplace(progress, "timeline summaries");
    stage->output("warning: the timeline summaries of run " + std::to_string(static_cast<long long>(run)) +
                  " were not built (" + built.error().message + "); the timeline reads its spans instead");
  }
}

// The engine's arguments after the launcher's, its inputs written into `dir`.
std::vector<std::string> engineArguments(const ProfileRequest& r, const fs::path& dir) {
  const bool emulate = r.mode == ProfileMode::Emulate;  // one process: shardscope-engine --emulate
  const std::uint32_t n = emulate ? 1 : r.plan.world_size;
  std::error_code ec;
  std::vector<std::string> argv{findEngine(r.engine),
                                "--model",
                                (dir / "model.json").string(),
                                "--cluster",
                                (dir / "cluster.json").string(),
                                "--plan",
                                (dir / "plan.json").string(),
                                "--store",
                                fs::absolute(r.store, ec).string(),
                                "--steps",
                                std::to_string(r.steps),
                                "--warmup",
                                std::to_string(r.warmup),
                                "--seed",
                                std::to_string(r.seed),
                                "--sync-interval",
                                std::to_string(profileSyncInterval(r)),
                                "--progress"};
  // Emulate on GPUs: the budget is per GPU, and the engine's default is 60% of its free memory.
  const bool gpu_default = emulate && r.device == ProfileDevice::Cuda && !r.memory_budget_bytes;
  const std::uint64_t per_process = r.memory_budget_bytes.value_or(availableMemoryBytes() * 6 / 10 / std::max(1u, n));
  if (per_process > 0 && !gpu_default) argv.insert(argv.end(), {"--memory-budget", std::to_string(per_process)});
  if (r.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(r.threads)});
  if (!r.trace_spans) argv.emplace_back("--no-trace");
  if (r.device == ProfileDevice::Cuda) argv.insert(argv.end(), {"--device", "cuda"});
  if (r.device == ProfileDevice::Cuda && !r.cupti) argv.emplace_back("--no-cupti");
  if (r.label) argv.push_back("--label=" + *r.label);  // one word, even when the label starts with "--"
  if (emulate) argv.insert(argv.begin() + 1, "--emulate");
  if (emulate && r.all_groups) argv.emplace_back("--all-groups");
  return argv;
}

// The folder of an mpi run's inputs: a given one (kept), else a fresh
// temporary one removed when this goes.
struct InputsFolder {
  fs::path dir;
  bool remove = false;
  InputsFolder() = default;
  InputsFolder(const InputsFolder&) = delete;
  InputsFolder& operator=(const InputsFolder&) = delete;
  InputsFolder(InputsFolder&& o) noexcept : dir(std::move(o.dir)), remove(std::exchange(o.remove, false)) {}
  InputsFolder& operator=(InputsFolder&&) = delete;
  ~InputsFolder() {
    std::error_code e;
    if (remove) fs::remove_all(dir, e);
  }
};

core::Result<InputsFolder> engineInputsFolder(const std::string& given) {
  InputsFolder f;
  std::error_code ec;
  if (!given.empty()) {
    f.dir = given;
    fs::create_directories(f.dir, ec);
    if (ec) return core::Error{"cannot create " + given + ": " + ec.message(), core::ErrorKind::Io};
    return f;
  }
  // mkdtemp: unique even when one process runs several launches at once.
  std::string pattern = (fs::temp_directory_path(ec) / "shardscope-profile-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    return core::Error{"cannot create a temporary folder " + pattern + ": " + std::strerror(errno),
                       core::ErrorKind::Io};
  f.dir = pattern;
  f.remove = true;
  return f;
}

// The run of an exited launcher: marks it failed when the launcher was
// cancelled or failed (the engine may not have got that far).
core::Result<st::RunId> launchedRun(const ProfileRequest& r, const EngineLaunchOutcome& outcome) {
  if (outcome.cancelled || outcome.exit_code != 0 || !outcome.limit.empty()) {
    const bool cancelled = outcome.cancelled && outcome.limit.empty();
    const std::string reason = !outcome.limit.empty() ? outcome.limit
                               : cancelled            ? r.cancel_reason
                                           : "the launcher exited with status " + std::to_string(outcome.exit_code);
    const core::ErrorKind kind = cancelled ? core::ErrorKind::Cancelled : core::ErrorKind::Io;
    const std::string hint = cancelled || !outcome.limit.empty() ? "" : launcherFailureHint(outcome.stderr_tail);
    if (!outcome.run)
      return core::Error{reason + " before the engine created a run" + (hint.empty() ? "" : ": " + hint), kind};
    auto store = st::openStore(r.store, st::OpenMode::ReadWrite);
    if (store) (void)store->failStaleRun(*outcome.run, reason);
    return core::Error{reason + "; run " + std::to_string(static_cast<long long>(*outcome.run)) + " in " + r.store +
                           " is marked failed",
                       kind};
  }
  if (!outcome.run)
    return core::Error{"the engine finished but never said which run it wrote", core::ErrorKind::Internal};
  return *outcome.run;
}

// One launched run (mpi, or emulate in the engine): its inputs into a folder, then the launcher.
core::Result<st::RunId> launch(const ProfileRequest& r, const ProfileProgressFn& progress,
                               const std::atomic<bool>* cancel) {
  const MpiLaunchHooks* hooks = r.mpi_hooks ? &*r.mpi_hooks : nullptr;
  auto inputs = engineInputsFolder(hooks != nullptr ? hooks->inputs_dir : std::string());
  if (!inputs) return inputs.error();
  const fs::path& dir = inputs->dir;
  for (const auto& [name, text] : {std::pair{"model.json", core::toJson(profileModel(r)).dump(1)},
                                   std::pair{"cluster.json", core::toJson(r.project.cluster).dump(1)},
                                   std::pair{"plan.json", core::toJson(r.plan).dump(1)}})
    if (auto s = core::writeFileAtomic((dir / name).string(), text); !s) return s.error();
  const std::vector<std::string> engine = engineArguments(r, dir);
  PreparedLaunch prepared;
  if (hooks != nullptr && hooks->prepare) {
    auto p = hooks->prepare(engine, dir.string());
    if (!p) return p.error();
    prepared = std::move(p).value();
  } else if (r.mode == ProfileMode::Emulate) {
    prepared.argv = engine;
  } else {
    prepared.argv = launcherCommand(r.launcher, r.plan.world_size);
    if (prepared.argv.empty()) return core::Error{"--launcher is empty", core::ErrorKind::Usage};
    prepared.argv.insert(prepared.argv.end(), engine.begin(), engine.end());
  }
  core::Result<EngineLaunchOutcome> outcome = core::Error{""};
  {
    const bool emulate = r.mode == ProfileMode::Emulate;
    const Stage stage(progress, emulate ? std::string("emulate") : "mpi x" + std::to_string(r.plan.world_size));
    EngineLaunchCallbacks callbacks;
    callbacks.progress = [&stage](std::uint64_t done, std::uint64_t total, std::string_view what) {
      stage.step(done, total, what);
    };
    callbacks.output = [&stage](const std::string& line) { stage.output(line); };
    if (hooks != nullptr) callbacks.error_output = hooks->stderr_line;
    if (!emulate && !r.launcher && hooks == nullptr && runningAsRoot())
      stage.output("running as root: passing --allow-run-as-root to mpirun, which refuses root without it");
    callbacks.step = [&r](std::int64_t step, const std::vector<double>& rank_ms) {
      if (!r.on_step) return;
      for (std::size_t rank = 0; rank < rank_ms.size(); ++rank)
        r.on_step(RankStepTime{static_cast<std::uint32_t>(rank), step, rank_ms[rank]});
    };
    outcome = launchEngine(prepared.argv, callbacks, cancel, prepared.options);
  }
  if (!outcome) return outcome.error();
  if (hooks != nullptr && hooks->exited) hooks->exited(*outcome);
  return launchedRun(r, *outcome);
}
}  // namespace

core::ModelSpec profileModel(const ProfileRequest& request) {
  core::ModelSpec model = request.project.model;
  if (request.batch > 0) model.batch_size_per_gpu = request.batch;
  return model;
}

std::uint32_t profileSyncInterval(const ProfileRequest& request) {
  return request.sync_interval > 0 ? request.sync_interval : std::max<std::uint32_t>(1, request.project.sync_interval);
}

core::Result<core::ShardPlan> profilePlanFromFile(const ProfileRequest& request, const std::string& path) {
  auto plan = core::loadPlan(path);
  if (!plan) return plan.error();
  const std::uint32_t n = request.project.cluster.worldSize();
  if (plan->world_size != n)
    return core::Error{path + ": /world_size: the plan is for " + std::to_string(plan->world_size) +
                           " GPUs but the cluster has " + std::to_string(n) +
                           " (give the cluster the plan was made for with --cluster)",
                       core::ErrorKind::InvalidInput, path, "/world_size"};
  return plan;
}

core::Result<core::ShardPlan> plannedProfilePlan(const ProfileRequest& request,
                                                 std::optional<std::uint32_t> group_size) {
  planner::SweepOptions options;
  options.sync_interval = profileSyncInterval(request);
  options.only_group_size = group_size;
  const core::Project& p = request.project;
  const core::Calibration* cal = p.calibration ? &*p.calibration : nullptr;
  const auto swept = planner::sweep(profileModel(request), p.cluster, cal, p.constraints, options);
  if (swept.grids.empty()) return core::Error{"no feasible grid for this model and cluster"};
  return swept.grids.front().plan;
}

core::Result<ProfileOutcome> runProfile(const ProfileRequest& request, const ProfileProgressFn& progress,
                                        const std::atomic<bool>* cancel) {
  core::Result<st::RunId> run = core::Error{""};
  if (request.mode == ProfileMode::Emulate && request.emulate_in_engine) {
    run = launch(request, progress, cancel);
  } else if (request.device == ProfileDevice::Cuda && request.mode == ProfileMode::Emulate) {
    run = runOnLocalGpus(request, progress, cancel);
  } else if (request.mode == ProfileMode::Emulate) {
    const core::ModelSpec model = profileModel(request);
    const std::string label =
        request.label.value_or("emulate " + model.name + " M=" + std::to_string(request.plan.sharding_group_size) +
                               " R=" + std::to_string(request.plan.replicas));
    run = emulate(request, model, label, "emulate", progress, cancel);
  } else {
    run = launch(request, progress, cancel);
  }
  if (!run) return run.error();
  summariseTimeline(request, *run, progress, cancel);
  auto store = st::openStore(request.store, st::OpenMode::ReadOnly);
  if (!store) return withKind(store.error(), core::ErrorKind::Io);
  AnalysisOptions options;
  options.calibration = request.project.calibration ? &*request.project.calibration : nullptr;
  auto analysis = analyzeRun(*store, *run, options);
  if (!analysis) return withKind(analysis.error(), core::ErrorKind::Internal);
  return ProfileOutcome{*run, std::move(analysis).value()};
}

core::Result<ProfileCalibration> calibrateProfile(const ProfileRequest& request, st::RunId profiled,
                                                  const std::optional<std::string>& out,
                                                  const ProfileProgressFn& progress, const std::atomic<bool>* cancel) {
  // Many shards x three batch sizes: fit on B/4 and B, hold out B/2.
  const bool emulated = request.mode == ProfileMode::Emulate;
  const core::ModelSpec model = profileModel(request);
  const std::uint32_t b_full = model.batch_size_per_gpu;
  const std::uint32_t b_half = std::max<std::uint32_t>(1, b_full / 2);
  std::vector<st::RunId> fit;
  std::vector<st::RunId> holdout;
  if (emulated) fit.push_back(profiled);  // calibrate the CPU cost model from emulate runs only
  for (const std::uint32_t b : {std::max<std::uint32_t>(1, b_full / 4), b_half, b_full}) {
    if (b == b_full && emulated) continue;
    core::ModelSpec m = model;
    m.batch_size_per_gpu = b;
    const std::string batch = "B=" + std::to_string(b);
    auto id = emulate(request, m, "calibration " + batch, "calibrate " + batch, progress, cancel);
    if (!id) return id.error();
    (b == b_half && b != b_full ? holdout : fit).push_back(*id);
  }
  auto report = calibrateFromRuns(request.store, fit, holdout);
  if (!report) return core::Error{"calibration: " + report.error().message, core::ErrorKind::Internal};
  ProfileCalibration result{std::move(report).value(), out.value_or(request.store + ".calibration.json")};
  if (auto s = core::writeJsonFile(result.path, core::toJson(result.report.calibration)); !s) return s.error();
  return result;
}

}  // namespace shardscope::profiler
