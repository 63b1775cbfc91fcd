// Trace imports as one job for the CLI and the desktop: inputs checked and
// expanded before the run begins, files imported in order, the summary.
#include "shardscope/profiler/workflow/trace_import_job.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/profiler/import/import_classify.h"
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/import/nsys_import.h"
#include "shardscope/profiler/import/trace_files.h"
#include "shardscope/report/text_table.h"
#include "shardscope/profiler/analysis/timeline_window.h"

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;

// What the run is given before it begins: its options and the classifier.
struct PreparedImport {
  std::vector<std::string> files;
  std::vector<int> fallback_ranks;  // per file: the rank when it says none (-1: none)
  std::string fallback_from;        // where they come from, for the warning
  std::uint64_t total_bytes = 0;
  KernelClassifier classifier;
  StoreImportOptions options;
  std::string plan_summary;
};

// Ranks for files that do not say theirs: --rank, --rank-from-name, else the file's position.
core::Status fallbackRanks(const TraceImportRequest& request, PreparedImport& p) {
  const std::size_t n = p.files.size();
  if (request.rank) {
    if (n != 1)
      return core::Error{
          "--rank is for one file (" + std::to_string(n) + " given); for a folder give --rank-from-name REGEX",
          core::ErrorKind::Usage};
    p.fallback_ranks = {*request.rank};
    p.fallback_from = "--rank";
    return core::Ok{};
  }
  if (!request.rank_pattern) {
    for (std::size_t i = 0; i < n; ++i) p.fallback_ranks.push_back(static_cast<int>(i));
    p.fallback_from = "the file order";
    return core::Ok{};
  }
  const std::string& pattern = *request.rank_pattern;
  std::regex re;
  try {
    re = std::regex(pattern);
  } catch (const std::regex_error& e) {
    return core::Error{"--rank-from-name: invalid regular expression '" + pattern + "': " + e.what(),
                       core::ErrorKind::Usage};
  }
  if (re.mark_count() < 1)
    return core::Error{"--rank-from-name: '" + pattern + "' has no capture group (the rank is the first: rank(\\d+))",
                       core::ErrorKind::Usage};
  std::map<int, std::string> taken;
  for (const auto& f : p.files) {
    const std::string name = fs::path(f).filename().string();
    std::smatch m;
    int rank = -1;
    if (std::regex_search(name, m, re) && m[1].matched) {
      const std::string digits = m[1].str();
      if (digits.empty() || digits.size() > 7 ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return core::Error{
            f + ": --rank-from-name '" + pattern + "' captures \"" + digits + "\" from its name, not a rank",
            core::ErrorKind::InvalidInput, f};
      rank = std::stoi(digits);
      if (auto [it, fresh] = taken.emplace(rank, f); !fresh)
        return core::Error{f + ": --rank-from-name '" + pattern + "' gives rank " + std::to_string(rank) +
                               ", as it does for " + it->second + " (two files of one rank?)",
                           core::ErrorKind::InvalidInput, f};
    }
    p.fallback_ranks.push_back(rank);
  }
  p.fallback_from = "its name (--rank-from-name)";
  return core::Ok{};
}

core::Result<PreparedImport> prepare(const TraceImportRequest& request) {
  PreparedImport p;
  auto files = expandTraceInputs(request.inputs, request.format, request.max_depth);
  if (!files) return files.error();
  p.files = std::move(files).value();
  for (const auto& f : p.files) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    if (ec) return core::Error{f + ": cannot read the file (" + ec.message() + ")", core::ErrorKind::InvalidInput, f};
    if (size == 0) return core::Error{f + ": empty file", core::ErrorKind::InvalidInput, f};
    p.total_bytes += size;
  }
  if (request.format == TraceFormat::Kineto)
    if (auto r = fallbackRanks(request, p); !r) return r.error();
  if (request.rules) {
    auto c = KernelClassifier::fromFile(*request.rules);
    if (!c) return c.error();
    p.classifier = std::move(c).value();
  }
  // The trainer's plan first: a bad one must not leave a failed run behind.
  if (request.trainer.any()) {
    auto in = core::loadTrainerPlan(request.trainer, static_cast<std::uint32_t>(p.files.size()));
    if (!in) return in.error();
    p.options.model_json = core::toJson(in->model).dump();
    p.options.cluster_json = core::toJson(in->cluster).dump();
    p.options.plan_json = core::toJson(in->plan).dump();
    p.plan_summary = "M=" + std::to_string(in->plan.sharding_group_size) + " R=" + std::to_string(in->plan.replicas) +
                     " on " + std::to_string(in->plan.world_size) + " GPUs";
  }
  const bool kineto = request.format == TraceFormat::Kineto;
  p.options.kind = kineto ? core::store::RunKind::ImportKineto : core::store::RunKind::ImportNsys;
  p.options.force = request.force;
  if (request.label) {
    p.options.label = *request.label;
  } else {
    p.options.label = std::string(toString(request.format)) + " " + fs::path(p.files.front()).filename().string();
    if (p.files.size() > 1) p.options.label += " (+" + std::to_string(p.files.size() - 1) + ")";
  }
  nlohmann::ordered_json cfg;
  cfg["schema"] = "shardscope.import/1";
  cfg["mode"] = std::string(importRunKind(request.format));
  cfg["files"] = p.files;
  if (request.rules) cfg["rules"] = *request.rules;
  p.options.config_json = cfg.dump();
  return p;
}

// Imports file `i` into the sink; its warnings go to `warnings`.
core::Status importFile(const TraceImportRequest& request, const PreparedImport& p, std::size_t i,
                        std::uint64_t done_bytes, StoreImportSink& sink, const TraceImportProgress& progress,
                        const std::atomic<bool>* cancel, std::vector<std::string>& warnings) {
  const std::string& f = p.files[i];
  const std::string name = fs::path(f).filename().string();
  const bool show = progress && p.total_bytes >= request.progress_min_bytes;
  if (request.format == TraceFormat::Kineto) {
    KinetoOptions ko;
    ko.fallback_rank = p.fallback_ranks[i];
    ko.progress = [&](std::uint64_t done, std::uint64_t) {
      if (show) progress(done_bytes + done, p.total_bytes, name);
      return cancel == nullptr || !cancel->load();
    };
    auto r = importKineto(f, sink, ko);
    if (!r) return r.error();
    for (const auto& [cat, n] : r->unknown_cats)
      warnings.push_back(f + ": " + std::to_string(n) + " events of unknown category \"" + cat + "\" skipped");
    if (r->missing_time > 0)
      warnings.push_back(f + ": " + std::to_string(r->missing_time) +
                         " complete events without a valid ts or dur skipped");
    if (r->rank_from_fallback && !request.rank && !request.rank_pattern)
      warnings.push_back(f + ": no distributedInfo.rank: rank " + std::to_string(ko.fallback_rank) +
                         " from the file order (give --rank or --rank-from-name when that is not its rank)");
    else if (r->rank_from_fallback)
      warnings.push_back(f + ": no distributedInfo.rank: rank " + std::to_string(ko.fallback_rank) + " from " +
                         p.fallback_from);
    else if (request.rank && !sink.ranks().empty() && sink.ranks().back().rank != *request.rank)
      warnings.push_back(f + ": its distributedInfo says rank " + std::to_string(sink.ranks().back().rank) +
                         ": --rank " + std::to_string(*request.rank) + " not used");
    return core::Ok{};
  }
  NsysOptions no;
  NsysImportReport rep;
  no.rank = request.rank_from_name ? -1 : static_cast<int>(i);
  no.cancel = cancel;
  no.report = &rep;
  if (show)  // rows: counting them costs a query per table
    no.progress = [&](std::uint64_t done, std::uint64_t total) { progress(done, total, name + " rows"); };
  core::Status st = importNsys(f, sink, no);
  for (const auto& w : rep.warnings) warnings.push_back(w);
  return st;
}
}  // namespace

std::string_view toString(TraceFormat format) {
  switch (format) {
    case TraceFormat::Kineto:
      return "kineto";
    case TraceFormat::Nsys:
      return "nsys";
    case TraceFormat::Nccl:
      return "nccl";
  }
  return "kineto";
}

std::string_view importRunKind(TraceFormat format) {
  switch (format) {
    case TraceFormat::Kineto:
      return "import-kineto";
    case TraceFormat::Nsys:
      return "import-nsys";
    case TraceFormat::Nccl:
      return "import-nccl";
  }
  return "import-kineto";
}

core::Result<std::vector<std::string>> expandTraceInputs(const std::vector<std::string>& inputs, TraceFormat format,
                                                         int max_depth) {
  if (format == TraceFormat::Kineto) return expandTraceFolders(inputs, max_depth, {".json", ".json.gz"});
  if (format == TraceFormat::Nccl) return expandNcclTraceInputs(inputs, max_depth);
  return expandTraceFolders(inputs, max_depth, {".sqlite", ".db"});
}

core::Result<NcclTraceImport> importNcclTraceRun(const TraceImportRequest& request, const TraceImportProgress& progress,
                                                 const std::atomic<bool>* cancel) {
  if (request.rules || request.rank || request.rank_pattern || request.rank_from_name)
    return core::Error{
        "import nccl: each plugin trace names its rank and its calls are not classified: rules and "
        "rank options do not apply",
        core::ErrorKind::Usage};
  auto files = expandNcclTraceInputs(request.inputs, request.max_depth);
  if (!files) return files.error();
  NcclImportOptions o;
  o.label = request.label.value_or("");
  o.force = request.force;
  NcclTraceImport out;
  if (request.trainer.any()) {
    auto in = core::loadTrainerPlan(request.trainer, static_cast<std::uint32_t>(files->size()));
    if (!in) return in.error();
    o.model_json = core::toJson(in->model).dump();
    o.cluster_json = core::toJson(in->cluster).dump();
    o.plan_json = core::toJson(in->plan).dump();
    out.plan_summary = "M=" + std::to_string(in->plan.sharding_group_size) + " R=" + std::to_string(in->plan.replicas) +
                       " on " + std::to_string(in->plan.world_size) + " GPUs";
  }
  o.cancel = cancel;
  o.progress = [&progress, &request](std::uint64_t done, std::uint64_t total, std::string_view file) {
    if (progress && total >= request.progress_min_bytes) progress(done, total, file);
  };
  auto imported = importNcclTraces(*files, request.store, o);
  if (!imported) return imported.error();
  out.outcome = std::move(imported).value();
  return out;
}

core::Result<TraceImportOutcome> importTraces(const TraceImportRequest& request, const TraceImportProgress& progress,
                                              const std::atomic<bool>* cancel) {
  if (request.format == TraceFormat::Nccl) {
    auto nccl = importNcclTraceRun(request, progress, cancel);
    if (!nccl) return nccl.error();
    TraceImportOutcome out;
    out.run = nccl->outcome.run;
    out.ranks = nccl->outcome.ranks;
    out.spans_by_kind = nccl->outcome.calls_by_op;
    out.events = nccl->outcome.calls;
    out.plan_summary = nccl->plan_summary;
    out.warnings = nccl->outcome.warnings;
    return out;
  }
  auto prepared = prepare(request);
  if (!prepared) return prepared.error();
  PreparedImport& p = *prepared;
  auto sink_r = StoreImportSink::create(request.store, p.options, std::move(p.classifier));
  if (!sink_r) return core::Error{sink_r.error().message, core::ErrorKind::Io, request.store};
  StoreImportSink& sink = **sink_r;

  TraceImportOutcome out;
  std::uint64_t done_bytes = 0;
  for (std::size_t i = 0; i < p.files.size(); ++i) {
    std::error_code ec;
    const std::uint64_t size = fs::file_size(p.files[i], ec);
    const core::Status st = importFile(request, p, i, done_bytes, sink, progress, cancel, out.warnings);
    if (!st) {
      const bool cancelled = cancel != nullptr && cancel->load();
      const core::Status marked = sink.fail(cancelled ? std::string("cancelled") : st.error().message);
      const std::string run = "run " + std::to_string(static_cast<std::int64_t>(sink.run()));
      // With the disk still full even marking it may fail: it then stays "running", never "complete".
      const std::string after =
          marked ? run + " marked failed"
                 : run + " left incomplete (it could not be marked failed: " + marked.error().message + ")";
      return core::Error{(cancelled ? "import cancelled: " : "") + st.error().message + "\n" + after,
                         cancelled                                ? core::ErrorKind::Cancelled
                         : st.error().kind == core::ErrorKind::Io ? core::ErrorKind::Io  // the store failed
                                                                  : core::ErrorKind::InvalidInput,
                         p.files[i]};
    }
    done_bytes += size;
  }
  if (auto s = sink.finish(); !s) return core::Error{s.error().message, core::ErrorKind::Io, request.store};
  for (const auto& w : sink.warnings()) out.warnings.push_back(w);
  // A large run gets its timeline summaries now; without them (a failure is
  // a warning) the timeline reads its spans.
  auto summarised = buildTimelineSummariesIfLarge(request.store, sink.run(), cancel, [&progress](int done, int total) {
    if (progress) progress(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(total), "timeline summaries");
  });
  if (!summarised)
    out.warnings.push_back("run " + std::to_string(static_cast<std::int64_t>(sink.run())) +
                           ": the timeline summaries were not built (" + summarised.error().message +
                           "); the timeline reads its spans instead");
  out.run = sink.run();
  out.ranks = sink.ranks();
  out.plan_summary = p.plan_summary;
  for (const auto& r : out.ranks) {
    out.events += r.events;
    for (const auto& [k, n] : r.spans_by_kind) out.spans_by_kind[k] += n;
  }
  return out;
}

std::string importSummaryText(const TraceImportOutcome& out, const TraceImportRequest& request) {
  std::ostringstream o;
  const auto run = static_cast<std::int64_t>(out.run);
  o << "imported run " << run << " (" << importRunKind(request.format) << ") into " << request.store << ": "
    << out.ranks.size() << " rank(s), " << out.events << " events";
  if (!out.plan_summary.empty()) o << "; the trainer's plan " << out.plan_summary << " kept with it";
  o << "\n\n";
  report::TextTable ranks({"rank", "events", "steps", "collectives", "clock offset", "reference", "file"});
  ranks.leftFrom(5);
  for (const auto& r : out.ranks) {
    std::ostringstream offset;
    offset << std::showpos << std::fixed << std::setprecision(3) << static_cast<double>(r.clock_offset_ns) / 1e6
           << " ms";
    ranks.add({std::to_string(r.rank), std::to_string(r.events), std::to_string(r.steps), std::to_string(r.collectives),
               offset.str(), r.clock_reference, r.source});
  }
  ranks.print(o, "");
  o << "\nspans by kind:\n";
  report::TextTable kinds({"kind", "spans"});
  for (const auto& [k, n] : out.spans_by_kind) kinds.add({k, std::to_string(n)});
  kinds.print(o);
  if (!out.warnings.empty()) {
    o << "\nwarnings:\n";
    for (const auto& w : out.warnings) o << "  " << w << "\n";
  }
  o << "\nnext: shardscope-cli report --store " << request.store << " --run " << run << "\n";
  if (!out.plan_summary.empty())
    o << "      shardscope-cli calibrate --store " << request.store << " --runs " << run << " --out calibration.json\n";
  return o.str();
}

nlohmann::ordered_json importSummaryJson(const TraceImportOutcome& out, const TraceImportRequest& request) {
  using J = nlohmann::ordered_json;
  J j;
  j["run"] = static_cast<std::int64_t>(out.run);
  j["store"] = request.store;
  j["kind"] = std::string(importRunKind(request.format));
  j["events"] = out.events;
  j["ranks"] = J::array();
  for (const auto& r : out.ranks)
    j["ranks"].push_back({{"rank", r.rank},
                          {"source", r.source},
                          {"gpu", r.gpu},
                          {"events", r.events},
                          {"gpu_events", r.gpu_events},
                          {"steps", r.steps},
                          {"step_source", r.step_source},
                          {"collectives", r.collectives},
                          {"clock_offset_ns", r.clock_offset_ns},
                          {"clock_reference", r.clock_reference},
                          {"spans_by_kind", r.spans_by_kind}});
  j["spans_by_kind"] = out.spans_by_kind;
  j["plan"] = out.plan_summary.empty() ? J(nullptr) : J(out.plan_summary);
  j["warnings"] = out.warnings;
  return j;
}

}  // namespace shardscope::profiler
