#include "shardscope/planner/scaling_sweep.h"

#include <algorithm>
#include <exception>
#include <set>

namespace shardscope::planner {

namespace {

// Row and column of each cell; nothing planned yet.
void layOutCells(ScalingResult& out, const core::Project& project) {
  out.world_sizes = scalingWorldSizes(project.cluster);
  std::set<std::uint32_t> ms;
  for (std::uint32_t n : out.world_sizes)
    for (std::uint32_t m = 1; m <= n; ++m)
      if (n % m == 0 && (m & (m - 1)) == 0) ms.insert(m);  // powers of two: one row each
  // Whole nodes of a node size that is not a power of two (72: 72, 144, ...).
  const std::uint32_t gpn = std::max<std::uint32_t>(1, project.cluster.gpus_per_node);
  for (std::uint32_t n : out.world_sizes)
    for (std::uint64_t m = gpn; m <= n; m *= 2)
      if (n % m == 0) ms.insert(static_cast<std::uint32_t>(m));
  // The project's own M values (a non-power-of-two N) too.
  for (std::uint32_t m = 1; m <= project.cluster.worldSize(); ++m)
    if (project.cluster.worldSize() % m == 0) ms.insert(m);
  out.group_sizes.assign(ms.begin(), ms.end());
  out.cells.resize(out.group_sizes.size() * out.world_sizes.size());
  for (std::size_t mi = 0; mi < out.group_sizes.size(); ++mi)
    for (std::size_t ni = 0; ni < out.world_sizes.size(); ++ni) {
      ScalingCell& c = out.cells[mi * out.world_sizes.size() + ni];
      c.group_size = out.group_sizes[mi];
      c.world_size = out.world_sizes[ni];
    }
}

// Column ni from the sweep of world size n: per M the better layout, a
// fitting one first, then the higher throughput.
void fillColumn(ScalingResult& out, std::size_t ni, std::uint32_t n, const SweepResult& sweep) {
  for (const GridResult& g : sweep.grids) {
    const auto mi = static_cast<std::size_t>(
        std::lower_bound(out.group_sizes.begin(), out.group_sizes.end(), g.grid.group_size) - out.group_sizes.begin());
    if (mi >= out.group_sizes.size() || out.group_sizes[mi] != g.grid.group_size) continue;
    ScalingCell& c = out.cells[mi * out.world_sizes.size() + ni];
    const double per_gpu = g.samples_per_second / static_cast<double>(n);
    const bool better =
        !c.planned || (g.fits && !c.fits) || (g.fits == c.fits && per_gpu > c.samples_per_second_per_gpu);
    if (!better) continue;
    c.planned = true;
    c.fits = g.fits;
    c.layout = g.grid.layout;
    c.samples_per_second_per_gpu = per_gpu;
    c.step_ms = g.step.step_ms;
    c.step = g.step;
  }
}

}  // namespace

SweepOptions sweepOptionsOf(const core::Project& project) {
  SweepOptions options;
  options.sync_interval = std::max<std::uint32_t>(1, project.sync_interval);
  options.planner.target = project.target;
  return options;
}

std::string unplannable(const core::Project& project) {
  if (project.cluster.worldSize() == 0) return "the cluster has no GPUs (N = 0)";
  if (project.model.tables.empty()) return "the model has no embedding tables";
  if (project.model.batch_size_per_gpu == 0) return "the batch size per GPU is 0";
  return {};
}

double ScalingResult::bestPerGpu() const {
  double best = 0;
  for (const ScalingCell& c : cells)
    if (c.planned && c.fits) best = std::max(best, c.samples_per_second_per_gpu);
  return best;
}

std::string_view toString(StepPhase p) {
  switch (p) {
    case StepPhase::Embedding:
      return "embedding";
    case StepPhase::AllToAll:
      return "all-to-all";
    case StepPhase::ReplicaSync:
      return "replica sync";
    case StepPhase::Dense:
      return "dense";
    case StepPhase::Memory:
      return "memory";
  }
  return "?";
}

std::vector<WeakScalingPoint> ScalingResult::weakScaling() const {
  constexpr double kDrop = 0.95;
  std::vector<WeakScalingPoint> out;
  out.reserve(world_sizes.size());  // prev points into it
  const double top = bestPerGpu();
  const WeakScalingPoint* prev = nullptr;
  for (std::size_t ni = 0; ni < world_sizes.size(); ++ni) {
    WeakScalingPoint p;
    p.world_size = world_sizes[ni];
    bool any = false;
    for (std::size_t mi = 0; mi < group_sizes.size(); ++mi) {
      const ScalingCell* c = at(mi, ni);
      if (!c || !c->planned) continue;
      any = true;
      if (c->fits && (!p.best || c->samples_per_second_per_gpu > p.best->samples_per_second_per_gpu)) p.best = c;
    }
    if (!any) break;  // not planned yet (cancelled)
    if (!p.best) {
      p.cause = StepPhase::Memory;
      p.drop = true;
    } else {
      p.efficiency = top > 0 ? p.best->samples_per_second_per_gpu / top : 0.0;
      if (prev && prev->best) {
        const StepBreakdown &a = prev->best->step, &b = p.best->step;
        const std::pair<StepPhase, double> grew[] = {{StepPhase::Embedding, b.embedding_ms - a.embedding_ms},
                                                     {StepPhase::AllToAll, b.all_to_all_ms - a.all_to_all_ms},
                                                     {StepPhase::ReplicaSync, b.replica_sync_ms - a.replica_sync_ms},
                                                     {StepPhase::Dense, b.dense_ms - a.dense_ms}};
        const auto* most = std::max_element(std::begin(grew), std::end(grew),
                                            [](const auto& x, const auto& y) { return x.second < y.second; });
        p.cause = most->first;
        p.cause_ms = most->second;
        p.drop = p.best->samples_per_second_per_gpu < kDrop * prev->best->samples_per_second_per_gpu;
      }
    }
    out.push_back(p);
    prev = &out.back();
  }
  return out;
}

std::vector<std::uint32_t> scalingWorldSizes(const core::ClusterSpec& cluster) {
  // Whole nodes of the cluster's shape (or part of one node): powers of two
  // that nodes of this size make, else the node size times powers of two.
  const std::uint32_t gpn = std::max<std::uint32_t>(1, cluster.gpus_per_node);
  std::set<std::uint32_t> sizes;
  for (std::uint32_t n = 8; n <= 4096; n *= 2)
    if (n <= gpn || n % gpn == 0) sizes.insert(n);
  if ((gpn & (gpn - 1)) != 0)
    for (std::uint64_t n = gpn; n <= 4096; n *= 2)
      if (n >= 8) sizes.insert(static_cast<std::uint32_t>(n));
  if (cluster.worldSize() > 0) sizes.insert(cluster.worldSize());
  return {sizes.begin(), sizes.end()};
}

ScalingResult runScalingSweep(const core::Project& project, const std::atomic<bool>* cancel,
                              const std::function<void(int, int)>& progress) {
  ScalingResult out;
  out.error = unplannable(project);
  if (!out.error.empty()) return out;
  layOutCells(out, project);
  const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
  const int total = static_cast<int>(out.world_sizes.size());
  try {
    for (std::size_t ni = 0; ni < out.world_sizes.size(); ++ni) {
      if (cancel && cancel->load()) {
        out.cancelled = true;
        break;
      }
      const std::uint32_t n = out.world_sizes[ni];
      const core::ClusterSpec cluster = core::resizedCluster(project.cluster, n);
      const SweepResult sweep =
          planner::sweep(project.model, cluster, cal, project.constraints, sweepOptionsOf(project), {}, cancel);
      if (sweep.cancelled) {
        out.cancelled = true;
        break;
      }
      fillColumn(out, ni, n, sweep);
      if (progress) progress(static_cast<int>(ni) + 1, total);
    }
  } catch (const std::exception& e) {
    out.error = std::string("planning failed: ") + e.what();
  }
  return out;
}

}  // namespace shardscope::planner
