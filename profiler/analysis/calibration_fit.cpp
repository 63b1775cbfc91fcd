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
#include "shardscope/profiler/trace/trace_recorder.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "analysis_common.h"
#include "shardscope/profiler/trace/run_device.h"
#include "calibration_common.h"

namespace shardscope::profiler {

namespace st = core::store;
using analysis_detail::fmt;
using analysis_detail::runName;

std::string calibration_detail::idList(std::span<const st::RunId> ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(static_cast<std::int64_t>(ids[i]));
  }
  return s;
}

std::string calibration_detail::fmtSig(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string calibration_detail::pct(double fraction) { return fmt(fraction * 100.0, 1) + "%"; }

core::Result<calibration_detail::LoadedRun> calibration_detail::loadRun(const st::TraceStore& store, st::RunId id,
                                                                        const RunInputs* supplied) {
  auto record = store.run(id);
  if (!record) return record.error();
  calibration_detail::LoadedRun r{std::move(record).value(), {}};
  r.inputs = runInputs(r.record, supplied);
  if (!r.inputs.model || !r.inputs.cluster || !r.inputs.plan) {
    std::string why;
    for (const auto& p : r.inputs.problems) why += (why.empty() ? "" : "; ") + p;
    if (isImportedRun(r.record))
      return core::Error{runName(store, id) + " (" + r.record.kind_text + ") lacks the " +
                         (!r.inputs.plan    ? "plan"
                          : !r.inputs.model ? "model"
                                            : "cluster") +
                         " the trainer ran: give --plan, --model and --cluster (" + why + ")"};
    return core::Error{runName(store, id) + ": not an engine run with a valid model, cluster and plan (" + why + ")"};
  }
  return r;
}

namespace {

using namespace analysis_detail;
using namespace calibration_detail;

// 1/BW, backward_scale/BW, kernel overhead, lookup overhead, cache miss,
// backward lookup (ms units)
constexpr std::size_t kUnknowns = 6;
// Cache sizes the fit tries (bytes; 0 = no cache term): 1 MiB .. 1 GiB.
std::vector<double> cacheCandidates() {
  std::vector<double> out{0.0};
  for (int i = 0; i <= 10; ++i) out.push_back(static_cast<double>(1ull << (20 + i)));
  return out;
}
// Measured embedding compute (fwd + bwd) of each measured rank: the median over its steps.
core::Result<std::map<int, double>> measuredComputeMs(const st::TraceStore& store, st::RunId id) {
  auto summaries = store.stepSummaries(id);
  if (!summaries) return summaries.error();
  if (summaries->empty()) return core::Error{runName(store, id) + ": has no engine step summaries"};
  std::map<int, std::vector<double>> per_step;
  for (const auto& s : *summaries) per_step[s.rank].push_back(static_cast<double>(s.emb_fwd_ns + s.emb_bwd_ns));
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
    out.push_back(
        {id, rank, gr, ms, (*calibrated)[static_cast<std::size_t>(gr)], (*defaults)[static_cast<std::size_t>(gr)]});
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

// What the fit's runs say about where they ran.
struct RunFacts {
  double default_bw = 0.0;  // the first run's cluster HBM bandwidth (GB/s)
  std::string host, cpu;
  core::DeviceInfo device;  // the first run's; every fit run must be of its kind
  st::RunId device_run{};
  std::string defaults_not_compared;  // the first run's device against its cluster's ("" when alike)
};

// The fit's measurements: per shard of engine runs, per rank of imported runs.
core::Result<RunFacts> gatherMeasurements(const st::TraceStore& store, std::span<const st::RunId> fit,
                                          const RunInputs* supplied, CalibrationReport& rep) {
  RunFacts facts;
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
      if (facts.default_bw <= 0) facts.default_bw = run->inputs.cluster->gpu.hbm_bandwidth_gbps;
      if (facts.host.empty()) facts.host = run->inputs.config.host;
      if (facts.cpu.empty()) facts.cpu = run->inputs.config.cpu;
      const core::DeviceInfo device = runDevice(run->inputs.config);
      if (id == fit.front()) {
        facts.device = device;
        facts.device_run = id;
        const core::DeviceComparison vs = core::compareDevices(device, *run->inputs.cluster, nullptr);
        if (!vs.absolute) facts.defaults_not_compared = vs.reason;
      } else if (deviceKind(device) != deviceKind(facts.device)) {
        // One calibration describes one kind of device: constants of two would fit neither.
        return core::Error{runName(store, id) + " ran on " + core::describeDevice(device) + ", run " +
                           std::to_string(static_cast<std::int64_t>(facts.device_run)) + " on " +
                           core::describeDevice(facts.device) + ": fit runs of one kind of device"};
      }
    }
  }
  return facts;
}

// The design on relative error: each measurement's features divided by it,
// target 1 (weighted by sqrt). The cache term depends on a cache size, which
// enters non-linearly, so the rows are rebuilt per candidate size and per
// dim-penalty pair; the samples' penalties and miss shares are set as a side effect.
struct FeatureRows {
  std::vector<std::vector<double>> rows;
  std::vector<double> targets;
};

FeatureRows buildRows(CalibrationReport& rep, const std::vector<planner::AccessProfile>& profiles, double cache_bytes,
                      double narrow, double mid) {
  FeatureRows out;
  auto& rows = out.rows;
  auto& targets = out.targets;
  for (auto& s : rep.samples) s.penalty = planner::dimPenalty(s.cols, narrow, mid);
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
  return out;
}

// The fit chosen over the dim-penalty and cache-size grids.
struct ChosenFit {
  LinearFit fit;
  double narrow = 1.75, mid = 1.15;  // TorchRec's dim penalties unless the samples choose others
  bool has_narrow = false, has_mid = false;
};

core::Result<ChosenFit> searchFit(CalibrationReport& rep, const std::vector<planner::AccessProfile>& profiles) {
  // The dim penalties multiply the bandwidth term: searched on a grid that
  // holds TorchRec's values, for the column classes the samples have.
  ChosenFit chosen;
  bool& has_narrow = chosen.has_narrow;
  bool& has_mid = chosen.has_mid;
  for (const auto& s : rep.samples) {
    has_narrow = has_narrow || s.cols < 64;
    has_mid = has_mid || (s.cols >= 64 && s.cols < 128);
  }
  const std::vector<double> penalty_grid{0.5, 0.625, 0.75, 0.875, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5};
  // Whole-rank measurements (imported runs) are few and sum many shards: the
  // grids would fit noise, so the penalties stay TorchRec's and no cache term.
  const bool rank_level =
      std::all_of(rep.measured.begin(), rep.measured.end(), [](const Measurement& m) { return m.table.empty(); });
  if (rank_level) has_narrow = has_mid = false;
  const std::vector<double> narrow_grid = has_narrow ? penalty_grid : std::vector<double>{1.75};
  const std::vector<double> mid_grid = has_mid ? penalty_grid : std::vector<double>{1.15};
  const std::vector<double> cache_grid = rank_level ? std::vector<double>{0.0} : cacheCandidates();
  std::optional<LinearFit> best;
  for (const double narrow : narrow_grid)
    for (const double mid : mid_grid) {
      std::optional<LinearFit> best_here;
      double cache_here = 0.0;
      for (const double candidate : cache_grid) {
        const FeatureRows fr = buildRows(rep, profiles, candidate, narrow, mid);
        auto trial = fitNonNegative(fr.rows, fr.targets);
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
        chosen.narrow = narrow;
        chosen.mid = mid;
      }
    }
  chosen.fit = std::move(best).value();
  return chosen;
}

// A term that adds less than 1e-6 of every measurement is numerically 0:
// dropped rather than written as a meaningless coefficient.
void dropNegligibleTerms(const std::vector<std::vector<double>>& rows, LinearFit& fit) {
  for (std::size_t j = 0; j < kUnknowns; ++j) {
    double largest = 0.0;
    for (const auto& row : rows) largest = std::max(largest, row[j] * fit.x[j]);
    if (fit.x[j] > 0 && largest < 1e-6) {
      fit.x[j] = 0.0;
      fit.std_error[j] = 0.0;
      fit.at_zero[j] = true;
    }
  }
}

// Fitted values of every sample and measurement, and the fit's MAPE with the
// fitted and with the default constants.
void fittedValues(const std::vector<double>& x, CalibrationReport& rep) {
  for (auto& s : rep.samples) {
    const double over = x[2] + x[3] * s.lookups_per_step;
    const double lines = planner::cacheLines(s.row_bytes);
    s.fitted_fwd_ms = x[0] * s.penalty * s.fwd_bytes + over + x[4] * s.lookups_per_step * s.miss_ids * lines;
    s.fitted_bwd_ms = x[1] * s.penalty * s.bwd_bytes + over +
                      x[4] * s.unique_rows_per_step * s.miss_unique_rows * lines + x[5] * s.lookups_per_step;
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
}

// The coefficients in the calibration's units; zeros are dropped (values must be > 0).
void coefficientsOf(const ChosenFit& chosen, double default_bw, CalibrationReport& rep) {
  const LinearFit* lf = &chosen.fit;
  const auto& x = lf->x;
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
  if (x[2] > 0)
    cal.coefficients["kernel_overhead_us"] = {x[2] * 1e3, lf->std_error[2] * 1e3};
  else
    rep.dropped.push_back("kernel_overhead_us");
  if (x[3] > 0)
    cal.coefficients["lookup_overhead_ns"] = {x[3] * 1e6, lf->std_error[3] * 1e6};
  else
    rep.dropped.push_back("lookup_overhead_ns");
  if (x[4] > 0 && rep.cache_bytes > 0) {
    cal.coefficients["cache_miss_ns"] = {x[4] * 1e6, lf->std_error[4] * 1e6};
    cal.coefficients["cache_bytes"] = {rep.cache_bytes, 0.0};
  } else {
    rep.dropped.push_back("cache_miss_ns");
  }
  if (x[5] > 0)
    cal.coefficients["backward_lookup_ns"] = {x[5] * 1e6, lf->std_error[5] * 1e6};
  else
    rep.dropped.push_back("backward_lookup_ns");
  // Chosen from a grid, not estimated: no standard error.
  if (chosen.has_narrow) cal.coefficients["dim_penalty_narrow"] = {chosen.narrow, 0.0};
  if (chosen.has_mid) cal.coefficients["dim_penalty_mid"] = {chosen.mid, 0.0};
}

// "engine runs 3,4 of /x/y.db (host h, cpu c)"
std::string sourceText(const CalibrationReport& rep, const st::TraceStore& store, std::span<const st::RunId> fit,
                       const RunFacts& facts) {
  const std::string& host = facts.host;
  const std::string& cpu = facts.cpu;
  std::ostringstream src;
  const bool any_import =
      std::any_of(rep.measured.begin(), rep.measured.end(), [](const Measurement& m) { return m.table.empty(); });
  const bool any_engine =
      std::any_of(rep.measured.begin(), rep.measured.end(), [](const Measurement& m) { return !m.table.empty(); });
  src << (any_import && any_engine ? "engine and imported runs "
          : any_import             ? "imported runs "
                                   : "engine runs ")
      << idList(fit) << " of " << store.path().string();
  if (!host.empty() || !cpu.empty()) {
    src << " (";
    if (!host.empty()) src << "host " << host;
    if (!cpu.empty()) src << (host.empty() ? "" : ", ") << cpu;
    src << ")";
  }
  return src.str();
}

// The planner's analytic per-rank predictions on the fit runs and the held-out runs.
core::Status checkRuns(const st::TraceStore& store, std::span<const st::RunId> fit, std::span<const st::RunId> holdout,
                       const RunInputs* supplied, CalibrationReport& rep) {
  core::Calibration& cal = rep.calibration;
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
      rep.warnings.push_back(runName(store, id) + " is " + std::string(st::toText(run->status)) +
                             ": checking what it wrote");
    auto c = checkRun(store, id, cal, supplied);
    if (!c) return c.error();
    rep.holdout.insert(rep.holdout.end(), c->begin(), c->end());
  }
  mapeOf(rep.holdout, rep.holdout_mape, rep.holdout_mape_default);
  if (!holdout.empty() && rep.holdout.empty())
    rep.warnings.push_back("held-out runs " + idList(holdout) + " have no measured rank to check");
  if (rep.holdout_mape >= 0) cal.fit.holdout_mape = rep.holdout_mape;
  return core::Ok{};
}

}  // namespace

core::Result<CalibrationReport> calibrateFromRuns(const st::TraceStore& store, std::span<const st::RunId> fit,
                                                  std::span<const st::RunId> holdout, const RunInputs* supplied) {
  if (fit.empty()) return core::Error{store.path().string() + ": no runs to fit"};
  CalibrationReport rep;
  rep.fit_runs.assign(fit.begin(), fit.end());
  rep.holdout_runs.assign(holdout.begin(), holdout.end());
  auto facts = gatherMeasurements(store, fit, supplied, rep);
  if (!facts) return facts.error();

  std::vector<planner::AccessProfile> profiles;
  profiles.reserve(rep.samples.size());
  for (const auto& s : rep.samples) profiles.emplace_back(s.access, s.table_rows);
  rep.measurements = buildRows(rep, profiles, 0.0, 1.75, 1.15).rows.size();
  if (rep.measurements < kUnknowns)
    return core::Error{store.path().string() + ": runs " + idList(fit) + " give " + std::to_string(rep.measurements) +
                       " measurement(s); the fit needs at least " + std::to_string(kUnknowns)};
  auto chosen = searchFit(rep, profiles);
  if (!chosen) return chosen.error();
  // The samples' penalties and miss shares as chosen.
  const FeatureRows rows = buildRows(rep, profiles, rep.cache_bytes, chosen->narrow, chosen->mid);
  dropNegligibleTerms(rows.rows, chosen->fit);
  const auto& x = chosen->fit.x;
  static const char* kTermNames[kUnknowns] = {"inv_bandwidth_ms_per_byte",
                                              "bwd_inv_bandwidth_ms_per_byte",
                                              "kernel_overhead_ms",
                                              "lookup_overhead_ms",
                                              "cache_miss_ms",
                                              "backward_lookup_ms"};
  for (std::size_t j = 0; j < kUnknowns; ++j)
    rep.terms.push_back({kTermNames[j], x[j], chosen->fit.std_error[j], chosen->fit.at_zero[j]});
  fittedValues(x, rep);
  coefficientsOf(*chosen, facts->default_bw, rep);
  core::Calibration& cal = rep.calibration;
  auto links = fitCollectives(store, fit, supplied, &rep.warnings);
  if (!links) return links.error();
  for (const CollectiveLinkFit& f : *links) {
    cal.coefficients[f.coefficientPrefix() + "_busbw_gbps"] = {f.busbw_gbps, f.busbw_std_error_gbps};
    cal.coefficients[f.coefficientPrefix() + "_latency_us"] = {f.latency_us, f.latency_std_error_us};
  }
  rep.collectives = std::move(*links);
  if (cal.coefficients.empty())
    return core::Error{store.path().string() + ": runs " + idList(fit) + ": every coefficient fit to 0"};
  cal.source = sourceText(rep, store, fit, *facts);
  cal.created = core::utcNowIso8601();
  cal.device = facts->device;
  rep.defaults_not_compared = facts->defaults_not_compared;
  cal.fit.samples = rep.measurements;
  cal.fit.mape = rep.fit_mape;
  if (auto s = checkRuns(store, fit, holdout, supplied, rep); !s) return s.error();
  return rep;
}

core::Result<CalibrationReport> calibrateFromRuns(const std::filesystem::path& path, std::span<const st::RunId> fit,
                                                  std::span<const st::RunId> holdout, const RunInputs* supplied) {
  auto store = st::openStore(path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  return calibrateFromRuns(*store, fit, holdout, supplied);
}

}  // namespace shardscope::profiler
