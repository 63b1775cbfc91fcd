// The plan a trainer ran, for a run in a trace store. Imported traces carry
// no plan: `report` and `calibrate` take one with the model and cluster it is
// for (core::TrainerPlanSpec, docs/import.md), and the desktop's Measured
// page predicts a run from the Plan page's plan or from a plan file with the
// project's model and cluster. Reading, placing and resizing a plan file is
// core's (core/plan_file.h); this adds the run: its rank count places a
// TorchRec plan, and the analysis takes the plan's inputs in place of the
// run's own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/plan_file.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/workflow/stored_runs.h"

namespace shardscope::profiler {

// A plan file's model, cluster and plan as the inputs a run's analysis takes
// in place of the run's own.
[[nodiscard]] RunInputs suppliedRunInputs(core::PlanFileInputs in);

// What `report` and `calibrate` do with a spec: nothing when it is empty,
// else core::loadTrainerPlan with the run's rank count.
[[nodiscard]] core::Result<std::optional<RunInputs>> trainerPlanForRun(const core::TrainerPlanSpec& spec,
                                                                       const core::store::TraceStore& store,
                                                                       core::store::RunId run);

// What a stored run is predicted from in place of the plan it ran: a plan the
// caller holds (the desktop's Plan page's), else a plan file the user
// supplies (shardscope.plan/1, or TorchRec's placed on the run's ranks), with
// the project's model and cluster (resized to a file's plan when it has
// another world size).
struct SuppliedPlan {
  std::optional<core::ShardPlan> plan;
  std::string file;
  core::ModelSpec model;
  core::ClusterSpec cluster;
};

// The inputs `supplied` gives run `run` of `store`. Errors: a plan file that
// does not load (naming the file and field).
[[nodiscard]] core::Result<RunInputs> suppliedPlanInputs(const SuppliedPlan& supplied,
                                                         const core::store::TraceStore& store, core::store::RunId run);

// Run `run` of the store at `store` measured against `supplied` (nullptr: the
// plan it ran), priced with `calibration` (nullptr: the default constants):
// runVsPlan with the supplied inputs. Errors: the store does not open, the
// supplied plan does not load, and runVsPlan's.
[[nodiscard]] core::Result<RunVsPlan> runVsSuppliedPlan(const std::string& store, core::store::RunId run,
                                                        const core::Calibration* calibration,
                                                        const SuppliedPlan* supplied);

}  // namespace shardscope::profiler
