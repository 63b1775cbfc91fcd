// shardscope.model/1 <-> ModelSpec. Format: docs/formats/model.md.
#include <array>
#include <limits>
#include <unordered_map>

#include "json_parts.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/summary.h"

namespace shardscope::core {

namespace {
using detail::childPath;
using detail::describe;
using detail::json;
using detail::JsonReader;

constexpr std::array<std::string_view, 4> kDTypes = {"fp32", "fp16", "bf16", "int8"};
constexpr std::array<std::string_view, 3> kOptimizers = {"sgd", "rowwise_adagrad", "adam"};
constexpr std::array<std::string_view, 2> kPoolingKinds = {"fixed", "uniform"};
constexpr std::array<std::string_view, 4> kAccessKinds = {"uniform", "zipf", "hot_set", "histogram"};
constexpr double kInf = std::numeric_limits<double>::infinity();

PoolingSpec readPooling(JsonReader& r, const json& t, const std::string& path) {
  PoolingSpec p;
  const json* v = r.member(t, path, "pooling", false, "");
  if (!v) return p;  // default: one id per sample
  const std::string ppath = childPath(path, "pooling");
  if (v->is_number()) {  // shorthand: a fixed multi-hot size
    if (auto m = r.numberValue(*v, ppath, 0.0, kMaxPooling, true)) p.mean = *m;
    return p;
  }
  if (!r.expectObject(*v, ppath)) return p;
  if (auto k = detail::readEnum<PoolingKind>(r, *v, ppath, "kind", kPoolingKinds, false)) p.kind = *k;
  if (auto m = r.number(*v, ppath, "mean", true, 0.0, kMaxPooling, true)) p.mean = *m;
  if (p.kind == PoolingKind::Uniform) {
    if (auto s = r.number(*v, ppath, "spread", true, 0.0, kInf)) {
      p.spread = *s;
      if (p.spread > p.mean)
        r.fail(childPath(ppath, "spread"),
               "expected spread <= mean (" + std::to_string(p.mean) + "), got " + std::to_string(p.spread));
    }
  }
  return p;
}

AccessSpec readAccess(JsonReader& r, const json& t, const std::string& path) {
  AccessSpec a;
  const json* v = r.member(t, path, "access", false, "");
  if (!v) return a;
  const std::string apath = childPath(path, "access");
  if (!r.expectObject(*v, apath)) return a;
  if (auto k = detail::readEnum<AccessKind>(r, *v, apath, "kind", kAccessKinds, true)) a.kind = *k;
  switch (a.kind) {
    case AccessKind::Uniform:
      break;
    case AccessKind::Zipf:
      if (auto x = r.number(*v, apath, "alpha", true, 0.0, 10.0, true)) a.alpha = *x;
      break;
    case AccessKind::HotSet:
      if (auto x = r.number(*v, apath, "hot_fraction", true, 0.0, 1.0, true)) a.hot_fraction = *x;
      if (auto x = r.number(*v, apath, "hot_probability", true, 0.0, 1.0, true)) a.hot_probability = *x;
      break;
    case AccessKind::Histogram: {
      const json* h = r.member(*v, apath, "histogram", true, "an array of shares >= 0");
      const std::string hpath = childPath(apath, "histogram");
      if (!h || !r.expectArray(*h, hpath)) break;
      if (h->empty()) {
        r.fail(hpath, "expected at least one bucket");
        break;
      }
      double sum = 0.0;
      for (std::size_t i = 0; i < h->size(); ++i) {
        if (auto x = r.numberValue((*h)[i], childPath(hpath, i), 0.0, kInf)) {
          a.histogram.push_back(*x);
          sum += *x;
        }
      }
      if (a.histogram.size() == h->size()) {
        if (sum <= 0.0)
          r.fail(hpath, "expected shares that sum to more than 0");
        else
          for (auto& x : a.histogram) x /= sum;
      }
      break;
    }
  }
  return a;
}

TableSpec readTable(JsonReader& r, const json& t, const std::string& path) {
  TableSpec spec;
  if (!r.expectObject(t, path)) return spec;
  if (auto s = r.string(t, path, "name")) spec.name = *s;
  if (auto x = r.integer(t, path, "rows", true, 1, kMaxRows)) spec.rows = *x;
  if (const json* d = r.member(t, path, "dim", true, "a positive multiple of 4")) {
    auto x = r.integerValue(*d, childPath(path, "dim"), 1, kMaxDim);
    if (x && *x % 4 != 0)
      r.fail(childPath(path, "dim"), "expected a positive multiple of 4, got " + describe(*d));
    else if (x)
      spec.dim = static_cast<std::uint32_t>(*x);
  }
  if (auto d = detail::readEnum<DType>(r, t, path, "dtype", kDTypes, false)) spec.dtype = *d;
  spec.pooling = readPooling(r, t, path);
  spec.access = readAccess(r, t, path);
  if (spec.rows && spec.dim && spec.weightBytes() > kMaxTableBytes)
    r.fail(path, "expected a table of at most " + formatBytes(kMaxTableBytes) +
                     " of weights (rows x dim x dtype bytes), got " + std::to_string(spec.rows) + " x " +
                     std::to_string(spec.dim) + " x " + std::to_string(dtypeBytes(spec.dtype)) + " bytes");
  return spec;
}
}  // namespace

namespace detail {

ModelSpec readModelBody(JsonReader& r, const json& j, const std::string& path) {
  ModelSpec m;
  if (!r.expectObject(j, path)) return m;
  if (auto s = r.string(j, path, "name")) m.name = *s;
  if (auto x = r.integer(j, path, "batch_size_per_gpu", true, 1, kMaxBatchPerGpu))
    m.batch_size_per_gpu = static_cast<std::uint32_t>(*x);
  if (auto o = readEnum<Optimizer>(r, j, path, "optimizer", kOptimizers, false)) m.optimizer = *o;
  if (const json* d = r.member(j, path, "dense", false, "")) {
    const std::string dpath = childPath(path, "dense");
    if (r.expectObject(*d, dpath)) {
      if (auto x = r.integer(*d, dpath, "parameters", true, 0, kMaxDenseParameters)) m.dense.parameters = *x;
      if (auto x = r.number(*d, dpath, "flops_per_sample", true, 0.0, kInf)) m.dense.flops_per_sample = *x;
    }
  }
  const json* tables = r.member(j, path, "tables", true, "an array of tables");
  const std::string tpath = childPath(path, "tables");
  if (tables && r.expectArray(*tables, tpath)) {
    if (tables->empty()) r.fail(tpath, "expected at least one table");
    if (tables->size() > kMaxTables)
      r.fail(tpath,
             "expected at most " + std::to_string(kMaxTables) + " tables, got " + std::to_string(tables->size()));
    std::unordered_map<std::string, std::size_t> seen;
    m.tables.reserve(std::min<std::size_t>(tables->size(), kMaxTables));
    for (std::size_t i = 0; i < tables->size() && i < kMaxTables; ++i) {
      m.tables.push_back(readTable(r, (*tables)[i], childPath(tpath, i)));
      const std::string& name = m.tables.back().name;
      if (name.empty()) continue;
      auto [it, inserted] = seen.emplace(name, i);
      if (!inserted)
        r.fail(childPath(childPath(tpath, i), "name"),
               "expected a unique table name, \"" + name + "\" is also at " + childPath(tpath, it->second));
    }
    std::optional<std::uint64_t> total = 0;
    for (const auto& t : m.tables)
      if (total) total = addChecked(*total, t.weightBytes());
    if (!total || *total > kMaxModelBytes)
      r.fail(tpath, "expected at most " + formatBytes(kMaxModelBytes) + " of embedding weights in all tables together");
  }
  return m;
}

}  // namespace detail

nlohmann::ordered_json toJson(const ModelSpec& m) {
  nlohmann::ordered_json j;
  j["schema"] = kModelSchema;
  j["name"] = m.name;
  j["batch_size_per_gpu"] = m.batch_size_per_gpu;
  j["optimizer"] = kOptimizers[static_cast<std::size_t>(m.optimizer)];
  j["dense"] = {{"parameters", m.dense.parameters}, {"flops_per_sample", m.dense.flops_per_sample}};
  auto& tables = j["tables"] = nlohmann::ordered_json::array();
  for (const auto& t : m.tables) {
    nlohmann::ordered_json tj;
    tj["name"] = t.name;
    tj["rows"] = t.rows;
    tj["dim"] = t.dim;
    tj["dtype"] = kDTypes[static_cast<std::size_t>(t.dtype)];
    nlohmann::ordered_json pj;
    pj["kind"] = kPoolingKinds[static_cast<std::size_t>(t.pooling.kind)];
    pj["mean"] = t.pooling.mean;
    if (t.pooling.kind == PoolingKind::Uniform) pj["spread"] = t.pooling.spread;
    tj["pooling"] = pj;
    nlohmann::ordered_json aj;
    aj["kind"] = kAccessKinds[static_cast<std::size_t>(t.access.kind)];
    switch (t.access.kind) {
      case AccessKind::Uniform:
        break;
      case AccessKind::Zipf:
        aj["alpha"] = t.access.alpha;
        break;
      case AccessKind::HotSet:
        aj["hot_fraction"] = t.access.hot_fraction;
        aj["hot_probability"] = t.access.hot_probability;
        break;
      case AccessKind::Histogram:
        aj["histogram"] = t.access.histogram;
        break;
    }
    tj["access"] = aj;
    tables.push_back(std::move(tj));
  }
  return j;
}

Result<ModelSpec> modelFromJson(const nlohmann::json& j, const std::string& source) {
  return detail::readDocument<ModelSpec>(j, source, kModelSchema, detail::readModelBody);
}

}  // namespace shardscope::core
