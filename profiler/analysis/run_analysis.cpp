// Analysis of one engine run; definitions of every number in docs/analysis.md,
// the conventions read here in docs/formats/engine-trace.md.
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/analysis/step_time.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "shardscope/core/json_io.h"
#include "shardscope/core/summary.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/planner/grid_result.h"
#include "shardscope/profiler/analysis/measured_vs_predicted.h"
#include "shardscope/profiler/trace/trace_recorder.h"
#include "shardscope/profiler/trace/run_device.h"
#include "analysis_common.h"

namespace shardscope::profiler {

namespace st = core::store;

double analysis_detail::median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> analysis_detail::sharesWithinGroups(const std::vector<double>& values,
                                                        const std::vector<int>& groups) {
  std::map<int, double> sums;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] >= 0) sums[groups[i]] += values[i];
  std::vector<double> shares(values.size(), -1.0);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] >= 0 && sums[groups[i]] > 0) shares[i] = values[i] / sums[groups[i]];
  return shares;
}

const std::vector<std::string_view>& analysis_detail::commKinds() {
  static const std::vector<std::string_view> kinds = {
      span_kind::kA2aIds,      span_kind::kA2aPooled,      span_kind::kA2aGrads,      span_kind::kDpAllreduce,
      span_kind::kReplicaSync, span_kind::kDenseAllreduce, span_kind::kReduceScatter, span_kind::kAllGather,
      span_kind::kSendRecv,    span_kind::kBroadcast,      span_kind::kReduce};
  return kinds;
}

namespace {

using namespace analysis_detail;

ComputeImbalance imbalanceOver(const std::vector<const RankAnalysis*>& ranks, int group) {
  ComputeImbalance im;
  im.sharding_group = group;
  im.ranks = ranks.size();
  double sum = 0.0;
  for (const auto* r : ranks) {
    sum += r->compute_ms;
    if (im.slowest_rank < 0 || r->compute_ms > im.max_ms) {
      im.max_ms = r->compute_ms;
      im.slowest_rank = r->rank;
    }
  }
  im.mean_ms = ranks.empty() ? 0.0 : sum / static_cast<double>(ranks.size());
  im.max_over_mean = im.mean_ms > 0 ? im.max_ms / im.mean_ms : -1.0;
  return im;
}

using RankMap = std::map<int, RankAnalysis>;

// Per-rank means from step summaries; a.steps is the number of distinct steps.
RankMap rankMeans(const std::vector<st::StepSummary>& summaries, RunAnalysis& a) {
  std::map<int, RankAnalysis> ranks;
  std::set<std::int64_t> steps;
  for (const auto& s : summaries) {
    RankAnalysis& r = ranks[s.rank];
    r.rank = s.rank;
    ++r.steps;
    r.emb_fwd_ms += static_cast<double>(s.emb_fwd_ns);
    r.emb_bwd_ms += static_cast<double>(s.emb_bwd_ns);
    r.dense_ms += static_cast<double>(s.dense_ns);
    r.comm_ms += static_cast<double>(s.comm_ns);
    r.step_ms += static_cast<double>(s.total_ns);
    steps.insert(s.step);
  }
  a.steps = static_cast<std::int64_t>(steps.size());
  for (auto& [rank, r] : ranks) {
    const double d = static_cast<double>(r.steps) * kNsPerMs;
    r.emb_fwd_ms /= d;
    r.emb_bwd_ms /= d;
    r.compute_ms = r.emb_fwd_ms + r.emb_bwd_ms;
    r.dense_ms /= d;
    r.comm_ms /= d;
    r.step_ms /= d;
    if (r.steps < a.steps)
      a.warnings.push_back("rank " + std::to_string(rank) + " has " + std::to_string(r.steps) + " of " +
                           std::to_string(a.steps) + " measured steps");
  }
  return ranks;
}

// Groups: the ranks table, else the plan.
void assignGroups(const std::vector<st::RankInfo>& infos, const RunInputs& in, bool imported, RankMap& ranks,
                  RunAnalysis& a) {
  // An import's ranks table holds one placeholder group; a supplied plan knows better.
  const bool groups_from_plan = imported && in.plan;
  for (const auto& info : infos) {
    if (groups_from_plan) break;
    auto it = ranks.find(info.rank);
    if (it == ranks.end()) continue;
    it->second.sharding_group = info.sharding_group;
    it->second.replica_group = info.replica_group;
  }
  if (in.plan) {
    const auto& plan = *in.plan;
    for (auto& [rank, r] : ranks) {
      r.group_rank = groupRankOf(plan, rank);
      if (r.sharding_group < 0)
        for (std::size_t g = 0; g < plan.sharding_groups.size(); ++g)
          if (std::find(plan.sharding_groups[g].begin(), plan.sharding_groups[g].end(),
                        static_cast<std::uint32_t>(rank)) != plan.sharding_groups[g].end())
            r.sharding_group = static_cast<int>(g);
      if (r.replica_group < 0)
        for (std::size_t g = 0; g < plan.replica_groups.size(); ++g)
          if (std::find(plan.replica_groups[g].begin(), plan.replica_groups[g].end(),
                        static_cast<std::uint32_t>(rank)) != plan.replica_groups[g].end())
            r.replica_group = static_cast<int>(g);
    }
    std::ostringstream ps;
    ps << "M=" << plan.sharding_group_size << " R=" << plan.replicas << " " << core::toString(plan.layout);
    a.plan_summary = ps.str();
  }
}

// Bus bandwidth per op and message size, from the collectives table.
void bandwidthBins(const std::vector<st::Collective>& colls, const st::StringTable& strings, RunAnalysis& a) {
  struct CallAcc {
    std::int64_t shortest = std::numeric_limits<std::int64_t>::max();
    double size = 0.0;  // the largest any member recorded (all-to-allv sizes differ per rank)
    int ranks = 0;
    std::vector<double> rank_ms;  // every member's duration
  };
  const std::vector<CallKey> keys = callKeys(colls);
  std::map<CallKey, CallAcc> by_call;
  for (std::size_t i = 0; i < colls.size(); ++i) {
    const auto& c = colls[i];
    if (c.end_ns <= c.start_ns || c.bytes <= 0) continue;
    const std::string_view op = strings.at(c.op);
    CallAcc& acc = by_call[keys[i]];
    acc.shortest = std::min(acc.shortest, c.end_ns - c.start_ns);
    acc.size = std::max(acc.size, collectiveSizeBytes(op, static_cast<double>(c.bytes)));
    acc.ranks = std::max(acc.ranks, c.peers + 1);
    acc.rank_ms.push_back(static_cast<double>(c.end_ns - c.start_ns) / kNsPerMs);
  }
  // Binned once each call is complete, so every member lands in its call's bin.
  struct BinAcc {
    std::vector<double> sizes, transfer_ms, algbw, rank_ms;
  };
  std::map<std::tuple<std::string, int, int>, BinAcc> bins;
  for (const auto& [key, acc] : by_call) {
    const std::string op(strings.at(key.op));
    const int bin = static_cast<int>(std::floor(std::log2(acc.size)));
    BinAcc& b = bins[{op, acc.ranks, bin}];
    b.sizes.push_back(acc.size);
    b.transfer_ms.push_back(static_cast<double>(acc.shortest) / kNsPerMs);
    b.algbw.push_back(acc.size / static_cast<double>(acc.shortest));  // bytes per ns = GB/s
    b.rank_ms.insert(b.rank_ms.end(), acc.rank_ms.begin(), acc.rank_ms.end());
  }
  for (auto& [key, b] : bins) {
    CollectiveBin cb;
    cb.op = std::get<0>(key);
    cb.group_size = std::get<1>(key);
    cb.size_lo = std::ldexp(1.0, std::get<2>(key));
    cb.size_hi = 2.0 * cb.size_lo;
    cb.calls = b.sizes.size();
    cb.median_bytes = median(b.sizes);
    cb.median_ms = median(b.rank_ms);
    cb.median_transfer_ms = median(b.transfer_ms);
    cb.algbw_gbps = median(b.algbw);
    const double factor = busBandwidthFactor(cb.op, cb.group_size);
    cb.busbw_gbps = cb.algbw_gbps * factor;
    cb.max_busbw_gbps = *std::max_element(b.algbw.begin(), b.algbw.end()) * factor;
    a.bandwidth.push_back(std::move(cb));
  }
  if (!a.bandwidth.empty() || a.mode == "emulate") return;  // emulate runs run none: the collectives section says so
  if (colls.empty())
    a.bandwidth_note = "the run has no collectives (no NCCL kernels in the trace, or one GPU)";
  else
    a.bandwidth_note = "the run's collectives carry no message sizes (the trace has no NCCL message arguments)";
}

// Each rank's share of its sharding group's embedding compute, measured and
// predicted (the model's prediction, else the plan's), and their mean gap.
void compareShares(RankMap& ranks, RunAnalysis& a) {
  std::vector<double> measured, predicted;
  std::vector<int> groups;
  for (const auto& [rank, r] : ranks) {
    measured.push_back(r.compute_ms);
    predicted.push_back(r.predicted_model_ms >= 0 ? r.predicted_model_ms : r.predicted_plan_ms);
    groups.push_back(r.sharding_group);
  }
  const std::vector<double> m = sharesWithinGroups(measured, groups);
  const std::vector<double> p = sharesWithinGroups(predicted, groups);
  double gap = 0.0;
  int n = 0;
  std::size_t i = 0;
  for (auto& [rank, r] : ranks) {
    r.share = m[i];
    r.predicted_share = p[i];
    if (m[i] >= 0 && p[i] >= 0) {
      gap += std::abs(m[i] - p[i]);
      ++n;
    }
    ++i;
  }
  if (n > 0) a.share_mae = gap / n;
}

// Predictions: the plan's own, and the cost model's now, per rank; their
// errors (MAPE) only where the prediction is priced for the run's own device.
void comparePredictions(const RunInputs& in, bool imported, const AnalysisOptions& options, RankMap& ranks,
                        RunAnalysis& a) {
  std::vector<double> model_pred;
  if (in.plan && in.model && in.cluster) {
    auto p = predictedComputeMs(*in.model, *in.cluster, *in.plan, options.calibration);
    if (p) {
      model_pred = std::move(p).value();
      a.model_constants = options.calibration ? "calibration " + options.calibration->source : "default constants";
    } else {
      a.warnings.push_back("cannot re-price the plan: " + p.error().message);
    }
  } else if (in.plan) {
    a.warnings.push_back("the run lacks a valid model or cluster: the plan is not re-priced");
  } else if (!imported || in.model || in.cluster) {
    a.warnings.push_back("the run has no valid plan: no predicted compute to compare with");
  }
  // A trainer's plan for more ranks than an import holds leaves groups with one measured rank:
  // each such rank is all of its group's measured work, which compares as a perfect match.
  if (imported && in.plan && in.plan->world_size != ranks.size())
    a.warnings.push_back("the plan is for " + std::to_string(in.plan->world_size) + " ranks but the run has " +
                         std::to_string(ranks.size()) +
                         ": the groups' shares compare only the measured ranks of each group");
  a.device = runDevice(in.config);
  if (in.cluster) {
    a.model_devices = core::compareDevices(a.device, *in.cluster, options.calibration);
    a.plan_devices = core::compareDevices(a.device, *in.cluster, nullptr);
  }
  double plan_err = 0.0, model_err = 0.0;
  int plan_n = 0, model_n = 0;
  for (auto& [rank, r] : ranks) {
    if (r.group_rank < 0) continue;
    const auto gr = static_cast<std::uint32_t>(r.group_rank);
    for (const auto& pr : in.plan->predicted.ranks)
      if (pr.group_rank == gr && pr.compute_ms > 0) r.predicted_plan_ms = pr.compute_ms;
    if (gr < model_pred.size()) r.predicted_model_ms = model_pred[gr];
    // The error of each rank as `err` prints it: measured / predicted - 1 (docs/analysis.md).
    if (r.compute_ms > 0 && r.predicted_plan_ms > 0) {
      plan_err += std::abs(r.compute_ms / r.predicted_plan_ms - 1.0);
      ++plan_n;
    }
    if (r.compute_ms > 0 && r.predicted_model_ms > 0) {
      model_err += std::abs(r.compute_ms / r.predicted_model_ms - 1.0);
      ++model_n;
    }
  }
  if (plan_n && a.plan_devices.absolute) a.plan_mape = plan_err / plan_n;
  if (model_n && a.model_devices.absolute) a.model_mape = model_err / model_n;
  compareShares(ranks, a);
}

// Imbalance and stragglers; moves the ranks into a.ranks.
void imbalanceAndStragglers(RankMap& ranks, RunAnalysis& a) {
  std::vector<const RankAnalysis*> all;
  std::map<int, std::vector<const RankAnalysis*>> by_group;
  std::vector<double> compute;
  for (const auto& [rank, r] : ranks) {
    all.push_back(&r);
    by_group[r.sharding_group].push_back(&r);
    compute.push_back(r.compute_ms);
  }
  a.overall = imbalanceOver(all, -1);
  for (const auto& [g, members] : by_group) a.groups.push_back(imbalanceOver(members, g));
  a.compute_mean_ms = a.overall.mean_ms;
  a.compute_median_ms = median(compute);
  double var = 0.0;
  for (double c : compute) var += (c - a.compute_mean_ms) * (c - a.compute_mean_ms);
  a.compute_stddev_ms = compute.empty() ? 0.0 : std::sqrt(var / static_cast<double>(compute.size()));
  a.straggler_threshold_ms =
      std::min(a.compute_mean_ms + kStragglerSigmas * a.compute_stddev_ms, kStragglerOverMedian * a.compute_median_ms);
  for (auto& [rank, r] : ranks)
    if (ranks.size() >= 2 && r.compute_ms > a.straggler_threshold_ms) {
      r.straggler = true;
      a.stragglers.push_back(rank);
    }
  for (auto& [rank, r] : ranks) a.ranks.push_back(std::move(r));
}

// What the run lacks for its numbers to mean what they say: embedding
// kernels, device work, profiler steps (docs/analysis.md#warnings).
void missingWorkWarnings(const RankMap& ranks, const SpanFindings& found, RunAnalysis& a) {
  std::vector<int> no_emb;
  for (const auto& [rank, r] : ranks)
    if (r.compute_ms <= 0) no_emb.push_back(rank);
  if (!no_emb.empty())
    a.warnings.push_back(
        (no_emb.size() == ranks.size() ? std::string("no rank has")
                                       : "rank(s) " + core::formatRankRanges(no_emb) + " have") +
        " no embedding kernels (emb_fwd / emb_bwd): their embedding compute reads 0" +
        (no_emb.size() == ranks.size() ? ", imbalance is n/a" : "") +
        (isImportedRun(a.run) ? "; if the trainer's lookups run in kernels of other names, import with --rules" : ""));
  if (!found.without_device_work.empty())
    a.warnings.push_back("rank(s) " + core::formatRankRanges(found.without_device_work) +
                         " have no GPU events (kernels, copies, collectives): no timeline for them; was the trace "
                         "recorded with CUDA activity (PyTorch: ProfilerActivity.CUDA)?");
  for (const auto& [name, which] : found.fallback_steps)
    a.warnings.push_back("rank(s) " + core::formatRankRanges({which.begin(), which.end()}) +
                         " have no ProfilerStep in the trace: " +
                         (name == "whole trace" ? std::string("the whole trace is one step") : "one step per " + name));
}

// Per table, over the measured ranks, slowest first.
void tableLoads(const std::vector<st::TableStat>& stats, const st::StringTable& strings, RunAnalysis& a) {
  std::map<std::string, TableAnalysis> tables;
  for (const auto& s : stats) {
    const std::string t(strings.at(s.table));
    const auto r =
        std::find_if(a.ranks.begin(), a.ranks.end(), [&](const RankAnalysis& x) { return x.rank == s.rank; });
    const double steps_of_rank = r != a.ranks.end() ? static_cast<double>(r->steps) : static_cast<double>(a.steps);
    if (steps_of_rank <= 0) continue;
    TableAnalysis& ta = tables[t];
    ta.table = t;
    ++ta.ranks;
    ta.lookups_per_step += static_cast<double>(s.lookups) / steps_of_rank;
    ta.unique_rows_per_step += static_cast<double>(s.unique_rows) / steps_of_rank;
    ta.ms_per_step += static_cast<double>(s.time_ns) / steps_of_rank / kNsPerMs;
  }
  for (auto& [t, ta] : tables) a.tables.push_back(std::move(ta));
  std::stable_sort(a.tables.begin(), a.tables.end(),
                   [](const TableAnalysis& x, const TableAnalysis& y) { return x.ms_per_step > y.ms_per_step; });
}

// Shards that ran folded into fewer physical rows.
void cappedShards(const RunInputs& in, RunAnalysis& a) {
  a.capped = in.config.capped;
  if (a.capped.empty()) return;
  std::ostringstream w;
  w << a.capped.size() << " shard(s) ran capped (ids folded into fewer physical rows, so fewer cache misses than "
    << "the full table would have):";
  for (std::size_t i = 0; i < a.capped.size() && i < 5; ++i)
    w << (i ? ", " : " ") << a.capped[i].table << " on group rank " << a.capped[i].group_rank << " ("
      << a.capped[i].physical_rows << " of " << a.capped[i].rows << " rows)";
  if (a.capped.size() > 5) w << ", ...";
  a.warnings.push_back(w.str());
}

}  // namespace

RunInputs runInputs(const st::RunRecord& run) {
  RunInputs in;
  const std::string id = "run " + std::to_string(static_cast<std::int64_t>(run.id));
  auto parse = [&](const std::string& text, const char* field) -> std::optional<nlohmann::json> {
    if (text.empty()) {
      in.problems.push_back(id + ": " + field + " is empty");
      return std::nullopt;
    }
    auto j = core::parseJsonText(text, id + " " + field);
    if (!j) {
      in.problems.push_back(j.error().message);
      return std::nullopt;
    }
    return std::move(j).value();
  };
  if (!run.config_json.empty()) {
    if (auto c = readEngineRunConfig(run.config_json, id + " config_json"))
      in.config = std::move(c).value();
    else
      in.problems.push_back(c.error().message);
  }
  if (auto j = parse(run.model_json, "model_json")) {
    if (auto m = core::modelFromJson(*j, id + " model_json"))
      in.model = std::move(m).value();
    else
      in.problems.push_back(m.error().message);
  }
  if (auto j = parse(run.cluster_json, "cluster_json")) {
    if (auto c = core::clusterFromJson(*j, id + " cluster_json"))
      in.cluster = std::move(c).value();
    else
      in.problems.push_back(c.error().message);
  }
  if (auto j = parse(run.plan_json, "plan_json")) {
    if (auto p = core::planFromJson(*j, id + " plan_json"))
      in.plan = std::move(p).value();
    else
      in.problems.push_back(p.error().message);
  }
  if (in.model && in.config.batch_size_per_gpu > 0) in.model->batch_size_per_gpu = in.config.batch_size_per_gpu;
  return in;
}

RunInputs runInputs(const st::RunRecord& run, const RunInputs* supplied) {
  RunInputs in = runInputs(run);
  if (supplied == nullptr) return in;
  const std::string id = "run " + std::to_string(static_cast<std::int64_t>(run.id));
  auto drop = [&](const char* field) {  // "run 1: model_json is empty", "run 1 model_json: ..."
    const std::string a = id + ": " + field, b = id + " " + field;
    std::erase_if(in.problems, [&](const std::string& p) { return p.starts_with(a) || p.starts_with(b); });
  };
  if (!in.model && supplied->model) {
    in.model = supplied->model;
    drop("model_json");
  }
  if (!in.cluster && supplied->cluster) {
    in.cluster = supplied->cluster;
    drop("cluster_json");
  }
  if (!in.plan && supplied->plan) {
    in.plan = supplied->plan;
    drop("plan_json");
  }
  return in;
}

bool isImportedRun(const st::RunRecord& run) { return run.kind_text.starts_with("import"); }

double collectiveSizeBytes(std::string_view op, double bytes) {
  // The store holds bytes sent + received for all-to-alls (both conventions,
  // engine-trace.md and import-trace.md); NCCL-tests' size is one buffer.
  return op == "all_to_all" ? bytes / 2.0 : bytes;
}

int groupRankOf(const core::ShardPlan& plan, int global_rank) {
  for (const auto& g : plan.sharding_groups)
    for (std::size_t i = 0; i < g.size(); ++i)
      if (static_cast<int>(g[i]) == global_rank) return static_cast<int>(i);
  return -1;
}

core::Result<std::vector<double>> predictedComputeMs(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                                     const core::ShardPlan& plan,
                                                     const core::Calibration* calibration) {
  auto priced = pricePlan(model, cluster, plan, calibration);
  if (!priced) return priced.error();
  std::vector<double> out(plan.sharding_group_size, 0.0);
  for (const auto& rr : priced->result.ranks)
    if (rr.group_rank < out.size()) out[rr.group_rank] = rr.fwd_ms + rr.bwd_ms;
  return out;
}

core::Result<st::RunId> latestRun(const st::TraceStore& store) {
  auto runs = store.listRuns();
  if (!runs) return runs.error();
  if (runs->empty()) return core::Error{store.path().string() + ": the store has no runs"};
  st::RunId best = runs->front().id;
  for (const auto& r : *runs)
    if (static_cast<std::int64_t>(r.id) > static_cast<std::int64_t>(best)) best = r.id;
  return best;
}

core::Result<std::optional<st::RunId>> newestCompleteRun(const st::TraceStore& store) {
  auto runs = store.listRuns();
  if (!runs) return runs.error();
  std::optional<st::RunId> newest;
  for (const auto& r : *runs)
    if (r.isComplete() && (!newest || static_cast<std::int64_t>(r.id) > static_cast<std::int64_t>(*newest)))
      newest = r.id;
  return newest;
}

core::Result<RunAnalysis> analyzeRun(const st::TraceStore& store, st::RunId id, const AnalysisOptions& options) {
  const std::string name = runName(store, id);
  auto record = store.run(id);
  if (!record) return record.error();
  RunAnalysis a;
  a.run = std::move(record).value();
  a.store = store.path().string();
  RunInputs in = runInputs(a.run, options.supplied);
  const bool imported = isImportedRun(a.run);
  a.mode = in.config.mode.empty() ? a.run.kind_text : in.config.mode;

  auto summaries = store.stepSummaries(id);
  if (!summaries) return summaries.error();
  if (summaries->empty())
    return core::Error{name + " (" + a.run.kind_text + ", " + std::string(st::toText(a.run.status)) +
                       ") has no step summaries" +
                       (imported ? std::string(": the trace has no profiler steps (ProfilerStep#N ranges)")
                                 : std::string("; report reads engine runs (emulate, mpi) and imported traces"))};

  if (a.run.status != st::RunStatus::Complete) {
    std::string w = "run is " + std::string(st::toText(a.run.status));
    if (a.run.status == st::RunStatus::Running) w += " (not complete: still being written, or its writer is gone)";
    if (!a.run.error.empty()) w += ": " + a.run.error;
    w += "; analysed what was written, numbers may be partial";
    a.warnings.push_back(std::move(w));
  }
  if (imported && !in.model && !in.cluster && !in.plan) {
    // An import carries no plan: one line instead of three "is empty".
    a.warnings.push_back(
        "imported run without the trainer's plan: give --plan (and --model, --cluster) to compare "
        "measured with predicted compute");
  } else {
    for (const auto& p : in.problems) a.warnings.push_back(p);
  }

  a.step_time_ms = stepTimeMs(*summaries).value_or(-1.0);
  auto ranks = rankMeans(*summaries, a);
  auto infos = store.ranks(id);
  if (!infos) return infos.error();
  assignGroups(*infos, in, imported, ranks, a);
  auto strings = store.strings();
  if (!strings) return strings.error();
  auto colls = store.collectives(id);
  if (!colls) return colls.error();
  SpanFindings found;
  if (auto s = spanTimes(store, id, *strings, options, *colls, imported, ranks, a, found); !s) return s.error();
  bandwidthBins(*colls, *strings, a);
  missingWorkWarnings(ranks, found, a);
  comparePredictions(in, imported, options, ranks, a);
  imbalanceAndStragglers(ranks, a);
  auto stats = store.tableStats(id);
  if (!stats) return stats.error();
  tableLoads(*stats, *strings, a);
  cappedShards(in, a);
  return a;
}

}  // namespace shardscope::profiler
