#include "emulate_mode.h"

#include <string_view>

#include "shardscope/app/args.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/profiler/engine/emulate.h"
#ifdef SHARDSCOPE_GPU_ENGINE
#include "shardscope/profiler/cuda/cuda_engine.h"
#endif

namespace shardscope::app::engine {

namespace {

struct Inputs {
  core::ModelSpec model;
  core::ClusterSpec cluster;
  core::ShardPlan plan;
};

core::Result<Inputs> loadInputs(const EmulateModeArgs& a) {
  auto model = core::loadModelByNameOrFile(a.model);
  if (!model) return model.error();
  auto cluster = core::loadClusterByNameOrFile(a.cluster);
  if (!cluster) return cluster.error();
  auto plan = core::loadPlan(a.plan);
  if (!plan) return plan.error();
  return Inputs{std::move(model).value(), std::move(cluster).value(), std::move(plan).value()};
}

// One line, flushed: the reader (a launcher's follower) sees it at once.
void line(std::ostream& out, const std::string& text) { out << text << '\n' << std::flush; }

core::Result<core::store::RunId> runCpu(const EmulateModeArgs& a, const Inputs& in, const std::atomic<bool>& cancel,
                                        std::ostream& out, bool& cancelled) {
  profiler::EmulateOptions o;
  o.steps = a.steps;
  o.warmup = a.warmup;
  o.seed = a.seed;
  o.threads = a.threads;
  o.memory_budget_bytes = a.memory_budget_bytes;
  o.trace_spans = a.tracing;
  o.all_groups = a.all_groups;
  o.label = a.label;
  o.cancel = &cancel;
  if (a.batch > 0) o.batch_size_override = a.batch;
  o.on_run = [&out](core::store::RunId run) { line(out, "run " + std::to_string(static_cast<long long>(run))); };
  if (a.progress)
    o.progress = [&out](std::uint64_t done, std::uint64_t total, std::string_view what) {
      line(out, "progress " + std::to_string(done) + " " + std::to_string(total) + " " + std::string(what));
    };
  auto r = profiler::runEmulate(in.model, in.cluster, in.plan, o, a.store);
  if (!r) return r.error();
  cancelled = r->cancelled;
  return r->run;
}

core::Result<core::store::RunId> runCuda(const EmulateModeArgs& a, const Inputs& in, const std::atomic<bool>& cancel,
                                         std::ostream& out, bool& cancelled) {
#ifdef SHARDSCOPE_GPU_ENGINE
  profiler::cuda::CudaProfileOptions o;
  o.steps = a.steps;
  o.warmup = a.warmup;
  o.seed = a.seed;
  o.sync_interval = a.sync_interval;
  o.trace_spans = a.tracing;
  o.cupti = a.cupti && a.tracing;
  o.memory_budget_bytes = a.memory_budget_bytes;
  o.label = a.label;
  o.cancel = &cancel;
  if (a.batch > 0) o.batch_size_override = a.batch;
  if (a.progress)
    o.progress = [&out](std::uint64_t done, std::uint64_t total, std::string_view what) {
      line(out, "progress " + std::to_string(done) + " " + std::to_string(total) + " " + std::string(what));
    };
  auto r = profiler::cuda::runCudaProfile(in.model, in.cluster, in.plan, o, a.store);
  if (!r) return r.error();
  line(out, "run " + std::to_string(static_cast<long long>(r->run)));
  cancelled = r->cancelled;
  return r->run;
#else
  (void)a;
  (void)in;
  (void)cancel;
  (void)out;
  (void)cancelled;
  return core::Error{"--device cuda: this engine was built without CUDA, NCCL and CUPTI", core::ErrorKind::Usage};
#endif
}

}  // namespace

int runEmulateMode(const EmulateModeArgs& args, const std::atomic<bool>& cancel, std::ostream& out, std::ostream& err) {
  auto in = loadInputs(args);
  if (!in) {
    err << "shardscope-engine: " << in.error().message << "\n";
    return kExitInvalid;
  }
  bool cancelled = false;
  auto run =
      args.device == "cuda" ? runCuda(args, *in, cancel, out, cancelled) : runCpu(args, *in, cancel, out, cancelled);
  if (!run) {
    err << "shardscope-engine: " << run.error().message << "\n";
    return exitCodeFor(run.error());
  }
  if (cancelled) {
    err << "shardscope-engine: cancelled; run " << static_cast<long long>(*run) << " is marked failed\n";
    return kExitCancelled;
  }
  return kExitOk;
}

}  // namespace shardscope::app::engine
