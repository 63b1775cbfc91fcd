// The text and JSON reports of a run analysis (`shardscope-cli report`);
// what every number means: docs/analysis.md.
#include <algorithm>
#include <sstream>

#include "analysis_common.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/core/device.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/text_table.h"

namespace shardscope::profiler {

namespace st = core::store;

namespace {

using namespace analysis_detail;
using report::TextTable;

// A message size in a bandwidth table: "1.5 KiB", "12 KiB", "256 MiB".
std::string bytesText(double b) { return core::formatBytes(b, {.whole_from_ten = true}); }

std::string shareText(double share) { return share >= 0 ? fmt(share * 100.0, 1) + "%" : std::string("-"); }

// The run line, its device and warnings.
void writeRunLine(std::ostream& o, const RunAnalysis& a) {
  o << "Run " << static_cast<std::int64_t>(a.run.id) << " of " << a.store << ": " << a.mode;
  if (!a.run.label.empty()) o << " \"" << a.run.label << "\"";
  o << ", " << st::toText(a.run.status);
  if (a.run.status == st::RunStatus::Running) o << " (not complete)";
  o << ", " << a.steps << " measured step(s), " << a.ranks.size() << " measured rank(s)";
  if (!a.plan_summary.empty()) o << ", plan " << a.plan_summary;
  o << "\nRan on " << core::describeDevice(a.device);
  if (a.step_time_ms >= 0)
    o << "; step time " << fmt(a.step_time_ms) << " ms (the slowest rank's step, median over steps)";
  o << "\n";
  for (const auto& w : a.warnings) o << "warning: " << w << "\n";
}

// Per rank the step split and the predicted compute with its error, where the
// prediction is priced for the run's device.
void writeAbsoluteRanks(std::ostream& o, const RunAnalysis& a) {
  o << "\nPer rank, ms per step (compute = embedding forward + backward; err = measured / predicted - 1):\n";
  TextTable t({"rank", "group", "g.rank", "fwd", "bwd", "compute", "plan", "err", "model", "err", "dense", "comm",
               "wait", "step", ""});
  for (const auto& r : a.ranks) {
    auto pred = [&](double p) { return p >= 0 ? fmt(p) : std::string("-"); };
    auto err = [&](double p, bool absolute) {
      return absolute && p > 0 && r.compute_ms > 0 ? core::formatRelativeError(r.compute_ms / p - 1.0)
                                                   : std::string("-");
    };
    t.add({std::to_string(r.rank), r.sharding_group >= 0 ? std::to_string(r.sharding_group) : "-",
           r.group_rank >= 0 ? std::to_string(r.group_rank) : "-", fmt(r.emb_fwd_ms), fmt(r.emb_bwd_ms),
           fmt(r.compute_ms), pred(r.predicted_plan_ms), err(r.predicted_plan_ms, a.plan_devices.absolute),
           pred(r.predicted_model_ms), err(r.predicted_model_ms, a.model_devices.absolute), fmt(r.dense_ms),
           fmt(r.comm_ms), !a.has_spans ? "-" : (r.wait_ms >= 0 ? fmt(r.wait_ms) : "?"), fmt(r.step_ms),
           r.straggler ? "<- straggler" : ""});
  }
  t.print(o);
  const bool has_plan =
      std::any_of(a.ranks.begin(), a.ranks.end(), [](const RankAnalysis& r) { return r.predicted_plan_ms > 0; });
  o << "  plan = the plan file's predicted compute ("
    << (has_plan ? "for " + core::shortDeviceName(a.plan_devices.priced) : std::string("not available"))
    << "); model = the cost model now ("
    << (a.model_constants.empty() ? "not available"
                                  : a.model_constants + ", for " + core::shortDeviceName(a.model_devices.priced))
    << ")\n";
  for (const core::DeviceComparison* c : {&a.plan_devices, &a.model_devices})
    if (!c->absolute && !c->reason.empty() && (c == &a.plan_devices || c->reason != a.plan_devices.reason))
      o << "  " << (c == &a.plan_devices ? "plan" : "model") << " errors not shown: " << c->reason << "\n";
  if (a.plan_mape >= 0 || a.model_mape >= 0) {
    o << "  mean |err| over ranks: plan " << core::formatErrorSize(a.plan_mape) << ", model "
      << core::formatErrorSize(a.model_mape) << "\n";
  }
}

// Per rank the step split and its share of its group's compute, measured and
// predicted: what compares when the prediction is for another device.
void writeShareRanks(std::ostream& o, const RunAnalysis& a) {
  o << "\nAbsolute times are not compared with the predictions: " << a.model_devices.reason
    << ".\nCompared instead: each rank's share of its sharding group's embedding compute.\n";
  o << "\nPer rank, ms per step (compute = embedding forward + backward; share = of its sharding group's compute;\n"
       "  gap = measured share - predicted share, percentage points):\n";
  TextTable t({"rank", "group", "g.rank", "fwd", "bwd", "compute", "share", "predicted", "gap", "dense", "comm", "wait",
               "step", ""});
  for (const auto& r : a.ranks) {
    const bool both = r.share >= 0 && r.predicted_share >= 0;
    t.add({std::to_string(r.rank), r.sharding_group >= 0 ? std::to_string(r.sharding_group) : "-",
           r.group_rank >= 0 ? std::to_string(r.group_rank) : "-", fmt(r.emb_fwd_ms), fmt(r.emb_bwd_ms),
           fmt(r.compute_ms), shareText(r.share), shareText(r.predicted_share),
           both ? core::formatf("%+.1f", (r.share - r.predicted_share) * 100.0) : std::string("-"), fmt(r.dense_ms),
           fmt(r.comm_ms), !a.has_spans ? "-" : (r.wait_ms >= 0 ? fmt(r.wait_ms) : "?"), fmt(r.step_ms),
           r.straggler ? "<- straggler" : ""});
  }
  t.print(o);
  o << "  predicted = the cost model's shares (" << (a.model_constants.empty() ? "the plan file's" : a.model_constants)
    << ")\n";
  if (a.share_mae >= 0) o << "  mean share gap over ranks: " << fmt(a.share_mae * 100, 2) << " percentage points\n";
}

void writeRanks(std::ostream& o, const RunAnalysis& a) {
  writeRunLine(o, a);
  const bool predicted = std::any_of(a.ranks.begin(), a.ranks.end(), [](const RankAnalysis& r) {
    return r.predicted_plan_ms >= 0 || r.predicted_model_ms >= 0;
  });
  if (predicted && !a.plan_devices.absolute && !a.model_devices.absolute)
    writeShareRanks(o, a);
  else
    writeAbsoluteRanks(o, a);
}

// Collective time per kind and the wait inside it, per rank.
void writeCollectives(std::ostream& o, const RunAnalysis& a) {
  std::vector<std::string> kinds;
  for (const auto k : commKinds())
    for (const auto& r : a.ranks)
      if (std::any_of(r.comm.begin(), r.comm.end(), [&](const CommTime& c) { return c.kind == k; })) {
        kinds.emplace_back(k);
        break;
      }
  if (a.has_spans && kinds.empty()) {
    o << "\nCollectives: none recorded" << (a.mode == "emulate" ? " (emulate runs have none)" : "") << "\n";
  } else if (a.has_spans) {
    o << "\nCollectives, ms per step (wait = time spent waiting for the slowest peer of the call; "
         "? = unknown: no peer recorded the call):\n";
    std::vector<std::string> header{"rank"};
    for (const auto& k : kinds) {
      header.push_back(k);
      header.push_back("wait");
    }
    TextTable t(header);
    for (const auto& r : a.ranks) {
      std::vector<std::string> row{std::to_string(r.rank)};
      for (const auto& k : kinds) {
        const auto c = std::find_if(r.comm.begin(), r.comm.end(), [&](const CommTime& x) { return x.kind == k; });
        row.push_back(c != r.comm.end() ? fmt(c->ms) : "-");
        row.push_back(c == r.comm.end() ? "-" : (c->wait_ms >= 0 ? fmt(c->wait_ms) : "?"));
      }
      t.add(std::move(row));
    }
    t.print(o);
  }
}

// The device timeline per rank: its step window, busy and idle, compute,
// communication and their overlap.
void writeTimeline(std::ostream& o, const RunAnalysis& a) {
  if (std::none_of(a.ranks.begin(), a.ranks.end(), [](const RankAnalysis& r) { return r.busy_ms >= 0; })) return;
  o << "\nDevice timeline, ms per step (window = the device's step, from its first work to the next step's;\n"
       "  busy = union of device work; idle = window - busy; compute = union of compute kernels (not copies);\n"
       "  comm = union of collectives; overlap = comm during compute; exposed = comm - overlap; hidden = overlap / "
       "comm):\n";
  TextTable t({"rank", "window", "busy", "idle", "idle %", "compute", "comm", "overlap", "exposed", "hidden %"});
  for (const auto& r : a.ranks) {
    if (r.busy_ms < 0) {
      t.add({std::to_string(r.rank), "-", "-", "-", "-", "-", "-", "-", "-", "-"});
      continue;
    }
    t.add({std::to_string(r.rank), fmt(r.window_ms), fmt(r.busy_ms), fmt(r.idle_ms),
           r.window_ms > 0 ? fmt(100.0 * r.idle_ms / r.window_ms, 1) : std::string("-"), fmt(r.compute_union_ms),
           fmt(r.comm_union_ms), fmt(r.overlap_ms), fmt(r.comm_union_ms - r.overlap_ms),
           r.comm_union_ms > 0 ? fmt(100.0 * r.overlap_ms / r.comm_union_ms, 1) : std::string("-")});
  }
  t.print(o);
}

// Bus bandwidth per op and message size.
void writeBandwidth(std::ostream& o, const RunAnalysis& a) {
  if (a.bandwidth.empty() && !a.bandwidth_note.empty())
    o << "\nCollective bandwidth: none (" << a.bandwidth_note << ")\n";
  if (!a.bandwidth.empty()) {
    o << "\nCollective bandwidth by message size (size as NCCL-tests count it; transfer = the shortest duration\n"
         "  of a call in its group; algbw = size / transfer; busbw = algbw x the op's bus factor):\n";
    TextTable t({"op", "ranks", "size", "calls", "median size", "ms/rank", "transfer ms", "algbw GB/s", "busbw GB/s",
                 "best busbw"});
    for (const auto& b : a.bandwidth)
      t.add({b.op, std::to_string(b.group_size), bytesText(b.size_lo) + "-" + bytesText(b.size_hi),
             std::to_string(b.calls), bytesText(b.median_bytes), fmt(b.median_ms), fmt(b.median_transfer_ms),
             fmt(b.algbw_gbps, 2), fmt(b.busbw_gbps, 2), fmt(b.max_busbw_gbps, 2)});
    t.print(o);
  }
}

// Imbalance of embedding compute, overall and per sharding group, and the stragglers.
void writeImbalance(std::ostream& o, const RunAnalysis& a) {
  if (a.overall.max_over_mean < 0) {
    o << "\nImbalance of embedding compute (max / mean): n/a (no embedding kernels in the run)\n";
    return;
  }
  o << "\nImbalance of embedding compute (max / mean): overall " << fmt(a.overall.max_over_mean) << " over "
    << a.overall.ranks << " rank(s), slowest rank " << a.overall.slowest_rank << "\n";
  if (a.groups.size() > 1 || (a.groups.size() == 1 && a.groups.front().sharding_group >= 0))
    for (const auto& g : a.groups)
      o << "  sharding group " << (g.sharding_group >= 0 ? std::to_string(g.sharding_group) : "?") << ": "
        << (g.max_over_mean >= 0 ? fmt(g.max_over_mean) : std::string("n/a")) << " over " << g.ranks
        << " rank(s), slowest rank " << g.slowest_rank << "\n";
  o << "Stragglers (compute > min(mean + 2 sd, 1.10 x median) = " << fmt(a.straggler_threshold_ms) << " ms; mean "
    << fmt(a.compute_mean_ms) << ", sd " << fmt(a.compute_stddev_ms) << ", median " << fmt(a.compute_median_ms)
    << "): ";
  if (a.stragglers.empty()) o << "none";
  for (std::size_t i = 0; i < a.stragglers.size(); ++i) {
    const auto& r =
        *std::find_if(a.ranks.begin(), a.ranks.end(), [&](const RankAnalysis& x) { return x.rank == a.stragglers[i]; });
    o << (i ? ", " : "") << "rank " << r.rank << " ("
      << (a.compute_median_ms > 0 ? core::formatRelativeError(r.compute_ms / a.compute_median_ms - 1.0)
                                  : std::string("-"))
      << " over median)";
  }
  o << "\n";
}

// The slowest tables.
void writeTables(std::ostream& o, const RunAnalysis& a) {
  if (!a.tables.empty()) {
    constexpr std::size_t kShown = 30;
    o << "\nPer table, summed over the measured ranks, per step:\n";
    TextTable t({"table", "ranks", "lookups", "unique rows", "ms"});
    for (std::size_t i = 0; i < a.tables.size() && i < kShown; ++i) {
      const auto& x = a.tables[i];
      t.add({x.table, std::to_string(x.ranks), fmt(x.lookups_per_step, 0), fmt(x.unique_rows_per_step, 0),
             fmt(x.ms_per_step)});
    }
    t.print(o);
    if (a.tables.size() > kShown) o << "  ... " << a.tables.size() - kShown << " more (see --json)\n";
  }
}

}  // namespace

std::string formatReport(const RunAnalysis& a) {
  std::ostringstream o;
  writeRanks(o, a);
  writeCollectives(o, a);
  writeTimeline(o, a);
  writeBandwidth(o, a);
  writeImbalance(o, a);
  writeTables(o, a);
  return o.str();
}

nlohmann::ordered_json reportJson(const RunAnalysis& a) {
  using J = nlohmann::ordered_json;
  auto optional = [](double v) { return v >= 0 ? J(v) : J(nullptr); };
  J j;
  j["store"] = a.store;
  j["run"] = {{"id", static_cast<std::int64_t>(a.run.id)},
              {"kind", a.run.kind_text},
              {"status", std::string(st::toText(a.run.status))},
              {"complete", a.run.isComplete()},
              {"label", a.run.label},
              {"created", a.run.created_at},
              {"finished", a.run.finished_at},
              {"error", a.run.error}};
  j["mode"] = a.mode;
  j["steps"] = a.steps;
  if (a.step_time_ms >= 0) j["step_time_ms"] = a.step_time_ms;
  j["has_spans"] = a.has_spans;
  j["plan"] = a.plan_summary.empty() ? J(nullptr) : J(a.plan_summary);
  j["model_constants"] = a.model_constants.empty() ? J(nullptr) : J(a.model_constants);
  const auto device = [](const core::DeviceInfo& d) {
    return J{{"kind", std::string(core::toString(d.kind))},
             {"name", d.name},
             {"threads", d.threads},
             {"count", d.count},
             {"text", core::describeDevice(d)}};
  };
  j["device"] = device(a.device);
  const auto comparison = [&](const core::DeviceComparison& c) {
    return J{{"priced_for", device(c.priced)},
             {"absolute", c.absolute},
             {"not_compared", c.absolute ? J(nullptr) : J(c.reason)}};
  };
  j["prediction_devices"] = {{"plan", comparison(a.plan_devices)}, {"model", comparison(a.model_devices)}};
  j["warnings"] = a.warnings;
  auto& ranks = j["ranks"] = J::array();
  for (const auto& r : a.ranks) {
    J comm = J::array();
    for (const auto& c : r.comm) comm.push_back({{"kind", c.kind}, {"ms", c.ms}, {"wait_ms", optional(c.wait_ms)}});
    ranks.push_back({{"rank", r.rank},
                     {"sharding_group", r.sharding_group},
                     {"replica_group", r.replica_group},
                     {"group_rank", r.group_rank},
                     {"steps", r.steps},
                     {"emb_fwd_ms", r.emb_fwd_ms},
                     {"emb_bwd_ms", r.emb_bwd_ms},
                     {"compute_ms", r.compute_ms},
                     {"predicted_plan_ms", optional(r.predicted_plan_ms)},
                     {"predicted_model_ms", optional(r.predicted_model_ms)},
                     {"share", optional(r.share)},
                     {"predicted_share", optional(r.predicted_share)},
                     {"dense_ms", r.dense_ms},
                     {"comm_ms", r.comm_ms},
                     {"wait_ms", a.has_spans ? optional(r.wait_ms) : J(r.wait_ms)},
                     {"step_ms", r.step_ms},
                     {"comm", std::move(comm)},
                     {"window_ms", optional(r.window_ms)},
                     {"busy_ms", optional(r.busy_ms)},
                     {"idle_ms", optional(r.idle_ms)},
                     {"compute_union_ms", optional(r.compute_union_ms)},
                     {"comm_union_ms", optional(r.comm_union_ms)},
                     {"overlap_ms", optional(r.overlap_ms)},
                     {"straggler", r.straggler}});
  }
  auto imb = [](const ComputeImbalance& g) {
    return J{{"sharding_group", g.sharding_group},
             {"ranks", g.ranks},
             {"max_ms", g.max_ms},
             {"mean_ms", g.mean_ms},
             {"max_over_mean", g.max_over_mean >= 0 ? J(g.max_over_mean) : J(nullptr)},
             {"slowest_rank", g.slowest_rank}};
  };
  j["imbalance"] = {{"overall", imb(a.overall)}, {"groups", J::array()}};
  for (const auto& g : a.groups) j["imbalance"]["groups"].push_back(imb(g));
  j["stragglers"] = {{"rule", "compute_ms > min(mean + 2 sd, 1.10 x median)"},
                     {"threshold_ms", a.straggler_threshold_ms},
                     {"mean_ms", a.compute_mean_ms},
                     {"stddev_ms", a.compute_stddev_ms},
                     {"median_ms", a.compute_median_ms},
                     {"ranks", a.stragglers}};
  j["prediction_mape"] = {{"plan", optional(a.plan_mape)}, {"model", optional(a.model_mape)}};
  j["share_gap_mean"] = optional(a.share_mae);
  auto& tables = j["tables"] = J::array();
  for (const auto& t : a.tables)
    tables.push_back({{"table", t.table},
                      {"ranks", t.ranks},
                      {"lookups_per_step", t.lookups_per_step},
                      {"unique_rows_per_step", t.unique_rows_per_step},
                      {"ms_per_step", t.ms_per_step}});
  j["collective_bandwidth_note"] = a.bandwidth_note.empty() ? J(nullptr) : J(a.bandwidth_note);
  auto& bandwidth = j["collective_bandwidth"] = J::array();
  for (const auto& b : a.bandwidth)
    bandwidth.push_back({{"op", b.op},
                         {"ranks", b.group_size},
                         {"size_lo_bytes", b.size_lo},
                         {"size_hi_bytes", b.size_hi},
                         {"calls", b.calls},
                         {"median_bytes", b.median_bytes},
                         {"median_ms", b.median_ms},
                         {"median_transfer_ms", b.median_transfer_ms},
                         {"algbw_gbps", b.algbw_gbps},
                         {"busbw_gbps", b.busbw_gbps},
                         {"max_busbw_gbps", b.max_busbw_gbps}});
  auto& capped = j["capped"] = J::array();
  for (const auto& c : a.capped)
    capped.push_back({{"table", c.table},
                      {"group_rank", c.group_rank},
                      {"row_offset", c.row_offset},
                      {"col_offset", c.col_offset},
                      {"rows", c.rows},
                      {"physical_rows", c.physical_rows}});
  return j;
}

}  // namespace shardscope::profiler
