// Bus bandwidth of every collective call of a stored run against message
// size, beside the time the planner prices that op and group with
// (default constants, and a calibration's), and the calls that fall far below
// it: what the desktop's Collectives page draws. Definitions in
// docs/analysis.md ("Collectives page: bus bandwidth vs the model").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/calibration.h"
#include "shardscope/core/device.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::profiler {

// Which of the grid's process groups a call ran in.
enum class CollectiveGroup : std::uint8_t { Sharding, Replica, World, Other };
[[nodiscard]] std::string_view toString(CollectiveGroup group);  // "sharding", "replica", "world", "other"

// One collective call: its rows on the ranks that recorded it, paired as the
// run analysis pairs them (process group, group, op and seq, else step and order).
struct CallBandwidth {
  std::string op;  // all_to_all, all_reduce, reduce_scatter, ...
  CollectiveGroup group = CollectiveGroup::Other;
  std::string process_group;  // the rows' process group name, "" when none
  std::string ranks;          // the group's global ranks as stored ("0,2,4,6"), "" when the trace gives none
  int group_size = 0;         // ranks in the call (peers + 1, the largest any member says)
  std::int64_t step = -1;     // the members' step (-1: outside a step)
  std::int64_t seq = -1;      // the call's number in its process group, -1 unknown
  std::vector<int> members;   // ranks that recorded it, ascending
  double size_bytes = 0.0;    // NCCL-tests size (collectiveSizeBytes), the largest any member recorded
  double transfer_ms = 0.0;   // the shortest member's duration (the others include waiting)
  double busbw_gbps = 0.0;    // size / transfer x busBandwidthFactor(op, group_size)
  int slowest_rank = -1;      // the member that started last (the others waited for it); -1 with one member
  // The model curve of its (op, group) at its size; < 0 without one.
  double model_busbw_gbps = -1.0;       // default constants
  double calibrated_busbw_gbps = -1.0;  // the calibration's (< 0 without a calibration)
  // busbw / its reference: the model's (the calibrated one when given, else the default) when the model
  // is priced for the run's device, else the median of its series' calls of similar size (half to twice
  // its size) in this run; < 0 without a reference.
  double ratio = -1.0;
};

// One call's price as the planner makes it (docs/cost-model.md
// "Collectives"): the op in its group on this cluster, the algorithm chosen
// for each size as NCCL's tuner would.
struct CollectivePriceModel {
  planner::CostConstants constants;
  std::uint32_t gpus_per_node = 1;
  core::DeviceClass device = core::DeviceClass::Gpu;
  planner::CollectiveOp op = planner::CollectiveOp::AllReduce;
  planner::GroupShape shape;
  // Per NCCL-tests byte, the planner charges this many of its own bytes
  // (all-to-all: sent + received).
  double bytes_scale = 1.0;
  [[nodiscard]] planner::CollectivePrice at(double size_bytes) const;
  [[nodiscard]] double timeMs(double size_bytes) const { return at(size_bytes).ms(size_bytes); }
};

// The model of one (op, group) as the planner prices it (docs/cost-model.md).
struct CollectiveModelCurve {
  std::string op;
  CollectiveGroup group = CollectiveGroup::Other;
  int group_size = 0;  // the grid's M, R or N: the bus factor's n
  std::string
      priced_as;     // what the planner prices with it: "each of a step's three all-to-alls in the sharding group", ...
  std::string link;  // "intra-node", "inter-node", "intra- and inter-node (33% of peers on the node)"
  CollectivePriceModel model;                      // default constants (CostConstants::from(cluster, nullptr))
  std::optional<CollectivePriceModel> calibrated;  // CostConstants::from(cluster, &calibration), when one is given
  // The curves as bus bandwidth, sampled at `sizes` (bytes, 4 per octave over the result's size range).
  std::vector<double> sizes;
  std::vector<double> busbw_gbps;
  std::vector<double> calibrated_busbw_gbps;  // empty without a calibration
};

// Bus bandwidth of `model` at NCCL-tests size `size_bytes` for `op` in a group of `ranks` (GB/s).
[[nodiscard]] double modelBusBandwidthGbps(const CollectivePriceModel& model, std::string_view op, int ranks,
                                           double size_bytes);

// The calls of one (op, group), as one scatter series.
struct CollectiveSeries {
  std::string op;
  CollectiveGroup group = CollectiveGroup::Other;
  std::vector<std::size_t> calls;  // indices into CollectiveBandwidth::calls, by size
  int curve = -1;                  // index into CollectiveBandwidth::curves, -1: the planner does not price it
};

struct CollectiveBandwidth {
  core::store::RunRecord run;
  std::string store;                         // path
  std::vector<CallBandwidth> calls;          // by op, group, size
  std::vector<CollectiveSeries> series;      // by op, group
  std::vector<CollectiveModelCurve> curves;  // one per (op, group) the run has and the planner prices
  std::vector<std::size_t> outliers;         // calls below outlier_fraction of their reference, worst first
  double outlier_fraction = 0.5;
  // The run's device against the one the model is priced for: curves and model ratios only when absolute.
  core::DeviceComparison devices;
  [[nodiscard]] bool againstModel() const { return devices.absolute && !curves.empty(); }
  double size_lo = 0.0;  // bytes: the curves' range, whole octaves around 1 KiB..1 GiB and every call
  double size_hi = 0.0;
  std::string grid;                // "M=4 R=2 strided, 4 GPUs per node"; "" without one (no curves then)
  std::string calibration;         // the calibration's source; "" without one
  std::vector<std::string> notes;  // why curves are missing, rows skipped, a calibration without link constants
};

struct CollectiveBandwidthOptions {
  // The calibrated curves; none without.
  const core::Calibration* calibration = nullptr;
  // Cluster and plan for a run that lacks them (an import).
  const RunInputs* supplied = nullptr;
  // A call is an outlier when its busbw is below this share of the model's at its size.
  double outlier_fraction = 0.5;
};

// Errors: the run does not exist, has no collectives (an emulate run, an
// import of a trace without NCCL kernels, a run traced without spans), or
// none of its collectives has a message size and a duration.
[[nodiscard]] core::Result<CollectiveBandwidth> collectiveBandwidth(const core::store::TraceStore& store,
                                                                    core::store::RunId run,
                                                                    const CollectiveBandwidthOptions& options = {});

// A fit of one op's measured calls on one kind of link (groups inside one
// node, or across nodes): time = latency + size x bus factor / busbw, least
// squares over the calls of the runs (docs/cost-model.md "Calibration of
// collectives"). A calibration stores it as `{op}_{intra|inter}_node_busbw_gbps`
// and `..._latency_us`, and the planner then prices that op on that link with it.
struct CollectiveLinkFit {
  std::string op;  // all_reduce | all_to_all
  bool inter_node = false;
  std::size_t calls = 0;
  double busbw_gbps = 0.0;
  double latency_us = 0.0;
  double busbw_std_error_gbps = 0.0;
  double latency_std_error_us = 0.0;
  double mape = 0.0;                                    // of the fitted times, fraction
  double model_mape = -1.0;                             // the default model's on the same calls (< 0: not comparable)
  [[nodiscard]] std::string coefficientPrefix() const;  // "all_reduce_inter_node"
};

// Fits every (op, link) with at least 3 calls of 3 or more sizes in the runs
// (calls whose group the planner prices, on the device it prices for). A fit
// whose latency exceeds the fastest call or whose MAPE exceeds 50 % is left
// out; `warnings` gets what was left out and why, and each op fitted on one
// link only.
[[nodiscard]] core::Result<std::vector<CollectiveLinkFit>> fitCollectives(const core::store::TraceStore& store,
                                                                          std::span<const core::store::RunId> runs,
                                                                          const RunInputs* supplied,
                                                                          std::vector<std::string>* warnings);

}  // namespace shardscope::profiler
