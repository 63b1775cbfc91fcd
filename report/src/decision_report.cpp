#include "shardscope/report/decision_report.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <set>

#include "shardscope/core/device.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/display_format.h"
#include "shardscope/report/grid_choice.h"
#include "shardscope/report/phase_style.h"

namespace shardscope::report {

namespace {

using planner::GridResult;

struct StepPart {
  const char* name;
  Phase phase;  // its colour and pattern: the phase palette every chart uses
  double ms;
};

std::array<StepPart, 4> stepParts(const GridResult& g) {
  return {{{"embedding", Phase::Embedding, g.step.embedding_ms},
           {"all-to-all", Phase::AllToAll, g.step.all_to_all_ms},
           {"replica sync", Phase::ReplicaSync, g.step.replica_sync_ms},
           {"dense", Phase::Dense, g.step.dense_ms}}};
}

// A CSS background of the phase: its colour, hatched for the all-reduces as in the desktop's charts.
std::string phaseBackground(Phase phase) {
  const std::string colour(phaseCss(phase));
  switch (phaseStyle(phase).hatch) {
    case Hatch::Diagonal:
      return "repeating-linear-gradient(45deg," + colour + " 0 2px,#ffffff80 2px 5px)," + colour;
    case Hatch::CrossDiagonal:
      return "repeating-linear-gradient(45deg," + colour +
             " 0 2px,transparent 2px 5px),repeating-linear-gradient(-45deg," + colour + " 0 2px,#ffffff80 2px 5px)," +
             colour;
    case Hatch::None:
      break;
  }
  return colour;
}

std::string ms(double v) { return core::formatf("%.2f ms", v); }

std::string gib(double bytes) { return core::formatBytes(bytes, {.unit = core::ByteUnit::GiB}); }

std::string gridName(const GridResult& g) {
  return core::formatf("M = %u \u00d7 R = %u (%s)", g.grid.group_size, g.grid.replicas, core::toString(g.grid.layout));
}

// "+1.23 ms (+4.5%)" of `other` against `base`; "+46.23 ms (×9.4)" once
// it takes twice as long or more.
std::string delta(const GridResult& other, const GridResult& base) {
  const double d = other.step.step_ms - base.step.step_ms;
  if (base.step.step_ms <= 0) return core::formatf("%+.2f ms", d);
  const double ratio = other.step.step_ms / base.step.step_ms;
  if (ratio >= 2.0) return core::formatf("%+.2f ms (\u00d7%.1f)", d, ratio);
  return core::formatf("%+.2f ms (%+.1f%%)", d, 100.0 * d / base.step.step_ms);
}

// Room left of a rank's usable capacity (negative: over).
double headroomBytes(const planner::RankResult& r) {
  return static_cast<double>(r.capacity_bytes) - static_cast<double>(r.state_bytes + r.served_buffer_bytes);
}

// The rank with the least room left of its usable capacity.
const planner::RankResult* tightestRank(const GridResult& g) {
  const planner::RankResult* tightest = nullptr;
  double least = 0;
  for (const auto& r : g.ranks) {
    const double left = headroomBytes(r);
    if (tightest == nullptr || left < least) {
      tightest = &r;
      least = left;
    }
  }
  return tightest;
}

// The part of `other`'s step that grew most against `base` ("replica sync +1.50 ms").
std::string biggestChange(const GridResult& other, const GridResult& base) {
  const auto a = stepParts(other);
  const auto b = stepParts(base);
  std::size_t most = 0;
  for (std::size_t i = 1; i < a.size(); ++i) {
    if (std::abs(a[i].ms - b[i].ms) > std::abs(a[most].ms - b[most].ms)) most = i;
  }
  std::string s = a[most].name;
  s += core::formatf(" %+.2f ms", a[most].ms - b[most].ms);
  return s;
}

// A sentence about the best grid of a neighbouring group size.
std::string neighbourSentence(const GridResult& n, const GridResult& d, const char* which) {
  std::string s = "The next ";
  s += which;
  s += " group size, ";
  s += gridName(n);
  if (!n.fits) {
    s += ", does not fit in memory (peak ";
    s += gib(static_cast<double>(peakMemory(n)));
    s += " per GPU).";
    return s;
  }
  s += ", takes ";
  s += ms(n.step.step_ms);
  s += " per step, ";
  s += delta(n, d);
  s += "; the biggest change is ";
  s += biggestChange(n, d);
  s += ".";
  return s;
}

void appendRow(std::string& h, const char* label, const std::string& value_html) {
  h += "<tr><th>";
  h += label;
  h += "</th><td>";
  h += value_html;
  h += "</td></tr>\n";
}

std::string summaryTable(const std::vector<SummaryRow>& rows) {
  std::string h = "<table class=\"kv\">\n";
  for (const SummaryRow& r : rows) appendRow(h, htmlEscape(r.label).c_str(), htmlEscape(r.value));
  h += "</table>\n";
  return h;
}

// The mark beside a figure the project's calibration changed (see the footnote).
const char* calibratedMark(const CalibratedFigures& changed, Phase phase) {
  const bool yes = phase == Phase::Embedding     ? changed.embedding
                   : phase == Phase::AllToAll    ? changed.all_to_all
                   : phase == Phase::ReplicaSync ? changed.replica_sync
                   : phase == Phase::Dense       ? changed.dense
                                                 : changed.any();
  return yes ? "\u2020" : "";
}

// A horizontal stacked bar of the step's parts, with a legend.
std::string stepBar(const GridResult& g, const CalibratedFigures& changed) {
  std::string h = "<div class=\"stepbar\">";
  const double total =
      std::max(1e-12, g.step.embedding_ms + g.step.all_to_all_ms + g.step.replica_sync_ms + g.step.dense_ms);
  for (const StepPart& p : stepParts(g)) {
    if (p.ms <= 0) continue;
    h += core::formatf("<span style=\"width:%.2f%%;background:%s\" title=\"%s %.2f ms\"></span>", 100.0 * p.ms / total,
                       phaseBackground(p.phase).c_str(), p.name, p.ms);
  }
  h += "</div>\n<div class=\"legend\">";
  for (const StepPart& p : stepParts(g)) {
    h += core::formatf("<span><i style=\"background:%s\"></i>%s %.2f ms (%.0f%%)%s</span>",
                       phaseBackground(p.phase).c_str(), p.name, p.ms, 100.0 * p.ms / total,
                       calibratedMark(changed, p.phase));
  }
  h += "</div>\n";
  return h;
}

constexpr const char* kStyle = R"(<style>
body{font-family:-apple-system,"Segoe UI",Roboto,"Noto Sans",Helvetica,Arial,sans-serif;font-size:14px;color:#1d232b;
 max-width:1180px;margin:24px auto;padding:0 20px;line-height:1.45;background:#fff}
h1{font-size:24px;margin:0 0 2px}h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #d5dae0;padding-bottom:3px}
.sub{color:#5b6673;margin:0 0 14px}
.decision{border:1px solid #b9cbe0;background:#f3f7fc;border-radius:6px;padding:12px 16px}
.decision.warn{border-color:#e0b4b4;background:#fcf3f3}
.headline{font-size:20px;font-weight:600}
.tag{display:inline-block;font-size:12px;font-weight:600;padding:1px 7px;border-radius:9px;background:#3a7cc2;)"
                               R"(color:#fff;
 vertical-align:middle;margin-left:6px}.tag.bad{background:#c83c3c}
.stats{display:flex;flex-wrap:wrap;gap:8px 28px;margin:8px 0}.stats div b{display:block;font-size:16px}
.stats div{color:#5b6673}.stats div b{color:#1d232b}
.calibrated{font-size:13px;color:#5b6673;margin-top:4px}.calibrated b{color:#d55e00}
.stepbar{display:flex;height:16px;border-radius:3px;overflow:hidden;margin:6px 0 4px;background:#e6e9ed}
.stepbar span{display:block;height:100%}
.legend span{margin-right:16px;white-space:nowrap;font-size:13px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
ul.why li{margin:3px 0}
table{border-collapse:collapse;font-size:13px}
table.grid th,table.grid td{padding:3px 8px;border-bottom:1px solid #e1e5ea;text-align:right}
table.grid th{background:#f1f3f5;font-weight:600}
table.grid td.l,table.grid th.l{text-align:left}
table.grid tr.decision td{background:#e4eefa;font-weight:600}
table.grid tr.nofit td{color:#a33}
table.kv th{text-align:left;font-weight:normal;color:#5b6673;padding:1px 14px 1px 0;vertical-align:top}
table.kv td{padding:1px 0}
.cols{display:flex;flex-wrap:wrap;gap:10px 48px}
.charts{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:14px}
figure{margin:0}figure img{width:100%;height:auto;border:1px solid #e1e5ea}
figcaption{font-size:13px;color:#5b6673;margin-top:2px}
.problems li{color:#a33}
footer{margin-top:22px;color:#5b6673;font-size:12px;border-top:1px solid #d5dae0;padding-top:6px}
@media print{body{max-width:none;margin:0}.charts{grid-template-columns:repeat(2,1fr)}}
</style>
)";

}  // namespace

std::string htmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::vector<std::size_t> bestGridPerGroupSize(const planner::SweepResult& sweep) {
  std::vector<std::size_t> best;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < sweep.grids.size(); ++i) {  // ranked: the first of each M is its best
    if (seen.insert(sweep.grids[i].grid.group_size).second) best.push_back(i);
  }
  std::sort(best.begin(), best.end(), [&](std::size_t a, std::size_t b) {
    return sweep.grids[a].grid.group_size < sweep.grids[b].grid.group_size;
  });
  return best;
}

std::vector<std::size_t> alternativeGrids(const planner::SweepResult& sweep, std::optional<std::size_t> decision,
                                          std::size_t top) {
  std::set<std::size_t> rows;
  for (std::size_t i = 0; i < std::min(top, sweep.grids.size()); ++i) rows.insert(i);
  for (std::size_t i : bestGridPerGroupSize(sweep)) rows.insert(i);
  if (decision && *decision < sweep.grids.size()) rows.insert(*decision);
  return {rows.begin(), rows.end()};
}

namespace {

// Why there is no decision: nothing planned, or nothing fits.
std::string noDecisionReason(const planner::SweepResult& sweep, std::uint64_t hbm_bytes) {
  const auto& grids = sweep.grids;
  if (grids.empty()) return "Nothing was planned.";
  std::string s =
      core::formatf("None of the %zu planned grids fits in memory, so there is no plan to run.", grids.size());
  const GridResult* least = &grids.front();
  for (const GridResult& g : grids) {
    if (peakMemory(g) < peakMemory(*least)) least = &g;
  }
  s += " The smallest peak is ";
  s += gib(static_cast<double>(peakMemory(*least)));
  s += " per GPU with ";
  s += gridName(*least);
  s += core::formatf(" against %s of HBM: add GPUs, use GPUs with more memory or shrink the tables.",
                     gib(static_cast<double>(hbm_bytes)).c_str());
  return s;
}

// The choice against the fastest fitting grid.
std::string choiceReason(const DecisionReportInput& in, const GridResult& d, const GridResult* fastest) {
  const auto& grids = in.sweep.grids;
  const std::size_t fitting = fittingCount(in.sweep);
  if (!in.chosen) {
    return core::formatf(
        "No grid was chosen: this is the fastest of the %zu grids that fit in memory "
        "(%zu planned, %zu do not fit).",
        fitting, grids.size(), grids.size() - fitting);
  }
  std::string s = "You chose this grid.";
  if (!d.fits) {
    s += " It does not fit in memory";
    if (!d.problems.empty()) s += ": " + d.problems.front();
    s += ".";
  } else if (fastest == &d) {
    s += core::formatf(" It is also the fastest of the %zu grids that fit (%zu planned).", fitting, grids.size());
  } else if (fastest != nullptr) {
    s += " It is " + delta(d, *fastest) + " against the fastest fitting grid, " + gridName(*fastest) + " at " +
         ms(fastest->step.step_ms) + ".";
  }
  return s;
}

// With R = 1 or M = 1 the two rank layouts place every rank alike: one grid, listed twice.
bool sameRanks(const GridResult& a, const GridResult& b) {
  return a.grid.group_size == b.grid.group_size && a.grid.replicas == b.grid.replicas &&
         (a.grid.layout == b.grid.layout || a.grid.replicas == 1 || a.grid.group_size == 1);
}

// The runner-up: the next fitting grid in the ranking that is another grid (none: empty).
std::string runnerUpReason(const DecisionReportInput& in, std::size_t di, const GridResult* fastest) {
  const auto& grids = in.sweep.grids;
  const GridResult& d = grids[di];
  for (std::size_t i = 0; i < grids.size(); ++i) {
    if (i == di || !grids[i].fits || sameRanks(grids[i], d)) continue;
    if (fastest != nullptr && fastest != &d && &grids[i] == fastest) continue;  // already compared
    const GridResult& r = grids[i];
    std::string s = "The runner-up is " + gridName(r);
    if (r.grid.group_size == d.grid.group_size) s += ", the same M in the other rank layout,";
    s += " at " + ms(r.step.step_ms) + " per step: " + delta(r, d) + ".";
    return s;
  }
  return {};
}

// The best grid of another group size, and the neighbouring group sizes:
// what changes when M shrinks or grows.
void appendGroupSizeReasons(const DecisionReportInput& in, const GridResult& d, std::vector<std::string>& why) {
  const auto& grids = in.sweep.grids;
  const GridResult* other_m = nullptr;
  for (const GridResult& g : grids) {
    if (g.fits && g.grid.group_size != d.grid.group_size) {
      other_m = &g;
      break;
    }
  }
  if (other_m != nullptr) {
    why.push_back("The best grid with another group size, " + gridName(*other_m) + ", takes " +
                  ms(other_m->step.step_ms) + " per step: " + delta(*other_m, d) + "; the biggest change is " +
                  biggestChange(*other_m, d) + ".");
  } else {
    why.push_back("No other group size M gives a grid that fits in memory.");
  }
  const std::vector<std::size_t> per_m = bestGridPerGroupSize(in.sweep);
  const auto here = std::find_if(per_m.begin(), per_m.end(),
                                 [&](std::size_t i) { return grids[i].grid.group_size == d.grid.group_size; });
  if (here == per_m.end()) return;
  if (here != per_m.begin() && &grids[*(here - 1)] != other_m) {
    why.push_back(neighbourSentence(grids[*(here - 1)], d, "smaller"));
  }
  if (here + 1 != per_m.end() && &grids[*(here + 1)] != other_m) {
    why.push_back(neighbourSentence(grids[*(here + 1)], d, "larger"));
  }
}

// What dominates the step.
std::string dominantPartReason(const DecisionReportInput& in, const GridResult& d) {
  const auto parts = stepParts(d);
  const StepPart* top = &parts[0];
  for (const StepPart& p : parts) {
    if (p.ms > top->ms) top = &p;
  }
  std::string s = top->name;
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  s += core::formatf(" dominates the step: %.2f of %.2f ms (%.0f%%).", top->ms, d.step.step_ms,
                     d.step.step_ms > 0 ? 100.0 * top->ms / d.step.step_ms : 0.0);
  if (d.grid.replicas == 1) {
    s += " With R = 1 there is no replica sync (plain model parallelism over all N GPUs).";
  } else if (in.project.sync_interval > 1) {
    s += " The replica sync runs " + syncIntervalText(in.project.sync_interval) + " and is amortised over them.";
  }
  return s;
}

// Peak memory against HBM and the tightest rank's headroom.
std::string memoryReason(const DecisionReportInput& in, const GridResult& d) {
  const double hbm = static_cast<double>(in.project.cluster.gpu.hbm_bytes);
  const double peak = static_cast<double>(peakMemory(d));
  std::string s = "Peak memory per GPU is " + gib(peak) + " of " + gib(hbm) + " HBM";
  if (hbm > 0) s += core::formatf(" (%.0f%%)", 100.0 * peak / hbm);
  const planner::RankResult* t = tightestRank(d);
  if (t == nullptr) return s + ".";
  const double left = headroomBytes(*t);
  if (left >= 0) {
    s += core::formatf("; the tightest rank (group rank %u) has %s left of its usable capacity.", t->group_rank,
                       gib(left).c_str());
  } else {
    s += core::formatf("; group rank %u is %s over its usable capacity.", t->group_rank, gib(-left).c_str());
  }
  return s;
}

// Load imbalance and the critical rank.
std::string imbalanceReason(const GridResult& d) {
  std::string s =
      core::formatf("Load imbalance (max / mean over the group's ranks) is %.3f; group rank %u sets the step",
                    d.imbalance.max_over_mean, d.critical_rank);
  if (!d.critical_tables.empty()) {
    s += ", its heaviest tables: ";
    const std::size_t n = std::min<std::size_t>(3, d.critical_tables.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (i != 0) s += ", ";
      s += d.critical_tables[i].table;
      s += core::formatf(" (%.2f ms)", d.critical_tables[i].load_ms);
    }
  }
  if (d.lower_bound_ms > 0) s += core::formatf("; its load is %.1f%% above the lower bound", 100.0 * d.gap);
  s += ".";
  return s;
}

}  // namespace

std::vector<std::string> decisionReasons(const DecisionReportInput& in) {
  const auto& grids = in.sweep.grids;
  if (!in.decision || *in.decision >= grids.size())
    return {noDecisionReason(in.sweep, in.project.cluster.gpu.hbm_bytes)};
  const std::size_t di = *in.decision;
  const GridResult& d = grids[di];
  const GridResult* fastest = in.sweep.best();
  std::vector<std::string> why;
  why.push_back(choiceReason(in, d, fastest));
  if (std::string runner_up = runnerUpReason(in, di, fastest); !runner_up.empty()) why.push_back(std::move(runner_up));
  appendGroupSizeReasons(in, d, why);
  why.push_back(dominantPartReason(in, d));
  why.push_back(memoryReason(in, d));
  why.push_back(imbalanceReason(d));
  return why;
}

namespace {

// The document's head and title lines.
void appendHead(std::string& h, const DecisionReportInput& in, const std::string& project_name) {
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<meta name=\"generator\" content=\"ShardScope " + htmlEscape(in.version) + "\">\n";
  h += "<title>ShardScope decision: " + htmlEscape(project_name) + "</title>\n";
  h += kStyle;
  h += "</head>\n<body>\n";
  h += "<h1>Grid decision: " + htmlEscape(project_name) + "</h1>\n";
  h += "<p class=\"sub\">" + htmlEscape(in.project.model.name) + " on " + htmlEscape(in.project.cluster.name) +
       core::formatf(" (N = %u GPUs: %u nodes \u00d7 %u)", in.project.cluster.worldSize(), in.project.cluster.nodes,
                     in.project.cluster.gpus_per_node) +
       " \u00b7 report of " + htmlEscape(in.generated) + "</p>\n";
}

// The decision's headline, its step bar and its key numbers.
void appendDecision(std::string& h, const DecisionReportInput& in, const GridResult* d) {
  h += "<h2>Decision</h2>\n";
  if (d == nullptr) {
    h += "<div class=\"decision warn\" id=\"decision\"><div class=\"headline\">No grid fits"
         "<span class=\"tag bad\">no plan</span></div></div>\n";
    return;
  }
  h += d->fits ? "<div class=\"decision\" id=\"decision\">\n" : "<div class=\"decision warn\" id=\"decision\">\n";
  h += "<div class=\"headline\">" + htmlEscape(gridName(*d)) +
       core::formatf(" \u2014 %.2f ms per step", d->step.step_ms);
  h += in.chosen ? "<span class=\"tag\">chosen</span>" : "<span class=\"tag\">best fitting</span>";
  if (!d->fits) h += "<span class=\"tag bad\">does not fit</span>";
  h += "</div>\n";
  if (d->grid.replicas == 1) {
    h += core::formatf(
        "<div>One sharding group of all %u GPUs: every table is sharded over all of them and there "
        "are no replicas to sync.</div>\n",
        d->grid.group_size);
  } else {
    h += core::formatf(
        "<div>%u sharding groups of %u GPUs: each table is sharded inside a group, and the %u groups "
        "are replicas that average their embedding weights and optimizer state.</div>\n",
        d->grid.replicas, d->grid.group_size, d->grid.replicas);
  }
  const core::Calibration* cal = in.project.calibration ? &*in.project.calibration : nullptr;
  const CalibratedFigures changed = calibratedFigures(cal);
  const std::string mark = changed.any() ? "\u2020" : "";
  h += stepBar(*d, changed);
  const double hbm = static_cast<double>(in.project.cluster.gpu.hbm_bytes);
  const double peak = static_cast<double>(peakMemory(*d));
  double mean_load = 0;
  double max_load = 0;
  for (const auto& r : d->ranks) {
    mean_load += r.load_ms;
    max_load = std::max(max_load, r.load_ms);
  }
  if (!d->ranks.empty()) mean_load /= static_cast<double>(d->ranks.size());
  h += "<div class=\"stats\">";
  h += core::formatf("<div>step time<b>%.2f ms%s</b></div>", d->step.step_ms, mark.c_str());
  h += "<div>throughput<b>" + htmlEscape(formatScaledCount(d->samples_per_second)) + " samples/s" + mark + "</b></div>";
  h += "<div>memory per GPU (peak)<b>" + gib(peak) + " / " + gib(hbm) +
       (hbm > 0 ? core::formatf(" (%.0f%%)", 100.0 * peak / hbm) : std::string()) + "</b></div>";
  h += core::formatf("<div>imbalance max / mean<b>%.3f (%.2f / %.2f ms)</b></div>", d->imbalance.max_over_mean,
                     max_load, mean_load);
  h += core::formatf("<div>gap to lower bound<b>%.1f%%</b></div>", 100.0 * d->gap);
  h += "<div>planner<b>" + htmlEscape(d->algorithm) + "</b></div>";
  h += "</div>\n";
  if (changed.any()) {
    h += "<div class=\"calibrated\" id=\"calibrated\">\u2020 " + htmlEscape(core::calibratedOnText(cal));
    const std::string mismatch = core::calibrationMismatch(in.project.cluster, cal);
    if (!mismatch.empty())
      h += ": <b>" + htmlEscape(mismatch) +
           "; the figures it changes are for that device, the others for the cluster's</b>";
    h += "</div>\n";
  }
  h += "</div>\n";
}

// The alternatives table: the top grids and the best of each M.
void appendAlternatives(std::string& h, const DecisionReportInput& in, const GridResult* d) {
  const auto& grids = in.sweep.grids;
  h += "<h2>Alternatives</h2>\n";
  h += core::formatf(
      "<p class=\"sub\">The %zu best ranked grids and the best grid of each group size M, of %zu "
      "planned; grids that do not fit in memory are in red.</p>\n",
      std::min<std::size_t>(5, grids.size()), grids.size());
  const CalibratedFigures changed = calibratedFigures(in.project.calibration ? &*in.project.calibration : nullptr);
  h += "<table class=\"grid\" id=\"alternatives\">\n<tr><th>#</th><th>M</th><th>R</th><th class=\"l\">layout</th>";
  h += std::string("<th>step (ms)") + calibratedMark(changed, Phase::Step) + "</th><th>embedding" +
       calibratedMark(changed, Phase::Embedding) + "</th><th>all-to-all" + calibratedMark(changed, Phase::AllToAll) +
       "</th><th>replica sync" + calibratedMark(changed, Phase::ReplicaSync) + "</th><th>dense" +
       calibratedMark(changed, Phase::Dense) + "</th>";
  h += "<th>vs decision</th><th>memory (GiB)</th><th>max / mean</th><th class=\"l\">fits</th></tr>\n";
  for (const std::size_t i : alternativeGrids(in.sweep, in.decision)) {
    const GridResult& g = grids[i];
    const bool is_decision = d == &g;
    h += "<tr";
    if (is_decision) {
      h += " class=\"decision\"";
    } else if (!g.fits) {
      h += " class=\"nofit\"";
    }
    h += ">";
    h += core::formatf("<td>%zu</td><td>%u</td><td>%u</td><td class=\"l\">%s</td>", i + 1, g.grid.group_size,
                       g.grid.replicas, core::toString(g.grid.layout));
    h += core::formatf("<td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td>", g.step.step_ms,
                       g.step.embedding_ms, g.step.all_to_all_ms, g.step.replica_sync_ms, g.step.dense_ms);
    h += "<td>";
    if (is_decision) {
      h += "decision";
    } else if (d != nullptr) {
      h += delta(g, *d);
    }
    h += "</td>";
    h += "<td>" +
         core::formatBytes(static_cast<double>(peakMemory(g)), {.unit = core::ByteUnit::GiB, .unit_name = false}) +
         "</td>" + core::formatf("<td>%.3f</td>", g.imbalance.max_over_mean);
    h += g.fits ? "<td class=\"l\">yes</td>" : "<td class=\"l\">no</td>";
    h += "</tr>\n";
  }
  h += "</table>\n";
}

// The model, the cluster and the planning inputs.
void appendProject(std::string& h, const DecisionReportInput& in) {
  const auto& grids = in.sweep.grids;
  h += "<h2>Project</h2>\n<div class=\"cols\">\n<div><b>Model</b>\n" +
       summaryTable(modelSummaryRows(in.project.model)) + "</div>\n";
  h += "<div><b>Cluster</b>\n" + summaryTable(clusterSummaryRows(in.project.cluster)) + "</div>\n";
  h += "<div><b>Planning</b>\n<table class=\"kv\">\n";
  appendRow(h, "Project file", in.project_file.empty() ? std::string("(unsaved)") : htmlEscape(in.project_file));
  appendRow(h, "Replica sync", syncIntervalText(in.project.sync_interval));
  if (in.project.calibration) {
    const core::Calibration& c = *in.project.calibration;
    std::string v = htmlEscape(c.source);
    if (!c.created.empty()) v += " (" + htmlEscape(c.created) + ")";
    if (c.fit.samples > 0) {
      v += core::formatf(", fit error %.1f%% over %llu samples", 100.0 * c.fit.mape,
                         static_cast<unsigned long long>(c.fit.samples));
    }
    appendRow(h, "Calibration", v);
  } else {
    appendRow(h, "Calibration", "none: the cost model's defaults");
  }
  appendRow(h, "Grids planned",
            core::formatf("%zu (%zu fit)%s", grids.size(), fittingCount(in.sweep),
                          in.sweep.cancelled ? ", cancelled early" : ""));
  h += "</table>\n</div>\n</div>\n";
}

// One line of the constraint list: "table t3: pinned to group rank(s) 2; only row_wise".
std::string tableConstraintLine(const core::TableConstraint& t) {
  std::string line = "table " + htmlEscape(t.table) + ":";
  if (!t.pin_ranks.empty()) {
    line += " pinned to group rank(s)";
    for (std::size_t i = 0; i < t.pin_ranks.size(); ++i) {
      line += (i == 0 ? " " : ", ") + std::to_string(t.pin_ranks[i]);
    }
    line += ";";
  }
  if (t.force) line += std::string(" only ") + core::toString(*t.force) + ";";
  if (!t.forbid.empty()) {
    line += " never";
    for (std::size_t i = 0; i < t.forbid.size(); ++i) {
      line += std::string(i == 0 ? " " : ", ") + core::toString(t.forbid[i]);
    }
    line += ";";
  }
  line.pop_back();
  return line;
}

// The project's constraints and the decision's problems.
void appendConstraints(std::string& h, const DecisionReportInput& in, const GridResult* d) {
  h += "<h2>Constraints and problems</h2>\n";
  const core::Constraints& cons = in.project.constraints;
  if (cons.empty()) {
    h += "<p>No constraints: the planner placed every table freely.</p>\n";
  } else {
    h += "<ul id=\"constraints\">\n";
    for (const core::TableConstraint& t : cons.tables) h += "<li>" + tableConstraintLine(t) + "</li>\n";
    for (const core::RankMemoryCap& cap : cons.rank_memory_caps) {
      h += core::formatf("<li>group rank %u: memory capped at %s</li>\n", cap.group_rank,
                         gib(static_cast<double>(cap.bytes)).c_str());
    }
    h += "</ul>\n";
  }
  if (d != nullptr && !d->problems.empty()) {
    h += "<ul class=\"problems\" id=\"problems\">\n";
    for (const std::string& p : d->problems) h += "<li>" + htmlEscape(p) + "</li>\n";
    h += "</ul>\n";
  } else if (d != nullptr) {
    h += "<p>The decision has no problems: every rank fits its memory and every constraint is met.</p>\n";
  }
}

// The charts as embedded PNGs.
void appendCharts(std::string& h, const std::vector<ReportChart>& charts) {
  if (charts.empty()) return;
  h += "<h2>Charts</h2>\n<div class=\"charts\">\n";
  for (const ReportChart& c : charts) {
    h += "<figure id=\"chart-" + htmlEscape(c.id) + "\"><img alt=\"" + htmlEscape(c.title) +
         "\" src=\"data:image/png;base64,";
    h += c.png_base64;
    h += "\"><figcaption>" + htmlEscape(c.title) + "</figcaption></figure>\n";
  }
  h += "</div>\n";
}

// Where the numbers came from.
void appendProvenance(std::string& h, const DecisionReportInput& in, const GridResult* d) {
  h += "<footer id=\"provenance\">ShardScope " + htmlEscape(in.version) + " \u00b7 generated " +
       htmlEscape(in.generated);
  if (d != nullptr && !d->plan.provenance.created.empty()) {
    h += " \u00b7 planned " + htmlEscape(d->plan.provenance.created);
  }
  h += " \u00b7 ";
  h += in.project.calibration ? htmlEscape(core::calibratedOnText(&*in.project.calibration)) + ": " +
                                    htmlEscape(in.project.calibration->source)
                              : std::string("cost-model defaults (no calibration)");
  h += " \u00b7 predictions, not measurements</footer>\n";
}

}  // namespace

std::string decisionSentence(const DecisionReportInput& in) {
  return decisionSentence(in.sweep, in.decision, in.chosen, in.project.cluster.gpu.hbm_bytes);
}

std::string decisionSentence(const planner::SweepResult& sweep, std::optional<std::size_t> decision, bool chosen,
                             std::uint64_t hbm_bytes) {
  const auto& grids = sweep.grids;
  if (!decision || *decision >= grids.size()) return noDecisionReason(sweep, hbm_bytes);
  const GridResult& d = grids[*decision];
  const GridResult* best = sweep.best();
  std::string s = (chosen ? "Chosen: " : "Best: ") + gridName(d) +
                  core::formatf(" at %.2f ms per step", d.step.step_ms) + ", " +
                  formatScaledCount(d.samples_per_second) + " samples/s";
  if (!d.fits) {
    s += "; it does not fit in memory";
  } else if (best != nullptr && best != &d) {
    s += core::formatf(", %.2fx slower than the best, ", d.step.step_ms / std::max(best->step.step_ms, 1e-12)) +
         gridName(*best) + core::formatf(" at %.2f ms", best->step.step_ms);
  } else {
    // The runner-up: the next fitting grid of the ranking.
    for (const GridResult& g : grids)
      if (&g != &d && g.fits && !sameRanks(g, d)) {
        s += "; runner-up " + gridName(g) + " " + delta(g, d);
        break;
      }
  }
  const auto parts = stepParts(d);
  const StepPart* top = &parts[0];
  for (const StepPart& p : parts)
    if (p.ms > top->ms) top = &p;
  s += core::formatf("; %s dominates its step (%.0f%%).", top->name,
                     d.step.step_ms > 0 ? 100.0 * top->ms / d.step.step_ms : 0.0);
  return s;
}

std::string decisionReportHtml(const DecisionReportInput& in) {
  const auto& grids = in.sweep.grids;
  const GridResult* d = in.decision && *in.decision < grids.size() ? &grids[*in.decision] : nullptr;
  const std::string project_name = in.project.name.empty() ? in.project.model.name : in.project.name;

  std::string h;
  h.reserve(64 * 1024);
  appendHead(h, in, project_name);
  appendDecision(h, in, d);
  h += "<h2>Why</h2>\n<ul class=\"why\" id=\"why\">\n";
  for (const std::string& reason : decisionReasons(in)) h += "<li>" + htmlEscape(reason) + "</li>\n";
  h += "</ul>\n";
  appendAlternatives(h, in, d);
  appendProject(h, in);
  appendConstraints(h, in, d);
  appendCharts(h, in.charts);
  appendProvenance(h, in, d);
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace shardscope::report
