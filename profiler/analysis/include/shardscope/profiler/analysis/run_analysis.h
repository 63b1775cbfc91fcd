// Analysis of one engine run in a trace store: measured per-rank embedding
// load, collective time and the part of it spent waiting for peers, imbalance
// and stragglers, measured vs predicted compute per rank, per-table totals.
// `shardscope-cli report` prints it; every number is defined in docs/analysis.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/device.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/collectives.h"
#include "shardscope/profiler/trace/engine_run_config.h"

namespace shardscope::profiler {

// What a run was made from, parsed from its record (model_json, cluster_json,
// plan_json, config_json). Parts that are absent or invalid stay empty and
// are named in `problems`. The model's batch_size_per_gpu is the engine's
// (config_json batch_size_per_gpu) when the config gives one.
struct RunInputs {
  std::optional<core::ModelSpec> model;
  std::optional<core::ClusterSpec> cluster;
  std::optional<core::ShardPlan> plan;
  EngineRunConfig config = storedRunConfig({});  // as read (readEngineRunConfig); says nothing when absent
  std::vector<std::string> problems;
};

[[nodiscard]] RunInputs runInputs(const core::store::RunRecord& run);

// runInputs, with `supplied` filling what the run lacks (an imported run has
// no model, cluster or plan; the user gives the ones the trainer ran).
// Problems of the parts `supplied` replaces are dropped.
[[nodiscard]] RunInputs runInputs(const core::store::RunRecord& run, const RunInputs* supplied);

// Imported runs (import-kineto, import-nsys) carry no plan of their own.
[[nodiscard]] bool isImportedRun(const core::store::RunRecord& run);

// Position of a global rank inside its sharding group of `plan` (-1: not in any).
[[nodiscard]] int groupRankOf(const core::ShardPlan& plan, int global_rank);

// The cost model's embedding compute (forward + backward, ms per step) of
// every group rank of `plan`, priced as the planner prices it (pricePlan,
// measured_vs_predicted.h).
[[nodiscard]] core::Result<std::vector<double>> predictedComputeMs(const core::ModelSpec& model,
                                                                   const core::ClusterSpec& cluster,
                                                                   const core::ShardPlan& plan,
                                                                   const core::Calibration* calibration);

// Time one rank spent in one kind of collective, mean per measured step.
struct CommTime {
  std::string kind;  // span kind: a2a_ids, a2a_pooled, a2a_grads, dp_allreduce, replica_sync, dense_allreduce, ...
  double ms = 0.0;
  // Duration - the shortest duration of the same call among the ranks that
  // recorded it, summed over the calls a peer recorded too; < 0: unknown (no
  // call of this kind was recorded by a peer, e.g. one rank imported).
  double wait_ms = 0.0;
};

struct RankAnalysis {
  int rank = 0;             // global rank
  int sharding_group = -1;  // from the run's ranks table, else the plan
  int replica_group = -1;
  int group_rank = -1;     // position inside its sharding group (plan); -1 when unknown
  std::int64_t steps = 0;  // measured steps this rank has summaries for
  // Means per measured step, ms.
  double emb_fwd_ms = 0.0;
  double emb_bwd_ms = 0.0;
  double compute_ms = 0.0;  // emb_fwd + emb_bwd: the rank's embedding load
  double dense_ms = 0.0;
  double comm_ms = 0.0;  // all collectives (step summaries)
  double wait_ms = 0.0;  // sum of the known waits in `comm` (0 without spans); < 0: none known
  double step_ms = 0.0;
  std::vector<CommTime> comm;  // kinds the rank has spans of, in a fixed order
  // The device timeline from spans, means per measured step (< 0 without
  // device work). Work = kernels, copies, the engine's compute and
  // collectives (not CPU ops, runtime calls, annotations or step spans);
  // compute = work that is neither a collective nor a copy. Every span counts
  // in the device's own step window it runs in (docs/analysis.md, "Timeline").
  double window_ms = -1.0;         // the device's step: first work of the step to the next step's
  double busy_ms = -1.0;           // union of work in the window
  double idle_ms = -1.0;           // window - busy: the device waits for the host
  double compute_union_ms = -1.0;  // union of compute in the window
  double comm_union_ms = -1.0;     // union of collectives in the window
  double overlap_ms = -1.0;        // collectives running while compute runs (union intersection)
  bool straggler = false;
  double predicted_plan_ms = -1.0;   // plan's predicted.ranks[group_rank].compute_ms; < 0 when unknown
  double predicted_model_ms = -1.0;  // the cost model's, re-priced now; < 0 when unknown
  // The rank's share of its sharding group's embedding compute (over the group's
  // measured ranks): what transfers across devices. < 0 when unknown.
  double share = -1.0;
  double predicted_share = -1.0;  // the same from the cost model's prediction (else the plan's)
};

// max / mean of embedding compute over a set of ranks.
struct ComputeImbalance {
  int sharding_group = -1;  // -1: every measured rank
  std::size_t ranks = 0;
  double max_ms = 0.0;
  double mean_ms = 0.0;
  double max_over_mean = 1.0;  // < 0: n/a (no embedding compute at all)
  int slowest_rank = -1;
};

struct TableAnalysis {
  std::string table;
  int ranks = 0;  // measured ranks that hold (a shard of) it
  // Summed over those ranks, mean per measured step.
  double lookups_per_step = 0.0;
  double unique_rows_per_step = 0.0;
  double ms_per_step = 0.0;  // forward + backward
};

// Collectives of one op in one message-size bin (powers of two of the
// NCCL-tests "size": docs/analysis.md#bus-bandwidth).
struct CollectiveBin {
  std::string op;        // all_to_all, all_reduce, reduce_scatter, all_gather, send_recv, ...
  int group_size = 0;    // ranks in the call (peers + 1); bins split by it too
  double size_lo = 0.0;  // bytes, [lo, hi)
  double size_hi = 0.0;
  std::size_t calls = 0;            // distinct calls (one per group, not per rank)
  double median_bytes = 0.0;        // size of the median call
  double median_ms = 0.0;           // duration per rank, median over ranks and calls (includes waiting)
  double median_transfer_ms = 0.0;  // per call the shortest duration in its group, median over calls
  double algbw_gbps = 0.0;          // median over calls of size / transfer time
  double busbw_gbps = 0.0;          // algbw x the op's bus factor (docs/analysis.md)
  double max_busbw_gbps = 0.0;
};

// NCCL-tests size of a collective whose store row says `bytes` (the
// trace-store convention per op) and bus-bandwidth factor for `ranks`.
[[nodiscard]] double collectiveSizeBytes(std::string_view op, double bytes);
using planner::busBandwidthFactor;  // one definition, beside the collective model

struct RunAnalysis {
  core::store::RunRecord run;
  std::string store;  // path
  std::string mode;   // config_json mode, else the run's kind
  std::int64_t steps = 0;
  // The run's step time (step_time.h: median over steps of the slowest rank's step), ms; < 0 when unknown.
  double step_time_ms = -1.0;
  bool has_spans = false;
  std::vector<RankAnalysis> ranks;  // by global rank
  ComputeImbalance overall;
  std::vector<ComputeImbalance> groups;  // one per sharding group present, by group
  double compute_mean_ms = 0.0;
  double compute_median_ms = 0.0;
  double compute_stddev_ms = 0.0;       // population standard deviation over measured ranks
  double straggler_threshold_ms = 0.0;  // min(mean + 2 sd, 1.10 x median)
  std::vector<int> stragglers;          // global ranks above the threshold
  std::string plan_summary;             // "M=4 R=2 strided", empty without a plan
  std::string model_constants;          // "default constants" or "calibration <source>"; empty when not re-priced
  // The run's device against the devices the predictions are priced for (the
  // cost model's: the calibration's device, else the cluster's GPU; the plan's:
  // the cluster's GPU). Absolute times and errors are compared only when they
  // match (docs/analysis.md#like-for-like); otherwise the shares are.
  core::DeviceInfo device;  // what the run ran on (runDevice of its configuration)
  core::DeviceComparison model_devices;
  core::DeviceComparison plan_devices;
  double plan_mape = -1.0;  // fractions; < 0 when not available or not comparable
  double model_mape = -1.0;
  double share_mae = -1.0;               // mean |share - predicted_share| over ranks (fraction); < 0 when not available
  std::vector<TableAnalysis> tables;     // heaviest first
  std::vector<CollectiveBin> bandwidth;  // by op, group size, size
  std::string bandwidth_note;            // why `bandwidth` is empty ("" when it is not)
  std::vector<CappedShard> capped;       // config_json capped
  std::vector<std::string> warnings;
};

struct AnalysisOptions {
  // Re-price the plan with these constants instead of the defaults.
  const core::Calibration* calibration = nullptr;
  // Model, cluster and plan for a run that lacks them (an import).
  const RunInputs* supplied = nullptr;
  // Spans are read per rank in time windows of about this many spans, so a
  // rank of millions of spans is never in memory at once.
  std::int64_t spans_per_window = 250'000;
};

inline constexpr double kStragglerSigmas = 2.0;
inline constexpr double kStragglerOverMedian = 1.10;

// Errors: the run does not exist, or holds no step summaries (an engine run
// that wrote nothing, an import without profiler steps).
[[nodiscard]] core::Result<RunAnalysis> analyzeRun(const core::store::TraceStore& store, core::store::RunId run,
                                                   const AnalysisOptions& options = {});

// The run with the highest id, whatever its status; an error when the store has none.
[[nodiscard]] core::Result<core::store::RunId> latestRun(const core::store::TraceStore& store);
// The complete run with the highest id: what a page shows before the user picks
// one. nullopt when the store has no complete run.
[[nodiscard]] core::Result<std::optional<core::store::RunId>> newestCompleteRun(const core::store::TraceStore& store);

// Aligned text tables (what `report` prints) and the same as JSON (`report --json`).
[[nodiscard]] std::string formatReport(const RunAnalysis& analysis);
[[nodiscard]] nlohmann::ordered_json reportJson(const RunAnalysis& analysis);

}  // namespace shardscope::profiler
