#include "shardscope/profiler/cuda/cuda_engine.h"

#include <barrier>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>

#include "cuda_rank.h"
#include "cupti_spans.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/time_text.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/engine/host_info.h"

namespace shardscope::profiler::cuda {

namespace {

// What the rank threads share: the first error, and the per-step decision to
// stop (taken once, at the barrier). A failed rank sets `failed`; every other
// rank sees it while waiting on its stream and aborts its own communicators
// (NCCL allows aborting a communicator only from the thread that uses it).
struct Shared {
  std::mutex mu;
  std::optional<core::Error> error;
  bool stop = false;
  std::atomic<bool> failed{false};

  void fail(const core::Error& e) {
    std::lock_guard lock(mu);
    if (!error) error = e;
    failed = true;
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
    p.group_shards.push_back(std::move(*shards));
  }
  equalizeDataParallelRows(p.group_shards);
  for (std::uint32_t i = 0; i < p.M; ++i)
    for (const RankShard& rs : p.group_shards[i])
      if (rs.capped())
        p.capped.push_back({model.tables[rs.table].name, i, rs.shard.row_offset, rs.shard.col_offset, rs.shard.rows,
                            rs.physical_rows});
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
  c.learning_rate = static_cast<double>(o.adagrad.learning_rate);
  c.eps = static_cast<double>(o.adagrad.eps);
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

// One run's ranks: a thread per GPU, a barrier after every step (where the
// ranks agree to stop, progress is told and the tracer starts), then the
// records of every rank.
class GpuRun {
 public:
  GpuRun(const core::ModelSpec& model, const core::ShardPlan& plan, const CudaProfileOptions& options, const Plan2D& p,
         const ncclUniqueId& id, std::string host)
      : model_(model),
        plan_(plan),
        o_(options),
        p_(p),
        id_(id),
        host_(std::move(host)),
        workload_(model, options.seed),
        ranks_(p.N),
        probe_ms_(p.N),
        step_ms_(p.N) {}

  // Runs every rank to its end (or the first failure, or a cancel).
  void run() {
    auto on_step = [this]() noexcept { stepDone(); };
    std::barrier sync_point(static_cast<std::ptrdiff_t>(p_.N), on_step);
    if (o_.cupti && o_.warmup + p_.probe == 0) {  // no untraced step: trace from the first
      if (auto st = cupti_.start(); !st) cupti_note_ = st.error().message;
    }
    std::vector<std::thread> threads;
    for (std::uint32_t r = 0; r < p_.N; ++r) threads.emplace_back([this, r, &sync_point] { rankBody(r, sync_point); });
    for (std::thread& t : threads) t.join();
  }

  [[nodiscard]] const std::optional<core::Error>& error() const { return shared_.error; }
  [[nodiscard]] bool cancelled() const { return o_.cancel != nullptr && o_.cancel->load() && steps_done_ < p_.total; }
  [[nodiscard]] const WorkloadGenerator& workload() const { return workload_; }

  // Every rank's records (and CUPTI's) in one recorder; the per-step figures into `result`.
  [[nodiscard]] core::Status collect(TraceRecorder& merged, CudaProfileResult& result) {
    result.step_ms = slowestPerStep(step_ms_, o_.steps);
    const std::vector<double> probe = slowestPerStep(probe_ms_, p_.probe);
    for (auto& rank : ranks_) merged.merge(rank->recorder());
    if (!o_.cupti) return core::Ok{};
    std::vector<int> rank_of_device;
    for (std::uint32_t r = 0; r < p_.N; ++r) {
      const auto d = static_cast<std::size_t>(p_.devices[r]);
      if (rank_of_device.size() <= d) rank_of_device.resize(d + 1, -1);
      rank_of_device[d] = static_cast<int>(r);
    }
    GpuTracing& t = result.tracing;
    if (!cupti_note_.empty()) t.note = cupti_note_;
    if (auto st = cupti_.finish(merged, rank_of_device, t); !st) return st;
    if (t.cupti && !probe.empty()) {
      t.untraced_step_ms = mean(probe);
      t.traced_step_ms = mean(result.step_ms);
      t.overhead_pct = (*t.traced_step_ms / *t.untraced_step_ms - 1.0) * 100.0;
    }
    return core::Ok{};
  }

 private:
  static std::vector<double> slowestPerStep(const std::vector<std::vector<double>>& per_rank, std::uint32_t steps) {
    std::vector<double> out;
    for (std::uint32_t s = 0; s < steps; ++s) {
      double worst = 0;
      for (const auto& v : per_rank) worst = std::max(worst, s < v.size() ? v[s] : 0.0);
      out.push_back(worst);
    }
    return out;
  }

  // At the barrier, on one thread while the others wait (their GPUs idle).
  void stepDone() noexcept {
    const std::uint32_t s = ++steps_done_;
    const std::int64_t measured = static_cast<std::int64_t>(s) - o_.warmup - p_.probe - 1;
    if (o_.on_step && measured >= 0 && !shared_.failed)
      for (std::uint32_t r = 0; r < p_.N; ++r)
        if (ranks_[r]) o_.on_step(r, measured, ranks_[r]->lastStepMs());
    if (o_.progress) {
      std::ostringstream what;
      what << (s <= o_.warmup              ? "warm-up"
               : s <= o_.warmup + p_.probe ? "untraced probe"
                                           : "step")
           << ' ' << s << " of " << p_.total << " on " << p_.N << " GPU(s)";
      o_.progress(s, p_.total, what.str());
    }
    if (o_.cupti && s == o_.warmup + p_.probe && !shared_.failed) {
      if (auto st = cupti_.start(); !st) cupti_note_ = st.error().message;
    }
    if (shared_.failed || (o_.cancel != nullptr && o_.cancel->load())) shared_.stop = true;
  }

  template <typename Barrier>
  void rankBody(std::uint32_t r, Barrier& sync_point) {
    const int device = p_.devices[r];
    const auto fail = [&](const core::Error& e) {
      shared_.fail(e);
      if (ranks_[r]) ranks_[r]->grid().abort();  // peers waiting for this rank's kernels must not hang
      sync_point.arrive_and_drop();
    };
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
      return fail(cudaError("cudaSetDevice(" + std::to_string(device) + ")", e));
    auto grid = NcclGrid::create(id_, plan_, r);
    if (!grid) return fail(grid.error());
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const CudaRankConfig config{
        o_.seed, p_.B, o_.adagrad, o_.trace_spans, std::max(1u, cores / std::max(1u, p_.N)), &shared_.failed};
    ranks_[r] = std::make_unique<CudaRank>(model_, plan_, p_.group_shards, std::move(*grid), device, config, workload_);
    if (auto st = ranks_[r]->setup(host_); !st) return fail(st.error());
    if (o_.cupti) ranks_[r]->setHooks(cupti_.hooks());
    for (std::uint32_t s = 0; s < p_.total; ++s) {
      const std::int64_t measured =
          s >= o_.warmup + p_.probe ? static_cast<std::int64_t>(s - o_.warmup - p_.probe) : -1;
      if (measured == 0) ranks_[r]->resetCounters();
      // As the MPI engine: one sync at the end of the warm-up (measuring starts from agreeing replicas);
      // the probe steps keep the measured steps' schedule, so that their times compare.
      const std::uint32_t k = o_.sync_interval;
      bool sync = false;
      if (s + 1 == o_.warmup)
        sync = true;
      else if (measured >= 0)
        sync = (static_cast<std::uint32_t>(measured) + 1) % k == 0;
      else if (s >= o_.warmup)
        sync = (s - o_.warmup + 1) % k == 0;
      if (auto st = ranks_[r]->step(s, measured, sync); !st) return fail(st.error());
      if (measured >= 0)
        step_ms_[r].push_back(ranks_[r]->lastStepMs());
      else if (s >= o_.warmup)
        probe_ms_[r].push_back(ranks_[r]->lastStepMs());
      sync_point.arrive_and_wait();
      if (shared_.stop) break;
    }
    ranks_[r]->writeTableStats();
  }

  const core::ModelSpec& model_;
  const core::ShardPlan& plan_;
  const CudaProfileOptions& o_;
  const Plan2D& p_;
  ncclUniqueId id_;
  std::string host_;
  const WorkloadGenerator workload_;
  Shared shared_;
  CuptiSession cupti_;  // started at the barrier after the probe steps
  std::string cupti_note_;
  std::vector<std::unique_ptr<CudaRank>> ranks_;
  std::vector<std::vector<double>> probe_ms_, step_ms_;
  std::uint32_t steps_done_ = 0;
};

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
  config.started = core::utcNowIso8601();  // kept when the configuration is written again at the end

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

  GpuRun run(model, plan, options, p, *id, host);
  run.run();
  if (run.error()) return failRun(*run.error());
  if (run.cancelled()) {
    (void)writer.fail("cancelled");
    result.cancelled = true;
    return result;
  }
  TraceRecorder merged(options.trace_spans);
  if (auto st = run.collect(merged, result); !st) return failRun(st.error());
  if (auto st = merged.flush(writer); !st) return failRun(st.error());
  const SampleRange measured{firstSampleOf(options.warmup + p.probe, p.N, 0, p.B), options.steps * p.N * p.B};
  if (auto st = storeTableAccess(writer, run.workload(), model, {measured}); !st) return failRun(st.error());
  // The tracer's figures are known only now: the configuration is written again, its start time kept.
  config.gpu_tracing = result.tracing;
  if (auto st = writer.setConfig(engineRunConfigJson(config)); !st) return failRun(st.error());
  if (auto st = writer.finish(); !st) return st.error();
  return result;
}

}  // namespace shardscope::profiler::cuda
