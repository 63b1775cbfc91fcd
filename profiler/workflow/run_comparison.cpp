#include "shardscope/profiler/workflow/run_comparison.h"

#include <array>
#include <map>
#include <set>
#include <utility>

#include "shardscope/profiler/analysis/measured_vs_predicted.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/analysis/step_time.h"
#include "shardscope/profiler/trace/engine_run_config.h"
#include "shardscope/profiler/trace/run_device.h"

namespace shardscope::profiler {

namespace {

std::string shortName(const RunAnalysis& a) { return "run " + std::to_string(static_cast<std::int64_t>(a.run.id)); }

std::string nameOf(const RunAnalysis& a) {
  std::string name = shortName(a);
  if (!a.run.label.empty()) name += " (" + a.run.label + ")";
  return name;
}

core::DeviceInfo deviceOf(const RunAnalysis& a) { return runDevice(storedRunConfig(a.run.config_json)); }

// Means over the measured ranks of each phase, ms per step.
std::array<double, kPhases> meanPhases(const RunAnalysis& a) {
  std::array<double, kPhases> sum{};
  bool unsplit = false;
  for (const RankAnalysis& r : a.ranks) {
    const PhaseMs p = measuredPhases(r, unsplit);
    for (int i = 0; i < kPhases; ++i) sum[static_cast<std::size_t>(i)] += phaseValue(p, i);
  }
  if (!a.ranks.empty())
    for (double& v : sum) v /= static_cast<double>(a.ranks.size());
  return sum;
}

// Each phase's part of the phases' sum (none when the run measured no time at all).
std::array<std::optional<double>, kPhases> sharesOf(const std::array<double, kPhases>& ms) {
  double total = 0.0;
  for (const double v : ms) total += v;
  std::array<std::optional<double>, kPhases> out{};
  if (total > 0.0)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = ms[i] / total;
  return out;
}

std::vector<ComparedValue> phasesOf(const RunAnalysis& a, const RunAnalysis& b, const RunComparison& c) {
  const auto ms_a = meanPhases(a), ms_b = meanPhases(b);
  const auto share_a = sharesOf(ms_a), share_b = sharesOf(ms_b);
  std::vector<ComparedValue> out;
  for (std::size_t i = 0; i < ms_a.size(); ++i) {
    ComparedValue v;
    v.name = phaseName(static_cast<int>(i));
    if (c.shares) {
      v.unit = ComparedUnit::Share;
      v.a = share_a[i];
      v.b = share_b[i];
    } else {
      v.a = ms_a[i];
      v.b = ms_b[i];
    }
    out.push_back(std::move(v));
  }
  if (!c.shares) {
    ComparedValue step;
    step.name = "step";
    step.a = c.a_step_ms;
    step.b = c.b_step_ms;
    out.push_back(std::move(step));
  }
  return out;
}

bool hasPlanRoles(const RunAnalysis& a) {
  if (a.ranks.empty()) return false;
  for (const RankAnalysis& r : a.ranks)
    if (r.group_rank < 0 || r.sharding_group < 0) return false;
  return true;
}

// The key each measured rank is paired by. GroupRank pairs the n-th measured
// group of one run with the n-th of the other (one each in emulate runs).
using RoleKey = std::pair<int, int>;
RoleKey keyOf(const RankAnalysis& r, RankMatching m, const std::vector<int>& groups) {
  switch (m) {
    case RankMatching::GroupAndGroupRank:
      return {r.sharding_group, r.group_rank};
    case RankMatching::GroupRank: {
      int ordinal = 0;
      while (ordinal < static_cast<int>(groups.size()) && groups[static_cast<std::size_t>(ordinal)] != r.sharding_group)
        ++ordinal;
      return {ordinal, r.group_rank};
    }
    case RankMatching::GlobalRank:
      break;
  }
  return {0, r.rank};
}

std::vector<int> measuredGroups(const RunAnalysis& a) {
  std::set<int> groups;
  for (const RankAnalysis& r : a.ranks) groups.insert(r.sharding_group);
  return {groups.begin(), groups.end()};
}

RankMatching matchingOf(const RunAnalysis& a, const RunAnalysis& b, std::string& note) {
  const bool plan_a = hasPlanRoles(a), plan_b = hasPlanRoles(b);
  if (!plan_a || !plan_b) {
    const std::string which =
        !plan_a && !plan_b ? "neither run has a plan" : (plan_a ? shortName(b) : shortName(a)) + " has no plan";
    note = "ranks matched by global rank (" + which + ")";
    return RankMatching::GlobalRank;
  }
  std::set<RoleKey> roles_a;
  for (const RankAnalysis& r : a.ranks) roles_a.insert({r.sharding_group, r.group_rank});
  for (const RankAnalysis& r : b.ranks)
    if (roles_a.count({r.sharding_group, r.group_rank}) != 0) {
      note = "ranks matched by sharding group and group rank (both runs have plans)";
      return RankMatching::GroupAndGroupRank;
    }
  note = "ranks matched by group rank (the runs measured different sharding groups)";
  return RankMatching::GroupRank;
}

// Embedding compute per sharding group, summed over its measured ranks.
std::map<int, double> groupWork(const RunAnalysis& a) {
  std::map<int, double> work;
  for (const RankAnalysis& r : a.ranks) work[r.sharding_group] += r.compute_ms;
  return work;
}

std::optional<double> loadOf(const RankAnalysis& r, const std::map<int, double>& work, bool shares) {
  if (!shares) return r.compute_ms;
  const double total = work.at(r.sharding_group);
  return total > 0.0 ? std::optional<double>(r.compute_ms / total) : std::nullopt;
}

std::string rankName(const ComparedValue& v, RankMatching m, const RoleKey& key) {
  switch (m) {
    case RankMatching::GroupAndGroupRank:
      return "group " + std::to_string(v.group) + ", group rank " + std::to_string(v.group_rank);
    case RankMatching::GroupRank:
      return "group rank " + std::to_string(v.group_rank) +
             (key.first > 0 ? ", measured group " + std::to_string(key.first + 1) : std::string());
    case RankMatching::GlobalRank:
      break;
  }
  return "rank " + std::to_string(key.second);
}

std::vector<ComparedValue> ranksOf(const RunAnalysis& a, const RunAnalysis& b, const RunComparison& c) {
  const std::vector<int> groups_a = measuredGroups(a), groups_b = measuredGroups(b);
  const auto work_a = groupWork(a), work_b = groupWork(b);
  const ComparedUnit unit = c.shares ? ComparedUnit::Share : ComparedUnit::Milliseconds;
  std::map<RoleKey, ComparedValue> by_role;
  const auto add = [&](const RankAnalysis& r, bool first) {
    const RoleKey key = keyOf(r, c.matching, first ? groups_a : groups_b);
    ComparedValue& v = by_role[key];
    v.unit = unit;
    if (c.matching != RankMatching::GlobalRank) v.group_rank = r.group_rank;
    if (c.matching == RankMatching::GroupAndGroupRank) v.group = r.sharding_group;
    (first ? v.a_rank : v.b_rank) = r.rank;
    (first ? v.a : v.b) = loadOf(r, first ? work_a : work_b, c.shares);
  };
  for (const RankAnalysis& r : a.ranks) add(r, true);
  for (const RankAnalysis& r : b.ranks) add(r, false);
  std::vector<ComparedValue> out;
  for (auto& [key, value] : by_role) {
    value.name = rankName(value, c.matching, key);
    out.push_back(std::move(value));
  }
  return out;
}

std::optional<double> ratioOf(const ComputeImbalance& im) {
  return im.max_over_mean >= 0.0 ? std::optional<double>(im.max_over_mean) : std::nullopt;
}

std::vector<ComparedValue> imbalanceOf(const RunAnalysis& a, const RunAnalysis& b) {
  std::vector<ComparedValue> out;
  ComparedValue overall;
  overall.name = "max/mean, all measured ranks";
  overall.unit = ComparedUnit::Ratio;
  overall.a = ratioOf(a.overall);
  overall.b = ratioOf(b.overall);
  out.push_back(std::move(overall));
  if (a.groups.size() < 2 && b.groups.size() < 2) return out;
  std::map<int, ComparedValue> by_group;
  for (const ComputeImbalance& g : a.groups) by_group[g.sharding_group].a = ratioOf(g);
  for (const ComputeImbalance& g : b.groups) by_group[g.sharding_group].b = ratioOf(g);
  for (auto& [group, value] : by_group) {
    value.name = "max/mean, group " + std::to_string(group);
    value.unit = ComparedUnit::Ratio;
    value.group = group;
    out.push_back(std::move(value));
  }
  return out;
}

std::string basisNote(const RunAnalysis& a, const RunAnalysis& b, const RunComparison& c) {
  const auto unknown = core::DeviceClass::Unknown;
  std::string where;
  if (c.a_device.kind == unknown && c.b_device.kind == unknown)
    where = "neither " + shortName(a) + " nor " + shortName(b) + " names its device";
  else
    where = shortName(a) + " ran on " + core::describeDevice(c.a_device) + ", " + shortName(b) + " on " +
            core::describeDevice(c.b_device);
  return where + ": shares of the group's embedding work and of the step are compared, not milliseconds";
}

}  // namespace

core::Result<RunComparison> compareRuns(const core::store::TraceStore& store, core::store::RunId a,
                                        core::store::RunId b) {
  auto first = analyzeRun(store, a, {});
  if (!first) return first.error();
  auto second = analyzeRun(store, b, {});
  if (!second) return second.error();
  auto step_a = stepTimeMs(store, a);
  if (!step_a) return step_a.error();
  auto step_b = stepTimeMs(store, b);
  if (!step_b) return step_b.error();
  RunComparison c;
  c.a = a;
  c.b = b;
  c.a_name = nameOf(*first);
  c.b_name = nameOf(*second);
  c.a_device = deviceOf(*first);
  c.b_device = deviceOf(*second);
  c.shares = !core::sameDeviceKind(c.a_device, c.b_device);
  if (c.shares) c.basis_note = basisNote(*first, *second, c);
  c.matching = matchingOf(*first, *second, c.matching_note);
  c.a_step_ms = *step_a;
  c.b_step_ms = *step_b;
  c.phases = phasesOf(*first, *second, c);
  c.ranks = ranksOf(*first, *second, c);
  c.imbalance = imbalanceOf(*first, *second);
  for (const auto& w : first->warnings) c.warnings.push_back(c.a_name + ": " + w);
  for (const auto& w : second->warnings) c.warnings.push_back(c.b_name + ": " + w);
  return c;
}

}  // namespace shardscope::profiler
