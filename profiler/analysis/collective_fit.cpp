// Per-op, per-link fits of measured collective calls (docs/cost-model.md
// "Calibration of collectives"): time = latency + size x factor / busbw.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "shardscope/profiler/analysis/collective_bandwidth.h"
#include "analysis_common.h"

namespace shardscope::profiler {

namespace st = core::store;
using analysis_detail::runName;

namespace {
constexpr std::size_t kMinCalls = 3;
constexpr std::size_t kMinSizes = 3;
constexpr double kMaxMape = 0.5;

struct Point {
  double u = 0.0;     // size x bus factor (bytes)
  double t_ms = 0.0;  // measured transfer
  double model_ms = -1.0;
};

// Least squares t = a + b u with a >= 0 (else through the origin); false when degenerate.
bool lineFit(const std::vector<Point>& pts, double& a, double& b) {
  const double n = static_cast<double>(pts.size());
  double su = 0, st_ = 0, suu = 0, sut = 0;
  for (const auto& p : pts) {
    su += p.u;
    st_ += p.t_ms;
    suu += p.u * p.u;
    sut += p.u * p.t_ms;
  }
  const double den = n * suu - su * su;
  if (den > 0) {
    b = (n * sut - su * st_) / den;
    a = (st_ - b * su) / n;
  }
  if (den <= 0 || a < 0) {
    if (suu <= 0) return false;
    a = 0.0;
    b = sut / suu;
  }
  return b > 0;
}

// Standard errors of the line's intercept and slope, as latency (us) and busbw (GB/s).
void standardErrors(const std::vector<Point>& pts, double a, double b, CollectiveLinkFit& f) {
  const double n = static_cast<double>(pts.size());
  double mean_u = 0.0;
  for (const auto& p : pts) mean_u += p.u / n;
  double sxx = 0.0, ssr = 0.0;
  for (const auto& p : pts) {
    sxx += (p.u - mean_u) * (p.u - mean_u);
    const double r = p.t_ms - (a + b * p.u);
    ssr += r * r;
  }
  if (n <= 2 || sxx <= 0) return;
  const double s2 = ssr / (n - 2.0);
  f.busbw_std_error_gbps = f.busbw_gbps * std::sqrt(s2 / sxx) / b;
  f.latency_std_error_us = std::sqrt(s2 * (1.0 / n + mean_u * mean_u / sxx)) * 1e3;
}

double mapeOf(const std::vector<Point>& pts, double a, double b) {
  double sum = 0.0;
  for (const auto& p : pts) sum += std::abs(a + b * p.u - p.t_ms) / p.t_ms;
  return pts.empty() ? 0.0 : sum / static_cast<double>(pts.size());
}
}  // namespace

std::string CollectiveLinkFit::coefficientPrefix() const { return op + (inter_node ? "_inter_node" : "_intra_node"); }

core::Result<std::vector<CollectiveLinkFit>> fitCollectives(const st::TraceStore& store,
                                                            std::span<const st::RunId> runs, const RunInputs* supplied,
                                                            std::vector<std::string>* warnings) {
  std::map<std::pair<std::string, bool>, std::vector<Point>> by_link;
  CollectiveBandwidthOptions options;
  options.supplied = supplied;
  for (const st::RunId id : runs) {
    if (auto run = store.run(id); !run) return run.error();
    auto cb = collectiveBandwidth(store, id, options);
    if (!cb) continue;  // no collectives (an emulate run): nothing to fit from it
    if (!cb->againstModel()) {
      if (warnings)
        warnings->push_back(runName(store, id) + ": collectives not fitted (" +
                            (cb->notes.empty() ? std::string("no model of its groups") : cb->notes.back()) + ")");
      continue;
    }
    for (const auto& series : cb->series) {
      if (series.curve < 0) continue;
      const CollectiveModelCurve& curve = cb->curves[static_cast<std::size_t>(series.curve)];
      if (series.op != "all_reduce" && series.op != "all_to_all") continue;
      const bool inter = curve.model.shape.nodes > 1;
      auto& pts = by_link[{series.op, inter}];
      for (const std::size_t i : series.calls) {
        const CallBandwidth& c = cb->calls[i];
        if (c.transfer_ms <= 0 || c.size_bytes <= 0) continue;
        pts.push_back(
            {c.size_bytes * busBandwidthFactor(c.op, c.group_size), c.transfer_ms, curve.model.timeMs(c.size_bytes)});
      }
    }
  }
  std::vector<CollectiveLinkFit> out;
  for (const auto& [key, pts] : by_link) {
    const std::string where = key.first + (key.second ? " across nodes" : " inside a node");
    std::set<double> sizes;
    for (const auto& p : pts) sizes.insert(p.u);
    if (pts.size() < kMinCalls || sizes.size() < kMinSizes) {
      if (warnings)
        warnings->push_back(where + ": " + std::to_string(pts.size()) + " call(s) of " + std::to_string(sizes.size()) +
                            " size(s); a fit needs " + std::to_string(kMinCalls) + " calls of " +
                            std::to_string(kMinSizes) + " or more sizes: the model prices it");
      continue;
    }
    double a = 0, b = 0;
    if (!lineFit(pts, a, b)) {
      if (warnings) warnings->push_back(where + ": time does not grow with size; not fitted, the model prices it");
      continue;
    }
    double fastest = pts.front().t_ms;
    for (const auto& p : pts) fastest = std::min(fastest, p.t_ms);
    const double fit_mape = mapeOf(pts, a, b);
    if (a > fastest || fit_mape > kMaxMape) {
      if (warnings)
        warnings->push_back(where + ": the calls do not follow latency + size / bandwidth (latency " +
                            std::to_string(a * 1e3) + " us against a fastest call of " + std::to_string(fastest * 1e3) +
                            " us, MAPE " + std::to_string(fit_mape * 100.0) + " %); not fitted, the model prices it");
      continue;
    }
    CollectiveLinkFit f;
    f.op = key.first;
    f.inter_node = key.second;
    f.calls = pts.size();
    f.busbw_gbps = 1.0 / (b * 1e6);  // b: ms per byte -> GB/s
    f.latency_us = a * 1e3;
    f.mape = fit_mape;
    standardErrors(pts, a, b, f);
    double model_sum = 0.0;
    for (const auto& p : pts) model_sum += std::abs(p.model_ms - p.t_ms) / p.t_ms;
    f.model_mape = model_sum / static_cast<double>(pts.size());
    out.push_back(f);
  }
  for (const auto& f : out) {
    const bool other = std::any_of(out.begin(), out.end(), [&](const CollectiveLinkFit& g) {
      return g.op == f.op && g.inter_node != f.inter_node;
    });
    if (!other && warnings)
      warnings->push_back(f.op + " is fitted " + (f.inter_node ? "across nodes" : "inside a node") +
                          " only: " + (f.inter_node ? "inside a node" : "across nodes") +
                          " the model prices it, so grids that use the two links are priced two ways");
  }
  return out;
}

}  // namespace shardscope::profiler
