#include "shardscope/profiler/workflow/trace_import_job.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/profiler/import/import_classify.h"
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/import/nsys_import.h"

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;

// What the run is given before it begins: its options and the classifier.
struct PreparedImport {
  std::vector<std::string> files;
  std::uint64_t total_bytes = 0;
  KernelClassifier classifier;
  StoreImportOptions options;
  std::string plan_summary;
};

core::Result<PreparedImport> prepare(const TraceImportRequest& request) {
  PreparedImport p;
  auto files = expandTraceInputs(request.inputs, request.format);
  if (!files) return files.error();
  p.files = std::move(files).value();
  for (const auto& f : p.files) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    if (ec) return core::Error{f + ": cannot read the file (" + ec.message() + ")", core::ErrorKind::InvalidInput, f};
    p.total_bytes += size;
  }
  if (request.rules) {
    auto c = KernelClassifier::fromFile(*request.rules);
    if (!c) return c.error();
    p.classifier = std::move(c).value();
  }
  // The trainer's plan first: a bad one must not leave a failed run behind.
  if (request.trainer.any()) {
    auto in = loadTrainerPlan(request.trainer, static_cast<std::uint32_t>(p.files.size()));
    if (!in) return in.error();
    p.options.model_json = core::toJson(*in->model).dump();
    p.options.cluster_json = core::toJson(*in->cluster).dump();
    p.options.plan_json = core::toJson(*in->plan).dump();
    p.plan_summary = "M=" + std::to_string(in->plan->sharding_group_size) + " R=" + std::to_string(in->plan->replicas) +
                     " on " + std::to_string(in->plan->world_size) + " GPUs";
  }
  const bool kineto = request.format == TraceFormat::Kineto;
  p.options.kind = kineto ? core::store::RunKind::ImportKineto : core::store::RunKind::ImportNsys;
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
    ko.fallback_rank = static_cast<int>(i);
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
    if (r->rank_from_fallback)
      warnings.push_back(f + ": no distributedInfo.rank: rank " + std::to_string(i) + " from the file order");
    if (r->two_passes) warnings.push_back(f + ": distributedInfo follows traceEvents: the file was read twice");
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

std::string_view toString(TraceFormat format) { return format == TraceFormat::Kineto ? "kineto" : "nsys"; }

std::string_view importRunKind(TraceFormat format) {
  return format == TraceFormat::Kineto ? "import-kineto" : "import-nsys";
}

core::Result<std::vector<std::string>> expandTraceInputs(const std::vector<std::string>& inputs, TraceFormat format) {
  const bool kineto = format == TraceFormat::Kineto;
  std::vector<std::string> out;
  for (const auto& a : inputs) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      out.push_back(a);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(a, ec)) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      const bool match = kineto ? (name.ends_with(".json") || name.ends_with(".json.gz"))
                                : (name.ends_with(".sqlite") || name.ends_with(".db"));
      if (match) found.push_back(e.path().string());
    }
    if (ec) return core::Error{a + ": cannot list the folder (" + ec.message() + ")", core::ErrorKind::InvalidInput, a};
    std::sort(found.begin(), found.end());
    if (found.empty())
      return core::Error{a + ": no " + std::string(kineto ? "*.json or *.json.gz" : "*.sqlite or *.db") +
                         " files in the folder"};
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

core::Result<TraceImportOutcome> importTraces(const TraceImportRequest& request, const TraceImportProgress& progress,
                                              const std::atomic<bool>* cancel) {
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
      (void)sink.fail(cancelled ? std::string("cancelled") : st.error().message);
      return core::Error{(cancelled ? "import cancelled: " : "") + st.error().message + "\nrun " +
                             std::to_string(static_cast<std::int64_t>(sink.run())) + " marked failed",
                         cancelled ? core::ErrorKind::Cancelled : core::ErrorKind::InvalidInput, p.files[i]};
    }
    done_bytes += size;
  }
  if (auto s = sink.finish(); !s) return core::Error{s.error().message, core::ErrorKind::Io, request.store};
  for (const auto& w : sink.warnings()) out.warnings.push_back(w);
  out.run = sink.run();
  out.ranks = sink.ranks();
  out.plan_summary = p.plan_summary;
  for (const auto& r : out.ranks) {
    out.events += r.events;
    for (const auto& [k, n] : r.spans_by_kind) out.spans_by_kind[k] += n;
  }
  return out;
}

}  // namespace shardscope::profiler
