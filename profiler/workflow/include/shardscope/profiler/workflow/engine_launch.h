// Starting shardscope-engine through a launcher (mpirun, srun, ...) and
// following it: the run id and progress it prints, the other lines it
// writes, and a cancel that reaches every rank. Used by profile runs in mpi
// mode; POSIX only (posix_spawn, process groups, signals).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"

namespace shardscope::profiler {

// Whether this process runs as root (effective user id 0).
[[nodiscard]] bool runningAsRoot();

// The launcher's words for `world_size` ranks: `launcher` (default "mpirun
// -np {N}", then "--oversubscribe" when N exceeds this machine's hardware
// threads and "--allow-run-as-root" when running as root, which OpenMPI
// refuses otherwise), split at white space, every "{N}" replaced by the
// world size. Empty when `launcher` has no words. A launcher the user gives
// is taken as it is.
[[nodiscard]] std::vector<std::string> launcherCommand(const std::optional<std::string>& launcher,
                                                       std::uint32_t world_size, bool as_root = runningAsRoot());

// The engine binary: `given`, $SHARDSCOPE_ENGINE, next to this program
// (installed), ../engine/ beside its folder (a build tree), else
// "shardscope-engine" (looked up in PATH).
[[nodiscard]] std::string findEngine(const std::optional<std::string>& given);

struct EngineLaunchCallbacks {
  // "progress <done> <total> [what]" lines; `what` defaults to "step <done> of <total>".
  std::function<void(std::uint64_t done, std::uint64_t total, std::string_view what)> progress;
  // "step <measured step> <ms of rank 0> <ms of rank 1> ..." lines: every
  // rank's time of one measured step (the engine prints them with --progress).
  std::function<void(std::int64_t step, const std::vector<double>& rank_ms)> step;
  // Every other line the launcher or the engine prints on stdout (not "run <id>").
  std::function<void(const std::string& line)> output;
  // Each line they print on stderr; unset: written to this process's stderr.
  std::function<void(const std::string& line)> error_output;
};

struct EngineLaunchOutcome {
  int exit_code = 0;  // of the launcher; 128 + signal when killed
  bool cancelled = false;
  std::optional<core::store::RunId> run;  // from the engine's "run <id>" line
  std::vector<std::string> stderr_tail;   // the last 40 lines printed on stderr
  // Why a limit (ProcessLimits) killed it, e.g. "memory limit (8.0 GiB,
  // limits.job_memory_bytes): its processes held 8.1 GiB"; empty otherwise.
  std::string limit;
  std::uint64_t peak_resident_bytes = 0;  // the most its processes held at once, as sampled (limits set)
};

// Limits on a launched process and everything it starts on this machine (its
// descendants, whatever their process group). Resident memory is the sum of
// their VmRSS, sampled every 200 ms; a limit that is passed kills them all
// with SIGKILL at once (no graceful stop: they may be about to take the
// machine's memory). RLIMIT_AS counts virtual memory, which thread stacks,
// glibc's per-thread arenas and mapped libraries inflate well past what is
// resident, and a CUDA process reserves address space the size of its GPUs:
// give it only as a backstop well above resident_bytes, and never to a GPU
// process or to a launcher that passes limits on (sbatch, srun).
struct ProcessLimits {
  std::uint64_t resident_bytes = 0;                // 0: none
  std::string resident_name = "the memory limit";  // how a message names it ("limits.job_memory_bytes")
  std::uint64_t address_space_bytes = 0;           // RLIMIT_AS of the started process (inherited); 0: none
  std::chrono::seconds wall{0};                    // since the start; 0: none
  std::string wall_name = "the wall time limit";   // how a message names it ("limits.job_seconds")
  bool die_with_caller = false;  // PR_SET_PDEATHSIG: SIGKILLed when the thread that started it dies (a kill -9)
  // Called with each sample of the resident bytes; a non-empty answer kills
  // them with that reason (a limit the caller keeps over several launches).
  std::function<std::string(std::uint64_t resident_bytes)> sample;
  [[nodiscard]] bool any() const {
    return resident_bytes > 0 || address_space_bytes > 0 || wall.count() > 0 || die_with_caller || sample;
  }
};

// The sum of VmRSS of `pid` and its descendants (0 when it is gone), and the
// descendants themselves; read from /proc.
[[nodiscard]] std::uint64_t processTreeResidentBytes(int pid);
[[nodiscard]] std::vector<int> processTree(int pid);  // pid first, then its descendants

// The exact fix for a launcher failure recognised in its stderr (OpenMPI's
// refusal to run as root), else empty.
[[nodiscard]] std::string launcherFailureHint(const std::vector<std::string>& stderr_tail);

// How a launch differs from the plain one (both optional).
struct EngineLaunchOptions {
  // A file the engine's stdout goes to instead of the launcher's (a batch
  // job's output file): followed as it grows; its lines read like stdout's.
  std::string follow_file;
  // Replaces the cancel's signals: called with 0 at the cancel (stop
  // gracefully), 1 after 30 s and 2 after 45 s (stop hard).
  std::function<void(int escalation)> cancel_action;
  ProcessLimits limits;  // none by default
};

// A launcher's words and options for one engine run, as a caller that owns
// the launcher (the agent's template, a batch script) prepared them.
struct PreparedLaunch {
  std::vector<std::string> argv;
  EngineLaunchOptions options;
};

// Starts argv in its own process group (so a terminal's Ctrl-C reaches only
// the caller) and follows its stdout until it exits. When `cancel` becomes
// true it sends SIGUSR1 to the group: mpirun and srun pass it on to the
// ranks, and the engine stops every rank after the same step and marks its
// run failed (SIGTERM would make mpirun kill the ranks after a second,
// possibly while rank 0 writes). SIGTERM follows after 30 s, SIGKILL after
// 45 s. After a cancel or a limit, whatever is left of the group and the
// process's descendants is SIGKILLed before it is reaped, so nothing it
// started outlives it. Errors (Io): no pipe, or the launcher cannot be started.
[[nodiscard]] core::Result<EngineLaunchOutcome> launchEngine(const std::vector<std::string>& argv,
                                                             const EngineLaunchCallbacks& callbacks,
                                                             const std::atomic<bool>* cancel,
                                                             const EngineLaunchOptions& options = {});

}  // namespace shardscope::profiler
