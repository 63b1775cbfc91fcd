// shardscope-cli import kineto|nsys FILE|DIR... --store F: traces of real
// trainers (PyTorch profiler JSON, Nsight Systems SQLite exports) into one
// trace-store run that `report` analyses. docs/import.md.
#include <atomic>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "common_options.h"
#include "progress.h"
#include "shardscope/profiler/workflow/trace_import_job.h"

namespace shardscope::app::cli {

namespace {
std::atomic<bool> g_import_cancel{false};

constexpr const char* kImportHelp =
    R"HELP(usage: shardscope-cli import kineto FILE|DIR... --store F [--label L] [--rules R.json] [--json] [--quiet]
       shardscope-cli import nsys FILE|DIR... --store F [--label L] [--rules R.json] [--rank-from-name]
                                  [--json] [--quiet]
       (either with [--plan P --model M [--cluster C] [--world-size N] [--layout L]])

Imports traces of a real training job, one file per rank, into one run of the
trace store F (created when missing); `shardscope-cli report --store F` then
prints the measured per-rank embedding time, collectives and waits, imbalance
and stragglers. docs/import.md.

  kineto        PyTorch profiler JSON (.json or .json.gz); a DIR means every *.json and
                *.json.gz in it. Rank and world size from distributedInfo (file order
                when a file has none, with a warning)
  nsys          Nsight Systems SQLite exports (nsys export --type sqlite); a DIR means every
                *.sqlite and *.db in it. Ranks in file order, or with --rank-from-name from the file
                (MPI_RANKS table, an NVTX "rank=N" hint, or "rank<N>" in its name)
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

std::string ms(std::int64_t ns) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(3) << static_cast<double>(ns) / 1e6 << " ms";
  return o.str();
}
}  // namespace

int runImport(Args args) {
  if (args.flag("--help") || args.flag("-h")) {
    std::cout << kImportHelp << kTrainerPlanHelp << kImportExit;
    return kExitOk;
  }
  const bool json = args.flag("--json");
  const bool quiet = args.flag("--quiet");
  const bool rank_from_name = args.flag("--rank-from-name");
  auto store_arg = args.option("--store");
  auto label_arg = args.option("--label");
  auto rules_arg = args.option("--rules");
  profiler::TraceImportRequest request;
  request.trainer = takeTrainerPlanSpec(args);
  if (!args.error().empty()) return usageError("import: " + args.error());
  if (auto u = args.unknownOption()) return usageError("import: unknown option " + *u);
  auto pos = args.positional();
  if (pos.empty()) return usageError("import needs a format: kineto or nsys");
  const std::string format = pos.front();
  pos.erase(pos.begin());
  if (format != "kineto" && format != "nsys")
    return usageError("import: unknown format '" + format + "' (expected kineto or nsys)");
  const bool kineto = format == "kineto";
  if (rank_from_name && kineto)
    return usageError("import kineto: --rank-from-name is for nsys (Kineto files say their rank)");
  if (pos.empty()) return usageError("import " + format + " needs at least one FILE or DIR");
  if (!store_arg) return usageError("import needs --store <file>");
  request.format = kineto ? profiler::TraceFormat::Kineto : profiler::TraceFormat::Nsys;
  request.inputs = std::move(pos);
  request.store = *store_arg;
  request.label = label_arg;
  request.rules = rules_arg;
  request.rank_from_name = rank_from_name;

  g_import_cancel.store(false);
  const CancelOnSignals on_signals(g_import_cancel);
  ProgressBar bar("import", !quiet);
  const auto progress = [&bar](std::uint64_t done, std::uint64_t total, std::string_view what) {
    bar.update(done, total, what);
  };
  auto imported = profiler::importTraces(request, progress, &g_import_cancel);
  bar.finish();
  if (!imported) return fail(imported.error(), "import: ");
  const profiler::TraceImportOutcome& out = *imported;
  const auto run = static_cast<std::int64_t>(out.run);
  const std::string_view kind = profiler::importRunKind(request.format);
  if (json) {
    nlohmann::ordered_json j;
    j["run"] = run;
    j["store"] = *store_arg;
    j["kind"] = std::string(kind);
    j["events"] = out.events;
    j["ranks"] = nlohmann::ordered_json::array();
    for (const auto& r : out.ranks)
      j["ranks"].push_back({{"rank", r.rank},
                            {"source", r.source},
                            {"events", r.events},
                            {"steps", r.steps},
                            {"collectives", r.collectives},
                            {"clock_offset_ns", r.clock_offset_ns},
                            {"clock_reference", r.clock_reference},
                            {"spans_by_kind", r.spans_by_kind}});
    j["spans_by_kind"] = out.spans_by_kind;
    j["plan"] = out.plan_summary.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(out.plan_summary);
    j["warnings"] = out.warnings;
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "imported run " << run << " (" << kind << ") into " << *store_arg << ": " << out.ranks.size()
            << " rank(s), " << out.events << " events";
  if (!out.plan_summary.empty()) std::cout << "; the trainer's plan " << out.plan_summary << " kept with it";
  std::cout << "\n\n";
  std::cout << "rank  events    steps  collectives  clock offset     reference             file\n";
  for (const auto& r : out.ranks)
    std::cout << std::left << std::setw(6) << r.rank << std::setw(10) << r.events << std::setw(7) << r.steps
              << std::setw(13) << r.collectives << std::setw(17) << ms(r.clock_offset_ns) << std::setw(22)
              << r.clock_reference << r.source << "\n";
  std::cout << "\nspans by kind:\n";
  for (const auto& [k, n] : out.spans_by_kind) std::cout << "  " << std::left << std::setw(22) << k << n << "\n";
  if (!out.warnings.empty()) {
    std::cout << "\nwarnings:\n";
    for (const auto& w : out.warnings) std::cout << "  " << w << "\n";
  }
  std::cout << "\nnext: shardscope-cli report --store " << *store_arg << " --run " << run << "\n";
  if (!out.plan_summary.empty())
    std::cout << "      shardscope-cli calibrate --store " << *store_arg << " --runs " << run
              << " --out calibration.json\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
