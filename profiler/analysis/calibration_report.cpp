// The calibration fit's text and JSON reports (`shardscope-cli calibrate`).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "analysis_common.h"
#include "calibration_common.h"
#include "shardscope/core/json_io.h"
#include "shardscope/planner/access_profile.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/profiler/analysis/calibration_fit.h"
#include "shardscope/profiler/trace/trace_recorder.h"
#include "shardscope/report/text_table.h"

namespace shardscope::profiler {

namespace st = core::store;
using namespace analysis_detail;
using namespace calibration_detail;
using report::TextTable;

std::string formatCalibrationReport(const CalibrationReport& r, std::size_t worst) {
  std::ostringstream o;
  std::size_t with_spans = 0, ranks = 0;
  for (const auto& m : r.measured) {
    with_spans += m.measured_fwd_ms > 0 && m.measured_bwd_ms > 0;
    ranks += m.table.empty();
  }
  o << "Calibration from " << r.calibration.source << "\n";
  o << "  " << r.samples.size() << " shard samples";
  if (ranks > 0) o << " (" << ranks << " whole ranks: lookups expected from the access profiles)";
  o << ", " << r.measurements << " measurements ("
    << (with_spans == r.measured.size() ? "forward and backward each"
        : with_spans == 0               ? "forward + backward together: no spans"
                                        : "forward and backward where spans exist")
    << ")\n";
  for (const auto& w : r.warnings) o << "warning: " << w << "\n";
  o << "\n";
  TextTable coefficients({"coefficient", "value", "std error"});
  coefficients.separator(" ").minWidths({34, 12, 12});
  for (const auto& [name, c] : r.calibration.coefficients)
    coefficients.add({name, fmtSig(c.value), fmtSig(c.std_error)});
  coefficients.print(o);
  for (const auto& d : r.dropped) o << "  " << d << ": fit to 0, not written (the planner keeps its default)\n";
  if (!r.collectives.empty()) o << "\nCollectives (time = latency + size x bus factor / busbw, per op and link):\n";
  for (const auto& f : r.collectives)
    o << "  " << f.op << (f.inter_node ? " across nodes" : " inside a node") << ": " << f.calls << " calls, busbw "
      << fmtSig(f.busbw_gbps) << " GB/s, latency " << fmtSig(f.latency_us) << " us; MAPE " << pct(f.mape)
      << (f.model_mape >= 0 ? " (the default model: " + pct(f.model_mape) + ")" : std::string()) << "\n";
  // The default constants are priced for the cluster's GPU: against runs on another device they are not compared.
  const bool defaults = r.defaults_not_compared.empty();
  o << "\nFit: MAPE " << pct(r.fit_mape) << " over the fitted measurements ("
    << (defaults ? "default constants on the same: " + pct(r.fit_mape_default)
                 : "default constants not compared: " + r.defaults_not_compared)
    << ")\n";
  if (r.fit_rank_mape >= 0)
    o << "  per-rank compute of the fit runs, planner's prediction: MAPE " << pct(r.fit_rank_mape) << " calibrated"
      << (defaults ? ", " + pct(r.fit_rank_mape_default) + " default" : std::string()) << "\n";

  // Worst residuals by relative error of fwd + bwd.
  std::vector<const Measurement*> order;
  for (const auto& m : r.measured) order.push_back(&m);
  auto rel = [](const Measurement* m) { return std::abs(m->fitted_ms / m->measured_ms - 1.0); };
  std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) { return rel(a) > rel(b); });
  if (!order.empty()) {
    std::vector<double> errs;
    for (const auto* s : order) errs.push_back(rel(s));
    std::sort(errs.begin(), errs.end());
    o << "  residuals of fwd + bwd per measurement: median " << pct(errs[errs.size() / 2]) << ", 90th percentile "
      << pct(errs[std::min(errs.size() - 1, errs.size() * 9 / 10)]) << ", worst " << pct(errs.back()) << "\n";
    o << "\n  worst measurements:\n";
    TextTable t({"run", "rank", "table", "shards", "lookups", "unique", "measured", "fitted", "err"});
    t.separator(" ").minWidths({5, 5, 16, 6, 10, 10, 10, 10, 8});
    t.align(0, TextTable::Align::Right).align(2, TextTable::Align::Left).leftFrom(9);
    for (std::size_t i = 0; i < order.size() && i < worst; ++i) {
      const auto* m = order[i];
      double k = 0, u = 0;
      bool capped = false;
      for (const std::size_t j : m->shards) {
        k += r.samples[j].lookups_per_step;
        u += r.samples[j].unique_rows_per_step;
        capped = capped || r.samples[j].capped;
      }
      t.add({std::to_string(static_cast<long long>(m->run)), std::to_string(m->rank),
             m->table.empty() ? "(all)" : m->table, std::to_string(m->shards.size()), fmt(k, 0), fmt(u, 0),
             fmt(m->measured_ms, 4), fmt(m->fitted_ms, 4), fmt((m->fitted_ms / m->measured_ms - 1.0) * 100.0, 1) + "%",
             capped ? "capped" : ""});
    }
    t.print(o);
  }
  o << "\n";
  if (r.holdout_runs.empty()) {
    o << "Held-out check: none (no --holdout runs)\n";
  } else {
    o << "Held-out check on runs " << idList(r.holdout_runs) << " (" << r.holdout.size()
      << " ranks): per-rank compute MAPE " << (r.holdout_mape >= 0 ? pct(r.holdout_mape) : "-") << " calibrated, "
      << (r.holdout_mape_default >= 0 && defaults ? pct(r.holdout_mape_default) : "-") << " default constants\n";
    TextTable t({"run", "rank", "g.rank", "measured ms", "calibrated ms", "err", "default ms", "err"});
    t.separator(" ").minWidths({5, 5, 6, 12, 14, 8, 12, 8}).align(0, TextTable::Align::Right);
    for (const auto& h : r.holdout)
      t.add({std::to_string(static_cast<long long>(h.run)), std::to_string(h.rank), std::to_string(h.group_rank),
             fmt(h.measured_ms, 4), fmt(h.calibrated_ms, 4),
             fmt((h.calibrated_ms / h.measured_ms - 1.0) * 100.0, 1) + "%", fmt(h.default_ms, 4),
             defaults ? fmt((h.default_ms / h.measured_ms - 1.0) * 100.0, 1) + "%" : "-"});
    t.print(o);
  }
  return o.str();
}

nlohmann::ordered_json calibrationReportJson(const CalibrationReport& r) {
  using J = nlohmann::ordered_json;
  auto ids = [](const std::vector<st::RunId>& v) {
    J a = J::array();
    for (auto id : v) a.push_back(static_cast<std::int64_t>(id));
    return a;
  };
  auto optional = [](double v) { return v >= 0 ? J(v) : J(nullptr); };
  J j;
  j["calibration"] = core::toJson(r.calibration);
  j["fit_runs"] = ids(r.fit_runs);
  j["holdout_runs"] = ids(r.holdout_runs);
  j["measurements"] = r.measurements;
  j["fit_mape"] = r.fit_mape;
  // Default-constant errors only where the defaults are priced for the runs' device.
  const bool defaults = r.defaults_not_compared.empty();
  j["fit_mape_default"] = defaults ? J(r.fit_mape_default) : J(nullptr);
  if (!defaults) j["defaults_not_compared"] = r.defaults_not_compared;
  j["fit_rank_mape"] = optional(r.fit_rank_mape);
  j["fit_rank_mape_default"] = optional(defaults ? r.fit_rank_mape_default : -1.0);
  j["holdout_mape"] = optional(r.holdout_mape);
  j["holdout_mape_default"] = optional(defaults ? r.holdout_mape_default : -1.0);
  j["dropped"] = r.dropped;
  auto& links = j["collectives"] = J::array();
  for (const auto& f : r.collectives)
    links.push_back({{"op", f.op},
                     {"link", f.inter_node ? "inter_node" : "intra_node"},
                     {"calls", f.calls},
                     {"busbw_gbps", f.busbw_gbps},
                     {"latency_us", f.latency_us},
                     {"mape", f.mape},
                     {"model_mape", optional(f.model_mape)}});
  j["warnings"] = r.warnings;
  auto& terms = j["terms"] = J::array();
  for (const auto& t : r.terms)
    terms.push_back({{"name", t.name}, {"value", t.value}, {"std_error", t.std_error}, {"at_zero", t.at_zero}});
  auto& samples = j["samples"] = J::array();
  for (const auto& s : r.samples)
    samples.push_back({{"run", static_cast<std::int64_t>(s.run)},
                       {"rank", s.rank},
                       {"group_rank", s.group_rank},
                       {"table", s.table},
                       {"rows", s.rows},
                       {"cols", s.cols},
                       {"data_parallel", s.data_parallel},
                       {"capped", s.capped},
                       {"expected", s.expected},
                       {"samples_per_step", s.samples_per_step},
                       {"lookups_per_step", s.lookups_per_step},
                       {"unique_rows_per_step", s.unique_rows_per_step},
                       {"measured_fwd_ms", optional(s.measured_fwd_ms)},
                       {"measured_bwd_ms", optional(s.measured_bwd_ms)},
                       {"measured_ms", s.measured_ms},
                       {"fitted_fwd_ms", s.fitted_fwd_ms},
                       {"fitted_bwd_ms", s.fitted_bwd_ms},
                       {"fitted_ms", s.fitted_ms},
                       {"default_ms", s.default_ms}});
  auto& measured = j["measured"] = J::array();
  for (const auto& m : r.measured)
    measured.push_back({{"run", static_cast<std::int64_t>(m.run)},
                        {"rank", m.rank},
                        {"table", m.table.empty() ? J(nullptr) : J(m.table)},
                        {"shards", m.shards.size()},
                        {"measured_fwd_ms", optional(m.measured_fwd_ms)},
                        {"measured_bwd_ms", optional(m.measured_bwd_ms)},
                        {"measured_ms", m.measured_ms},
                        {"fitted_ms", m.fitted_ms},
                        {"default_ms", m.default_ms}});
  auto checks = [](const std::vector<RankCheck>& v) {
    J a = J::array();
    for (const auto& h : v)
      a.push_back({{"run", static_cast<std::int64_t>(h.run)},
                   {"rank", h.rank},
                   {"group_rank", h.group_rank},
                   {"measured_ms", h.measured_ms},
                   {"calibrated_ms", h.calibrated_ms},
                   {"default_ms", h.default_ms}});
    return a;
  };
  j["fit_ranks"] = checks(r.fit_ranks);
  j["holdout"] = checks(r.holdout);
  return j;
}

}  // namespace shardscope::profiler
