// shardscope-cli import kineto|nsys FILE|DIR... --store F: traces of real
// trainers (PyTorch profiler JSON, Nsight Systems SQLite exports) into one
// trace-store run that `report` analyses. docs/import.md.
#include <algorithm>
#include <atomic>
#include <iostream>

#include "cli.h"
#include "common_options.h"
#include "progress.h"
#include "shardscope/profiler/workflow/trace_import_job.h"

namespace shardscope::app::cli {

namespace {
std::atomic<bool> g_import_cancel{false};

constexpr const char* kImportHelp =
    R"HELP(usage: shardscope-cli import kineto FILE|DIR... --store F [--label L] [--rules R.json]
                                    [--rank N | --rank-from-name REGEX] [--max-depth N] [--force] [--json] [--quiet]
       shardscope-cli import nsys FILE|DIR... --store F [--label L] [--rules R.json] [--rank-from-name]
                                  [--max-depth N] [--force] [--json] [--quiet]
       (either with [--plan P --model M [--cluster C] [--world-size N] [--layout L]])

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
  --max-depth N how many levels of subfolders a DIR is searched (default 4; 0: its own files)
  --force       import files that look like traces of different jobs (world sizes or process
                groups that differ, base times more than a day apart), with a warning
  --rules R     a shardscope.classify/1 file: regex rules tried before the built-in ones
  --label L     the run's label (default "kineto <first file> (+N)")
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
  if (!args.error().empty()) return usageError("import: " + args.error());
  if (auto u = args.unknownOption()) return usageError("import: unknown option " + *u);
  auto pos = args.positional();
  if (pos.empty()) return usageError("import needs a format: kineto or nsys");
  const std::string format = pos.front();
  pos.erase(pos.begin());
  if (format != "kineto" && format != "nsys")
    return usageError("import: unknown format '" + format + "' (expected kineto or nsys)");
  const bool kineto = format == "kineto";
  if (rank_arg && !kineto) return usageError("import nsys: --rank is for Kineto files (see --rank-from-name)");
  if (rank_arg && rank_pattern) return usageError("import kineto: give --rank or --rank-from-name, not both");
  if (pos.empty()) return usageError("import " + format + " needs at least one FILE or DIR");
  if (!store_arg) return usageError("import needs --store <file>");
  request.format = kineto ? profiler::TraceFormat::Kineto : profiler::TraceFormat::Nsys;
  request.inputs = std::move(pos);
  request.store = *store_arg;
  request.label = label_arg;
  request.rules = rules_arg;
  request.rank_from_name = rank_from_name;
  request.rank_pattern = rank_pattern;
  request.force = force;
  if (rank_arg) {
    request.rank = nonNegative(*rank_arg, (1 << 24) - 1);
    if (!request.rank) return usageError("import: --rank: expected a rank >= 0, got '" + *rank_arg + "'");
  }
  if (depth_arg) {
    const auto d = nonNegative(*depth_arg, 1000);
    if (!d) return usageError("import: --max-depth: expected a number of folder levels >= 0, got '" + *depth_arg + "'");
    request.max_depth = *d;
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
