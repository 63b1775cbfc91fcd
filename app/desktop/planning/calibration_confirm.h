// A calibration fitted on one kind of device is applied to a cluster of
// another only after the user says so: a box naming both devices, opened
// window-modal without blocking the GUI thread. Shared by loading a
// calibration file and calibrating from a run.
#pragma once

#include <functional>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"

class QWidget;

namespace shardscope::app {

// Calls `done(true)` at once when `calibration` was fitted on the cluster's
// kind of GPU; otherwise asks first and calls `done(true)` on "Apply",
// `done(false)` on "Cancel" or when the box is closed.
void confirmCalibration(QWidget* parent, const core::ClusterSpec& cluster, const core::Calibration& calibration,
                        std::function<void(bool apply)> done);

}  // namespace shardscope::app
