#include "shardscope/profiler/cuda/cuda_engine.h"

#include <barrier>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cuda_rank.h"
#include "cupti_spans.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/engine/host_info.h"

namespace shardscope::profiler::cuda {

namespace {

// What the rank threads share: the first error, the communicators to abort
// on it, and the per-step decision to stop (taken once, at the barrier).
struct Shared {
  std::mutex mu;
  std::optional<core::Error> error;
  std::vector<ncclComm_t> comms;  // every rank's, for the abort
  bool aborted = false;
  bool stop = false;
  std::atomic<bool> failed{false};

  void fail(const core::Error& e) {
    std::lock_guard lock(mu);
    if (!error) error = e;
    failed = true;
    if (!aborted) {
      for (ncclComm_t c : comms) ncclCommAbort(c);  // peers blocked in a collective return instead of hanging
      aborted = true;
    }
  }
};

struct Plan2D {
  std::uint32_t N = 0, M = 0, R = 0, B = 0;
  std::uint32_t probe = 0, total = 0;
  std::uint64_t budget = 0;
  std::vector<int> devices;
  std::vector<std::vector<RankShard>> group_shards;
  std::vector<CappedShard> capped;
};

core::Result<Plan2D> prepare(const core::ModelSpec& model, const core::ShardPlan& plan, const CudaProfileOptions& o) {
  Plan2D p;
  p.N = plan.world_size;
  p.M = plan.sharding_group_size;
  p.R = plan.replicas;
  p.B = o.batch_size_override.value_or(model.batch_size_per_gpu);
  if (o.steps == 0) return core::Error{"cuda: at least one measured step is needed", core::ErrorKind::Usage};
  auto gpus = queryGpuDevices();
  if (!gpus) return gpus.error();
  if (gpus->empty())
    return core::Error{"cuda: no GPU is visible to this process (CUDA reports no device or no driver)",
                       core::ErrorKind::Io};
  p.devices = o.devices;
  if (p.devices.empty()) {
    p.devices.resize(p.N);
    std::iota(p.devices.begin(), p.devices.end(), 0);
  }
  if (p.devices.size() != p.N || gpus->size() < p.N) {
    std::ostringstream m;
    m << "cuda: the plan has " << p.N << " ranks but this machine has " << gpus->size()
      << " GPU(s); in one process every rank needs its own GPU: plan for this machine "
         "(`shardscope-cli devices --cluster-out F` writes it as a cluster) or run one process per GPU "
         "across nodes (`profile --mode mpi --device cuda`)";
    return core::Error{m.str(), core::ErrorKind::InvalidInput};
  }
  for (int d : p.devices)
    if (d < 0 || static_cast<std::size_t>(d) >= gpus->size())
      return core::Error{"cuda: no GPU " + std::to_string(d), core::ErrorKind::InvalidInput};
  p.budget = o.memory_budget_bytes;
  if (p.budget == 0) {
    std::uint64_t free_min = UINT64_MAX;
    for (int d : p.devices) free_min = std::min(free_min, (*gpus)[static_cast<std::size_t>(d)].free_memory_bytes);
    p.budget = free_min / 10 * 6;
  }
  p.probe = o.cupti ? o.overhead_probe_steps : 0;
  p.total = o.warmup + p.probe + o.steps;
  for (std::uint32_t i = 0; i < p.M; ++i) {
    auto shards = shardsOfRank(model, plan, i);
    if (!shards) return shards.error();
    applyMemoryBudget(*shards, model, p.budget);
    for (const RankShard& rs : *shards)
      if (rs.capped())
        p.capped.push_back({model.tables[rs.table].name, i, rs.shard.row_offset, rs.shard.col_offset, rs.shard.rows,
                            rs.physical_rows});
    p.group_shards.push_back(std::move(*shards));
  }
  return p;
}

EngineRunConfig runConfig(const core::ShardPlan& plan, const CudaProfileOptions& o, const Plan2D& p,
                          const std::string& host) {
  EngineRunConfig c;
  c.mode = "cuda";
  c.device = "cuda";
  c.steps = o.steps;
  c.warmup = o.warmup;
  c.seed = o.seed;
  c.threads = p.N;
  c.batch_size_per_gpu = p.B;
  c.sync_interval = o.sync_interval;
  c.learning_rate = o.adagrad.learning_rate;
  c.eps = o.adagrad.eps;
  c.tracing = o.trace_spans;
  c.sharding_group_size = p.M;
  c.replicas = p.R;
  c.groups_measured = p.R;
  c.ranks_measured.resize(p.N);
  std::iota(c.ranks_measured.begin(), c.ranks_measured.end(), 0u);
  c.world_size = plan.world_size;
  c.memory_budget_bytes = p.budget;
  c.capped = p.capped;
  c.host = host;
  c.cpu = cpuName();
  if (auto gpus = queryGpuDevices())
    for (int d : p.devices)
      c.gpus.push_back(static_cast<std::size_t>(d) < gpus->size()
                           ? (*gpus)[static_cast<std::size_t>(d)].name + " (GPU " + std::to_string(d) + ")"
                           : "GPU " + std::to_string(d));
  return c;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

core::Result<CudaProfileResult> runCudaProfile(const core::ModelSpec& model, const core::ClusterSpec& cluster,
                                               const core::ShardPlan& plan, const CudaProfileOptions& options,
                                               const std::filesystem::path& store) {
  auto prepared = prepare(model, plan, options);
  if (!prepared) return prepared.error();
  const Plan2D& p = *prepared;
  auto id = newNcclId();
  if (!id) return id.error();
  const std::string host = hostName();
  EngineRunConfig config = runConfig(plan, options, p, host);

  core::store::RunHeader header;
  header.kind = core::store::RunKind::Cuda;
  if (options.label.empty()) {
    std::ostringstream l;
    l << "cuda " << model.name << " M=" << p.M << " R=" << p.R;
    header.label = l.str();
  } else {
    header.label = options.label;
  }
  header.model_json = core::toJson(model).dump();
  header.cluster_json = core::toJson(cluster).dump();
  header.plan_json = core::toJson(plan).dump();
  header.config_json = engineRunConfigJson(config);
  auto begun = core::store::RunWriter::begin(store, header);
  if (!begun) return begun.error();
  core::store::RunWriter writer = std::move(*begun);
  CudaProfileResult result;
  result.run = writer.run();
  const auto failRun = [&writer](const core::Error& e) -> core::Error {
    (void)writer.fail(e.message);
    return e;
  };

  const WorkloadGenerator workload(model, options.seed);
  Shared shared;
  CuptiSession cupti;  // started at the barrier after the probe steps
  std::vector<std::unique_ptr<CudaRank>> ranks(p.N);
  std::vector<std::vector<double>> probe_ms(p.N), step_ms(p.N);
  std::uint32_t step_done = 0;
  const std::uint64_t total = p.total;
  auto on_step = [&]() noexcept {
    ++step_done;
    const std::int64_t measured = static_cast<std::int64_t>(step_done) - options.warmup - p.probe - 1;
    if (options.on_step && measured >= 0 && !shared.failed)
      for (std::uint32_t r = 0; r < p.N; ++r)
        if (ranks[r]) options.on_step(r, measured, ranks[r]->lastStepMs());
    if (options.progress) {
      const std::uint32_t s = step_done;
      std::ostringstream what;
      what << (s <= options.warmup             ? "warm-up"
               : s <= options.warmup + p.probe ? "untraced probe"
                                               : "step")
           << ' ' << s << " of " << total << " on " << p.N << " GPU(s)";
      options.progress(s, total, what.str());
    }
    if (options.cupti && step_done == options.warmup + p.probe && !shared.failed) {
      if (auto st = cupti.start(); !st) result.tracing.note = st.error().message;
    }
    if (shared.failed || (options.cancel != nullptr && options.cancel->load())) shared.stop = true;
  };
  std::barrier sync_point(static_cast<std::ptrdiff_t>(p.N), on_step);

  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const CudaRankConfig rank_config{options.seed, p.B, options.adagrad, options.trace_spans,
                                   std::max(1u, cores / std::max(1u, p.N))};
  auto body = [&](std::uint32_t r) {
    const int device = p.devices[r];
    const auto fail = [&](const core::Error& e) {
      shared.fail(e);
      if (ranks[r]) ranks[r]->grid().release();
      sync_point.arrive_and_drop();
    };
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
      return fail(cudaError("cudaSetDevice(" + std::to_string(device) + ")", e));
    auto grid = NcclGrid::create(*id, plan, r);
    if (!grid) return fail(grid.error());
    {
      std::lock_guard lock(shared.mu);
      shared.comms.insert(shared.comms.end(), {grid->world(), grid->sharding(), grid->replica()});
    }
    const std::uint32_t group_rank = grid->groupRank();
    ranks[r] = std::make_unique<CudaRank>(model, plan, p.group_shards, std::move(*grid), device, rank_config, workload);
    (void)group_rank;
    if (auto st = ranks[r]->setup(host); !st) return fail(st.error());
    if (options.cupti) ranks[r]->setHooks(cupti.hooks());
    for (std::uint32_t s = 0; s < p.total; ++s) {
      const std::int64_t measured =
          s >= options.warmup + p.probe ? static_cast<std::int64_t>(s - options.warmup - p.probe) : -1;
      if (measured == 0) ranks[r]->resetCounters();
      const bool sync = measured >= 0 && (static_cast<std::uint32_t>(measured) + 1) % options.sync_interval == 0;
      if (auto st = ranks[r]->step(s, measured, sync); !st) return fail(st.error());
      if (measured >= 0)
        step_ms[r].push_back(ranks[r]->lastStepMs());
      else if (s >= options.warmup)
        probe_ms[r].push_back(ranks[r]->lastStepMs());
      sync_point.arrive_and_wait();
      if (shared.stop) break;
    }
    ranks[r]->writeTableStats();
  };
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < p.N; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();

  if (shared.error) {
    if (shared.aborted)
      for (auto& rank : ranks)
        if (rank) rank->grid().release();
    return failRun(*shared.error);
  }
  if (options.cancel != nullptr && options.cancel->load() && step_done < p.total) {
    (void)writer.fail("cancelled");
    result.cancelled = true;
    return result;
  }
  // Per step, the slowest rank; the tracer's figures; every rank's records.
  for (std::uint32_t s = 0; s < options.steps; ++s) {
    double worst = 0;
    for (const auto& v : step_ms) worst = std::max(worst, s < v.size() ? v[s] : 0.0);
    result.step_ms.push_back(worst);
  }
  std::vector<double> probe_worst;
  for (std::uint32_t s = 0; s < p.probe; ++s) {
    double worst = 0;
    for (const auto& v : probe_ms) worst = std::max(worst, s < v.size() ? v[s] : 0.0);
    probe_worst.push_back(worst);
  }
  TraceRecorder merged(options.trace_spans);
  for (auto& rank : ranks) merged.merge(rank->recorder());
  if (options.cupti) {
    std::vector<int> rank_of_device;
    for (std::uint32_t r = 0; r < p.N; ++r) {
      const auto d = static_cast<std::size_t>(p.devices[r]);
      if (rank_of_device.size() <= d) rank_of_device.resize(d + 1, -1);
      rank_of_device[d] = static_cast<int>(r);
    }
    if (auto st = cupti.finish(merged, rank_of_device, result.tracing); !st) return failRun(st.error());
    if (!probe_worst.empty()) {
      result.tracing.untraced_step_ms = mean(probe_worst);
      result.tracing.traced_step_ms = mean(result.step_ms);
      result.tracing.overhead_pct = (*result.tracing.traced_step_ms / *result.tracing.untraced_step_ms - 1.0) * 100.0;
    }
  }
  if (auto st = merged.flush(writer); !st) return failRun(st.error());
  if (auto st = storeTableAccess(
          writer, workload, model,
          {SampleRange{firstSampleOf(options.warmup + p.probe, p.N, 0, p.B), options.steps * p.N * p.B}});
      !st)
    return failRun(st.error());
  config.gpu_tracing = result.tracing;
  nlohmann::json final_config = nlohmann::json::parse(engineRunConfigJson(config));
  final_config["started"] = nlohmann::json::parse(header.config_json).value("started", "");
  if (auto st = writer.setConfig(final_config.dump()); !st) return failRun(st.error());
  if (auto st = writer.finish(); !st) return st.error();
  return result;
}

}  // namespace shardscope::profiler::cuda
