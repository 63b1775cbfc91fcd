// Emulate mode: every measured rank of a plan, one after another in this
// process, with its own shards, its own ids and the CPU kernels; the times
// land in a trace-store run. There are no collectives: what a rank would wait
// for in a real run is left to the analysis, which compares ranks' loads.
#include "shardscope/profiler/engine/emulate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <new>
#include <sstream>

#include <nlohmann/json.hpp>

#include "shardscope/core/hash.h"
#include "shardscope/core/json_io.h"
#include "shardscope/profiler/trace/engine_run_config.h"
#include "shardscope/core/time_text.h"
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/profiler/trace/trace_recorder.h"
#include "shardscope/profiler/engine/shard_inputs.h"
#include "shardscope/profiler/engine/thread_pool.h"

namespace shardscope::profiler {

namespace {

// Most ids one sample can carry for table t: the pooling's upper end, or the
// longest sample of a replayed trace.
std::uint64_t maxIdsPerSample(const core::ModelSpec& model, std::size_t t, const IdTrace* replay) {
  if (replay != nullptr) {
    if (t >= replay->tables.size() || replay->tables[t].lengths.empty()) return 0;
    const auto& l = replay->tables[t].lengths;
    return *std::max_element(l.begin(), l.end());
  }
  const core::PoolingSpec& p = model.tables[t].pooling;
  const double spread = p.kind == core::PoolingKind::Uniform ? p.spread : 0.0;
  return static_cast<std::uint64_t>(std::max(0.0, std::ceil(p.mean + spread)));
}

// Upper bound on a rank's per-step buffers besides its shards: the largest
// table's generated batch, every shard's routed bags (row-split shards of a
// table share its ids; each column piece sees them all), the forward output
// and the synthetic gradient, and the backward workspace of the largest shard.
std::uint64_t scratchBytes(const std::vector<RankShard>& shards, const core::ModelSpec& model, const IdTrace* replay,
                           std::uint64_t group_samples, std::uint64_t own_samples) {
  std::uint64_t batch = 0, bags = 0, workspace = 0, max_cols = 0;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const RankShard& s = shards[i];
    const std::uint64_t samples = s.dataParallel() ? own_samples : group_samples;
    const std::uint64_t ids = samples * maxIdsPerSample(model, s.table, replay);
    batch = std::max(batch, ids * 8 + samples * 4);
    bool first_piece = true;  // the first shard of this table and column range on this rank
    for (std::size_t j = 0; j < i; ++j) {
      if (shards[j].placement == s.placement && shards[j].shard.col_offset == s.shard.col_offset) first_piece = false;
    }
    bags += (first_piece ? ids * 4 : 0) + (samples + 1) * 4;
    const std::uint64_t unique = std::min(ids, s.shard.rows);
    workspace = std::max(workspace, ids * 16 + unique * 4 + unique * s.shard.cols * 4);
    max_cols = std::max<std::uint64_t>(max_cols, s.shard.cols);
  }
  return batch + bags + workspace + 2 * group_samples * max_cols * 4;
}

std::uint64_t stateBytes(const std::vector<RankShard>& shards, const core::ModelSpec& model) {
  std::uint64_t total = 0;
  for (const RankShard& s : shards) total += shardStateBytes(s, model);
  return total;
}

// What one group rank holds, the same in every sharding group.
struct GroupRankSetup {
  std::vector<RankShard> shards;
  std::uint64_t scratch_bytes = 0;
  std::uint64_t state_bytes = 0;
};

core::Status checkInputs(const core::ModelSpec& model, const core::ClusterSpec& cluster, const core::ShardPlan& plan,
                         const EmulateOptions& options, std::uint32_t batch_size) {
  std::ostringstream m;
  const std::uint32_t M = plan.sharding_group_size, R = plan.replicas;
  if (options.steps == 0)
    m << "emulate: steps must be at least 1";
  else if (batch_size == 0)
    m << "emulate: the batch size per GPU must be at least 1";
  else if (M == 0 || R == 0)
    m << "plan: grid " << M << " x " << R << " is empty";
  else if (plan.sharding_groups.size() != R)
    m << "plan: " << plan.sharding_groups.size() << " sharding groups, expected R = " << R;
  else if (cluster.worldSize() != 0 && plan.world_size != cluster.worldSize())
    m << "plan: world size " << plan.world_size << " does not match the cluster \"" << cluster.name << "\" ("
      << cluster.worldSize() << " GPUs)";
  else if (std::uint64_t{M} * batch_size > 0xFFFFFFFFULL)
    m << "emulate: a sharding group's batch (" << M << " x " << batch_size << " samples) exceeds 2^32 - 1";
  else if (options.replay != nullptr && options.replay->tables.size() != model.tables.size())
    m << "emulate: the replayed id trace has " << options.replay->tables.size() << " tables, the model has "
      << model.tables.size();
  else {
    for (std::size_t g = 0; g < plan.sharding_groups.size(); ++g) {
      if (plan.sharding_groups[g].size() != M) {
        m << "plan: sharding group " << g << " has " << plan.sharding_groups[g].size() << " ranks, expected M = " << M;
        break;
      }
    }
  }
  if (m.tellp() > 0) return core::Error{m.str()};
  return core::Ok{};
}

// Deterministic gradients in [-0.01, 0.01): the update's cost does not depend
// on the values, but they must be finite and the same in every run.
void fillGradient(std::vector<float>& grad, std::uint64_t seed) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
  for (float& g : grad) {
    z += core::kGoldenGamma;
    const std::uint64_t x = core::mix64(z);
    g = (static_cast<float>(x >> 40) * 0x1.0p-24f - 0.5f) * 0.02f;
  }
}

struct ShardRun {
  RankShard rs;
  EmbeddingShard weights;
  ShardBags bags;
  std::uint32_t name = 0;                                             // recorder string: the table's name
  std::int64_t fwd_ns = 0, bwd_ns = 0, lookups = 0, unique_rows = 0;  // measured steps only
};

struct RankOutcome {
  EmulateRankResult result;
  TraceRecorder recorder;
  bool cancelled = false;
  std::int64_t first_step_ns = 0;  // start of measured step 0
};

struct RankContext {
  const core::ModelSpec& model;
  const core::ShardPlan& plan;
  const EmulateOptions& options;
  const WorkloadGenerator& workload;
  ThreadPool& pool;
  std::uint32_t batch_size;
  std::uint64_t done = 0, total = 0;  // progress
};

// Per-step means of a rank's result and its tables, and the tables' stats into the recorder.
void meansOver(double n, std::uint32_t rank, std::uint32_t group, std::uint32_t group_rank,
               const std::vector<ShardRun>& shards, const core::ModelSpec& model, TraceRecorder& rec,
               EmulateRankResult& result) {
  result.rank = rank;
  result.group = group;
  result.group_rank = group_rank;
  result.fwd_ms /= n;
  result.bwd_ms /= n;
  result.step_ms /= n;
  for (const ShardRun& s : shards) {
    rec.tableStat(static_cast<int>(rank), s.name, s.lookups, s.unique_rows, s.fwd_ns + s.bwd_ns);
    const std::string& table = model.tables[s.rs.table].name;
    auto it = std::find_if(result.tables.begin(), result.tables.end(),
                           [&](const EmulateTableResult& t) { return t.table == table; });
    if (it == result.tables.end()) {
      result.tables.push_back({table, 0, 0, 0});
      it = result.tables.end() - 1;
    }
    it->mean_ms += static_cast<double>(s.fwd_ns + s.bwd_ns) / 1e6 / n;
    it->lookups_per_step += static_cast<double>(s.lookups) / n;
    it->unique_rows_per_step += static_cast<double>(s.unique_rows) / n;
  }
}

// "rank 3 (group 0, group rank 1): step 2 of 10" after every (rank, step).
void reportProgress(RankContext& ctx, std::uint32_t rank, std::uint32_t group, std::uint32_t group_rank,
                    std::uint32_t k) {
  const EmulateOptions& o = ctx.options;
  if (!o.progress) return;
  std::ostringstream what;
  what << "rank " << rank << " (group " << group << ", group rank " << group_rank << "): ";
  if (k >= o.warmup)
    what << "step " << (k - o.warmup + 1) << " of " << o.steps;
  else
    what << "warm-up step " << (k + 1) << " of " << o.warmup;
  o.progress(ctx.done, ctx.total, what.str());
}

RankOutcome runRank(RankContext& ctx, const GroupRankSetup& setup, std::uint32_t group, std::uint32_t group_rank,
                    const std::string& host) {
  const EmulateOptions& o = ctx.options;
  const std::uint32_t M = ctx.plan.sharding_group_size, R = ctx.plan.replicas, B = ctx.batch_size;
  const std::uint32_t rank = ctx.plan.sharding_groups[group][group_rank];
  const int trace_rank = static_cast<int>(rank);
  RankOutcome out{{}, TraceRecorder(o.trace_spans), false, 0};
  TraceRecorder& rec = out.recorder;
  rec.rankInfo({trace_rank, host, -1, static_cast<int>(group), static_cast<int>(group_rank)});
  const std::uint32_t k_step = rec.name(span_kind::kStep), k_input = rec.name(span_kind::kInput),
                      k_fwd = rec.name(span_kind::kEmbFwd), k_bwd = rec.name(span_kind::kEmbBwd);

  if (o.cancel != nullptr && o.cancel->load()) {  // before allocating, which can take a while
    out.cancelled = true;
    return out;
  }
  std::vector<ShardRun> shards;
  shards.reserve(setup.shards.size());
  std::uint64_t max_samples = 0, max_cols = 0;
  for (const RankShard& rs : setup.shards) {
    const core::TableSpec& spec = ctx.model.tables[rs.table];
    ShardRun& s = shards.emplace_back();
    s.rs = rs;
    s.weights = EmbeddingShard(rs.physical_rows, rs.shard.cols,
                               spec.dtype == core::DType::FP32 ? WeightType::F32 : WeightType::F16);
    s.weights.initialize(o.seed, rs.dataParallel() ? 0 : rs.shard.row_offset, rs.shard.col_offset);
    s.name = rec.name(spec.name);
    out.result.state_bytes += s.weights.memoryBytes();
    max_samples = std::max<std::uint64_t>(max_samples, rs.dataParallel() ? B : std::uint64_t{M} * B);
    max_cols = std::max<std::uint64_t>(max_cols, rs.shard.cols);
  }
  std::vector<float> output(max_samples * max_cols);
  std::vector<float> grad(max_samples * max_cols);
  fillGradient(grad, o.seed ^ (std::uint64_t{rank} << 32));
  BackwardWorkspace workspace;
  Batch batch;

  const std::uint32_t steps = o.warmup + o.steps;
  for (std::uint32_t k = 0; k < steps; ++k) {
    if (o.cancel != nullptr && o.cancel->load()) {
      out.cancelled = true;
      return out;
    }
    const bool measured = k >= o.warmup;
    const std::int64_t step = measured ? static_cast<std::int64_t>(k - o.warmup) : -1;
    const std::uint64_t group_first = (std::uint64_t{k} * R + group) * M * B;
    const std::uint64_t own_first = group_first + std::uint64_t{group_rank} * B;

    const std::int64_t step_start = traceNowNs();
    if (k == o.warmup) out.first_step_ns = step_start;
    // Ids: one table's batch at a time (shards of a table are adjacent, in
    // plan order), routed to each of its shards here.
    std::int64_t ids_generated = 0;
    std::size_t last_table = SIZE_MAX;
    bool last_dp = false;
    for (ShardRun& s : shards) {
      if (s.rs.table != last_table || s.rs.dataParallel() != last_dp) {
        last_table = s.rs.table;
        last_dp = s.rs.dataParallel();
        batch =
            last_dp ? ctx.workload.batch(s.rs.table, own_first, B) : ctx.workload.batch(s.rs.table, group_first, M * B);
        ids_generated += static_cast<std::int64_t>(batch.ids.size());
      }
      routeToShard(batch, s.rs, s.bags);
    }
    const std::int64_t input_end = traceNowNs();
    if (measured)
      rec.span({trace_rank, kComputeStream, k_input, k_input, 0, step_start, input_end, step, ids_generated});

    std::int64_t fwd_total = 0, bwd_total = 0;
    for (ShardRun& s : shards) {
      const std::int64_t t0 = traceNowNs();
      embeddingForward(s.weights, s.bags.view(), o.pooling, output.data(), s.rs.shard.cols, &ctx.pool);
      const std::int64_t t1 = traceNowNs();
      fwd_total += t1 - t0;
      if (measured) {
        const auto lookups = static_cast<std::int64_t>(s.bags.lookups());
        rec.span({trace_rank, kComputeStream, k_fwd, s.name, s.name, t0, t1, step, lookups});
        s.fwd_ns += t1 - t0;
        s.lookups += lookups;
      }
    }
    for (ShardRun& s : shards) {
      const std::int64_t t0 = traceNowNs();
      const BackwardStats st = embeddingBackwardAdagrad(s.weights, s.bags.view(), o.pooling, grad.data(),
                                                        s.rs.shard.cols, o.adagrad, workspace, &ctx.pool);
      const std::int64_t t1 = traceNowNs();
      bwd_total += t1 - t0;
      if (measured) {
        const auto unique = static_cast<std::int64_t>(st.unique_rows);
        rec.span({trace_rank, kComputeStream, k_bwd, s.name, s.name, t0, t1, step, unique});
        s.bwd_ns += t1 - t0;
        s.unique_rows += unique;
      }
    }
    const std::int64_t step_end = traceNowNs();
    if (measured) {
      rec.span({trace_rank, kComputeStream, k_step, k_step, 0, step_start, step_end, step, 0});
      core::store::StepSummary sum;
      sum.step = step;
      sum.rank = trace_rank;
      sum.emb_fwd_ns = fwd_total;
      sum.emb_bwd_ns = bwd_total;
      sum.total_ns = step_end - step_start;
      rec.stepSummary(sum);
      out.result.fwd_ms += static_cast<double>(fwd_total) / 1e6;
      out.result.bwd_ms += static_cast<double>(bwd_total) / 1e6;
      out.result.step_ms += static_cast<double>(step_end - step_start) / 1e6;
    }
    if (o.on_step) o.on_step({rank, step, static_cast<double>(step_end - step_start) / 1e6});
    ++ctx.done;
    reportProgress(ctx, rank, group, group_rank, k);
  }

  meansOver(o.steps, rank, group, group_rank, shards, ctx.model, rec, out.result);
  return out;
}

// What the run looked up, per table: every measured step of every measured group.
core::Status writeTableAccess(core::store::RunWriter& writer, const WorkloadGenerator& workload,
                              const core::ModelSpec& model, const EmulateOptions& options, std::uint32_t M,
                              std::uint32_t R, std::uint32_t B) {
  std::vector<SampleRange> ranges;
  for (std::uint32_t k = options.warmup; k < options.warmup + options.steps; ++k)
    for (std::uint32_t g = 0; g < (options.all_groups ? R : 1u); ++g)
      ranges.push_back({(std::uint64_t{k} * R + g) * M * B, M * B});
  return storeTableAccess(writer, workload, model, ranges);
}

std::string configJson(const core::ShardPlan& plan, const EmulateOptions& o, std::uint32_t batch_size, unsigned threads,
                       std::uint64_t budget, const std::vector<std::uint32_t>& measured,
                       const std::vector<CappedShard>& capped, const std::string& host) {
  EngineRunConfig c;
  c.mode = "emulate";
  c.steps = o.steps;
  c.warmup = o.warmup;
  c.seed = o.seed;
  c.threads = threads;
  c.batch_size_per_gpu = batch_size;
  c.pooling = o.pooling == Pooling::Sum ? "sum" : "mean";
  c.learning_rate = static_cast<double>(o.adagrad.learning_rate);
  c.eps = static_cast<double>(o.adagrad.eps);
  c.tracing = o.trace_spans;
  c.replay = o.replay != nullptr;
  c.sharding_group_size = plan.sharding_group_size;
  c.replicas = plan.replicas;
  c.sync_interval = std::max<std::uint32_t>(1, plan.sync_interval);  // what the plan assumes; emulate runs no sync
  c.groups_measured = o.all_groups ? plan.replicas : 1;
  c.ranks_measured = measured;
  c.memory_budget_bytes = budget;
  c.capped = capped;
  c.host = host;
  c.cpu = cpuName();
  return engineRunConfigJson(c);
}

}  // namespace

std::uint64_t autoMemoryBudgetBytes() {
  const std::uint64_t available = availableMemoryBytes();
  return available > 0 ? available / 10 * 6 : std::uint64_t{1} << 30;
}

core::Result<std::vector<EmulateRankMemory>> emulateRankMemory(const core::ModelSpec& model,
                                                               const core::ShardPlan& plan, std::uint32_t batch_size) {
  const std::uint32_t M = plan.sharding_group_size;
  std::vector<EmulateRankMemory> out;
  for (std::uint32_t i = 0; i < M; ++i) {
    auto shards = shardsOfRank(model, plan, i);
    if (!shards) return shards.error();
    out.push_back({i, shards->size(), stateBytes(*shards, model),
                   scratchBytes(*shards, model, nullptr, std::uint64_t{M} * batch_size, batch_size)});
  }
  return out;
}

core::Result<EmulateResult> runEmulate(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                       const core::ShardPlan& plan, const EmulateOptions& options,
                                       const std::filesystem::path& store) {
  const std::uint32_t B = options.batch_size_override.value_or(model.batch_size_per_gpu);
  if (auto st = checkInputs(model, cluster, plan, options, B); !st) return st.error();
  const std::uint32_t M = plan.sharding_group_size, R = plan.replicas;

  EmulateResult result;
  result.memory_budget_bytes = options.memory_budget_bytes != 0 ? options.memory_budget_bytes : autoMemoryBudgetBytes();
  const std::uint64_t budget = result.memory_budget_bytes;

  // Every group rank's shards and their caps, before anything is allocated.
  std::vector<GroupRankSetup> setups(M);
  for (std::uint32_t i = 0; i < M; ++i) {
    auto shards = shardsOfRank(model, plan, i);
    if (!shards) return shards.error();
    GroupRankSetup& s = setups[i];
    s.shards = std::move(*shards);
    s.scratch_bytes = scratchBytes(s.shards, model, options.replay, std::uint64_t{M} * B, B);
    if (s.scratch_bytes >= budget) {
      std::ostringstream m;
      m << "emulate: the memory budget of " << budget << " bytes does not cover group rank " << i
        << "'s per-step buffers (" << s.scratch_bytes << " bytes for " << std::uint64_t{M} * B
        << " samples); raise the budget or lower the batch size";
      return core::Error{m.str()};
    }
    applyMemoryBudget(s.shards, model, budget - s.scratch_bytes);
    s.state_bytes = stateBytes(s.shards, model);
    if (s.state_bytes + s.scratch_bytes > budget) {
      std::ostringstream m;
      m << "emulate: the memory budget of " << budget << " bytes cannot hold even one row of each of group rank " << i
        << "'s " << s.shards.size() << " shards next to its per-step buffers (" << s.scratch_bytes << " bytes)";
      return core::Error{m.str()};
    }
    for (const RankShard& rs : s.shards) {
      if (rs.capped()) {
        result.capped.push_back({model.tables[rs.table].name, i, rs.shard.row_offset, rs.shard.col_offset,
                                 rs.shard.rows, rs.physical_rows});
      }
    }
  }

  std::vector<std::pair<std::uint32_t, std::uint32_t>> order;  // (group, group rank)
  std::vector<std::uint32_t> measured;
  for (std::uint32_t g = 0; g < (options.all_groups ? R : 1u); ++g) {
    for (std::uint32_t i = 0; i < M; ++i) {
      order.emplace_back(g, i);
      measured.push_back(plan.sharding_groups[g][i]);
    }
  }

  ThreadPool pool(options.threads);
  result.threads = pool.size();
  const std::string host = hostName();

  core::store::RunHeader header;
  header.kind = core::store::RunKind::Emulate;
  if (options.label.empty()) {
    std::ostringstream l;
    l << "emulate " << model.name << " M=" << M << " R=" << R;
    header.label = l.str();
  } else {
    header.label = options.label;
  }
  header.model_json = core::toJson(model).dump();
  header.cluster_json = core::toJson(cluster).dump();
  header.plan_json = core::toJson(plan).dump();
  header.config_json = configJson(plan, options, B, result.threads, budget, measured, result.capped, host);
  auto begun = core::store::RunWriter::begin(store, header);
  if (!begun) return begun.error();
  core::store::RunWriter writer = std::move(*begun);
  result.run = writer.run();
  if (options.on_run) options.on_run(result.run);
  const auto failRun = [&writer](const std::string& reason) -> core::Error {
    (void)writer.fail(reason);
    return core::Error{reason};
  };

  std::optional<WorkloadGenerator> workload;
  try {
    if (options.replay != nullptr)
      workload.emplace(model, *options.replay);
    else
      workload.emplace(model, options.seed);
  } catch (const std::bad_alloc&) {
    return failRun("emulate: out of memory while loading the workload");
  }
  RankContext ctx{model, plan, options, *workload,
                  pool,  B,    0,       std::uint64_t{order.size()} * (std::uint64_t{options.warmup} + options.steps)};

  // Ranks ran one after another; their timelines are shifted so that every
  // rank's first measured step starts where the first rank's did, as if they
  // had run side by side.
  std::optional<std::int64_t> origin;
  for (const auto& [group, group_rank] : order) {
    std::optional<RankOutcome> outcome;
    try {
      outcome.emplace(runRank(ctx, setups[group_rank], group, group_rank, host));
    } catch (const std::bad_alloc&) {
      std::ostringstream m;
      m << "emulate: out of memory on rank " << plan.sharding_groups[group][group_rank] << " (group rank " << group_rank
        << ", " << setups[group_rank].state_bytes << " bytes of shard state under a budget of " << budget << ")";
      return failRun(m.str());
    }
    if (outcome->cancelled) {
      (void)writer.fail("cancelled");
      result.cancelled = true;
      return result;
    }
    if (!origin) origin = outcome->first_step_ns;
    outcome->recorder.shift(*origin - outcome->first_step_ns);
    if (auto st = outcome->recorder.flush(writer); !st) return failRun(st.error().message);
    if (auto st = writer.commit(); !st) return failRun(st.error().message);
    result.ranks.push_back(std::move(outcome->result));
  }
  if (auto st = writeTableAccess(writer, *workload, model, options, M, R, B); !st) return failRun(st.error().message);
  if (auto st = writer.finish(); !st) return st.error();
  return result;
}

}  // namespace shardscope::profiler
