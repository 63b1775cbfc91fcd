#include "shardscope/profiler/workflow/trainer_plan.h"

namespace shardscope::profiler {

namespace st = core::store;

namespace {
// The number of ranks the run stored (0 when its ranks do not read).
std::uint32_t rankCount(const st::TraceStore& store, st::RunId run) {
  auto ranks = store.ranks(run);
  return ranks ? static_cast<std::uint32_t>(ranks->size()) : 0u;
}
}  // namespace

RunInputs suppliedRunInputs(core::PlanFileInputs in) {
  RunInputs out;
  out.model = std::move(in.model);
  out.cluster = std::move(in.cluster);
  out.plan = std::move(in.plan);
  return out;
}

core::Result<std::optional<RunInputs>> trainerPlanForRun(const core::TrainerPlanSpec& spec, const st::TraceStore& store,
                                                         st::RunId run) {
  if (!spec.any()) return std::optional<RunInputs>{};
  auto in = core::loadTrainerPlan(spec, rankCount(store, run));
  if (!in) return in.error();
  return std::optional<RunInputs>(suppliedRunInputs(std::move(in).value()));
}

core::Result<RunInputs> suppliedPlanInputs(const SuppliedPlan& supplied, const st::TraceStore& store, st::RunId run) {
  if (supplied.plan) return suppliedRunInputs({supplied.model, supplied.cluster, *supplied.plan});
  auto in = core::planFileInputs(supplied.file, supplied.model, supplied.cluster, false,
                                 core::TorchRecPlacement{{}, {}, rankCount(store, run)});
  if (!in) return in.error();
  return suppliedRunInputs(std::move(in).value());
}

core::Result<RunVsPlan> runVsSuppliedPlan(const std::string& store_path, st::RunId run,
                                          const core::Calibration* calibration, const SuppliedPlan* supplied) {
  auto store = st::openStore(store_path, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  std::optional<RunInputs> in;
  if (supplied) {
    auto s = suppliedPlanInputs(*supplied, *store, run);
    if (!s) return s.error();
    in = std::move(s).value();
  }
  return runVsPlan(store_path, run, calibration, in ? &*in : nullptr);
}

}  // namespace shardscope::profiler
