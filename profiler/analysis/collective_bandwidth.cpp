// Bus bandwidth per collective call against the planner's alpha-beta model
// of its op and group; definitions in docs/analysis.md ("Collectives page").
#include "shardscope/profiler/analysis/collective_bandwidth.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include "shardscope/core/rank_layout.h"
#include "shardscope/core/summary.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/profiler/trace/run_device.h"
#include "analysis_common.h"

namespace shardscope::profiler {

namespace st = core::store;

namespace {

using namespace analysis_detail;

constexpr int kSamplesPerOctave = 4;
constexpr double kKiB = 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The grid's process groups as sorted rank lists.
struct RunGroups {
  std::vector<std::vector<int>> sharding, replica;
  std::vector<int> world;
};

std::vector<int> sortedRanks(const std::vector<std::uint32_t>& group) {
  std::vector<int> out(group.begin(), group.end());
  std::sort(out.begin(), out.end());
  return out;
}

// "0,2,4,6" -> {0, 2, 4, 6} (sorted); empty for text that is not such a list.
std::vector<int> parseRanks(std::string_view text) {
  std::vector<int> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    int r = 0;
    const auto [next, ec] = std::from_chars(p, end, r);
    if (ec != std::errc{} || r < 0) return {};
    out.push_back(r);
    p = next;
    if (p < end && *p++ != ',') return {};
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Groups from the plan; else, for an engine run, from its ranks table (an
// import's table holds one placeholder group). The world: the plan's ranks,
// else every rank the table or the rows name.
RunGroups groupsOf(const RunInputs& in, const std::vector<st::RankInfo>& infos, bool imported,
                   const std::vector<st::Collective>& rows) {
  RunGroups g;
  if (in.plan) {
    for (const auto& s : in.plan->sharding_groups) g.sharding.push_back(sortedRanks(s));
    for (const auto& r : in.plan->replica_groups) g.replica.push_back(sortedRanks(r));
    for (std::uint32_t r = 0; r < in.plan->world_size; ++r) g.world.push_back(static_cast<int>(r));
    return g;
  }
  std::map<int, std::vector<int>> sharding, replica;
  for (const auto& info : infos) {
    g.world.push_back(info.rank);
    if (imported) continue;
    if (info.sharding_group >= 0) sharding[info.sharding_group].push_back(info.rank);
    if (info.replica_group >= 0) replica[info.replica_group].push_back(info.rank);
  }
  if (g.world.empty())
    for (const auto& c : rows) g.world.push_back(c.rank);
  std::sort(g.world.begin(), g.world.end());
  g.world.erase(std::unique(g.world.begin(), g.world.end()), g.world.end());
  for (auto& [id, ranks] : sharding) g.sharding.push_back(std::move(ranks));
  for (auto& [id, ranks] : replica) g.replica.push_back(std::move(ranks));
  for (auto* list : {&g.sharding, &g.replica})
    for (auto& ranks : *list) std::sort(ranks.begin(), ranks.end());
  return g;
}

// "sharding", "replica" or "world", alone or followed by a separator (an
// NCCL import names a communicator "sharding:0x..." when two share the name).
std::optional<CollectiveGroup> groupFromName(std::string_view name) {
  const std::string lower = core::asciiLower(name);
  for (const auto g : {CollectiveGroup::Sharding, CollectiveGroup::Replica, CollectiveGroup::World}) {
    const std::string_view prefix = toString(g);
    if (!lower.starts_with(prefix)) continue;
    if (lower.size() == prefix.size()) return g;
    const char next = lower[prefix.size()];
    if (!(std::isalnum(static_cast<unsigned char>(next)) || next == '_')) return g;
  }
  return std::nullopt;
}

// The process group's name decides; else its rank list compared with the
// grid's groups; else (a trace without rank lists) the group of the call's
// size that holds every rank that recorded it. A list that is two kinds of
// group at once (M = N, or M = 1): an all-to-all's is the sharding group, any
// other op's the world.
CollectiveGroup classify(std::string_view op, std::string_view name, const std::vector<int>& ranks,
                         const std::vector<int>& members, int size, const RunGroups& groups) {
  if (auto g = groupFromName(name)) return *g;
  const auto matches = [&](const std::vector<int>& group) {
    if (!ranks.empty()) return group == ranks;
    return static_cast<int>(group.size()) == size &&
           std::includes(group.begin(), group.end(), members.begin(), members.end());
  };
  const bool sharding = std::any_of(groups.sharding.begin(), groups.sharding.end(), matches);
  const bool replica = std::any_of(groups.replica.begin(), groups.replica.end(), matches);
  const bool world = !groups.world.empty() && matches(groups.world);
  if (sharding && (op == "all_to_all" || !world)) return CollectiveGroup::Sharding;
  if (world) return CollectiveGroup::World;
  if (replica) return CollectiveGroup::Replica;
  return CollectiveGroup::Other;
}

// Every call of the rows with a size and a duration, paired by callKeys.
std::vector<CallBandwidth> pairCalls(const std::vector<st::Collective>& rows, const st::StringTable& strings,
                                     const RunGroups& groups, std::size_t& skipped) {
  struct Acc {
    std::int64_t shortest = std::numeric_limits<std::int64_t>::max();
    std::int64_t last_start = std::numeric_limits<std::int64_t>::min();
    CallBandwidth call;
  };
  const std::vector<CallKey> keys = callKeys(rows);
  std::map<CallKey, Acc> calls;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const st::Collective& c = rows[i];
    if (c.end_ns <= c.start_ns || c.bytes <= 0) {
      ++skipped;
      continue;
    }
    auto [it, fresh] = calls.try_emplace(keys[i]);
    Acc& a = it->second;
    CallBandwidth& call = a.call;
    if (fresh) {
      call.op = std::string(strings.at(c.op));
      call.process_group = std::string(strings.at(c.process_group));
      call.ranks = std::string(strings.at(c.group));
      call.step = c.step;
      call.seq = c.seq;
    }
    a.shortest = std::min(a.shortest, c.end_ns - c.start_ns);
    call.size_bytes = std::max(call.size_bytes, collectiveSizeBytes(call.op, static_cast<double>(c.bytes)));
    call.group_size = std::max(call.group_size, c.peers + 1);
    call.members.push_back(c.rank);
    if (c.start_ns > a.last_start) {
      a.last_start = c.start_ns;
      call.slowest_rank = c.rank;
    }
  }
  std::vector<CallBandwidth> out;
  out.reserve(calls.size());
  for (auto& [key, a] : calls) {
    CallBandwidth& call = a.call;
    std::sort(call.members.begin(), call.members.end());
    if (call.members.size() < 2) call.slowest_rank = -1;
    call.transfer_ms = static_cast<double>(a.shortest) / kNsPerMs;
    call.busbw_gbps = call.size_bytes / static_cast<double>(a.shortest) * busBandwidthFactor(call.op, call.group_size);
    call.group = classify(call.op, call.process_group, parseRanks(call.ranks), call.members, call.group_size, groups);
    out.push_back(std::move(call));
  }
  std::stable_sort(out.begin(), out.end(), [](const CallBandwidth& a, const CallBandwidth& b) {
    return std::tie(a.op, a.group, a.size_bytes) < std::tie(b.op, b.group, b.size_bytes);
  });
  return out;
}

// The grid the planner priced the run with: the plan's; else, for an engine
// run, the one whose sharding groups are its ranks table's.
std::optional<planner::Grid> gridOf(const RunInputs& in, const RunGroups& groups, bool imported, std::string& why) {
  if (!in.plan && (imported || groups.sharding.empty())) {
    why = imported ? "an imported run has no plan: the grid (sharding group size and layout) is unknown"
                   : "the run has no plan, and its ranks table names no sharding groups";
    return std::nullopt;
  }
  if (!in.cluster) {
    why = "the run has no cluster (link bandwidths and latencies)";
    return std::nullopt;
  }
  const std::uint32_t cluster_gpn = std::max<std::uint32_t>(1, in.cluster->gpus_per_node);
  if (in.plan) {
    const core::ShardPlan& p = *in.plan;
    if (p.sharding_group_size == 0 || p.world_size == 0 || p.world_size % p.sharding_group_size != 0) {
      why = "the plan's sharding group size " + std::to_string(p.sharding_group_size) + " does not divide its " +
            "world size " + std::to_string(p.world_size);
      return std::nullopt;
    }
    return planner::makeGrid(p.world_size, p.gpus_per_node ? p.gpus_per_node : cluster_gpn, p.sharding_group_size,
                             p.layout);
  }
  why = "the run has no plan, and its ranks table's sharding groups are not those of a grid";
  const auto n = static_cast<std::uint32_t>(groups.world.size());
  const auto m = static_cast<std::uint32_t>(groups.sharding.front().size());
  if (m == 0 || n % m != 0 || groups.world.back() != static_cast<int>(n) - 1) return std::nullopt;
  auto sorted = groups.sharding;
  std::sort(sorted.begin(), sorted.end());
  for (const auto layout : {core::RankLayout::Strided, core::RankLayout::Contiguous}) {
    std::vector<std::vector<int>> want;
    for (const auto& g : core::shardingGroups(n, m, layout)) want.push_back(sortedRanks(g));
    std::sort(want.begin(), want.end());
    if (want == sorted) return planner::makeGrid(n, cluster_gpn, m, layout);
  }
  return std::nullopt;
}

std::string linkText(double intra_fraction) {
  if (intra_fraction >= 1.0) return "intra-node";
  if (intra_fraction <= 0.0) return "inter-node";
  return "intra- and inter-node (" + fmt(intra_fraction * 100.0, 0) + "% of peers on the node)";
}

// The planner's price of one call of `op` in `group` (docs/cost-model.md):
// the sharding group's all-to-all and replica sync as CostModel::gridCosts
// prices them, the data-parallel tables' gradient all-reduce as
// dataParallelCost, the dense all-reduce over every rank as gridCosts.
// nullopt: the planner prices no such call.
std::optional<CollectivePriceModel> plannerPrice(std::string_view op, CollectiveGroup group, const planner::Grid& grid,
                                                 const core::ClusterSpec& cluster, const planner::CostConstants& k) {
  CollectivePriceModel m;
  m.constants = k;
  m.gpus_per_node = cluster.gpus_per_node;
  m.device = cluster.gpu.device;
  if (op == "all_to_all" && group == CollectiveGroup::Sharding && grid.group_size > 1) {
    m.op = planner::CollectiveOp::AllToAll;
    m.shape = planner::shapeOf(grid.worstShardingTopology(), grid.group_size);
    m.bytes_scale = 2.0 / planner::allToAllDuplex(m.device);  // the planner charges sent + received
    return m;
  }
  if (op != "all_reduce") return std::nullopt;
  if (group == CollectiveGroup::Sharding && grid.group_size > 1) {
    m.shape = planner::shapeOf(grid.worstShardingTopology(), grid.group_size);
    return m;
  }
  if (group == CollectiveGroup::Replica && grid.replicas > 1) {
    m.shape = planner::shapeOf(grid.worstReplicaTopology(), grid.replicas);
    return m;
  }
  if (group == CollectiveGroup::World && grid.world_size > 1) {
    m.shape = planner::worldShape(grid);
    return m;
  }
  return std::nullopt;
}

// What the curve is and which link it runs over, beside the planner's price.
std::pair<std::string, std::string> curveLabels(std::string_view op, CollectiveGroup group, const planner::Grid& grid) {
  if (op == "all_to_all")
    return {"each of a step's three all-to-alls in the sharding group",
            linkText(grid.worstShardingTopology().intra_node_peer_fraction)};
  if (group == CollectiveGroup::Sharding)
    return {"the data-parallel tables' gradient all-reduce in the sharding group",
            grid.worstShardingTopology().intra_node_peer_fraction >= 1.0 ? "intra-node" : "inter-node"};
  if (group == CollectiveGroup::Replica)
    return {"the replica weight sync", grid.replicaSyncIntraNode() ? "intra-node" : "inter-node"};
  return {"the dense all-reduce over every rank", grid.world_size <= grid.gpus_per_node ? "intra-node" : "inter-node"};
}

int groupSizeIn(CollectiveGroup group, const planner::Grid& grid) {
  switch (group) {
    case CollectiveGroup::Sharding:
      return static_cast<int>(grid.group_size);
    case CollectiveGroup::Replica:
      return static_cast<int>(grid.replicas);
    case CollectiveGroup::World:
      return static_cast<int>(grid.world_size);
    case CollectiveGroup::Other:
      break;
  }
  return 0;
}

bool sameLinks(const planner::CostConstants& a, const planner::CostConstants& b) {
  return a.intra_node_bandwidth_gbps == b.intra_node_bandwidth_gbps &&
         a.intra_node_latency_us == b.intra_node_latency_us &&
         a.inter_node_bandwidth_gbps == b.inter_node_bandwidth_gbps &&
         a.inter_node_latency_us == b.inter_node_latency_us && a.all_reduce_intra_fit == b.all_reduce_intra_fit &&
         a.all_reduce_inter_fit == b.all_reduce_inter_fit && a.all_to_all_intra_fit == b.all_to_all_intra_fit &&
         a.all_to_all_inter_fit == b.all_to_all_inter_fit;
}

// Series per (op, group), a curve for each the planner prices, every call's
// model bus bandwidth and ratio, and the outliers.
void modelCalls(CollectiveBandwidth& out, const std::optional<planner::Grid>& grid, const RunInputs& in,
                const CollectiveBandwidthOptions& options) {
  std::optional<planner::CostConstants> defaults, calibrated;
  if (grid) {
    defaults = planner::CostConstants::from(*in.cluster, nullptr);
    if (options.calibration) calibrated = planner::CostConstants::from(*in.cluster, options.calibration);
    if (calibrated && sameLinks(*defaults, *calibrated))
      out.notes.push_back(
          "the calibration carries no link constants or collective fits (intra-/inter-node bandwidth and latency, "
          "per-op bus bandwidth): "
          "its curves are the default ones");
  }
  for (std::size_t i = 0; i < out.calls.size(); ++i) {
    const CallBandwidth& c = out.calls[i];
    if (out.series.empty() || out.series.back().op != c.op || out.series.back().group != c.group) {
      out.series.push_back({c.op, c.group, {}, -1});
      std::optional<CollectivePriceModel> price;
      if (grid) price = plannerPrice(c.op, c.group, *grid, *in.cluster, *defaults);
      if (price) {
        CollectiveModelCurve curve;
        curve.op = c.op;
        curve.group = c.group;
        curve.group_size = groupSizeIn(c.group, *grid);
        std::tie(curve.priced_as, curve.link) = curveLabels(c.op, c.group, *grid);
        curve.model = *price;
        if (calibrated) curve.calibrated = plannerPrice(c.op, c.group, *grid, *in.cluster, *calibrated);
        out.series.back().curve = static_cast<int>(out.curves.size());
        out.curves.push_back(std::move(curve));
      } else if (grid) {
        out.notes.push_back("no model for " + c.op + " in the " + std::string(toString(c.group)) +
                            " group: the planner does not price it");
      }
    }
    out.series.back().calls.push_back(i);
  }
}

// Sizes of the curves: whole octaves covering 1 KiB..1 GiB and every call.
void sampleCurves(CollectiveBandwidth& out) {
  double lo = kKiB, hi = kGiB;
  for (const auto& c : out.calls) {
    lo = std::min(lo, std::exp2(std::floor(std::log2(c.size_bytes))));
    hi = std::max(hi, std::exp2(std::ceil(std::log2(c.size_bytes))));
  }
  out.size_lo = lo;
  out.size_hi = hi;
  const int samples = static_cast<int>(std::lround(std::log2(hi / lo))) * kSamplesPerOctave;
  for (auto& curve : out.curves) {
    for (int i = 0; i <= samples; ++i) {
      const double size = lo * std::exp2(static_cast<double>(i) / kSamplesPerOctave);
      curve.sizes.push_back(size);
      curve.busbw_gbps.push_back(modelBusBandwidthGbps(curve.model, curve.op, curve.group_size, size));
      if (curve.calibrated)
        curve.calibrated_busbw_gbps.push_back(
            modelBusBandwidthGbps(*curve.calibrated, curve.op, curve.group_size, size));
    }
  }
}

// Across devices the model says nothing about a call: a call is compared with
// the run's own calls of its series and a similar size (half to twice it).
void findOutliersInRun(CollectiveBandwidth& out) {
  for (const auto& s : out.series) {
    for (const std::size_t i : s.calls) {
      CallBandwidth& c = out.calls[i];
      std::vector<double> similar;
      for (const std::size_t j : s.calls) {
        const CallBandwidth& o = out.calls[j];
        if (o.size_bytes >= c.size_bytes / 2 && o.size_bytes <= c.size_bytes * 2) similar.push_back(o.busbw_gbps);
      }
      const double reference = similar.size() >= 3 ? median(std::move(similar)) : -1.0;
      if (reference <= 0) continue;
      c.ratio = c.busbw_gbps / reference;
      if (c.ratio < out.outlier_fraction) out.outliers.push_back(i);
    }
  }
}

void findOutliers(CollectiveBandwidth& out) {
  if (!out.devices.absolute) {
    findOutliersInRun(out);
  }
  for (const auto& s : out.series) {
    if (s.curve < 0 || !out.devices.absolute) continue;
    const CollectiveModelCurve& curve = out.curves[static_cast<std::size_t>(s.curve)];
    for (const std::size_t i : s.calls) {
      CallBandwidth& c = out.calls[i];
      c.model_busbw_gbps = modelBusBandwidthGbps(curve.model, c.op, curve.group_size, c.size_bytes);
      if (curve.calibrated)
        c.calibrated_busbw_gbps = modelBusBandwidthGbps(*curve.calibrated, c.op, curve.group_size, c.size_bytes);
      const double reference = curve.calibrated ? c.calibrated_busbw_gbps : c.model_busbw_gbps;
      if (reference <= 0) continue;
      c.ratio = c.busbw_gbps / reference;
      if (c.ratio < out.outlier_fraction) out.outliers.push_back(i);
    }
  }
  std::stable_sort(out.outliers.begin(), out.outliers.end(), [&](std::size_t a, std::size_t b) {
    const CallBandwidth &x = out.calls[a], &y = out.calls[b];
    return std::tie(x.ratio, x.step, x.seq) < std::tie(y.ratio, y.step, y.seq);
  });
}

// Why a run has no collectives, for the message that says so.
std::string whyNoCollectives(const st::RunRecord& run, const RunInputs& in) {
  const std::string mode = in.config.mode.empty() ? run.kind_text : in.config.mode;
  if (mode == "emulate") return "an emulate run runs none (profile with MPI or on GPUs)";
  if (isImportedRun(run)) return "the trace has no NCCL kernels (one GPU, or recorded without CUDA activity)";
  return "the run was made without tracing (--no-trace) or on one rank";
}

}  // namespace

std::string_view toString(CollectiveGroup group) {
  switch (group) {
    case CollectiveGroup::Sharding:
      return "sharding";
    case CollectiveGroup::Replica:
      return "replica";
    case CollectiveGroup::World:
      return "world";
    case CollectiveGroup::Other:
      break;
  }
  return "other";
}

planner::CollectivePrice CollectivePriceModel::at(double size_bytes) const {
  const planner::CollectivePricer pricer(constants, gpus_per_node, device);
  planner::CollectivePrice p = pricer.price(op, shape, size_bytes);
  p.ms_per_byte *= bytes_scale;
  return p;
}

double modelBusBandwidthGbps(const CollectivePriceModel& model, std::string_view op, int ranks, double size_bytes) {
  const double ms = model.timeMs(size_bytes);
  if (!(ms > 0)) return -1.0;
  return size_bytes / (ms * kNsPerMs) * busBandwidthFactor(op, ranks);  // bytes per ns = GB/s
}

core::Result<CollectiveBandwidth> collectiveBandwidth(const st::TraceStore& store, st::RunId id,
                                                      const CollectiveBandwidthOptions& options) {
  const std::string name = runName(store, id);
  auto record = store.run(id);
  if (!record) return record.error();
  CollectiveBandwidth out;
  out.run = std::move(record).value();
  out.store = store.path().string();
  out.outlier_fraction = options.outlier_fraction;
  if (options.calibration) out.calibration = options.calibration->source;
  const RunInputs in = runInputs(out.run, options.supplied);
  const bool imported = isImportedRun(out.run);

  auto rows = store.collectives(id);
  if (!rows) return rows.error();
  if (rows->empty()) return core::Error{name + " has no collectives: " + whyNoCollectives(out.run, in)};
  auto infos = store.ranks(id);
  if (!infos) return infos.error();
  auto strings = store.strings();
  if (!strings) return strings.error();

  const RunGroups groups = groupsOf(in, *infos, imported, *rows);
  std::size_t skipped = 0;
  out.calls = pairCalls(*rows, *strings, groups, skipped);
  if (out.calls.empty())
    return core::Error{name + ": none of its " + std::to_string(rows->size()) +
                       " collectives has a message size and a duration (the trace has no NCCL message arguments)"};
  if (skipped > 0)
    out.notes.push_back(std::to_string(skipped) + " of " + std::to_string(rows->size()) +
                        " collective rows have no message size or duration: left out");

  std::string why;
  const std::optional<planner::Grid> grid = gridOf(in, groups, imported, why);
  if (grid) {
    std::ostringstream g;
    g << "M=" << grid->group_size << " R=" << grid->replicas << " " << core::toString(grid->layout) << ", "
      << grid->gpus_per_node << " GPUs per node";
    out.grid = g.str();
  } else {
    out.notes.push_back("no model curves: " + why);
  }
  // Like for like: curves priced for another device are not drawn beside this run's calls.
  out.devices.absolute = true;
  if (grid && in.cluster) {
    // The default curves are priced for the cluster's GPU (a calibration's device is checked when it is applied).
    out.devices = core::compareDevices(runDevice(in.config), *in.cluster, nullptr);
    if (!out.devices.absolute) out.notes.push_back("no model curves: " + out.devices.reason);
  }
  modelCalls(out, out.devices.absolute ? grid : std::nullopt, in, options);
  sampleCurves(out);
  findOutliers(out);
  return out;
}

}  // namespace shardscope::profiler
