// shardscope-engine: the distributed engine, one MPI process per rank of a
// plan (launched by mpirun or srun). Thin: arguments, MPI_Init/Finalize and
// signals; the run itself is profiler::runDistributed (docs/engine-distributed.md).
#include <mpi.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/profiler/engine_mpi/distributed.h"

namespace {

enum ExitCode : int { kExitOk = 0, kExitInvalid = 1, kExitUsage = 2, kExitFailure = 3, kExitCancelled = 130 };

constexpr const char* kHelp = R"(usage: mpirun -np N shardscope-engine --model M --cluster C (--plan P.json | --grid M)
                         --store F [--steps S] [--warmup W] [--seed N] [--threads T]
                         [--sync-interval K] [--memory-budget BYTES] [--batch B] [--label L]
                         [--progress] [--summary-json F] [--no-trace]

Runs a shard plan's training steps with one process per rank (N = the plan's
world_size) and writes every rank's trace into one run (kind mpi) of the
trace store F. Rank 0 prints `run <id>` once the run is begun, and with
--progress `progress <done> <total>` after every step (warm-up included).

  --model M          preset name or shardscope.model/1 file
  --cluster C        preset name or shardscope.cluster/1 file
  --plan P.json      shardscope.plan/1 file, or
  --grid M           plan in-process for sharding group size M (on the cluster)
  --store F          trace store (created when missing)
  --steps S          measured steps (default 10)      --warmup W   unrecorded steps first (default 1)
  --seed N           ids and initial weights (default 1)
  --threads T        kernel threads per rank (default: hardware threads / ranks on the node)
  --sync-interval K  replica weight sync after every K-th measured step (default 1)
  --memory-budget B  weights + optimizer state per process, bytes (suffix K, M, G: KiB, MiB, GiB);
                     default 60% of MemAvailable / ranks on the node; the smallest over ranks is used
  --batch B          samples per rank per step (default: the model's batch_size_per_gpu)
  --label L          run label (default "mpi <model> M=<M> R=<R>")
  --summary-json F   rank 0 writes per-rank shard digests and mean step times to F
  --no-trace         record step summaries and table stats only

SIGTERM, SIGINT or SIGUSR1 stop every rank after the current step; the run is
marked failed ("cancelled"). Exit codes: 0 complete, 1 invalid input,
2 usage, 3 failure, 130 cancelled.
)";

std::atomic<bool> g_cancel{false};
extern "C" void onSignal(int) { g_cancel.store(true); }

// A whole decimal number (no sign), optionally with a binary K/M/G suffix.
std::optional<std::uint64_t> parseCount(const std::string& text, bool suffixes) {
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  if (i == 0) return std::nullopt;
  if (i == text.size()) return v;
  if (!suffixes || i + 1 != text.size()) return std::nullopt;
  int shift = 0;
  switch (text[i]) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    default: return std::nullopt;
  }
  if (v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

struct Parsed {
  shardscope::profiler::DistributedConfig config;
  bool help = false;
  std::string error;  // usage error
};

Parsed parseArgs(const std::vector<std::string>& args) {
  Parsed p;
  auto& c = p.config;
  auto fail = [&](std::string message) {
    if (p.error.empty()) p.error = std::move(message);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const bool is_flag = name == "--help" || name == "-h" || name == "--progress" || name == "--no-trace";
    if (is_flag) {
      if (inline_value) fail(name + " takes no value");
      if (name == "--help" || name == "-h") p.help = true;
      else if (name == "--progress") c.progress = true;
      else c.tracing = false;
      continue;
    }
    if (name.rfind("--", 0) != 0) {
      fail("unexpected argument " + name);
      continue;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      fail(name + " needs a value");
      continue;
    }
    auto number = [&](std::uint64_t min, std::uint64_t max, bool suffixes = false) -> std::uint64_t {
      const auto v = parseCount(value, suffixes);
      if (!v || *v < min || *v > max) {
        fail(name + ": expected a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
             value);
        return min;
      }
      return *v;
    };
    if (name == "--model") c.model = value;
    else if (name == "--cluster") c.cluster = value;
    else if (name == "--plan") c.plan = value;
    else if (name == "--grid") c.grid = static_cast<std::uint32_t>(number(1, 1u << 24));
    else if (name == "--store") c.store = value;
    else if (name == "--steps") c.steps = static_cast<std::uint32_t>(number(1, 1u << 30));
    else if (name == "--warmup") c.warmup = static_cast<std::uint32_t>(number(0, 1u << 30));
    else if (name == "--seed") c.seed = number(0, UINT64_MAX);
    else if (name == "--threads") c.threads = static_cast<unsigned>(number(1, 4096));
    else if (name == "--sync-interval") c.sync_interval = static_cast<std::uint32_t>(number(1, 1u << 30));
    else if (name == "--memory-budget") c.memory_budget_bytes = number(1, UINT64_MAX, true);
    else if (name == "--batch") c.batch = static_cast<std::uint32_t>(number(1, 1u << 30));
    else if (name == "--label") c.label = value;
    else if (name == "--summary-json") c.summary_json = value;
    else fail("unknown option " + name);
  }
  if (p.help || !p.error.empty()) return p;
  if (c.model.empty()) fail("--model is required");
  else if (c.cluster.empty()) fail("--cluster is required");
  else if (c.plan.empty() == (c.grid == 0)) fail("give exactly one of --plan and --grid");
  else if (c.store.empty()) fail("--store is required");
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGINT, onSignal);
  std::signal(SIGUSR1, onSignal);

  const Parsed parsed = parseArgs(std::vector<std::string>(argv + 1, argv + argc));
  int code = kExitOk;
  if (parsed.help) {
    if (rank == 0) std::cout << kHelp;
  } else if (!parsed.error.empty()) {
    if (rank == 0) std::cerr << "shardscope-engine: " << parsed.error << " (--help for usage)\n";
    code = kExitUsage;
  } else {
    using shardscope::profiler::DistributedStatus;
    const auto outcome = shardscope::profiler::runDistributed(MPI_COMM_WORLD, parsed.config, g_cancel, std::cout);
    if (rank == 0 && outcome.status != DistributedStatus::Complete)
      std::cerr << "shardscope-engine: " << outcome.message << "\n";
    switch (outcome.status) {
      case DistributedStatus::Complete: code = kExitOk; break;
      case DistributedStatus::InvalidInput: code = kExitInvalid; break;
      case DistributedStatus::Failed: code = kExitFailure; break;
      case DistributedStatus::Cancelled: code = kExitCancelled; break;
    }
  }
  MPI_Finalize();
  return code;
}
