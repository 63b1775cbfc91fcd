#include "shardscope/profiler/analysis/step_time.h"

#include <algorithm>
#include <map>

#include "analysis_common.h"

namespace shardscope::profiler {

std::optional<double> stepTimeMs(const std::vector<core::store::StepSummary>& summaries) {
  if (summaries.empty()) return std::nullopt;
  std::map<std::int64_t, std::int64_t> slowest;  // step -> the slowest rank's total_ns
  for (const auto& s : summaries) {
    auto [it, inserted] = slowest.try_emplace(s.step, s.total_ns);
    if (!inserted) it->second = std::max(it->second, s.total_ns);
  }
  std::vector<double> steps;
  steps.reserve(slowest.size());
  for (const auto& [step, ns] : slowest) steps.push_back(static_cast<double>(ns) / analysis_detail::kNsPerMs);
  return analysis_detail::median(std::move(steps));
}

core::Result<std::optional<double>> stepTimeMs(const core::store::TraceStore& store, core::store::RunId run) {
  if (auto record = store.run(run); !record) return record.error();
  auto summaries = store.stepSummaries(run);
  if (!summaries) return summaries.error();
  return stepTimeMs(*summaries);
}

}  // namespace shardscope::profiler
