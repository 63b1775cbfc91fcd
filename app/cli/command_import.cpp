// shardscope-cli import kineto|nsys|nccl FILE|DIR... --store F: traces of
// real trainers (PyTorch profiler JSON, Nsight Systems SQLite exports, the
// NCCL profiler plugin's JSON lines) into one trace-store run that `report`
// analyses. docs/import.md, docs/nccl-profiler.md.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <sstream>

#include "profiling_commands.h"
#include "trainer_plan_options.h"
#include "progress.h"
#include "shardscope/core/json_io.h"
#include "shardscope/report/text_table.h"
#include "shardscope/profiler/import/nccl_trace_import.h"
#include "shardscope/profiler/workflow/trace_import_job.h"

namespace shardscope::app::cli {

namespace {
std::atomic<bool> g_import_cancel{false};

constexpr const char* kImportHelp =
    R"HELP(usage: shardscope-cli import kineto FILE|DIR... --store F [--label L] [--rules R.json]
                                    [--rank N | --rank-from-name REGEX] [--max-depth N] [--force] [--json] [--quiet]
       shardscope-cli import nsys FILE|DIR... --store F [--label L] [--rules R.json] [--rank-from-name]
                                  [--max-depth N] [--force] [--json] [--quiet]
       shardscope-cli import nccl FILE|DIR... --store F [--label L] [--max-depth N] [--force] [--json] [--quiet]
       (any of them with [--plan P --model M [--cluster C] [--world-size N] [--layout L]])

Imports traces of a real training job, one file per rank, into one run of the
trace store F (created when missing); `shardscope-cli report --store F` then
prints the measured per-rank embedding time, collectives and waits, imbalance
and stragglers. docs/import.md.

  kineto        PyTorch profiler JSON (.json or .json.gz); a DIR means every *.json and
                *.json.gz in it and its subfolders. Rank and world size from distributedInfo;
                a file without a rank takes --rank N (one file), or the first capture group of
                --rank-from-name REGEX searched in its name (e.g. 'rank(\d+)'), else its
                position among the files (warning)
  nsys          Nsight Systems SQLite exports (nsys export --type sqlite); a DIR means every
                *.sqlite and *.db in it and its subfolders. Ranks in file order, or with
                --rank-from-name from the file (MPI_RANKS table, an NVTX "rank=N" hint, or
                "rank<N>" in its name)
  nccl          traces of ShardScope's NCCL profiler plugin (shardscope.nccl-trace/1, one
                shardscope-nccl-<host>-<pid>.jsonl per process; docs/nccl-profiler.md); a DIR
                means every *.jsonl in it and its subfolders. Each file's header says its rank.
                Every file is checked before anything is written
  --max-depth N how many levels of subfolders a DIR is searched (default 4; 0: its own files)
  --force       import files that look like traces of different jobs (world sizes or process
                groups that differ, base times more than a day apart; nccl: a communicator rank
                in two files, another job's communicator of all ranks), with a warning
  --rules R     a shardscope.classify/1 file: regex rules tried before the built-in ones
                (kineto, nsys)
  --label L     the run's label (default "<format> <first file> (+N)")
  --json        print the summary as JSON
  --quiet       no progress on stderr

The plan the trainer ran, kept with the run (then report and calibrate need no --plan):
)HELP";
constexpr const char* kImportExit = R"HELP(
Ctrl-C cancels: the run is marked failed, exit 130.
Exit 0 ok, 1 an input or rules file is invalid (the run is marked failed), 2 usage,
3 the store cannot be written, 130 cancelled.
)HELP";

// A whole number in 0..max, else nullopt.
std::optional<int> nonNegative(const std::string& text, int max) {
  if (text == "0") return 0;
  const auto v = parsePositive(text, static_cast<unsigned long long>(max));
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

std::string ncclSummaryText(const profiler::NcclImportOutcome& out, const std::string& store,
                            const std::string& plan_summary) {
  std::ostringstream o;
  const auto run = static_cast<std::int64_t>(out.run);
  o << "imported run " << run << " (import-nccl) into " << store << ": " << out.ranks.size() << " rank(s), "
    << out.calls << " calls";
  if (!plan_summary.empty()) o << "; the trainer's plan " << plan_summary << " kept with it";
  o << "\n\n";
  report::TextTable ranks({"rank", "calls", "GPU-timed", "steps", "steps from", "file"});
  ranks.leftFrom(4);
  for (const auto& r : out.ranks)
    ranks.add({std::to_string(r.rank), std::to_string(r.collectives), std::to_string(r.gpu_events),
               std::to_string(r.steps), r.step_source, r.source});
  ranks.print(o, "");
  o << "\ncalls by op:\n";
  report::TextTable ops({"op", "calls"});
  for (const auto& [op, n] : out.calls_by_op) ops.add({op, std::to_string(n)});
  ops.print(o);
  if (!out.warnings.empty()) {
    o << "\nwarnings:\n";
    for (const auto& w : out.warnings) o << "  " << w << "\n";
  }
  o << "\nnext: shardscope-cli report --store " << store << " --run " << run << "\n";
  return o.str();
}

nlohmann::ordered_json ncclSummaryJson(const profiler::NcclImportOutcome& out, const std::string& store,
                                       const std::string& plan_summary) {
  using J = nlohmann::ordered_json;
  J j;
  j["run"] = static_cast<std::int64_t>(out.run);
  j["store"] = store;
  j["kind"] = "import-nccl";
  j["calls"] = out.calls;
  j["ranks"] = J::array();
  for (const auto& r : out.ranks)
    j["ranks"].push_back({{"rank", r.rank},
                          {"source", r.source},
                          {"calls", r.collectives},
                          {"gpu_timed_calls", r.gpu_events},
                          {"steps", r.steps},
                          {"step_source", r.step_source},
                          {"spans_by_kind", r.spans_by_kind}});
  j["calls_by_op"] = out.calls_by_op;
  j["plan"] = plan_summary.empty() ? J(nullptr) : J(plan_summary);
  j["warnings"] = out.warnings;
  return j;
}

// import nccl: the plugin's traces (each file says its rank), checked in full before the run begins.
int runImportNccl(const profiler::TraceImportRequest& request, bool json, bool quiet) {
  g_import_cancel.store(false);
  const CancelOnSignals on_signals(g_import_cancel);
  ProgressBar bar("import", !quiet);
  auto imported = profiler::importNcclTraceRun(
      request,
      [&bar](std::uint64_t done, std::uint64_t total, std::string_view file) { bar.update(done, total, file); },
      &g_import_cancel);
  bar.finish();
  if (!imported) return fail(imported.error(), "import: ");
  if (json)
    std::cout << ncclSummaryJson(imported->outcome, request.store, imported->plan_summary).dump(2) << "\n";
  else
    std::cout << ncclSummaryText(imported->outcome, request.store, imported->plan_summary);
  return kExitOk;
}
}  // namespace

int runImport(Args args) {
  if (args.flag("--help") || args.flag("-h")) {
    std::cout << kImportHelp << kTrainerPlanHelp << kImportExit;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  const bool quiet = args.flag("--quiet");
  const bool force = args.flag("--force");
  auto store_arg = args.option("--store");
  auto label_arg = args.option("--label");
  auto rules_arg = args.option("--rules");
  auto rank_arg = args.option("--rank");
  auto depth_arg = args.option("--max-depth");
  profiler::TraceImportRequest request;
  request.trainer = takeTrainerPlanSpec(args);
  // --rank-from-name takes a REGEX for Kineto files and is a flag for nsys exports.
  const auto rest = args.positional();
  const bool kineto_format = std::find(rest.begin(), rest.end(), "kineto") != rest.end();
  std::optional<std::string> rank_pattern;
  bool rank_from_name = false;
  if (kineto_format)
    rank_pattern = args.option("--rank-from-name");
  else
    rank_from_name = args.flag("--rank-from-name");
  if (auto bad = args.problem(Args::Positionals::Allowed)) return usageError("import: " + *bad);
  auto pos = args.positional();
  if (pos.empty()) return usageError("import needs a format: kineto, nsys or nccl");
  const std::string format = pos.front();
  pos.erase(pos.begin());
  if (format != "kineto" && format != "nsys" && format != "nccl")
    return usageError("import: unknown format '" + format + "' (expected kineto, nsys or nccl)");
  const bool kineto = format == "kineto";
  if (format == "nccl" && (rank_arg || rank_from_name || rules_arg))
    return usageError(
        std::string("import nccl: ") +
        (rules_arg  ? "--rules"
         : rank_arg ? "--rank"
                    : "--rank-from-name") +
        " is for kineto and nsys (a NCCL trace's header says its rank, and it has no kernels to classify)");
  if (rank_arg && !kineto) return usageError("import nsys: --rank is for Kineto files (see --rank-from-name)");
  if (rank_arg && rank_pattern) return usageError("import kineto: give --rank or --rank-from-name, not both");
  if (pos.empty()) return usageError("import " + format + " needs at least one FILE or DIR");
  if (!store_arg) return usageError("import needs --store <file>");
  if (depth_arg) {
    const auto d = nonNegative(*depth_arg, 1000);
    if (!d) return usageError("import: --max-depth: expected a number of folder levels >= 0, got '" + *depth_arg + "'");
    request.max_depth = *d;
  }
  request.format = kineto             ? profiler::TraceFormat::Kineto
                   : format == "nccl" ? profiler::TraceFormat::Nccl
                                      : profiler::TraceFormat::Nsys;
  request.inputs = std::move(pos);
  request.store = *store_arg;
  request.label = label_arg;
  request.rules = rules_arg;
  request.rank_from_name = rank_from_name;
  request.rank_pattern = rank_pattern;
  request.force = force;
  if (format == "nccl") return runImportNccl(request, json, quiet);
  if (rank_arg) {
    request.rank = nonNegative(*rank_arg, (1 << 24) - 1);
    if (!request.rank) return usageError("import: --rank: expected a rank >= 0, got '" + *rank_arg + "'");
  }

  g_import_cancel.store(false);
  const CancelOnSignals on_signals(g_import_cancel);
  ProgressBar bar("import", !quiet);
  const auto progress = [&bar](std::uint64_t done, std::uint64_t total, std::string_view what) {
    bar.update(done, total, what);
  };
  auto imported = profiler::importTraces(request, progress, &g_import_cancel);
  bar.finish();
  if (!imported) return fail(imported.error(), "import: ");
  if (json)
    std::cout << profiler::importSummaryJson(*imported, request).dump(2) << "\n";
  else
    std::cout << profiler::importSummaryText(*imported, request);
  return kExitOk;
}

}  // namespace shardscope::app::cli
