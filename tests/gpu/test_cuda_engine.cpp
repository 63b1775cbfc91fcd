// The GPU engine end to end on this machine's GPUs (gpu label): a plan
// holding every kind of shard (row-wise, column-wise slices, table-wise,
// data-parallel) runs with NCCL communicators split from the world and
// CUPTI on, and the store gets a complete run with step summaries, phase
// spans, CUPTI's kernel spans (with correlation ids), collectives, table
// stats and the tracer's figures. One GPU runs a world of one (the NCCL
// paths with a single rank); two or more run M = 2 sharding groups.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gpu_test.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/cuda/cuda_engine.h"
#include "shardscope/profiler/engine/gpu_devices.h"

using namespace shardscope;

namespace {

core::ModelSpec model() {
  core::ModelSpec m;
  m.name = "gpu-check";
  m.batch_size_per_gpu = 512;
  m.dense.parameters = 1 << 20;
  m.dense.flops_per_sample = 2e6;
  const std::uint32_t dims[] = {64, 128, 32, 16};
  for (std::size_t t = 0; t < 4; ++t) {
    core::TableSpec s;
    s.name = "t";
    s.name += std::to_string(t);
    s.rows = 200000 + 1000 * t;
    s.dim = dims[t];
    s.dtype = t == 1 ? core::DType::FP16 : core::DType::FP32;
    s.pooling.kind = core::PoolingKind::Fixed;
    s.pooling.mean = 8;
    s.access.kind = core::AccessKind::Zipf;
    s.access.alpha = 1.05;
    m.tables.push_back(s);
  }
  return m;
}

// t0 row-wise over the group, t1 column-wise in two slices, t2 table-wise on the last group rank, t3 data-parallel.
core::ShardPlan plan(const core::ModelSpec& m, std::uint32_t world, std::uint32_t group) {
  core::ShardPlan p;
  p.model = m.name;
  p.world_size = world;
  p.gpus_per_node = world;
  p.sharding_group_size = group;
  p.replicas = world / group;
  p.target = core::PlanTarget::ShardScope;
  p.sharding_groups = core::shardingGroups(world, group, core::RankLayout::Strided);
  p.replica_groups = core::replicaGroups(world, group, core::RankLayout::Strided);
  const auto place = [&](std::size_t t, core::ShardingType type, std::vector<core::Shard> shards) {
    core::TablePlacement tp;
    tp.name = m.tables[t].name;
    tp.rows = m.tables[t].rows;
    tp.dim = m.tables[t].dim;
    tp.sharding_type = type;
    tp.shards = std::move(shards);
    p.tables.push_back(tp);
  };
  std::vector<core::Shard> rows;
  const std::uint64_t r0 = m.tables[0].rows;
  for (std::uint32_t g = 0; g < group; ++g)
    rows.push_back({g, r0 * g / group, r0 * (g + 1) / group - r0 * g / group, 0, m.tables[0].dim});
  place(0, core::ShardingType::RowWise, rows);
  place(1, core::ShardingType::ColumnWise, {{0, 0, m.tables[1].rows, 0, 64}, {group - 1, 0, m.tables[1].rows, 64, 64}});
  place(2, core::ShardingType::TableWise, {{group - 1, 0, m.tables[2].rows, 0, m.tables[2].dim}});
  std::vector<core::Shard> dp;
  for (std::uint32_t g = 0; g < group; ++g) dp.push_back({g, 0, m.tables[3].rows, 0, m.tables[3].dim});
  place(3, core::ShardingType::DataParallel, dp);
  return p;
}

}  // namespace

int main() {
  GPU_SKIP_WITHOUT_DEVICE();
  auto gpus = profiler::queryGpuDevices();
  GPU_CHECK(gpus.ok() && !gpus->empty());
  const std::uint32_t world = gpus->size() >= 4 ? 4 : (gpus->size() >= 2 ? 2 : 1);
  const std::uint32_t group = world >= 2 ? 2 : 1;
  const core::ModelSpec m = model();
  const core::ShardPlan p = plan(m, world, group);
  core::ClusterSpec cluster;
  cluster.name = "local";
  cluster.nodes = 1;
  cluster.gpus_per_node = world;

  const std::filesystem::path store = std::filesystem::temp_directory_path() / "shardscope-gpu-engine.sqlite";
  std::filesystem::remove(store);
  profiler::cuda::CudaProfileOptions o;
  o.steps = 4;
  o.warmup = 1;
  o.overhead_probe_steps = 2;
  o.sync_interval = 2;
  auto result = profiler::cuda::runCudaProfile(m, cluster, p, o, store);
  GPU_CHECK_MSG(result.ok(), result.ok() ? "" : result.error().message);
  if (!result.ok()) return shardscope::gputest::gpuTestExit();
  GPU_CHECK(result->step_ms.size() == 4);
  GPU_CHECK(result->tracing.records > 0);
  GPU_CHECK_MSG(result->tracing.dropped_records == 0, std::to_string(result->tracing.dropped_records));
  GPU_CHECK(result->tracing.overhead_pct.has_value());
  std::printf("world %u, M %u: step %.3f ms, CUPTI records %llu, overhead %.2f %%\n", world, group,
              result->step_ms.back(), static_cast<unsigned long long>(result->tracing.records),
              result->tracing.overhead_pct.value_or(-1));

  auto s = core::store::openStore(store);
  GPU_CHECK(s.ok());
  if (!s.ok()) return shardscope::gputest::gpuTestExit();
  auto run = s->run(result->run);
  GPU_CHECK(run.ok() && run->status == core::store::RunStatus::Complete && run->kind == core::store::RunKind::Cuda);
  auto config = nlohmann::json::parse(run->config_json);
  GPU_CHECK(config.contains("gpu_tracing") && config["gpu_tracing"]["dropped_records"] == 0);
  auto steps = s->stepSummaries(result->run);
  GPU_CHECK(steps.ok() && steps->size() == 4u * world);
  auto tables = s->tableStats(result->run);
  GPU_CHECK(tables.ok() && !tables->empty());
  auto strings = s->strings();
  std::vector<int> ranks(world);
  for (std::uint32_t r = 0; r < world; ++r) ranks[r] = static_cast<int>(r);
  auto spans = s->spansInWindow(result->run, ranks, INT64_MIN, INT64_MAX);
  GPU_CHECK(spans.ok() && strings.ok());
  int fwd = 0, gpu_kernels = 0, correlated = 0;
  for (const auto& sp : *spans) {
    const std::string_view kind = strings->at(sp.kind);
    if (kind == "emb_fwd") ++fwd;
    if (sp.stream >= 2) ++gpu_kernels;
    if (sp.correlation != 0) ++correlated;
  }
  GPU_CHECK_MSG(fwd >= 4, std::to_string(fwd));
  GPU_CHECK_MSG(gpu_kernels > 0, "no CUPTI spans on the GPU streams");
  GPU_CHECK_MSG(correlated > 0, "no span carries a CUPTI correlation id");
  if (world >= 2) {
    auto colls = s->collectives(result->run);
    GPU_CHECK(colls.ok() && !colls->empty());
  }
  return shardscope::gputest::gpuTestExit();
}
