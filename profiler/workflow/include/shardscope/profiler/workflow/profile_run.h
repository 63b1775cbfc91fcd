// A profile: run the engine on a plan and store what it measured, then
// analyse the run (what `shardscope-cli profile` prints), and optionally fit
// a calibration from runs at several batch sizes. Emulate mode runs the ranks
// of a sharding group in this process, one after another; mpi mode starts
// shardscope-engine through a launcher (mpirun, srun, ...) and follows it.
// A cancel marks the run failed; every other run in the store is untouched.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/core/plan.h"
#include "shardscope/core/project.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/analysis/calibration_fit.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/workflow/engine_launch.h"

namespace shardscope::profiler {

enum class ProfileMode { Emulate, Mpi };
// Where the engine runs: the CPU backend, or this machine's GPUs (CUDA, NCCL,
// CUPTI; emulate mode then runs every rank in this process, one per GPU).
enum class ProfileDevice { Cpu, Cuda };

// True when this build has the GPU engine (CUDA, NCCL and CUPTI were found).
[[nodiscard]] bool gpuEngineBuilt();

// The versions of the GPU stack this process runs with ("" where unknown: no
// GPU engine, no driver): what an agent's describe reports.
struct GpuStackVersions {
  std::string cuda_runtime;  // "13.0"
  std::string cuda_driver;   // the newest CUDA the driver supports; "" without a driver
  std::string nccl;          // "2.27.7"
};
[[nodiscard]] GpuStackVersions gpuStackVersions();

// A launched run (mpi, or emulate in the engine) whose launch a caller owns
// (the agent: its launcher template, a batch script, the job's folder, its
// stderr and exit code, the child's limits).
struct MpiLaunchHooks {
  // The launch of the engine's words, its inputs in `inputs_dir`.
  std::function<core::Result<PreparedLaunch>(const std::vector<std::string>& engine_argv,
                                             const std::string& inputs_dir)>
      prepare;
  std::string inputs_dir;                                    // written and kept; "": a temporary folder
  std::function<void(const std::string& line)> stderr_line;  // each stderr line (unset: this process's stderr)
  std::function<void(const EngineLaunchOutcome& outcome)> exited;
};

struct ProfileRequest {
  core::Project project;            // model, cluster, constraints, and the calibration the analysis prices with
  std::uint32_t batch = 0;          // samples per GPU; 0: the model's
  std::uint32_t sync_interval = 0;  // replica sync every K steps; 0: the project's (at least 1)
  core::ShardPlan plan;             // what runs: profilePlanFromFile or plannedProfilePlan
  std::string store;                // the trace store (created when missing)
  ProfileMode mode = ProfileMode::Emulate;
  ProfileDevice device = ProfileDevice::Cpu;
  bool cupti = true;         // cuda: CUPTI activity tracing (kernels, copies, API calls) with its overhead measured
  std::uint32_t steps = 5;   // measured steps
  std::uint32_t warmup = 1;  // unrecorded steps first
  std::uint64_t seed = 1;
  unsigned threads = 0;  // kernel threads per process; 0: all cores
  // Embedding state per process; absent: 60% of MemAvailable (divided by N in mpi mode).
  std::optional<std::uint64_t> memory_budget_bytes;
  bool trace_spans = true;  // off: step summaries and table totals only
  bool all_groups = false;  // emulate every sharding group, not only group 0
  std::optional<std::string> label;
  std::optional<std::string> launcher;      // mpi: e.g. "srun -n {N}"; default "mpirun -np {N}" (engine_launch.h)
  std::optional<std::string> engine;        // mpi: the engine binary (findEngine)
  std::string cancel_reason = "cancelled";  // mpi: the failure reason a cancelled run gets
  EmulateStepFn on_step;                    // emulate: every rank's step time as it finishes (live views)
  std::optional<MpiLaunchHooks> mpi_hooks;  // mpi: the launch as a caller prepares it (replaces launcher)
  // emulate: start `shardscope-engine --emulate` (engine, findEngine) as a
  // child process and follow it like an mpi run, instead of running in this
  // process: the run's tables live in the child's memory, and a caller's
  // hooks can limit it. No launcher: mpi_hooks->prepare gets the engine's words.
  bool emulate_in_engine = false;
};

// The model a request runs (its batch applied) and its sync interval.
[[nodiscard]] core::ModelSpec profileModel(const ProfileRequest& request);
[[nodiscard]] std::uint32_t profileSyncInterval(const ProfileRequest& request);

// A shardscope.plan/1 file whose world size must be the cluster's.
[[nodiscard]] core::Result<core::ShardPlan> profilePlanFromFile(const ProfileRequest& request, const std::string& path);
// The planner's plan for sharding group size `group_size` (a divisor of the
// world size), else the best grid of a sweep.
[[nodiscard]] core::Result<core::ShardPlan> plannedProfilePlan(const ProfileRequest& request,
                                                               std::optional<std::uint32_t> group_size);

// What a running profile says: a stage begins ("emulate", "calibrate B=256",
// "mpi x4"), advances, ends; in mpi mode the engine's other output lines.
struct ProfileProgress {
  enum class Kind { Begin, Step, End, EngineOutput };
  Kind kind = Kind::Step;
  std::string stage;
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  std::string text;  // Step: what runs now; EngineOutput: the line
};
using ProfileProgressFn = std::function<void(const ProfileProgress&)>;

struct ProfileOutcome {
  core::store::RunId run{};
  RunAnalysis analysis;  // as `report` would print it
};

// Runs request.plan, then analyses the run. Errors: Cancelled (the run is
// marked failed; the message says which), Usage (an empty launcher), Io (the
// store, temporary files, a launcher that cannot start or fails), Internal
// (the engine did not name its run, its run cannot be analysed).
[[nodiscard]] core::Result<ProfileOutcome> runProfile(const ProfileRequest& request, const ProfileProgressFn& progress,
                                                      const std::atomic<bool>* cancel);

struct ProfileCalibration {
  CalibrationReport report;
  std::string path;  // where the calibration was written
};

// The calibration protocol of `profile --calibrate`: emulate the plan at
// batch sizes B/4 and B/2 (and B in mpi mode: the CPU cost model is
// calibrated from emulate runs only, so `profiled` is used in emulate mode
// only), fit on B/4 and B, hold out B/2, and write shardscope.calibration/1
// to `out` (default "<store>.calibration.json").
[[nodiscard]] core::Result<ProfileCalibration> calibrateProfile(const ProfileRequest& request,
                                                                core::store::RunId profiled,
                                                                const std::optional<std::string>& out,
                                                                const ProfileProgressFn& progress,
                                                                const std::atomic<bool>* cancel);

}  // namespace shardscope::profiler
