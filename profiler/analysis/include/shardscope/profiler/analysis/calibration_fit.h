// Fitting the cost model's embedding constants (bandwidth, backward scale,
// kernel and per-lookup overheads) to engine runs, and checking the result on
// held-out runs the way the planner would use it. Definitions and the fit's
// terms are in docs/analysis.md; the formulas it fits in docs/cost-model.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/calibration.h"
#include "shardscope/core/model.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/collective_bandwidth.h"  // CollectiveLinkFit
#include "shardscope/profiler/analysis/run_analysis.h"          // RunInputs

namespace shardscope::profiler {

// One table shard on one measured rank of one run, with the cost model's
// features computed from the measured lookups and unique rows.
struct ShardSample {
  core::store::RunId run{};
  int rank = 0;
  int group_rank = 0;
  std::string table;
  std::uint64_t rows = 0;
  std::uint32_t cols = 0;
  bool data_parallel = false;
  bool capped = false;
  // Lookups and unique rows are the planner's expectation from the table's
  // access profile, not measured (imported runs: traces do not say which
  // table a kernel served); measured_* are then < 0 / 0.
  bool expected = false;
  double samples_per_step = 0.0;      // S: samples whose ids the shard served (M x B, or B when data-parallel)
  double lookups_per_step = 0.0;      // k, measured (table_stats)
  double unique_rows_per_step = 0.0;  // U, measured
  double penalty = 1.0;               // dimPenalty(cols)
  double fwd_bytes = 0.0;             // the cost model's byte counts with the measured k and U
  double bwd_bytes = 0.0;
  double measured_fwd_ms = -1.0;  // per step, from emb_fwd spans; < 0 when the run has no spans
  double measured_bwd_ms = -1.0;
  double measured_ms = 0.0;    // forward + backward per step (table_stats time)
  double fitted_fwd_ms = 0.0;  // the fitted constants applied to this sample's features
  double fitted_bwd_ms = 0.0;
  double fitted_ms = 0.0;
  double default_fwd_ms = 0.0;  // the default constants (the run's cluster), same features
  double default_bwd_ms = 0.0;
  double default_ms = 0.0;
  // What the cache term needs: the shard's rows in the table's popularity
  // order, its row bytes and the table's draws per step (docs/cost-model.md).
  core::AccessSpec access;
  std::uint64_t table_rows = 0;
  std::uint64_t row_offset = 0;
  double row_bytes = 0.0;         // cols x dtype bytes
  double draws = 0.0;             // ids drawn from the whole table per step (S x mean pooling)
  double miss_ids = 0.0;          // share of k outside the cache-resident rows, at the chosen cache size
  double miss_unique_rows = 0.0;  // share of U outside them
};

// One fitted measurement: a shard's time on a rank (engine runs, table
// statistics) or a rank's whole embedding time, priced as the sum of its
// shards (imported runs).
struct Measurement {
  core::store::RunId run{};
  int rank = 0;
  std::string table;                // empty: the whole rank
  std::vector<std::size_t> shards;  // indexes into CalibrationReport::samples
  double measured_fwd_ms = -1.0;    // < 0: only the total is known
  double measured_bwd_ms = -1.0;
  double measured_ms = 0.0;
  double fitted_ms = 0.0;
  double default_ms = 0.0;
};

// A measured rank of a run: its embedding compute per step against the
// planner's analytic prediction (access profile, not measured lookups) with
// and without the calibration.
struct RankCheck {
  core::store::RunId run{};
  int rank = 0;
  int group_rank = 0;
  double measured_ms = 0.0;
  double calibrated_ms = 0.0;
  double default_ms = 0.0;
};

// One unknown of the linear fit, in the units the features use.
struct FitTerm {
  std::string name;  // inv_bandwidth_ms_per_byte, bwd_inv_bandwidth_ms_per_byte, kernel_overhead_ms, lookup_overhead_ms
  double value = 0.0;
  double std_error = 0.0;
  bool at_zero = false;  // held at the non-negativity bound
};

struct CalibrationReport {
  double cache_bytes = 0.0;       // the cache size the fit chose (0: no cache term fitted better)
  core::Calibration calibration;  // what `calibrate --out` writes
  std::vector<core::store::RunId> fit_runs;
  std::vector<core::store::RunId> holdout_runs;
  std::vector<FitTerm> terms;
  std::vector<ShardSample> samples;   // fit samples, with fitted values
  std::vector<Measurement> measured;  // what was fitted, with fitted values
  std::size_t measurements = 0;       // rows fitted: fwd and bwd per measurement that has both, one total without
  double fit_mape = 0.0;              // fraction, over the fitted rows
  double fit_mape_default = 0.0;      // the same rows priced with the default constants
  std::vector<RankCheck> fit_ranks;   // the same check on the fit runs
  double fit_rank_mape = -1.0;
  double fit_rank_mape_default = -1.0;
  std::vector<RankCheck> holdout;
  double holdout_mape = -1.0;  // calibrated; fraction; < 0 when no held-out run
  double holdout_mape_default = -1.0;
  // Why the default constants are not compared with the runs ("" when they are): they are priced for
  // the cluster's GPU and the runs ran on another kind of device (docs/analysis.md#like-for-like).
  std::string defaults_not_compared;
  std::vector<CollectiveLinkFit> collectives;  // per-op, per-link fits of the fit runs' collective calls
  std::vector<std::string> dropped;   // coefficients that came out 0 (not written; the planner keeps its default)
  std::vector<std::string> warnings;  // samples skipped, runs not complete, ...
};

// Shard samples of one run (measured ranks, every shard; shards a rank holds
// two pieces of, and shards with no lookups, are skipped with a warning).
[[nodiscard]] core::Result<std::vector<ShardSample>> shardSamples(const core::store::TraceStore& store,
                                                                  core::store::RunId run,
                                                                  std::vector<std::string>* warnings = nullptr);

// Shard samples (expected lookups) and one per-rank measurement for each
// measured rank of an imported run, with the model, cluster and plan the
// trainer ran (`supplied` where the run lacks them).
struct RankSamples {
  std::vector<ShardSample> samples;
  std::vector<Measurement> measured;  // shards index into `samples`
};
[[nodiscard]] core::Result<RankSamples> rankSamples(const core::store::TraceStore& store, core::store::RunId run,
                                                    const RunInputs* supplied = nullptr,
                                                    std::vector<std::string>* warnings = nullptr);

// Fits on `fit`, checks on `holdout` (may be empty). Engine runs give one
// measurement per table shard; imported runs one per rank (rankSamples),
// which needs the plan the trainer ran: from the run, else `supplied`.
// Errors: a run that is missing or lacks a model, cluster or plan; fewer
// measurements than unknowns; nothing positive to fit.
[[nodiscard]] core::Result<CalibrationReport> calibrateFromRuns(const core::store::TraceStore& store,
                                                                std::span<const core::store::RunId> fit,
                                                                std::span<const core::store::RunId> holdout,
                                                                const RunInputs* supplied = nullptr);
[[nodiscard]] core::Result<CalibrationReport> calibrateFromRuns(const std::filesystem::path& store,
                                                                std::span<const core::store::RunId> fit,
                                                                std::span<const core::store::RunId> holdout,
                                                                const RunInputs* supplied = nullptr);

// Non-negative least squares (Lawson-Hanson active set) of rows x = y, with
// columns scaled to unit norm internally. std_error from the residual
// variance and (A_P^T A_P)^-1 over the positive set P (0 for held-at-zero terms).
struct LinearFit {
  std::vector<double> x;
  std::vector<double> std_error;
  std::vector<bool> at_zero;
  std::vector<std::vector<double>> covariance;  // of x, 0 in rows/columns of held-at-zero terms
  double rss = 0.0;
};
[[nodiscard]] core::Result<LinearFit> fitNonNegative(const std::vector<std::vector<double>>& rows,
                                                     const std::vector<double>& y);

// What `calibrate` prints (worst `worst` residuals) and its --json form.
[[nodiscard]] std::string formatCalibrationReport(const CalibrationReport& report, std::size_t worst = 10);
[[nodiscard]] nlohmann::ordered_json calibrationReportJson(const CalibrationReport& report);

}  // namespace shardscope::profiler
