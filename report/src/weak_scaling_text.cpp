#include "shardscope/report/weak_scaling_text.h"

#include <cmath>

#include "shardscope/core/rank_layout.h"
#include "shardscope/report/display_format.h"

namespace shardscope::report {

namespace {

// Milliseconds as the Grid Explorer's table shows them, with more digits for tiny phases.
std::string ms(double v) { return formatFixed(v, std::abs(v) >= 0.1 || v == 0.0 ? 2 : 3) + " ms"; }

std::string perGpu(double samples_per_second) {
  return (samples_per_second >= 1000.0 ? formatScaledCount(samples_per_second) : formatFixed(samples_per_second, 0)) +
         " samples/s per GPU";
}

std::string percent(double fraction) {
  const double p = fraction * 100.0;
  return formatFixed(p, p >= 9.95 ? 0 : 1) + "%";
}

std::string gridText(const planner::ScalingCell& c) {
  const std::uint32_t replicas = c.group_size > 0 ? c.world_size / c.group_size : 0;
  return "M = " + std::to_string(c.group_size) + " \u00d7 R = " + std::to_string(replicas) + " (" +
         std::string(core::toString(c.layout)) + ")";
}

}  // namespace

std::string_view stepPhaseLabel(planner::StepPhase phase) {
  switch (phase) {
    case planner::StepPhase::Embedding:
      return "emb";
    case planner::StepPhase::AllToAll:
      return "a2a";
    case planner::StepPhase::ReplicaSync:
      return "sync";
    case planner::StepPhase::Dense:
      return "dense";
    case planner::StepPhase::Memory:
      return "memory";
  }
  return "";
}

std::string weakScalingLabel(const planner::WeakScalingPoint& point) {
  if (point.best == nullptr) return std::string(stepPhaseLabel(planner::StepPhase::Memory));
  return point.drop ? std::string(stepPhaseLabel(point.cause)) : std::string();
}

std::string weakScalingDescription(const std::vector<planner::WeakScalingPoint>& points, std::size_t index) {
  if (index >= points.size()) return {};
  const planner::WeakScalingPoint& p = points[index];
  const std::string n = "N = " + std::to_string(p.world_size);
  if (p.best == nullptr) return n + ": no grid fits in HBM (memory)";
  std::string text = n + ": best " + gridText(*p.best) + ", " + perGpu(p.best->samples_per_second_per_gpu) + ", " +
                     percent(p.efficiency) + " of the best world size";
  const planner::WeakScalingPoint* prev = index > 0 ? &points[index - 1] : nullptr;
  if (!p.drop || prev == nullptr || prev->best == nullptr) return text;
  const double before = prev->best->samples_per_second_per_gpu;
  const double loss = before > 0 ? 1.0 - p.best->samples_per_second_per_gpu / before : 0.0;
  return text + "; " + percent(loss) + " less throughput per GPU than at N = " + std::to_string(prev->world_size) +
         ": " + std::string(planner::toString(p.cause)) + " grew most (+" + ms(p.cause_ms) + " per step)";
}

std::string scalingCellDescription(const planner::ScalingCell& c, double best_per_gpu) {
  std::string text = "N = " + std::to_string(c.world_size) + ", " + gridText(c);
  if (!c.planned) return text + "\nnot planned";
  if (!c.fits) return text + "\ndoes not fit in HBM in either layout";
  const planner::StepBreakdown& s = c.step;
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "literal" + a temporary string.
  text.append("\nstep ").append(ms(c.step_ms)).append(":");
  text.append("\n  embedding ").append(ms(s.embedding_ms));
  text.append("\n  all-to-all ").append(ms(s.all_to_all_ms));
  text.append("\n  replica sync ").append(ms(s.replica_sync_ms));
  text.append("\n  dense ").append(ms(s.dense_ms));
  text.append(" (its all-reduce ").append(ms(s.dense_allreduce_ms)).append(", partly hidden)");
  text.append("\n").append(perGpu(c.samples_per_second_per_gpu));
  if (best_per_gpu > 0)
    text.append(", ").append(percent(c.samples_per_second_per_gpu / best_per_gpu)).append(" of the best cell");
  return text;
}

}  // namespace shardscope::report
