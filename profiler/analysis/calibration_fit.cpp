// The calibration fit: the cost model's per-shard formulas (docs/cost-model.md)
// are linear in 1/BW, backward_scale/BW, kernel overhead and lookup overhead
// once lookups and unique rows are measured, so the constants come from a
// non-negative least-squares fit on relative error. docs/analysis.md.
#include "shardscope/profiler/analysis/calibration_fit.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "shardscope/core/json_io.h"
#include "shardscope/core/time_text.h"
#include "shardscope/planner/access_profile.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/profiler/trace/engine_trace.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "analysis_common.h"

namespace shardscope::profiler {

namespace st = core::store;

namespace {

using namespace analysis_detail;

// 1/BW, backward_scale/BW, kernel overhead, lookup overhead, cache miss,
// backward lookup (ms units)
constexpr std::size_t kUnknowns = 6;
// Cache sizes the fit tries (bytes; 0 = no cache term): 1 MiB .. 1 GiB.
std::vector<double> cacheCandidates() {
  std::vector<double> out{0.0};
  for (int i = 0; i <= 10; ++i) out.push_back(static_cast<double>(1ull << (20 + i)));
  return out;
}
// ms per byte at 1 GB/s: bytes / (gbps * 1e9) * 1e3.
constexpr double kMsPerByteAtOneGbps = 1e-6;

std::string idList(std::span<const st::RunId> ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(static_cast<std::int64_t>(ids[i]));
  }
  return s;
}

std::string fmtSig(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string pct(double fraction) { return fmt(fraction * 100.0, 1) + "%"; }

// Runs are engine runs with a model, a cluster and a plan.
struct LoadedRun {
  st::RunRecord record;
  RunInputs inputs;
};

core::Result<LoadedRun> loadRun(const st::TraceStore& store, st::RunId id, const RunInputs* supplied) {
  auto record = store.run(id);
  if (!record) return record.error();
  LoadedRun r{std::move(record).value(), {}};
  r.inputs = runInputs(r.record, supplied);
  if (!r.inputs.model || !r.inputs.cluster || !r.inputs.plan) {
    std::string why;
    for (const auto& p : r.inputs.problems) why += (why.empty() ? "" : "; ") + p;
    if (isImportedRun(r.record))
      return core::Error{runName(store, id) + " (" + r.record.kindText + ") lacks the " +
                         (!r.inputs.plan ? "plan" : !r.inputs.model ? "model" : "cluster") +
                         " the trainer ran: give --plan, --model and --cluster (" + why + ")"};
    return core::Error{runName(store, id) + ": not an engine run with a valid model, cluster and plan (" + why + ")"};
  }
  return r;
}

// Measured embedding compute (fwd + bwd) of each measured rank: the median over its steps.
core::Result<std::map<int, double>> measuredComputeMs(const st::TraceStore& store, st::RunId id) {
  auto summaries = store.stepSummaries(id);
  if (!summaries) return summaries.error();
  if (summaries->empty()) return core::Error{runName(store, id) + ": has no engine step summaries"};
  std::map<int, std::vector<double>> per_step;
  for (const auto& s : *summaries) per_step[s.rank].push_back(static_cast<double>(s.embFwdNs + s.embBwdNs));
  std::map<int, double> out;
  for (auto& [rank, v] : per_step) out[rank] = median(std::move(v)) / kNsPerMs;
  return out;
}

// Per-rank analytic check of a run: measured compute vs the planner's, with and without `cal`.
core::Result<std::vector<RankCheck>> checkRun(const st::TraceStore& store, st::RunId id, const core::Calibration& cal,
                                              const RunInputs* supplied) {
  auto run = loadRun(store, id, supplied);
  if (!run) return run.error();
  auto measured = measuredComputeMs(store, id);
  if (!measured) return measured.error();
  const auto& in = run->inputs;
  auto calibrated = predictedComputeMs(*in.model, *in.cluster, *in.plan, &cal);
  if (!calibrated) return core::Error{runName(store, id) + ": " + calibrated.error().message};
  auto defaults = predictedComputeMs(*in.model, *in.cluster, *in.plan, nullptr);
  if (!defaults) return core::Error{runName(store, id) + ": " + defaults.error().message};
  std::vector<RankCheck> out;
  for (const auto& [rank, ms] : *measured) {
    const int gr = groupRankOf(*in.plan, rank);
    if (gr < 0 || static_cast<std::size_t>(gr) >= calibrated->size() || ms <= 0) continue;
    out.push_back({id, rank, gr, ms, (*calibrated)[static_cast<std::size_t>(gr)],
                   (*defaults)[static_cast<std::size_t>(gr)]});
  }
  return out;
}

void mapeOf(const std::vector<RankCheck>& checks, double& calibrated, double& defaults) {
  if (checks.empty()) return;
  double c = 0.0, d = 0.0;
  for (const auto& r : checks) {
    c += std::abs(r.calibrated_ms - r.measured_ms) / r.measured_ms;
    d += std::abs(r.default_ms - r.measured_ms) / r.measured_ms;
  }
  calibrated = c / static_cast<double>(checks.size());
  defaults = d / static_cast<double>(checks.size());
}

// Least squares over the columns `cols` of the (already scaled) design by
// modified Gram-Schmidt. Returns false when a column is (numerically) a
// combination of the others; `dependent` then names it.
bool solveSubset(const std::vector<std::vector<double>>& a, const std::vector<double>& y,
                 const std::vector<std::size_t>& cols, std::vector<double>& z, std::vector<std::vector<double>>& rinv,
                 std::size_t& dependent) {
  const std::size_t n = y.size(), q = cols.size();
  std::vector<std::vector<double>> Q(q, std::vector<double>(n));
  std::vector<std::vector<double>> R(q, std::vector<double>(q, 0.0));
  for (std::size_t j = 0; j < q; ++j)
    for (std::size_t i = 0; i < n; ++i) Q[j][i] = a[i][cols[j]];
  for (std::size_t j = 0; j < q; ++j) {
    for (std::size_t k = 0; k < j; ++k) {
      double d = 0.0;
      for (std::size_t i = 0; i < n; ++i) d += Q[k][i] * Q[j][i];
      R[k][j] = d;
      for (std::size_t i = 0; i < n; ++i) Q[j][i] -= d * Q[k][i];
    }
    double norm = 0.0;
    for (std::size_t i = 0; i < n; ++i) norm += Q[j][i] * Q[j][i];
    norm = std::sqrt(norm);
    if (norm < 1e-9) {  // columns have unit norm: this one lies in the span of the others
      dependent = j;
      return false;
    }
    R[j][j] = norm;
    for (std::size_t i = 0; i < n; ++i) Q[j][i] /= norm;
  }
  std::vector<double> qty(q, 0.0);
  for (std::size_t j = 0; j < q; ++j)
    for (std::size_t i = 0; i < n; ++i) qty[j] += Q[j][i] * y[i];
  z.assign(q, 0.0);
  for (std::size_t j = q; j-- > 0;) {
    double s = qty[j];
    for (std::size_t k = j + 1; k < q; ++k) s -= R[j][k] * z[k];
    z[j] = s / R[j][j];
  }
  // R^-1 (upper triangular), so (A^T A)^-1 = R^-1 R^-T.
  rinv.assign(q, std::vector<double>(q, 0.0));
  for (std::size_t c = 0; c < q; ++c) {
    for (std::size_t j = q; j-- > 0;) {
      double s = j == c ? 1.0 : 0.0;
      for (std::size_t k = j + 1; k < q; ++k) s -= R[j][k] * rinv[k][c];
      rinv[j][c] = s / R[j][j];
    }
  }
  return true;
}

}  // namespace

core::Result<LinearFit> fitNonNegative(const std::vector<std::vector<double>>& rows, const std::vector<double>& y) {
  if (rows.empty() || rows.size() != y.size()) return core::Error{"fit: no rows, or rows and targets differ in number"};
  const std::size_t p = rows.front().size(), n = rows.size();
  for (const auto& r : rows)
    if (r.size() != p) return core::Error{"fit: rows differ in length"};
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(y[i])) return core::Error{"fit: target " + std::to_string(i) + " is not finite"};
    for (double v : rows[i])
      if (!std::isfinite(v)) return core::Error{"fit: row " + std::to_string(i) + " has a value that is not finite"};
  }
  // Unit-norm columns: the unknowns span many orders of magnitude.
  std::vector<double> scale(p, 0.0);
  for (const auto& r : rows)
    for (std::size_t j = 0; j < p; ++j) scale[j] += r[j] * r[j];
  for (auto& s : scale) s = std::sqrt(s);
  std::vector<std::vector<double>> a(n, std::vector<double>(p, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < p; ++j) a[i][j] = scale[j] > 0 ? rows[i][j] / scale[j] : 0.0;

  std::vector<double> x(p, 0.0);
  std::vector<bool> passive(p, false), excluded(p, false);
  for (std::size_t j = 0; j < p; ++j) excluded[j] = scale[j] == 0.0;
  auto gradient = [&] {
    std::vector<double> w(p, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      double r = y[i];
      for (std::size_t j = 0; j < p; ++j) r -= a[i][j] * x[j];
      for (std::size_t j = 0; j < p; ++j) w[j] += a[i][j] * r;
    }
    return w;
  };
  double ynorm = 0.0;
  for (double v : y) ynorm += v * v;
  const double tol = 1e-10 * std::max(1.0, std::sqrt(ynorm));
  std::vector<std::vector<double>> rinv;
  std::vector<std::size_t> cols;
  for (int outer = 0; outer < 64; ++outer) {
    const auto w = gradient();
    std::size_t best = p;
    for (std::size_t j = 0; j < p; ++j)
      if (!passive[j] && !excluded[j] && w[j] > tol && (best == p || w[j] > w[best])) best = j;
    if (best == p) break;
    passive[best] = true;
    for (int inner = 0; inner < 64; ++inner) {
      cols.clear();
      for (std::size_t j = 0; j < p; ++j)
        if (passive[j]) cols.push_back(j);
      std::vector<double> z;
      std::size_t dep = 0;
      if (!solveSubset(a, y, cols, z, rinv, dep)) {
        // The column just added adds nothing the others do not: leave it out for good.
        passive[cols[dep]] = false;
        excluded[cols[dep]] = true;
        continue;
      }
      bool feasible = true;
      for (double v : z) feasible = feasible && v > 0.0;
      if (feasible) {
        std::fill(x.begin(), x.end(), 0.0);
        for (std::size_t k = 0; k < cols.size(); ++k) x[cols[k]] = z[k];
        break;
      }
      double alpha = 1.0;
      for (std::size_t k = 0; k < cols.size(); ++k)
        if (z[k] <= 0.0) alpha = std::min(alpha, x[cols[k]] / (x[cols[k]] - z[k]));
      for (std::size_t k = 0; k < cols.size(); ++k) {
        const std::size_t j = cols[k];
        x[j] += alpha * (z[k] - x[j]);
        if (x[j] <= 1e-15) {
          x[j] = 0.0;
          passive[j] = false;
        }
      }
    }
  }
  // Final solve on the positive set for the covariance.
  cols.clear();
  for (std::size_t j = 0; j < p; ++j)
    if (passive[j] && x[j] > 0.0) cols.push_back(j);
  LinearFit fit;
  fit.x.assign(p, 0.0);
  fit.std_error.assign(p, 0.0);
  fit.at_zero.assign(p, true);
  fit.covariance.assign(p, std::vector<double>(p, 0.0));
  std::vector<double> z;
  std::size_t dep = 0;
  if (!cols.empty() && solveSubset(a, y, cols, z, rinv, dep)) {
    for (std::size_t k = 0; k < cols.size(); ++k) x[cols[k]] = std::max(0.0, z[k]);
  } else {
    rinv.clear();
  }
  for (std::size_t i = 0; i < n; ++i) {
    double r = y[i];
    for (std::size_t j = 0; j < p; ++j) r -= a[i][j] * x[j];
    fit.rss += r * r;
  }
  const double dof = static_cast<double>(n) - static_cast<double>(cols.size());
  const double sigma2 = dof > 0 ? fit.rss / dof : 0.0;
  const std::size_t q = rinv.size();
  for (std::size_t k = 0; k < q; ++k)
    for (std::size_t l = 0; l < q; ++l) {
      double c = 0.0;
      for (std::size_t m = 0; m < q; ++m) c += rinv[k][m] * rinv[l][m];
      fit.covariance[cols[k]][cols[l]] = sigma2 * c / (scale[cols[k]] * scale[cols[l]]);
    }
  for (std::size_t j = 0; j < p; ++j) {
    fit.x[j] = scale[j] > 0 ? x[j] / scale[j] : 0.0;
    fit.at_zero[j] = fit.x[j] <= 0.0;
    fit.std_error[j] = std::sqrt(std::max(0.0, fit.covariance[j][j]));
  }
  return fit;
}

namespace {

// The cost model's byte counts of one shard (docs/cost-model.md, "One
// shard") from its lookups k and unique rows U, and its price with the
// default constants. Needs rows, cols, row_offset, samples_per_step, k, U.
void priceShard(ShardSample& s, const core::TableSpec& t, const core::ModelSpec& model,
                const planner::CostConstants& defaults) {
  const double k = s.lookups_per_step, u = s.unique_rows_per_step, c = s.cols;
  const double dtype = core::dtypeBytes(t.dtype);
  const double row_bytes = std::max<double>(c, 32.0) * dtype;
  const double state_row_bytes =
      static_cast<double>(planner::stateBytesOf(t, model.optimizer, 1, s.cols)) - c * dtype;
  s.penalty = planner::dimPenalty(s.cols);
  s.fwd_bytes = k * defaults.index_bytes + k * row_bytes + s.samples_per_step * c * defaults.output_bytes;
  s.bwd_bytes = k * defaults.index_bytes + k * c * defaults.output_bytes + u * 2.0 * (row_bytes + state_row_bytes);
  const double inv_bw = kMsPerByteAtOneGbps / defaults.embedding_bandwidth_gbps;
  const double overhead = defaults.kernel_overhead_us / 1e3 + k * defaults.lookup_overhead_ns / 1e6;
  s.default_fwd_ms = s.penalty * s.fwd_bytes * inv_bw + overhead;
  s.default_bwd_ms = defaults.backward_scale * s.penalty * s.bwd_bytes * inv_bw + overhead;
  s.default_ms = s.default_fwd_ms + s.default_bwd_ms;
  s.access = t.access;
  s.table_rows = t.rows;
  s.row_bytes = c * dtype;
  s.draws = s.samples_per_step * t.pooling.mean;
}

}  // namespace

core::Result<std::vector<ShardSample>> shardSamples(const st::TraceStore& store, st::RunId id,
                                                    std::vector<std::string>* warnings) {
  auto warn = [&](std::string w) {
    if (warnings) warnings->push_back(std::move(w));
  };
  const std::string name = runName(store, id);
  auto run = loadRun(store, id, nullptr);
  if (!run) return run.error();
  const auto& model = *run->inputs.model;
  const auto& plan = *run->inputs.plan;
  const auto& config = run->inputs.config;
  if (!run->record.isComplete())
    warn(name + " is " + std::string(st::toText(run->record.status)) + ": fitting what it wrote");

  auto summaries = store.stepSummaries(id);
  if (!summaries) return summaries.error();
  if (summaries->empty()) return core::Error{name + ": has no engine step summaries"};
  std::map<int, std::set<std::int64_t>> steps;
  for (const auto& s : *summaries) steps[s.rank].insert(s.step);

  auto strings = store.strings();
  if (!strings) return strings.error();
  auto stats = store.tableStats(id);
  if (!stats) return stats.error();
  std::map<std::pair<int, std::string>, st::TableStat> stat;
  for (const auto& s : *stats) stat[{s.rank, std::string(strings->at(s.table))}] = s;

  // emb_fwd / emb_bwd span time per (rank, table): per step, then the median
  // over steps (times the step count, so that "/ n_steps" below gives it).
  // Spans that do not give every measured step its own value fall back to the mean.
  auto spans = store.spansInWindow(id, {}, std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
  if (!spans) return spans.error();
  std::map<std::pair<int, std::string>, std::map<std::int64_t, std::pair<double, double>>> per_step_ns;
  for (const auto& s : *spans) {
    const std::string_view kind = strings->at(s.kind);
    const bool fwd = kind == span_kind::kEmbFwd;
    if (!fwd && kind != span_kind::kEmbBwd) continue;
    auto& v = per_step_ns[{s.rank, std::string(strings->at(s.table))}][s.step];
    (fwd ? v.first : v.second) += static_cast<double>(s.endNs - s.startNs);
  }
  std::map<std::pair<int, std::string>, std::pair<double, double>> span_ns;
  for (const auto& [key, by_step] : per_step_ns) {
    std::vector<double> f, b;
    for (const auto& [step, v] : by_step) {
      f.push_back(v.first);
      b.push_back(v.second);
    }
    const double n = static_cast<double>(steps[key.first].size());
    if (static_cast<double>(by_step.size()) == n) {
      span_ns[key] = {median(f) * n, median(b) * n};
    } else {
      double fs = 0, bs = 0;
      for (double v : f) fs += v;
      for (double v : b) bs += v;
      span_ns[key] = {fs, bs};
    }
  }

  std::set<std::pair<std::string, int>> capped;
  if (config.contains("capped") && config["capped"].is_array())
    for (const auto& c : config["capped"])
      if (c.is_object()) capped.insert({field(c, "table", std::string()), field(c, "group_rank", -1)});

  std::map<std::string, std::size_t> model_table;
  for (std::size_t t = 0; t < model.tables.size(); ++t) model_table[model.tables[t].name] = t;

  const double batch = model.batch_size_per_gpu;
  const planner::CostConstants defaults = planner::CostConstants::from(*run->inputs.cluster, nullptr);
  std::vector<ShardSample> out;
  for (const auto& [rank, rank_steps] : steps) {
    const int gr = groupRankOf(plan, rank);
    if (gr < 0) {
      warn(name + ": rank " + std::to_string(rank) + " is in no sharding group of the plan; skipped");
      continue;
    }
    const double n_steps = static_cast<double>(rank_steps.size());
    for (const auto& placement : plan.tables) {
      std::vector<const core::Shard*> mine;
      for (const auto& sh : placement.shards)
        if (static_cast<int>(sh.group_rank) == gr) mine.push_back(&sh);
      if (mine.empty()) continue;
      const std::string where = name + ": rank " + std::to_string(rank) + ", table " + placement.name;
      if (mine.size() > 1) {
        warn(where + ": " + std::to_string(mine.size()) + " pieces on one rank share one timing; skipped");
        continue;
      }
      const auto mt = model_table.find(placement.name);
      if (mt == model_table.end()) {
        warn(where + ": not in the run's model; skipped");
        continue;
      }
      const core::TableSpec& t = model.tables[mt->second];
      const auto st_it = stat.find({rank, placement.name});
      const auto sp_it = span_ns.find({rank, placement.name});
      ShardSample s;
      s.run = id;
      s.rank = rank;
      s.group_rank = gr;
      s.table = placement.name;
      s.rows = mine.front()->rows;
      s.cols = mine.front()->cols;
      s.data_parallel = placement.sharding_type == core::ShardingType::DataParallel;
      s.capped = capped.contains({placement.name, gr});
      s.samples_per_step = s.data_parallel ? batch : batch * plan.sharding_group_size;
      if (st_it != stat.end()) {
        s.lookups_per_step = static_cast<double>(st_it->second.lookups) / n_steps;
        s.unique_rows_per_step = static_cast<double>(st_it->second.uniqueRows) / n_steps;
        s.measured_ms = static_cast<double>(st_it->second.timeNs) / n_steps / kNsPerMs;
      }
      if (sp_it != span_ns.end()) {
        s.measured_fwd_ms = sp_it->second.first / n_steps / kNsPerMs;
        s.measured_bwd_ms = sp_it->second.second / n_steps / kNsPerMs;
        if (st_it == stat.end()) s.measured_ms = s.measured_fwd_ms + s.measured_bwd_ms;
      }
      if (st_it == stat.end()) {
        warn(where + ": no table statistics (lookups, unique rows); skipped");
        continue;
      }
      if (s.measured_ms <= 0.0) {
        warn(where + ": no measured time; skipped");
        continue;
      }
      s.row_offset = mine.front()->row_offset;
      priceShard(s, t, model, defaults);
      out.push_back(std::move(s));
    }
  }
  return out;
}

core::Result<RankSamples> rankSamples(const st::TraceStore& store, st::RunId id, const RunInputs* supplied,
                                      std::vector<std::string>* warnings) {
  auto warn = [&](std::string w) {
    if (warnings) warnings->push_back(std::move(w));
  };
  const std::string name = runName(store, id);
  auto run = loadRun(store, id, supplied);
  if (!run) return run.error();
  const auto& model = *run->inputs.model;
  const auto& cluster = *run->inputs.cluster;
  const auto& plan = *run->inputs.plan;
  if (!run->record.isComplete())
    warn(name + " is " + std::string(st::toText(run->record.status)) + ": fitting what it wrote");
  if (plan.sharding_group_size == 0 || plan.world_size % plan.sharding_group_size != 0)
    return core::Error{name + ": plan: sharding group size " + std::to_string(plan.sharding_group_size) +
                       " does not divide world size " + std::to_string(plan.world_size)};

  // Measured embedding time per rank: medians over its steps, fwd and bwd.
  auto summaries = store.stepSummaries(id);
  if (!summaries) return summaries.error();
  if (summaries->empty()) return core::Error{name + ": has no step summaries (no profiler steps in the trace)"};
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> per_rank;
  for (const auto& sm : *summaries) {
    per_rank[sm.rank].first.push_back(static_cast<double>(sm.embFwdNs) / kNsPerMs);
    per_rank[sm.rank].second.push_back(static_cast<double>(sm.embBwdNs) / kNsPerMs);
  }

  // The planner's expected lookups and unique rows of every shard (access profiles).
  const planner::CostConstants defaults = planner::CostConstants::from(cluster, nullptr);
  const planner::CostModel cm(model, cluster, defaults);
  const std::uint32_t gpn = plan.gpus_per_node ? plan.gpus_per_node : std::max<std::uint32_t>(1, cluster.gpus_per_node);
  const planner::Grid grid = planner::makeGrid(plan.world_size, gpn, plan.sharding_group_size, plan.layout);
  const planner::GridCosts gc = cm.gridCosts(grid);
  std::map<std::string, std::size_t> model_table;
  for (std::size_t t = 0; t < model.tables.size(); ++t) model_table[model.tables[t].name] = t;
  const double batch = model.batch_size_per_gpu;

  RankSamples out;
  std::map<int, std::vector<std::size_t>> by_group_rank;  // group rank -> sample indexes
  for (const auto& placement : plan.tables) {
    const auto mt = model_table.find(placement.name);
    if (mt == model_table.end()) {
      warn(name + ": table " + placement.name + " of the plan is not in the model; left out");
      continue;
    }
    const core::TableSpec& t = model.tables[mt->second];
    const bool dp = placement.sharding_type == core::ShardingType::DataParallel;
    for (const auto& sh : placement.shards) {
      ShardSample smp;
      smp.run = id;
      smp.rank = -1;
      smp.group_rank = static_cast<int>(sh.group_rank);
      smp.table = placement.name;
      smp.rows = sh.rows;
      smp.cols = sh.cols;
      smp.row_offset = sh.row_offset;
      smp.data_parallel = dp;
      smp.expected = true;
      smp.samples_per_step = dp ? batch : batch * plan.sharding_group_size;
      const planner::ShardCost c =
          dp ? cm.dataParallelCost(mt->second, grid, gc) : cm.shardCost(mt->second, sh.row_offset, sh.rows, sh.cols, grid, gc);
      smp.lookups_per_step = c.ids;
      smp.unique_rows_per_step = c.unique_rows;
      priceShard(smp, t, model, defaults);
      by_group_rank[smp.group_rank].push_back(out.samples.size());
      out.samples.push_back(std::move(smp));
    }
  }
  for (auto& [rank, v] : per_rank) {
    const int gr = groupRankOf(plan, rank);
    if (gr < 0) {
      warn(name + ": rank " + std::to_string(rank) + " is in no sharding group of the plan (world size " +
           std::to_string(plan.world_size) + "); skipped");
      continue;
    }
    const auto shards = by_group_rank.find(gr);
    if (shards == by_group_rank.end()) {
      warn(name + ": rank " + std::to_string(rank) + " holds no table in the plan; skipped");
      continue;
    }
    Measurement m;
    m.run = id;
    m.rank = rank;
    m.shards = shards->second;
    m.measured_fwd_ms = median(v.first);
    m.measured_bwd_ms = median(v.second);
    m.measured_ms = m.measured_fwd_ms + m.measured_bwd_ms;
    if (m.measured_ms <= 0.0) {
      warn(name + ": rank " + std::to_string(rank) + " has no embedding kernel time; skipped");
      continue;
    }
    // A rank's features are its forward and backward shards; with only one of
    // the two measured (kernels a rule did not classify) the row would compare
    // one pass with both.
    if (m.measured_fwd_ms <= 0.0 || m.measured_bwd_ms <= 0.0) {
      warn(name + ": rank " + std::to_string(rank) + " has no embedding " +
           (m.measured_fwd_ms <= 0.0 ? "forward" : "backward") +
           " kernel time (unclassified kernels? see import --rules); skipped");
      continue;
    }
    out.measured.push_back(std::move(m));
  }
  if (out.measured.empty()) return core::Error{name + ": no rank with embedding time that the plan places tables on"};
  return out;
}

core::Result<CalibrationReport> calibrateFromRuns(const st::TraceStore& store, std::span<const st::RunId> fit,
                                                  std::span<const st::RunId> holdout, const RunInputs* supplied) {
  if (fit.empty()) return core::Error{store.path().string() + ": no runs to fit"};
  CalibrationReport rep;
  rep.fit_runs.assign(fit.begin(), fit.end());
  rep.holdout_runs.assign(holdout.begin(), holdout.end());
  double default_bw = 0.0;
  std::string host, cpu;
  for (const st::RunId id : fit) {
    auto record = store.run(id);
    if (!record) return record.error();
    if (isImportedRun(*record)) {
      auto rs = rankSamples(store, id, supplied, &rep.warnings);
      if (!rs) return rs.error();
      const std::size_t base = rep.samples.size();
      for (auto& m : rs->measured) {
        for (auto& i : m.shards) i += base;
        rep.measured.push_back(std::move(m));
      }
      rep.samples.insert(rep.samples.end(), rs->samples.begin(), rs->samples.end());
    } else {
      auto samples = shardSamples(store, id, &rep.warnings);
      if (!samples) return samples.error();
      if (samples->empty()) rep.warnings.push_back(runName(store, id) + ": no usable shard samples");
      for (const auto& smp : *samples) {
        Measurement m;
        m.run = id;
        m.rank = smp.rank;
        m.table = smp.table;
        m.shards = {rep.samples.size()};
        m.measured_fwd_ms = smp.measured_fwd_ms;
        m.measured_bwd_ms = smp.measured_bwd_ms;
        m.measured_ms = smp.measured_ms;
        rep.measured.push_back(std::move(m));
        rep.samples.push_back(smp);
      }
    }
    if (auto run = loadRun(store, id, supplied)) {
      if (default_bw <= 0) default_bw = run->inputs.cluster->gpu.hbm_bandwidth_gbps;
      if (host.empty()) host = field(run->inputs.config, "host", std::string());
      if (cpu.empty()) cpu = field(run->inputs.config, "cpu", std::string());
    }
  }

  // Rows on relative error: each measurement's features divided by it, target 1.
  // The cache term depends on a cache size, which enters non-linearly: fit
  // once per candidate size and keep the best (smallest residual).
  std::vector<planner::AccessProfile> profiles;
  profiles.reserve(rep.samples.size());
  for (const auto& s : rep.samples) profiles.emplace_back(s.access, s.table_rows);
  std::vector<std::vector<double>> rows;
  std::vector<double> targets;
  auto buildRows = [&](double cache_bytes, double narrow, double mid) {
    for (auto& s : rep.samples) s.penalty = planner::dimPenalty(s.cols, narrow, mid);
    rows.clear();
    targets.clear();
    auto addRow = [&](std::vector<double> f, double y) {
      const double w = std::sqrt(y);
      for (auto& v : f) v /= w;
      rows.push_back(std::move(f));
      targets.push_back(y / w);
    };
    // Per shard: forward and backward features (columns as kUnknowns).
    std::vector<std::array<double, kUnknowns>> fwd(rep.samples.size()), bwd(rep.samples.size());
    for (std::size_t i = 0; i < rep.samples.size(); ++i) {
      auto& s = rep.samples[i];
      const auto miss = planner::cacheMissShare(profiles[i], s.row_offset, s.rows, s.row_bytes, cache_bytes, s.draws);
      s.miss_ids = miss.ids;
      s.miss_unique_rows = miss.unique_rows;
      const double k = s.lookups_per_step;
      const double lines = planner::cacheLines(s.row_bytes);
      fwd[i] = {s.penalty * s.fwd_bytes, 0.0, 1.0, k, k * miss.ids * lines, 0.0};
      bwd[i] = {0.0, s.penalty * s.bwd_bytes, 1.0, k, s.unique_rows_per_step * miss.unique_rows * lines, k};
    }
    // A measurement's features: the sum over its shards.
    for (const auto& m : rep.measured) {
      std::vector<double> f(kUnknowns, 0.0), b(kUnknowns, 0.0);
      for (const std::size_t i : m.shards)
        for (std::size_t j = 0; j < kUnknowns; ++j) {
          f[j] += fwd[i][j];
          b[j] += bwd[i][j];
        }
      if (m.measured_fwd_ms > 0 && m.measured_bwd_ms > 0) {
        addRow(std::move(f), m.measured_fwd_ms);
        addRow(std::move(b), m.measured_bwd_ms);
      } else {
        for (std::size_t j = 0; j < kUnknowns; ++j) f[j] += b[j];
        addRow(std::move(f), m.measured_ms);
      }
    }
  };
  buildRows(0.0, 1.75, 1.15);
  rep.measurements = rows.size();
  if (rows.size() < kUnknowns)
    return core::Error{store.path().string() + ": runs " + idList(fit) + " give " + std::to_string(rows.size()) +
                       " measurement(s); the fit needs at least " + std::to_string(kUnknowns)};
  // The dim penalties multiply the bandwidth term: searched on a grid that
  // holds TorchRec's values, for the column classes the samples have.
  bool has_narrow = false, has_mid = false;
  for (const auto& s : rep.samples) {
    has_narrow = has_narrow || s.cols < 64;
    has_mid = has_mid || (s.cols >= 64 && s.cols < 128);
  }
  const std::vector<double> penalty_grid{0.5, 0.625, 0.75, 0.875, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5};
  // Whole-rank measurements (imported runs) are few and sum many shards: the
  // grids would fit noise, so the penalties stay TorchRec's and no cache term.
  const bool rank_level = std::all_of(rep.measured.begin(), rep.measured.end(),
                                      [](const Measurement& m) { return m.table.empty(); });
  if (rank_level) has_narrow = has_mid = false;
  const std::vector<double> narrow_grid = has_narrow ? penalty_grid : std::vector<double>{1.75};
  const std::vector<double> mid_grid = has_mid ? penalty_grid : std::vector<double>{1.15};
  const std::vector<double> cache_grid = rank_level ? std::vector<double>{0.0} : cacheCandidates();
  std::optional<LinearFit> best;
  double best_narrow = 1.75, best_mid = 1.15;
  for (const double narrow : narrow_grid)
    for (const double mid : mid_grid) {
      std::optional<LinearFit> best_here;
      double cache_here = 0.0;
      for (const double candidate : cache_grid) {
        buildRows(candidate, narrow, mid);
        auto trial = fitNonNegative(rows, targets);
        if (!trial) return trial.error();
        // A cache term must earn its place: clearly non-zero (beyond two standard
        // errors) and at least 1% less residual than the best fit so far; else
        // it is fitting noise and the simpler fit stays.
        if (candidate > 0 && !(trial->x[4] > 2.0 * trial->std_error[4])) continue;
        if (!best_here || trial->rss < best_here->rss * 0.99) {
          best_here = std::move(trial).value();
          cache_here = candidate;
        }
      }
      if (best_here && (!best || best_here->rss < best->rss * (1.0 - 1e-12))) {
        best = std::move(best_here);
        rep.cache_bytes = cache_here;
        best_narrow = narrow;
        best_mid = mid;
      }
    }
  buildRows(rep.cache_bytes, best_narrow, best_mid);  // the samples' penalties and miss shares as chosen
  std::optional<LinearFit> lf = std::move(best);
  // A term that adds less than 1e-6 of every measurement is numerically 0:
  // drop it rather than write a meaningless coefficient.
  for (std::size_t j = 0; j < kUnknowns; ++j) {
    double largest = 0.0;
    for (const auto& row : rows) largest = std::max(largest, row[j] * lf->x[j]);
    if (lf->x[j] > 0 && largest < 1e-6) {
      lf->x[j] = 0.0;
      lf->std_error[j] = 0.0;
      lf->at_zero[j] = true;
    }
  }
  const auto& x = lf->x;
  static const char* kTermNames[kUnknowns] = {"inv_bandwidth_ms_per_byte", "bwd_inv_bandwidth_ms_per_byte",
                                              "kernel_overhead_ms", "lookup_overhead_ms", "cache_miss_ms",
                                              "backward_lookup_ms"};
  for (std::size_t j = 0; j < kUnknowns; ++j) rep.terms.push_back({kTermNames[j], x[j], lf->std_error[j], lf->at_zero[j]});

  // Fitted values and errors.
  for (auto& s : rep.samples) {
    const double over = x[2] + x[3] * s.lookups_per_step;
    const double lines = planner::cacheLines(s.row_bytes);
    s.fitted_fwd_ms = x[0] * s.penalty * s.fwd_bytes + over + x[4] * s.lookups_per_step * s.miss_ids * lines;
    s.fitted_bwd_ms = x[1] * s.penalty * s.bwd_bytes + over + x[4] * s.unique_rows_per_step * s.miss_unique_rows * lines +
                      x[5] * s.lookups_per_step;
    s.fitted_ms = s.fitted_fwd_ms + s.fitted_bwd_ms;
  }
  double err = 0.0, err_default = 0.0;
  for (auto& m : rep.measured) {
    double ff = 0, fb = 0, df = 0, db = 0;
    for (const std::size_t i : m.shards) {
      const auto& s = rep.samples[i];
      ff += s.fitted_fwd_ms;
      fb += s.fitted_bwd_ms;
      df += s.default_fwd_ms;
      db += s.default_bwd_ms;
    }
    m.fitted_ms = ff + fb;
    m.default_ms = df + db;
    if (m.measured_fwd_ms > 0 && m.measured_bwd_ms > 0) {
      err += std::abs(ff / m.measured_fwd_ms - 1.0) + std::abs(fb / m.measured_bwd_ms - 1.0);
      err_default += std::abs(df / m.measured_fwd_ms - 1.0) + std::abs(db / m.measured_bwd_ms - 1.0);
    } else {
      err += std::abs(m.fitted_ms / m.measured_ms - 1.0);
      err_default += std::abs(m.default_ms / m.measured_ms - 1.0);
    }
  }
  rep.fit_mape = err / static_cast<double>(rep.measurements);
  rep.fit_mape_default = err_default / static_cast<double>(rep.measurements);

  // Coefficients in the calibration's units; zeros are dropped (values must be > 0).
  core::Calibration& cal = rep.calibration;
  const auto& cov = lf->covariance;
  if (x[0] > 0) {
    const double bw = kMsPerByteAtOneGbps / x[0];
    cal.coefficients["embedding_bandwidth_gbps"] = {bw, bw * lf->std_error[0] / x[0]};
  } else {
    rep.dropped.push_back("embedding_bandwidth_gbps");
  }
  if (x[1] > 0 && x[0] > 0) {
    const double bs = x[1] / x[0];
    const double rel2 = cov[1][1] / (x[1] * x[1]) + cov[0][0] / (x[0] * x[0]) - 2.0 * cov[0][1] / (x[0] * x[1]);
    cal.coefficients["backward_scale"] = {bs, bs * std::sqrt(std::max(0.0, rel2))};
  } else if (x[1] > 0 && default_bw > 0) {
    // No forward bandwidth term: express the backward one against the default bandwidth the planner keeps.
    const double bs = x[1] * default_bw / kMsPerByteAtOneGbps;
    cal.coefficients["backward_scale"] = {bs, bs * lf->std_error[1] / x[1]};
    rep.warnings.push_back("the forward bandwidth term fit to 0: backward_scale is relative to the cluster's " +
                           fmtSig(default_bw) + " GB/s, which the planner keeps for the forward pass");
  } else {
    rep.dropped.push_back("backward_scale");
  }
  if (x[2] > 0) cal.coefficients["kernel_overhead_us"] = {x[2] * 1e3, lf->std_error[2] * 1e3};
  else rep.dropped.push_back("kernel_overhead_us");
  if (x[3] > 0) cal.coefficients["lookup_overhead_ns"] = {x[3] * 1e6, lf->std_error[3] * 1e6};
  else rep.dropped.push_back("lookup_overhead_ns");
  if (x[4] > 0 && rep.cache_bytes > 0) {
    cal.coefficients["cache_miss_ns"] = {x[4] * 1e6, lf->std_error[4] * 1e6};
    cal.coefficients["cache_bytes"] = {rep.cache_bytes, 0.0};
  } else {
    rep.dropped.push_back("cache_miss_ns");
  }
  if (x[5] > 0) cal.coefficients["backward_lookup_ns"] = {x[5] * 1e6, lf->std_error[5] * 1e6};
  else rep.dropped.push_back("backward_lookup_ns");
  // Chosen from a grid, not estimated: no standard error.
  if (has_narrow) cal.coefficients["dim_penalty_narrow"] = {best_narrow, 0.0};
  if (has_mid) cal.coefficients["dim_penalty_mid"] = {best_mid, 0.0};
  if (cal.coefficients.empty())
    return core::Error{store.path().string() + ": runs " + idList(fit) + ": every coefficient fit to 0"};

  std::ostringstream src;
  const bool any_import = std::any_of(rep.measured.begin(), rep.measured.end(), [](const Measurement& m) { return m.table.empty(); });
  const bool any_engine = std::any_of(rep.measured.begin(), rep.measured.end(), [](const Measurement& m) { return !m.table.empty(); });
  src << (any_import && any_engine ? "engine and imported runs " : any_import ? "imported runs " : "engine runs ")
      << idList(fit) << " of " << store.path().string();
  if (!host.empty() || !cpu.empty()) {
    src << " (";
    if (!host.empty()) src << "host " << host;
    if (!cpu.empty()) src << (host.empty() ? "" : ", ") << cpu;
    src << ")";
  }
  cal.source = src.str();
  cal.created = core::utcNowIso8601();
  cal.fit.samples = rep.measurements;
  cal.fit.mape = rep.fit_mape;

  // The planner's analytic per-rank predictions, fit runs and held-out runs.
  for (const st::RunId id : fit) {
    auto c = checkRun(store, id, cal, supplied);
    if (!c) return c.error();
    rep.fit_ranks.insert(rep.fit_ranks.end(), c->begin(), c->end());
  }
  mapeOf(rep.fit_ranks, rep.fit_rank_mape, rep.fit_rank_mape_default);
  for (const st::RunId id : holdout) {
    auto run = store.run(id);
    if (!run) return run.error();
    if (!run->isComplete())
      rep.warnings.push_back(runName(store, id) + " is " + std::string(st::toText(run->status)) + ": checking what it wrote");
    auto c = checkRun(store, id, cal, supplied);
    if (!c) return c.error();
    rep.holdout.insert(rep.holdout.end(), c->begin(), c->end());
  }
  mapeOf(rep.holdout, rep.holdout_mape, rep.holdout_mape_default);
  if (!holdout.empty() && rep.holdout.empty())
    rep.warnings.push_back("held-out runs " + idList(holdout) + " have no measured rank to check");
  if (rep.holdout_mape >= 0) cal.fit.holdout_mape = rep.holdout_mape;
  return rep;
}

core::Result<CalibrationReport> calibrateFromRuns(const std::filesystem::path& path, std::span<const st::RunId> fit,
                                                  std::span<const st::RunId> holdout, const RunInputs* supplied) {
  auto store = st::openStore(path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  return calibrateFromRuns(*store, fit, holdout, supplied);
}

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
        : with_spans == 0            ? "forward + backward together: no spans"
                                     : "forward and backward where spans exist")
    << ")\n";
  for (const auto& w : r.warnings) o << "warning: " << w << "\n";
  o << "\n  coefficient                      value    std error\n";
  for (const auto& [name, c] : r.calibration.coefficients) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-26s %12s %12s\n", name.c_str(), fmtSig(c.value).c_str(),
                  fmtSig(c.std_error).c_str());
    o << line;
  }
  for (const auto& d : r.dropped) o << "  " << d << ": fit to 0, not written (the planner keeps its default)\n";
  o << "\nFit: MAPE " << pct(r.fit_mape) << " over the fitted measurements (default constants on the same: "
    << pct(r.fit_mape_default) << ")\n";
  if (r.fit_rank_mape >= 0)
    o << "  per-rank compute of the fit runs, planner's prediction: MAPE " << pct(r.fit_rank_mape) << " calibrated, "
      << pct(r.fit_rank_mape_default) << " default\n";

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
    char line[256];
    std::snprintf(line, sizeof line, "  %5s %5s %-16s %6s %10s %10s %10s %10s %8s\n", "run", "rank", "table", "shards",
                  "lookups", "unique", "measured", "fitted", "err");
    o << line;
    for (std::size_t i = 0; i < order.size() && i < worst; ++i) {
      const auto* m = order[i];
      double k = 0, u = 0;
      bool capped = false;
      for (const std::size_t j : m->shards) {
        k += r.samples[j].lookups_per_step;
        u += r.samples[j].unique_rows_per_step;
        capped = capped || r.samples[j].capped;
      }
      std::snprintf(line, sizeof line, "  %5lld %5d %-16s %6zu %10.0f %10.0f %10.4f %10.4f %8s%s\n",
                    static_cast<long long>(m->run), m->rank, m->table.empty() ? "(all)" : m->table.c_str(),
                    m->shards.size(), k, u, m->measured_ms, m->fitted_ms,
                    (fmt((m->fitted_ms / m->measured_ms - 1.0) * 100.0, 1) + "%").c_str(), capped ? " capped" : "");
      o << line;
    }
  }
  o << "\n";
  if (r.holdout_runs.empty()) {
    o << "Held-out check: none (no --holdout runs)\n";
  } else {
    o << "Held-out check on runs " << idList(r.holdout_runs) << " (" << r.holdout.size()
      << " ranks): per-rank compute MAPE " << (r.holdout_mape >= 0 ? pct(r.holdout_mape) : "-") << " calibrated, "
      << (r.holdout_mape_default >= 0 ? pct(r.holdout_mape_default) : "-") << " default constants\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %5s %5s %6s %12s %14s %8s %12s %8s\n", "run", "rank", "g.rank", "measured ms",
                  "calibrated ms", "err", "default ms", "err");
    o << line;
    for (const auto& h : r.holdout) {
      std::snprintf(line, sizeof line, "  %5lld %5d %6d %12.4f %14.4f %8s %12.4f %8s\n", static_cast<long long>(h.run),
                    h.rank, h.group_rank, h.measured_ms, h.calibrated_ms,
                    (fmt((h.calibrated_ms / h.measured_ms - 1.0) * 100.0, 1) + "%").c_str(), h.default_ms,
                    (fmt((h.default_ms / h.measured_ms - 1.0) * 100.0, 1) + "%").c_str());
      o << line;
    }
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
  j["fit_mape_default"] = r.fit_mape_default;
  j["fit_rank_mape"] = optional(r.fit_rank_mape);
  j["fit_rank_mape_default"] = optional(r.fit_rank_mape_default);
  j["holdout_mape"] = optional(r.holdout_mape);
  j["holdout_mape_default"] = optional(r.holdout_mape_default);
  j["dropped"] = r.dropped;
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
