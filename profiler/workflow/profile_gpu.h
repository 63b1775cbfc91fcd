// The profile's GPU path (private to the workflow): every rank in this
// process on its own GPU (cuda::runCudaProfile), or an error that says why
// not when this build has no GPU engine.
#pragma once

#include <atomic>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::profiler {

[[nodiscard]] core::Result<core::store::RunId> runOnLocalGpus(const ProfileRequest& request,
                                                              const ProfileProgressFn& progress,
                                                              const std::atomic<bool>* cancel);

}  // namespace shardscope::profiler
