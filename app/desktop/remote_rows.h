// How a job on an agent reads on the Runs page: its RemoteRow (status with
// progress, "on <agent>", the tooltip with its error and stderr tail).
#pragma once

#include <QString>

#include "remote_jobs.h"
#include "run_list_model.h"

namespace shardscope::app {

[[nodiscard]] RemoteRow remoteRow(const RemoteJobs::Job& job);
// Why a job failed: its error, exit code and stderr tail, and what to do.
[[nodiscard]] QString remoteFailureText(const RemoteJobs::Job& job);

}  // namespace shardscope::app
