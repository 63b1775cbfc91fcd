// shardscope-cli's commands that run the engine, import traces or read a
// trace store (they link profiler/workflow); the planning commands and the
// shared conventions are in planning/cli.h.
#pragma once

#include "cli.h"

namespace shardscope::app::cli {

int runStore(Args args);
int runDevices(Args args);      // command_devices.cpp: the GPUs this build sees, this machine as a cluster
int runProfile(Args args);      // command_profile.cpp: engine runs (emulate in-process, mpi through a launcher)
int runReport(Args args);       // command_report.cpp: analysis of a run in a store
int runCalibrate(Args args);    // command_calibrate.cpp: fit a calibration from runs, held-out check
int runImport(Args args);       // command_import.cpp: traces of real trainers (Kineto, Nsight, NCCL) into a store
int runExportTrace(Args args);  // command_export.cpp: a stored run as Chrome trace JSON
#ifdef SHARDSCOPE_HAVE_REMOTE
int runRemote(Args args);  // command_remote.cpp: drives a shardscope-agent
#endif

}  // namespace shardscope::app::cli
