// The calibration fit's samples: per shard (engine runs) or per rank
// (imported runs), measured times beside the cost model's byte counts.
#include <algorithm>
#include <cmath>
#include <cstdio>
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

namespace shardscope::profiler {

namespace st = core::store;
using namespace analysis_detail;
using namespace calibration_detail;

namespace {

// The cost model's byte counts of one shard (docs/cost-model.md, "One
// shard") from its lookups k and unique rows U, and its price with the
// default constants. Needs rows, cols, row_offset, samples_per_step, k, U.
void priceShard(ShardSample& s, const core::TableSpec& t, const core::ModelSpec& model,
                const planner::CostConstants& defaults) {
  const double k = s.lookups_per_step, u = s.unique_rows_per_step, c = s.cols;
  const double dtype = core::dtypeBytes(t.dtype);
  const double row_bytes = std::max<double>(c, 32.0) * dtype;
  const double state_row_bytes = static_cast<double>(planner::stateBytesOf(t, model.optimizer, 1, s.cols)) - c * dtype;
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

namespace {

// emb_fwd / emb_bwd span time per (rank, table): per step, then the median
// over steps (times the step count, so that "/ n_steps" gives it). Spans
// that do not give every measured step its own value fall back to the mean.
core::Result<std::map<std::pair<int, std::string>, std::pair<double, double>>> embeddingSpanNs(
    const st::TraceStore& store, st::RunId id, const st::StringTable& strings,
    std::map<int, std::set<std::int64_t>>& steps) {
  auto spans =
      store.spansInWindow(id, {}, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  if (!spans) return spans.error();
  std::map<std::pair<int, std::string>, std::map<std::int64_t, std::pair<double, double>>> per_step_ns;
  for (const auto& s : *spans) {
    const std::string_view kind = strings.at(s.kind);
    const bool fwd = kind == span_kind::kEmbFwd;
    if (!fwd && kind != span_kind::kEmbBwd) continue;
    auto& v = per_step_ns[{s.rank, std::string(strings.at(s.table))}][s.step];
    (fwd ? v.first : v.second) += static_cast<double>(s.end_ns - s.start_ns);
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
  return span_ns;
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

  auto span_ns = embeddingSpanNs(store, id, *strings, steps);
  if (!span_ns) return span_ns.error();

  std::set<std::pair<std::string, int>> capped;
  for (const CappedShard& c : config.capped) capped.insert({c.table, static_cast<int>(c.group_rank)});

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
      const auto sp_it = span_ns->find({rank, placement.name});
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
        s.unique_rows_per_step = static_cast<double>(st_it->second.unique_rows) / n_steps;
        s.measured_ms = static_cast<double>(st_it->second.time_ns) / n_steps / kNsPerMs;
      }
      if (sp_it != span_ns->end()) {
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
    per_rank[sm.rank].first.push_back(static_cast<double>(sm.emb_fwd_ns) / kNsPerMs);
    per_rank[sm.rank].second.push_back(static_cast<double>(sm.emb_bwd_ns) / kNsPerMs);
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
      const planner::ShardCost c = dp ? cm.dataParallelCost(mt->second, grid, gc)
                                      : cm.shardCost(mt->second, sh.row_offset, sh.rows, sh.cols, grid, gc);
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

}  // namespace shardscope::profiler
