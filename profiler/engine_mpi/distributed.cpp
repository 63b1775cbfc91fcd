// The distributed engine: one MPI process per rank of a plan. Rank 0 reads
// the inputs and broadcasts them, every rank builds its communicators and
// shards, runs warm-up and measured steps (docs/engine-distributed.md has the
// step and the message layouts), and at the end rank 0 collects every rank's
// trace, aligns the clocks and writes one run.
#include "shardscope/profiler/engine_mpi/distributed.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <variant>

#include "distributed_inputs.h"
#include "mpi_util.h"
#include "rank_engine.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#ifdef SHARDSCOPE_GPU_ENGINE
#include "shardscope/profiler/cuda/cuda_rank_stepper.h"
#include "shardscope/profiler/cuda/nccl_comms.h"
#endif
#include "shardscope/profiler/engine/host_info.h"
#include "shardscope/profiler/trace/engine_run_config.h"

namespace shardscope::profiler {

namespace {

using namespace mpi_util;
using mpi_engine::broadcastInputs;
using mpi_engine::Inputs;
using mpi_engine::RankEngine;

constexpr int kTagClock = 0x5301;
constexpr int kClockRounds = 16;

std::vector<std::int64_t> clockOffsets(MPI_Comm world) {
  const int n = sizeOf(world), me = rankOf(world);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(n), 0);
  MPI_Barrier(world);
  if (me == 0) {
    for (int peer = 1; peer < n; ++peer) {
      std::int64_t best_rtt = INT64_MAX, offset = 0;
      for (int round = 0; round < kClockRounds; ++round) {
        const std::int64_t t0 = traceNowNs();
        MPI_Send(&t0, 1, MPI_INT64_T, peer, kTagClock, world);
        std::int64_t theirs = 0;
        MPI_Recv(&theirs, 1, MPI_INT64_T, peer, kTagClock, world, MPI_STATUS_IGNORE);
        const std::int64_t t1 = traceNowNs();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          offset = theirs - (t0 + (t1 - t0) / 2);
        }
      }
      offsets[static_cast<std::size_t>(peer)] = offset;
    }
  } else {
    for (int round = 0; round < kClockRounds; ++round) {
      std::int64_t t = 0;
      MPI_Recv(&t, 1, MPI_INT64_T, 0, kTagClock, world, MPI_STATUS_IGNORE);
      t = traceNowNs();
      MPI_Send(&t, 1, MPI_INT64_T, 0, kTagClock, world);
    }
  }
  return offsets;
}

std::string configJson(const Inputs& in, const DistributedConfig& c, std::uint32_t batch, unsigned threads,
                       std::uint64_t budget, const std::vector<std::vector<RankShard>>& group_shards,
                       const std::vector<std::string>& hosts) {
  EngineRunConfig r;
  r.mode = "mpi";
  if (c.device == "cuda") r.device = "cuda";
  r.steps = c.steps;
  r.warmup = c.warmup;
  r.seed = c.seed;
  r.threads = threads;
  r.batch_size_per_gpu = batch;
  r.sync_interval = c.sync_interval;
  r.learning_rate = static_cast<double>(c.learning_rate);
  r.eps = static_cast<double>(AdagradConfig{}.eps);
  r.tracing = c.tracing;
  r.sharding_group_size = in.plan.sharding_group_size;
  r.replicas = in.plan.replicas;
  r.groups_measured = in.plan.replicas;
  r.ranks_measured.resize(in.plan.world_size);
  for (std::uint32_t i = 0; i < in.plan.world_size; ++i) r.ranks_measured[i] = i;
  r.world_size = in.plan.world_size;
  r.memory_budget_bytes = budget;
  for (std::size_t g = 0; g < group_shards.size(); ++g)
    for (const RankShard& s : group_shards[g])
      if (s.capped())
        r.capped.push_back({in.model.tables[s.table].name, static_cast<std::uint32_t>(g), s.shard.row_offset,
                            s.shard.col_offset, s.shard.rows, s.physical_rows});
  r.host = hosts.empty() ? std::string() : hosts.front();
  r.hosts = hosts;
  r.cpu = cpuName();
  return engineRunConfigJson(r);
}

// Ranks sharing this node (for the default thread count and memory budget).
int ranksOnNode(MPI_Comm world) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rankOf(world), MPI_INFO_NULL, &node);
  const int n = node == MPI_COMM_NULL ? 1 : sizeOf(node);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return std::max(1, n);
}

// Every rank's host name, on every rank.
std::vector<std::string> allHosts(MPI_Comm world, const std::string& mine) {
  constexpr int kLen = 256;
  std::vector<char> all(static_cast<std::size_t>(sizeOf(world)) * kLen, '\0');
  char buf[kLen] = {};
  std::strncpy(buf, mine.c_str(), kLen - 1);
  MPI_Allgather(buf, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, world);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < all.size(); i += kLen) out.emplace_back(all.data() + i);
  return out;
}

core::Error invalid(std::string message) { return core::Error{std::move(message), core::ErrorKind::InvalidInput}; }
core::Error failed(std::string message) { return core::Error{std::move(message), core::ErrorKind::Io}; }

// 60% of the free memory of the smallest GPU this process sees; 0 (no cap) when none answers.
unsigned long long gpuBudgetBytes() {
  auto gpus = queryGpuDevices();
  if (!gpus || gpus->empty()) return 0;
  std::uint64_t least = UINT64_MAX;
  for (const GpuDevice& g : *gpus) least = std::min(least, g.free_memory_bytes);
  return least / 10 * 6;
}

// What every rank agreed on before the first step.
struct Prepared {
  Inputs in;
  std::uint32_t batch = 0;
  unsigned threads = 0;
  unsigned long long budget = 0;
  GridComms comms;
  std::vector<std::vector<RankShard>> group_shards;  // per group rank, capped to the budget
};

// Inputs, threads, the memory budget every rank agrees on (so the copies a
// replica group averages have the same rows), communicators and shards.
std::variant<Prepared, core::Error> prepare(MPI_Comm world, const DistributedConfig& config) {
  const int n = sizeOf(world);
  if (config.steps == 0) return invalid("--steps: expected at least 1 measured step");
  if (config.sync_interval == 0) return invalid("--sync-interval: expected at least 1");

  auto inputs = broadcastInputs(world, config);
  if (!inputs) return invalid(inputs.error().message);
  Prepared p;
  p.in = std::move(inputs).value();
  const Inputs& in = p.in;
  if (in.plan.world_size != static_cast<std::uint32_t>(n)) {
    std::ostringstream m;
    m << in.plan_source << ": the plan is for world_size " << in.plan.world_size
      << " ranks (M=" << in.plan.sharding_group_size << " x R=" << in.plan.replicas << ") but MPI started " << n
      << " processes; launch with mpirun -np " << in.plan.world_size;
    return invalid(m.str());
  }
  p.batch = config.batch > 0 ? config.batch : in.model.batch_size_per_gpu;
  if (p.batch == 0) return invalid("--batch: expected at least 1 sample per rank");

  const int local_ranks = ranksOnNode(world);
  p.threads = config.threads > 0
                  ? config.threads
                  : std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(local_ranks));
  p.budget = config.memory_budget_bytes > 0 ? config.memory_budget_bytes
             : config.device == "cuda"      ? gpuBudgetBytes()
                                            : autoMemoryBudgetBytes() / static_cast<unsigned>(local_ranks);
  MPI_Allreduce(MPI_IN_PLACE, &p.budget, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, world);

  auto comms = makeGridComms(world, in.plan);
  if (!comms) return invalid(in.plan_source + ": " + comms.error().message);
  p.comms = std::move(comms).value();
  for (std::uint32_t g = 0; g < in.plan.sharding_group_size; ++g) {
    auto shards = shardsOfRank(in.model, in.plan, g);
    // The same on every rank: the plan is shared.
    if (!shards) return invalid(in.plan_source + ": " + shards.error().message);
    applyMemoryBudget(*shards, in.model, p.budget);
    p.group_shards.push_back(std::move(shards).value());
  }
  equalizeDataParallelRows(p.group_shards);
  return p;
}

// Rank 0 begins the run before the first step, so a watcher sees it running;
// every rank learns its id (or the error).
std::variant<long long, core::Error> beginRun(MPI_Comm world, const DistributedConfig& config, const Prepared& p,
                                              const std::vector<std::string>& hosts,
                                              std::optional<core::store::RunWriter>& writer, std::ostream& out) {
  std::string begin_error;
  long long run_id = 0;
  if (rankOf(world) == 0) {
    const Inputs& in = p.in;
    core::store::RunHeader header;
    header.kind = config.device == "cuda" ? core::store::RunKind::Cuda : core::store::RunKind::Mpi;
    if (config.label.empty()) {
      std::ostringstream l;
      l << "mpi " << in.model.name << " M=" << in.plan.sharding_group_size << " R=" << in.plan.replicas;
      header.label = l.str();
    } else {
      header.label = config.label;
    }
    header.model_json = in.model_json;
    header.cluster_json = in.cluster_json;
    header.plan_json = in.plan_json;
    header.config_json = configJson(in, config, p.batch, p.threads, p.budget, p.group_shards, hosts);
    auto w = core::store::RunWriter::begin(config.store, header);
    if (w) {
      writer.emplace(std::move(w).value());
      run_id = static_cast<long long>(writer->run());
      out << "run " << run_id << std::endl;
    } else {
      begin_error = w.error().message;
    }
  }
  bcastString(world, begin_error, 0);
  if (!begin_error.empty()) return failed(begin_error);
  MPI_Bcast(&run_id, 1, MPI_LONG_LONG, 0, world);
  return run_id;
}

// With --progress: every rank's time of measured step `measured`, gathered on
// rank 0 (after the step, outside what is traced) and printed as
// "step <measured> <ms of rank 0> ...", the live per-rank step times launchers show.
void reportStepTimes(MPI_Comm world, std::int64_t measured, double step_ms, std::ostream& out) {
  const int rank = rankOf(world);
  int n = 0;
  MPI_Comm_size(world, &n);
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(n) : 0);
  MPI_Gather(&step_ms, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, world);
  if (rank != 0) return;
  out << "step " << measured;
  for (double ms : all) out << ' ' << ms;
  out << '\n';
}

// The warm-up and measured steps; the ranks agree at every boundary whether
// to go on. True when cancelled. A rank that throws aborts the job.
bool runSteps(MPI_Comm world, const DistributedConfig& config, RankStepper& engine,
              std::optional<core::store::RunWriter>& writer, const std::atomic<bool>& cancel, std::ostream& out) {
  const int rank = rankOf(world);
  const std::uint64_t total = std::uint64_t{config.warmup} + config.steps;
  bool cancelled = false;
  std::uint64_t measured_done = 0;
  for (std::uint64_t s = 0; s < total; ++s) {
    int stop = cancel.load() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, world);
    if (stop != 0) {
      cancelled = true;
      break;
    }
    const bool warm = s < config.warmup;
    const std::int64_t measured = warm ? -1 : static_cast<std::int64_t>(s - config.warmup);
    // Warm-up syncs once at its end (the sync path gets warmed, measuring starts
    // from agreeing replicas); measured step i syncs when (i + 1) % K == 0.
    const bool sync = warm ? s + 1 == config.warmup : (measured + 1) % config.sync_interval == 0;
    const std::int64_t step_start = traceNowNs();
    try {
      if (!warm && measured == 0) engine.resetCounters();
      engine.step(s, measured, sync);
    } catch (const std::bad_alloc&) {
      std::cerr << "rank " << rank << ": step " << s << ": out of memory; aborting the job\n";
      if (writer) (void)writer->fail("rank 0: out of memory");
      MPI_Abort(world, 3);
    } catch (const std::exception& e) {
      std::cerr << "rank " << rank << ": step " << s << ": " << e.what() << "; aborting the job\n";
      if (writer) (void)writer->fail(std::string("rank 0: ") + e.what());
      MPI_Abort(world, 3);
    }
    if (!warm) ++measured_done;
    if (config.progress && !warm)
      reportStepTimes(world, measured, static_cast<double>(traceNowNs() - step_start) / 1e6, out);
    if (rank == 0 && config.progress) out << "progress " << (s + 1) << ' ' << total << std::endl;
  }
  if (measured_done > 0) engine.writeTableStats();
  return cancelled;
}

// Clocks aligned to rank 0's, then every rank's rows into rank 0's writer and
// every rank's summary into `ranks_json` (rank 0). The first error, on rank 0.
std::string collectRun(MPI_Comm world, RankStepper& engine, std::optional<core::store::RunWriter>& writer,
                       nlohmann::ordered_json& ranks_json) {
  const int n = sizeOf(world);
  const std::vector<std::int64_t> offsets = clockOffsets(world);
  nlohmann::ordered_json summary_json = engine.summary();
  std::string flush_error;
  if (rankOf(world) != 0) {
    const std::vector<std::byte> bytes = engine.recorder().serialize();
    const std::string summary_text = summary_json.dump();
    sendBytes(world, bytes.data(), bytes.size(), 0);
    sendBytes(world, summary_text.data(), summary_text.size(), 0);
    return flush_error;
  }
  if (auto f = engine.recorder().flush(*writer); !f) flush_error = f.error().message;
  ranks_json.push_back(std::move(summary_json));
  for (int peer = 1; peer < n; ++peer) {
    const std::vector<std::byte> bytes = recvBytes(world, peer);
    const std::vector<std::byte> summary = recvBytes(world, peer);
    const std::string peer_name = "rank " + std::to_string(peer);
    auto peer_summary = core::parseOrderedJsonText(
        std::string_view(reinterpret_cast<const char*>(summary.data()), summary.size()), peer_name + "'s summary");
    if (peer_summary)
      ranks_json.push_back(std::move(peer_summary).value());
    else if (flush_error.empty())
      flush_error = peer_summary.error().message;
    auto rec = TraceRecorder::deserialize(bytes);
    if (!rec) {
      if (flush_error.empty())
        flush_error = std::string("rank ") += std::to_string(peer) + "'s trace: " + rec.error().message;
      continue;
    }
    rec->shift(-offsets[static_cast<std::size_t>(peer)]);
    if (auto f = rec->flush(*writer); !f && flush_error.empty()) flush_error = f.error().message;
  }
  return flush_error;
}

// Rank 0: what every rank looked up per table over the measured steps (the
// world's samples of each step are one contiguous range); "" or the error.
std::string writeTableAccess(const DistributedConfig& config, const Prepared& p, const RankStepper& engine,
                             core::store::RunWriter& writer) {
  const std::uint32_t n = p.in.plan.world_size;
  std::vector<SampleRange> ranges;
  for (std::uint32_t k = config.warmup; k < config.warmup + config.steps; ++k)
    ranges.push_back({firstSampleOf(k, n, 0, p.batch), n * p.batch});
  auto stored = storeTableAccess(writer, engine.workload(), p.in.model, ranges);
  return stored ? std::string() : stored.error().message;
}

// Rank 0: marks the run complete or failed and writes the summary file.
core::Status finishRun(MPI_Comm world, const DistributedConfig& config, const Prepared& p, long long run_id,
                       core::store::RunWriter& writer, const std::string& flush_error, bool cancelled,
                       nlohmann::ordered_json ranks_json) {
  core::Status outcome = core::Ok{};
  if (!flush_error.empty()) {
    outcome = failed("writing the run: " + flush_error);
    (void)writer.fail(outcome.error().message);
  } else if (cancelled) {
    std::string message = "cancelled";
    if (auto f = writer.fail("cancelled"); !f) message += " (and marking the run failed: " + f.error().message + ")";
    outcome = core::Error{std::move(message), core::ErrorKind::Cancelled};
  } else if (auto f = writer.finish(); !f) {
    outcome = failed("finishing the run: " + f.error().message);
  }
  if (config.summary_json.empty()) return outcome;
  const Inputs& in = p.in;
  nlohmann::ordered_json j;
  j["schema"] = "shardscope.engine-summary/1";
  j["run"] = run_id;
  j["status"] = outcome ? "complete" : outcome.error().kind == core::ErrorKind::Cancelled ? "cancelled" : "failed";
  j["world_size"] = sizeOf(world);
  j["sharding_group_size"] = in.plan.sharding_group_size;
  j["replicas"] = in.plan.replicas;
  j["layout"] = core::toString(in.plan.layout);
  j["steps"] = config.steps;
  j["warmup"] = config.warmup;
  j["sync_interval"] = config.sync_interval;
  j["batch_size_per_gpu"] = p.batch;
  j["ranks"] = std::move(ranks_json);
  if (auto w = core::writeJsonFile(config.summary_json, j); !w && outcome) outcome = failed(w.error().message);
  return outcome;
}

// The GPU backend of this process: its rank on the node picks the GPU, rank
// 0's NCCL id reaches every rank over MPI (MPI is only the bootstrap).
core::Result<std::unique_ptr<RankStepper>> makeGpuStepper(MPI_Comm world, const DistributedConfig& config,
                                                          const Prepared& p, const std::string& host) {
#ifdef SHARDSCOPE_GPU_ENGINE
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rankOf(world), MPI_INFO_NULL, &node);
  const int local = node == MPI_COMM_NULL ? 0 : rankOf(node);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  auto gpus = queryGpuDevices();
  std::string error;
  if (!gpus)
    error = gpus.error().message;
  else if (static_cast<std::size_t>(local) >= gpus->size())
    error = "rank " + std::to_string(local) + " on " + host + " has no GPU of its own (" +
            std::to_string(gpus->size()) + " visible): start one process per GPU";
  ncclUniqueId id{};
  if (rankOf(world) == 0 && error.empty()) {
    auto made = cuda::newNcclId();
    if (made)
      id = *made;
    else
      error = made.error().message;
  }
  error = agreeOnError(world, error);
  if (!error.empty()) return core::Error{error, core::ErrorKind::Io};
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world);
  cuda::GpuStepperOptions o;
  o.seed = config.seed;
  o.batch = p.batch;
  o.adagrad.learning_rate = config.learning_rate;
  o.tracing = config.tracing;
  o.cupti = config.cupti && config.tracing;
  o.input_threads = p.threads;
  return cuda::makeCudaRankStepper(p.in.model, p.in.plan, p.group_shards, id, static_cast<std::uint32_t>(rankOf(world)),
                                   local, o, host);
#else
  (void)world;
  (void)config;
  (void)p;
  (void)host;
  return core::Error{
      "--device cuda: this engine was built without the GPU backend (CUDA, NCCL and CUPTI are needed "
      "at configure time: docs/engine-cuda.md#building)",
      core::ErrorKind::Usage};
#endif
}

}  // namespace

core::Result<DistributedRun> runDistributed(MPI_Comm world, const DistributedConfig& config,
                                            const std::atomic<bool>& cancel, std::ostream& out) {
  const int rank = rankOf(world);
  auto prepared = prepare(world, config);
  if (auto* error = std::get_if<core::Error>(&prepared)) return std::move(*error);
  Prepared& p = std::get<Prepared>(prepared);

  const std::string host = hostName();
  const std::vector<std::string> hosts = allHosts(world, host);
  std::unique_ptr<RankStepper> engine;
  std::string error;
  try {
    if (config.device == "cuda") {
      auto made = makeGpuStepper(world, config, p, host);
      if (made)
        engine = std::move(*made);
      else
        error = std::string("rank ") += std::to_string(rank) + ": " + made.error().message;
    } else {
      auto cpu = std::make_unique<RankEngine>(p.in, config, world, std::move(p.comms), p.group_shards, p.batch,
                                              p.threads, config.tracing);
      cpu->setup(host);
      engine = std::move(cpu);
    }
  } catch (const std::bad_alloc&) {
    error = std::string("rank ") += std::to_string(rank) + ": out of memory allocating shards and buffers (budget " +
                                    std::to_string(p.budget) + " bytes per process)";
  } catch (const std::exception& e) {
    error = std::string("rank ") += std::to_string(rank) + ": " + e.what();
  }
  error = agreeOnError(world, error);
  if (!error.empty()) return failed(error);

  std::optional<core::store::RunWriter> writer;
  auto begun = beginRun(world, config, p, hosts, writer, out);
  if (auto* begin_error = std::get_if<core::Error>(&begun)) return std::move(*begin_error);
  const long long run_id = std::get<long long>(begun);

  const bool cancelled = runSteps(world, config, *engine, writer, cancel, out);
  nlohmann::ordered_json ranks_json = nlohmann::ordered_json::array();
  const std::string flush_error = collectRun(world, *engine, writer, ranks_json);

  // Every rank returns rank 0's outcome: -1 for success, else the error's kind, and its message.
  core::Status outcome = core::Ok{};
  std::string access_error = flush_error;
  if (rank == 0 && !cancelled && access_error.empty()) access_error = writeTableAccess(config, p, *engine, *writer);
  if (rank == 0) outcome = finishRun(world, config, p, run_id, *writer, access_error, cancelled, std::move(ranks_json));
  int kind = outcome ? -1 : static_cast<int>(outcome.error().kind);
  std::string message = outcome ? std::string() : outcome.error().message;
  MPI_Bcast(&kind, 1, MPI_INT, 0, world);
  bcastString(world, message, 0);
  if (kind >= 0) return core::Error{std::move(message), static_cast<core::ErrorKind>(kind)};
  return DistributedRun{run_id};
}

}  // namespace shardscope::profiler