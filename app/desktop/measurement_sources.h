// What the planning pages measure with, from the profiler: this machine's
// GPUs for the Cluster page's "From this machine's GPUs"
// (profiler/engine/local_cluster.h), and the trace store's newest run of a
// plan for the Plan page's measured overlay (profiler/workflow/stored_runs.h).
// The main window hands them to the pages, which link no profiler library.
#pragma once

#include "cluster_page.h"
#include "plan_page.h"

namespace shardscope::app {

[[nodiscard]] ClusterPage::LocalClusterSource localGpusSource();
[[nodiscard]] PlanPage::MeasuredSource storedPlanRunSource();

}  // namespace shardscope::app
