// Synthetic and replayed ids for the engine. Every random number is a hash of
// (seed, table, sample, slot, attempt) — SplitMix64's finaliser — so a slice
// of samples never depends on the samples before it and no std:: distribution
// (whose output the standard leaves unspecified) is involved.
#include "shardscope/profiler/engine/workload.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "shardscope/core/hash.h"

namespace shardscope::profiler {

namespace {

// Slots are 32-bit, so this counter never collides with an id slot.
constexpr std::uint64_t kLengthSlot = std::uint64_t{1} << 40;
constexpr int kMaxZipfAttempts = 64;

using core::mix64;

std::uint64_t hash2(std::uint64_t key, std::uint64_t x) { return mix64(key ^ core::splitMix64(x)); }

// [0, 1) with 53 random bits; exact in IEEE double.
double unit(std::uint64_t u) { return static_cast<double>(u >> 11) * 0x1.0p-53; }

// floor(u * n / 2^64): an integer in [0, n) with bias below n / 2^64 (< 2.2e-10 for 4e9 rows).
std::uint64_t below(std::uint64_t u, std::uint64_t n) {
  const std::uint64_t a_lo = u & 0xFFFFFFFFULL, a_hi = u >> 32, b_lo = n & 0xFFFFFFFFULL, b_hi = n >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFULL) + lo_hi;
  return (hi_lo >> 32) + (cross >> 32) + hi_hi;
}

// Rejection-inversion for P(k) ~ k^-s, k in [1, n] (Hörmann & Derflinger 1996,
// as in Apache Commons RNG's RejectionInversionZipfSampler). Exact: accepted
// draws follow the discrete zipf law; about 1.0-1.1 attempts per draw.
double helper1(double x) {  // log1p(x) / x
  return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
double helper2(double x) {  // expm1(x) / x
  return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}
double zipfH(double x, double s) { return std::exp(-s * std::log(x)); }
double zipfHIntegral(double x, double s) {
  const double log_x = std::log(x);
  return helper2((1.0 - s) * log_x) * log_x;
}
double zipfHIntegralInverse(double x, double s) {
  double t = x * (1.0 - s);
  if (t < -1.0) t = -1.0;
  return std::exp(helper1(t) * x);
}

}  // namespace

WorkloadGenerator::WorkloadGenerator(const core::ModelSpec& model, std::uint64_t seed) {
  using core::AccessKind;
  tables_.reserve(model.tables.size());
  for (std::size_t ti = 0; ti < model.tables.size(); ++ti) {
    TableSampler t;
    t.spec = model.tables[ti];
    t.key = hash2(mix64(seed), ti);
    const std::uint64_t rows = t.spec.rows;
    const core::AccessSpec& a = t.spec.access;
    if (a.kind == AccessKind::HotSet && rows > 0) {
      // Same boundary as planner::AccessProfile, so measured and predicted loads agree.
      t.hot_rows = std::clamp<std::uint64_t>(
          static_cast<std::uint64_t>(std::ceil(a.hot_fraction * static_cast<double>(rows))), 1, rows);
    } else if (a.kind == AccessKind::Histogram && rows > 0 && !a.histogram.empty()) {
      // planner::AccessProfile's segments: bucket i ends at round(rows * (i+1) / B);
      // buckets narrower than a row fold into the next.
      const std::size_t buckets = a.histogram.size();
      double carried = 0.0, total = 0.0;
      std::uint64_t prev = 0;
      std::vector<double> mass;
      for (std::size_t i = 0; i < buckets; ++i) {
        const auto end = static_cast<std::uint64_t>(
            std::llround(static_cast<double>(rows) * static_cast<double>(i + 1) / static_cast<double>(buckets)));
        carried += std::max(0.0, a.histogram[i]);
        if (end > prev) {
          t.seg_begin.push_back(prev);
          mass.push_back(carried);
          total += carried;
          carried = 0.0;
          prev = end;
        }
      }
      if (total > 0.0) {
        t.seg_begin.push_back(rows);
        double acc = 0.0;
        for (double m : mass) {
          acc += m;
          t.seg_cdf.push_back(acc / total);
        }
        t.seg_cdf.back() = 1.0;
      } else {
        t.seg_begin.clear();  // no mass anywhere: uniform
      }
    } else if (a.kind == AccessKind::Zipf && rows > 1 && a.alpha > 0.0) {
      const double n = static_cast<double>(rows);
      t.zipf_h_x1 = zipfHIntegral(1.5, a.alpha) - 1.0;
      t.zipf_h_n = zipfHIntegral(n + 0.5, a.alpha);
      t.zipf_s = 2.0 - zipfHIntegralInverse(zipfHIntegral(2.5, a.alpha) - zipfH(2.0, a.alpha), a.alpha);
    }
    tables_.push_back(std::move(t));
  }
}

WorkloadGenerator::WorkloadGenerator(const core::ModelSpec& model, IdTrace trace)
    : replay_(true), trace_(std::move(trace)) {
  tables_.reserve(model.tables.size());
  for (std::size_t ti = 0; ti < model.tables.size(); ++ti) {
    TableSampler t;
    t.spec = model.tables[ti];
    if (ti < trace_.tables.size() && trace_.tables[ti].lengths.size() == trace_.samples) {
      t.replay_offsets.resize(trace_.samples + 1, 0);
      for (std::uint64_t s = 0; s < trace_.samples; ++s)
        t.replay_offsets[s + 1] = t.replay_offsets[s] + trace_.tables[ti].lengths[s];
      if (t.replay_offsets.back() != trace_.tables[ti].ids.size())
        t.replay_offsets.clear();  // inconsistent: empty samples
    }
    tables_.push_back(std::move(t));
  }
}

std::uint32_t WorkloadGenerator::length(const TableSampler& t, std::uint64_t sample) const {
  const core::PoolingSpec& p = t.spec.pooling;
  if (t.spec.rows == 0 || !(p.mean > 0.0)) return 0;
  // Fixed: sample s gets floor((s+1)m) - floor(s m) ids, a deterministic mix of
  // floor(m) and ceil(m) whose sum over any window of n samples is within 1 of n*m.
  const auto fixed = [&] {
    const double hi = std::floor(static_cast<double>(sample + 1) * p.mean),
                 lo = std::floor(static_cast<double>(sample) * p.mean);
    return static_cast<std::uint32_t>(std::clamp(hi - lo, 0.0, 4294967295.0));
  };
  if (p.kind == core::PoolingKind::Fixed) return fixed();
  // Uniform: every integer of [ceil(mean - spread), floor(mean + spread)] (clamped at 0) equally likely.
  const double lo_d = std::max(0.0, std::ceil(p.mean - p.spread)),
               hi_d = std::min(4294967295.0, std::floor(p.mean + p.spread));
  if (hi_d < lo_d) return fixed();
  const auto lo = static_cast<std::uint64_t>(lo_d), hi = static_cast<std::uint64_t>(hi_d);
  return static_cast<std::uint32_t>(lo + below(hash2(hash2(t.key, sample), kLengthSlot), hi - lo + 1));
}

std::uint64_t WorkloadGenerator::id(const TableSampler& t, std::uint64_t sample, std::uint32_t slot) const {
  using core::AccessKind;
  const std::uint64_t rows = t.spec.rows;
  const std::uint64_t key = hash2(hash2(t.key, sample), slot);
  const std::uint64_t u = hash2(key, 0);
  switch (t.spec.access.kind) {
    case AccessKind::Uniform:
      break;
    case AccessKind::HotSet: {
      if (t.hot_rows >= rows) break;
      const bool hot = unit(u) < t.spec.access.hot_probability;
      const std::uint64_t v = hash2(key, 1);
      return hot ? below(v, t.hot_rows) : t.hot_rows + below(v, rows - t.hot_rows);
    }
    case AccessKind::Histogram: {
      if (t.seg_cdf.empty()) break;
      const double x = unit(u);
      const auto seg =
          static_cast<std::size_t>(std::upper_bound(t.seg_cdf.begin(), t.seg_cdf.end(), x) - t.seg_cdf.begin());
      const std::size_t i = std::min(seg, t.seg_cdf.size() - 1);
      return t.seg_begin[i] + below(hash2(key, 1), t.seg_begin[i + 1] - t.seg_begin[i]);
    }
    case AccessKind::Zipf: {
      if (rows <= 1 || !(t.spec.access.alpha > 0.0)) break;
      const double s = t.spec.access.alpha, n = static_cast<double>(rows);
      std::uint64_t k = 1;
      for (int attempt = 0; attempt < kMaxZipfAttempts; ++attempt) {
        const double v =
            t.zipf_h_n + unit(hash2(key, static_cast<std::uint64_t>(attempt))) * (t.zipf_h_x1 - t.zipf_h_n);
        const double x = zipfHIntegralInverse(v, s);
        const double kd = std::clamp(std::floor(x + 0.5), 1.0, n);
        k = static_cast<std::uint64_t>(kd);
        if (kd - x <= t.zipf_s || v >= zipfHIntegral(kd + 0.5, s) - zipfH(kd, s)) break;
      }
      return k - 1;  // rank k = row k - 1
    }
  }
  return below(u, rows);
}

Batch WorkloadGenerator::batch(std::size_t table, std::uint64_t first_sample, std::uint32_t samples) const {
  Batch b;
  b.lengths.resize(samples, 0);
  if (table >= tables_.size()) return b;
  const TableSampler& t = tables_[table];
  if (replay_) {
    if (t.replay_offsets.empty() || trace_.samples == 0) return b;
    const Batch& src = trace_.tables[table];
    for (std::uint32_t i = 0; i < samples; ++i) {
      const std::uint64_t s = (first_sample + i) % trace_.samples;
      b.lengths[i] = src.lengths[s];
      b.ids.insert(b.ids.end(), src.ids.begin() + static_cast<std::ptrdiff_t>(t.replay_offsets[s]),
                   src.ids.begin() + static_cast<std::ptrdiff_t>(t.replay_offsets[s + 1]));
    }
    return b;
  }
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < samples; ++i) total += b.lengths[i] = length(t, first_sample + i);
  b.ids.reserve(total);
  for (std::uint32_t i = 0; i < samples; ++i)
    for (std::uint32_t slot = 0; slot < b.lengths[i]; ++slot) b.ids.push_back(id(t, first_sample + i, slot));
  return b;
}

IdTrace WorkloadGenerator::record(std::uint64_t first_sample, std::uint32_t samples) const {
  IdTrace trace;
  trace.samples = samples;
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    trace.rows.push_back(tables_[t].spec.rows);
    trace.tables.push_back(batch(t, first_sample, samples));
  }
  return trace;
}

core::TableAccess measuredAccess(const WorkloadGenerator& workload, const core::TableSpec& spec, std::size_t table,
                                 const std::vector<SampleRange>& ranges, std::size_t buckets, std::size_t hot) {
  core::TableAccess out;
  out.name = spec.name;
  out.rows = spec.rows;
  out.buckets.assign(std::clamp<std::size_t>(buckets, 1, std::min<std::uint64_t>(spec.rows, core::kMaxAccessBuckets)),
                     0);
  std::unordered_map<std::uint64_t, std::uint64_t> counted;
  for (const SampleRange& r : ranges) {
    const Batch b = workload.batch(table, r.first, r.samples);
    for (std::uint64_t id : b.ids) {
      ++out.buckets[core::accessBucketOf(id, spec.rows, out.buckets.size())];
      ++out.lookups;
      if (auto it = counted.find(id); it != counted.end())
        ++it->second;
      else if (counted.size() < kAccessCountedIds)
        counted.emplace(id, 1);
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> top(counted.begin(), counted.end());
  const std::size_t keep = std::min({hot, core::kMaxHotIds, top.size()});
  const auto hotter = [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(keep), top.end(), hotter);
  top.resize(keep);
  out.hot = std::move(top);
  return out;
}

core::Status storeTableAccess(core::store::RunWriter& writer, const WorkloadGenerator& workload,
                              const core::ModelSpec& model, const std::vector<SampleRange>& ranges) {
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    const core::TableAccess access = measuredAccess(workload, model.tables[t], t, ranges);
    if (auto s = writer.setTableAccess(access.name, core::toJson(access).dump()); !s) return s;
  }
  return core::Ok{};
}

}  // namespace shardscope::profiler
