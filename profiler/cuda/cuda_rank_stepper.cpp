#include "shardscope/profiler/cuda/cuda_rank_stepper.h"

#include <numeric>
#include <stdexcept>

#include "cuda_rank.h"
#include "cupti_spans.h"

namespace shardscope::profiler::cuda {

namespace {

class CudaRankStepper final : public RankStepper {
 public:
  CudaRankStepper(const core::ModelSpec& model, std::uint64_t seed) : workload_(model, seed) {}

  core::Status init(const core::ModelSpec& model, const core::ShardPlan& plan,
                    std::vector<std::vector<RankShard>> group_shards, const ncclUniqueId& id, std::uint32_t rank,
                    int device, const GpuStepperOptions& o, const std::string& host) {
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
      return cudaError("cudaSetDevice(" + std::to_string(device) + ")", e);
    if (o.cupti) {
      if (auto st = cupti_.start(); !st) note_ = st.error().message;
    }
    auto grid = NcclGrid::create(id, plan, rank);
    if (!grid) return grid.error();
    rank_ =
        std::make_unique<CudaRank>(model, plan, std::move(group_shards), std::move(*grid), device,
                                   CudaRankConfig{o.seed, o.batch, o.adagrad, o.tracing, o.input_threads}, workload_);
    if (auto st = rank_->setup(host); !st) return st;
    if (cupti_.started()) rank_->setHooks(cupti_.hooks());
    return core::Ok{};
  }

  void step(std::uint64_t global_step, std::int64_t measured, bool sync) override {
    if (auto st = rank_->step(global_step, measured, sync); !st) throw std::runtime_error(st.error().message);
    if (measured >= 0) step_ms_.push_back(rank_->lastStepMs());
  }
  void resetCounters() override { rank_->resetCounters(); }
  void writeTableStats() override {
    rank_->writeTableStats();
    if (!cupti_.started()) return;
    std::vector<int> rank_of_device(static_cast<std::size_t>(rank_->device()) + 1, -1);
    rank_of_device.back() = static_cast<int>(rank_->rank());
    GpuTracing figures;
    if (auto st = cupti_.finish(rank_->recorder(), rank_of_device, figures); !st) note_ = st.error().message;
    figures_ = figures;
  }
  TraceRecorder& recorder() override { return rank_->recorder(); }
  [[nodiscard]] nlohmann::ordered_json summary() const override {
    nlohmann::ordered_json j;
    j["rank"] = rank_->rank();
    j["device"] = rank_->device();
    j["sharding_group"] = rank_->grid().shardingGroup();
    j["replica_group"] = rank_->grid().replicaGroup();
    j["group_rank"] = rank_->grid().groupRank();
    j["mean_step_ms"] = step_ms_.empty() ? 0.0
                                         : std::accumulate(step_ms_.begin(), step_ms_.end(), 0.0) /
                                               static_cast<double>(step_ms_.size());
    nlohmann::ordered_json digests = nlohmann::ordered_json::array();
    if (auto d = rank_->digests())
      for (std::uint64_t v : *d) digests.push_back(v);
    j["shard_digests"] = std::move(digests);
    if (figures_) j["cupti"] = {{"records", figures_->records}, {"dropped_records", figures_->dropped_records}};
    if (!note_.empty()) j["note"] = note_;
    return j;
  }
  [[nodiscard]] const WorkloadGenerator& workload() const override { return workload_; }

 private:
  WorkloadGenerator workload_;
  CuptiSession cupti_;
  std::unique_ptr<CudaRank> rank_;
  std::vector<double> step_ms_;
  std::optional<GpuTracing> figures_;
  std::string note_;
};

}  // namespace

core::Result<std::unique_ptr<RankStepper>> makeCudaRankStepper(
    const core::ModelSpec& model, const core::ShardPlan& plan, std::vector<std::vector<RankShard>> group_shards,
    const ncclUniqueId& id, std::uint32_t rank, int device, const GpuStepperOptions& options, const std::string& host) {
  auto stepper = std::make_unique<CudaRankStepper>(model, options.seed);
  if (auto st = stepper->init(model, plan, std::move(group_shards), id, rank, device, options, host); !st)
    return st.error();
  return std::unique_ptr<RankStepper>(std::move(stepper));
}

}  // namespace shardscope::profiler::cuda
