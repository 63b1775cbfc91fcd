// shardscope-cli import kineto|nsys FILE|DIR... --store F: traces of real
// trainers (PyTorch profiler JSON, Nsight Systems SQLite exports) into one
// trace-store run that `report` analyses. docs/import.md.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "progress.h"
#include "trainer_plan.h"
#include "shardscope/core/json_io.h"
#include "shardscope/profiler/import/import_classify.h"
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/import/nsys_import.h"
#include "shardscope/profiler/import/store_import_sink.h"

namespace shardscope::app::cli {

namespace {
namespace fs = std::filesystem;

std::atomic<bool> g_import_cancel{false};

constexpr std::uint64_t kProgressBytes = 64ull << 20;  // show progress past this much input

constexpr const char* kImportHelp = R"HELP(usage: shardscope-cli import kineto FILE|DIR... --store F [--label L] [--rules R.json] [--json] [--quiet]
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

// Files named on the command line; folders expanded (sorted) by extension.
core::Result<std::vector<std::string>> expand(const std::vector<std::string>& args, bool kineto) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(a, ec)) {
        if (!e.is_regular_file()) continue;
        const std::string name = e.path().filename().string();
        const bool match = kineto ? (name.ends_with(".json") || name.ends_with(".json.gz"))
                                  : (name.ends_with(".sqlite") || name.ends_with(".db"));
        if (match) found.push_back(e.path().string());
      }
      if (ec) return core::Error{a + ": cannot list the folder (" + ec.message() + ")"};
      std::sort(found.begin(), found.end());
      if (found.empty())
        return core::Error{a + ": no " + std::string(kineto ? "*.json or *.json.gz" : "*.sqlite or *.db") + " files in the folder"};
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(a);
    }
  }
  return out;
}

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
  const TrainerPlanArgs trainer = takeTrainerPlanArgs(args);
  if (!args.error().empty()) return usageError("import: " + args.error());
  if (auto u = args.unknownOption()) return usageError("import: unknown option " + *u);
  auto pos = args.positional();
  if (pos.empty()) return usageError("import needs a format: kineto or nsys");
  const std::string format = pos.front();
  pos.erase(pos.begin());
  if (format != "kineto" && format != "nsys")
    return usageError("import: unknown format '" + format + "' (expected kineto or nsys)");
  const bool kineto = format == "kineto";
  if (rank_from_name && kineto) return usageError("import kineto: --rank-from-name is for nsys (Kineto files say their rank)");
  if (pos.empty()) return usageError("import " + format + " needs at least one FILE or DIR");
  if (!store_arg) return usageError("import needs --store <file>");

  auto files = expand(pos, kineto);
  if (!files) {
    std::cerr << files.error().message << "\n";
    return kExitInvalid;
  }
  std::uint64_t total_bytes = 0;
  for (const auto& f : *files) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    if (ec) {
      std::cerr << f << ": cannot read the file (" << ec.message() << ")\n";
      return kExitInvalid;
    }
    total_bytes += size;
  }

  profiler::KernelClassifier classifier;
  if (rules_arg) {
    auto c = profiler::KernelClassifier::fromFile(*rules_arg);
    if (!c) {
      std::cerr << c.error().message << "\n";
      return kExitInvalid;
    }
    classifier = std::move(c).value();
  }

  // The trainer's plan first: a bad one must not leave a failed run behind.
  profiler::StoreImportOptions opts;
  std::string plan_summary;
  if (trainer.any()) {
    bool usage = false;
    auto in = loadTrainerPlan(trainer, static_cast<std::uint32_t>(files->size()), &usage);
    if (!in) {
      if (usage) return usageError("import: " + in.error().message);
      std::cerr << in.error().message << "\n";
      return kExitInvalid;
    }
    opts.model_json = core::toJson(*in->model).dump();
    opts.cluster_json = core::toJson(*in->cluster).dump();
    opts.plan_json = core::toJson(*in->plan).dump();
    plan_summary = "M=" + std::to_string(in->plan->sharding_group_size) + " R=" + std::to_string(in->plan->replicas) +
                   " on " + std::to_string(in->plan->world_size) + " GPUs";
  }
  opts.kind = kineto ? core::store::RunKind::ImportKineto : core::store::RunKind::ImportNsys;
  if (label_arg) {
    opts.label = *label_arg;
  } else {
    opts.label = format + " " + fs::path(files->front()).filename().string();
    if (files->size() > 1) opts.label += " (+" + std::to_string(files->size() - 1) + ")";
  }
  {
    nlohmann::ordered_json cfg;
    cfg["schema"] = "shardscope.import/1";
    cfg["mode"] = kineto ? "import-kineto" : "import-nsys";
    cfg["files"] = *files;
    if (rules_arg) cfg["rules"] = *rules_arg;
    opts.config_json = cfg.dump();
  }
  auto sink_r = profiler::StoreImportSink::create(*store_arg, opts, std::move(classifier));
  if (!sink_r) {
    std::cerr << sink_r.error().message << "\n";
    return kExitFailure;
  }
  auto& sink = **sink_r;

  g_import_cancel.store(false);
  const CancelOnSignals on_signals(g_import_cancel);

  ProgressBar bar("import", !quiet && total_bytes >= kProgressBytes);
  std::vector<std::string> warnings;
  std::uint64_t done_bytes = 0;
  for (std::size_t i = 0; i < files->size(); ++i) {
    const std::string& f = (*files)[i];
    std::error_code ec;
    const std::uint64_t size = fs::file_size(f, ec);
    core::Status st = core::Ok{};
    if (kineto) {
      profiler::KinetoOptions ko;
      ko.fallback_rank = static_cast<int>(i);
      ko.progress = [&](std::uint64_t done, std::uint64_t) {
        bar.update(done_bytes + done, total_bytes, fs::path(f).filename().string());
        return !g_import_cancel.load();
      };
      auto r = profiler::importKineto(f, sink, ko);
      if (!r) {
        st = r.error();
      } else {
        for (const auto& [cat, n] : r->unknown_cats)
          warnings.push_back(f + ": " + std::to_string(n) + " events of unknown category \"" + cat + "\" skipped");
        if (r->missing_time > 0)
          warnings.push_back(f + ": " + std::to_string(r->missing_time) + " complete events without a valid ts or dur skipped");
        if (r->rank_from_fallback)
          warnings.push_back(f + ": no distributedInfo.rank: rank " + std::to_string(i) + " from the file order");
        if (r->two_passes) warnings.push_back(f + ": distributedInfo follows traceEvents: the file was read twice");
      }
    } else {
      profiler::NsysOptions no;
      profiler::NsysImportReport rep;
      no.rank = rank_from_name ? -1 : static_cast<int>(i);
      no.cancel = &g_import_cancel;
      no.report = &rep;
      if (total_bytes >= kProgressBytes)  // rows: counting them costs a query per table
        no.progress = [&](std::uint64_t done, std::uint64_t total) {
          bar.update(done, total, fs::path(f).filename().string() + " rows");
        };
      st = profiler::importNsys(f, sink, no);
      for (const auto& w : rep.warnings) warnings.push_back(w);
    }
    if (!st) {
      bar.finish();
      const bool cancelled = g_import_cancel.load();
      (void)sink.fail(cancelled ? std::string("cancelled") : st.error().message);
      std::cerr << (cancelled ? "import cancelled: " : "") << st.error().message << "\n";
      std::cerr << "run " << static_cast<std::int64_t>(sink.run()) << " marked failed\n";
      return cancelled ? kExitCancelled : kExitInvalid;
    }
    done_bytes += size;
  }
  bar.finish();
  if (auto s = sink.finish(); !s) {
    std::cerr << s.error().message << "\n";
    return kExitFailure;
  }
  for (const auto& w : sink.warnings()) warnings.push_back(w);

  const auto run = static_cast<std::int64_t>(sink.run());
  std::map<std::string, std::uint64_t> kinds;
  std::uint64_t events = 0;
  for (const auto& r : sink.ranks()) {
    events += r.events;
    for (const auto& [k, n] : r.spans_by_kind) kinds[k] += n;
  }
  if (json) {
    nlohmann::ordered_json j;
    j["run"] = run;
    j["store"] = *store_arg;
    j["kind"] = kineto ? "import-kineto" : "import-nsys";
    j["events"] = events;
    j["ranks"] = nlohmann::ordered_json::array();
    for (const auto& r : sink.ranks())
      j["ranks"].push_back({{"rank", r.rank}, {"source", r.source}, {"events", r.events}, {"steps", r.steps},
                            {"collectives", r.collectives}, {"clock_offset_ns", r.clock_offset_ns},
                            {"clock_reference", r.clock_reference}, {"spans_by_kind", r.spans_by_kind}});
    j["spans_by_kind"] = kinds;
    j["plan"] = plan_summary.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(plan_summary);
    j["warnings"] = warnings;
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "imported run " << run << " (" << (kineto ? "import-kineto" : "import-nsys") << ") into " << *store_arg
            << ": " << sink.ranks().size() << " rank(s), " << events << " events";
  if (!plan_summary.empty()) std::cout << "; the trainer's plan " << plan_summary << " kept with it";
  std::cout << "\n\n";
  std::cout << "rank  events    steps  collectives  clock offset     reference             file\n";
  for (const auto& r : sink.ranks())
    std::cout << std::left << std::setw(6) << r.rank << std::setw(10) << r.events << std::setw(7) << r.steps
              << std::setw(13) << r.collectives << std::setw(17) << ms(r.clock_offset_ns) << std::setw(22)
              << r.clock_reference << r.source << "\n";
  std::cout << "\nspans by kind:\n";
  for (const auto& [k, n] : kinds) std::cout << "  " << std::left << std::setw(22) << k << n << "\n";
  if (!warnings.empty()) {
    std::cout << "\nwarnings:\n";
    for (const auto& w : warnings) std::cout << "  " << w << "\n";
  }
  std::cout << "\nnext: shardscope-cli report --store " << *store_arg << " --run " << run << "\n";
  if (!plan_summary.empty())
    std::cout << "      shardscope-cli calibrate --store " << *store_arg << " --runs " << run
              << " --out calibration.json\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
