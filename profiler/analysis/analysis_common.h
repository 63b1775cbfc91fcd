// Helpers shared by the run analysis and the calibration fit (private to
// profiler/analysis): naming a run in messages, medians and number
// formatting. A run's configuration is read by readEngineRunConfig
// (profiler/trace's engine_run_config.h).
#pragma once

#include <compare>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::profiler::analysis_detail {

inline constexpr double kNsPerMs = 1e6;

// "<store path>: run <id>", the prefix of every message about a run.
inline std::string runName(const core::store::TraceStore& store, core::store::RunId id) {
  std::ostringstream o;
  o << store.path().string() << ": run " << static_cast<std::int64_t>(id);
  return o.str();
}

// Median of per-step values (0 for none): a step that the OS preempted on a
// shared machine does not move it, where it would move a mean.
double median(std::vector<double> v);

// Each value's share of the sum of the values of its group (entries with the
// same `groups[i]`); -1 where the value is negative (unknown) or its group sums to 0.
std::vector<double> sharesWithinGroups(const std::vector<double>& values, const std::vector<int>& groups);

// Collective span kinds, in the order reports show them (the last three
// come from imported traces only: docs/formats/import-trace.md).
const std::vector<std::string_view>& commKinds();

// What the span walk noticed beyond the numbers, for the report's warnings.
struct SpanFindings {
  std::map<std::string, std::set<int>> fallback_steps;  // step span name (not ProfilerStep#N) -> ranks
  std::vector<int> without_device_work;                 // ranks with spans but no kernel, copy or collective
};

// run_timeline.cpp: per rank, time and waits per collective kind (an
// import's waits from its `collectives` rows) and the device timeline.
core::Status spanTimes(const core::store::TraceStore& store, core::store::RunId id,
                       const core::store::StringTable& strings, const AnalysisOptions& options,
                       const std::vector<core::store::Collective>& collectives, bool imported,
                       std::map<int, RankAnalysis>& ranks, RunAnalysis& a, SpanFindings& found);

// One collective call across ranks: its rows on every member share a key.
// A row with a sequence number (an import's `seq`) is that call of its
// process group, group and op; a row without one is the n-th call of the
// same process group, group and op in its step on its rank. Calls of
// different groups or ops never share a key.
struct CallKey {
  core::store::StringId process_group = core::store::kNoString;
  core::store::StringId group = core::store::kNoString;
  core::store::StringId op = core::store::kNoString;
  std::int64_t seq = -1;
  std::int64_t step = -1;  // -2 with a sequence number
  int nth = 0;
  friend auto operator<=>(const CallKey&, const CallKey&) = default;
};

// run_timeline.cpp: each row's call key, in row order.
std::vector<CallKey> callKeys(const std::vector<core::store::Collective>& rows);

// Fixed-point text with `decimals` digits.
inline std::string fmt(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace shardscope::profiler::analysis_detail
