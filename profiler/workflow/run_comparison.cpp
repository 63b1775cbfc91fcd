#include "shardscope/profiler/workflow/run_comparison.h"

#include <map>

#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::profiler {

namespace {

std::string nameOf(const RunAnalysis& a) {
  std::string name = "run " + std::to_string(static_cast<std::int64_t>(a.run.id));
  if (!a.run.label.empty()) name += " (" + a.run.label + ")";
  return name;
}

// Means over ranks of one phase, per measured step.
template <class Field>
double meanOver(const RunAnalysis& a, Field field) {
  if (a.ranks.empty()) return 0.0;
  double sum = 0.0;
  for (const RankAnalysis& r : a.ranks) sum += field(r);
  return sum / static_cast<double>(a.ranks.size());
}

std::vector<ComparedValue> phasesOf(const RunAnalysis& a, const RunAnalysis& b) {
  using Field = double (*)(const RankAnalysis&);
  const std::pair<const char*, Field> phases[] = {
      {"embedding forward", [](const RankAnalysis& r) { return r.emb_fwd_ms; }},
      {"embedding backward", [](const RankAnalysis& r) { return r.emb_bwd_ms; }},
      {"dense", [](const RankAnalysis& r) { return r.dense_ms; }},
      {"collectives", [](const RankAnalysis& r) { return r.comm_ms; }},
      {"step", [](const RankAnalysis& r) { return r.step_ms; }},
  };
  std::vector<ComparedValue> out;
  for (const auto& [name, field] : phases) out.push_back({name, meanOver(a, field), meanOver(b, field)});
  return out;
}

std::vector<ComparedValue> ranksOf(const RunAnalysis& a, const RunAnalysis& b) {
  std::map<int, ComparedValue> by_rank;
  for (const RankAnalysis& r : a.ranks) by_rank[r.rank].a_ms = r.compute_ms;
  for (const RankAnalysis& r : b.ranks) by_rank[r.rank].b_ms = r.compute_ms;
  std::vector<ComparedValue> out;
  for (auto& [rank, value] : by_rank) {
    value.name = "rank " + std::to_string(rank);
    out.push_back(std::move(value));
  }
  return out;
}

}  // namespace

core::Result<RunComparison> compareRuns(const core::store::TraceStore& store, core::store::RunId a,
                                        core::store::RunId b) {
  auto first = analyzeRun(store, a, {});
  if (!first) return first.error();
  auto second = analyzeRun(store, b, {});
  if (!second) return second.error();
  RunComparison c;
  c.a = a;
  c.b = b;
  c.a_name = nameOf(*first);
  c.b_name = nameOf(*second);
  c.phases = phasesOf(*first, *second);
  c.ranks = ranksOf(*first, *second);
  for (const auto& w : first->warnings) c.warnings.push_back(c.a_name + ": " + w);
  for (const auto& w : second->warnings) c.warnings.push_back(c.b_name + ": " + w);
  return c;
}

}  // namespace shardscope::profiler
