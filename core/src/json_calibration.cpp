// shardscope.calibration/1 <-> Calibration. Format: docs/formats/calibration.md.
#include <algorithm>
#include <array>
#include <limits>

#include "json_parts.h"
#include "shardscope/core/json_io.h"

namespace shardscope::core {

namespace {
using detail::childPath;
using detail::json;
using detail::JsonReader;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The device the runs ran on: {"kind": "cpu"|"gpu", "name", "threads", "count"}.
DeviceInfo readDevice(JsonReader& r, const json& j, const std::string& path) {
  DeviceInfo d;
  if (!r.expectObject(j, path)) return d;
  static constexpr std::array<std::string_view, 3> kKinds = {"unknown", "cpu", "gpu"};
  if (auto k = detail::readEnum<DeviceClass>(r, j, path, "kind", kKinds, true)) d.kind = *k;
  if (auto s = r.string(j, path, "name", false, true)) d.name = *s;
  constexpr std::uint64_t kMaxCount = 1u << 24;
  if (auto x = r.integer(j, path, "threads", false, 0, kMaxCount)) d.threads = static_cast<std::uint32_t>(*x);
  if (auto x = r.integer(j, path, "count", false, 0, kMaxCount)) d.count = static_cast<std::uint32_t>(*x);
  return d;
}

nlohmann::ordered_json deviceJson(const DeviceInfo& d) {
  nlohmann::ordered_json j = {{"kind", std::string(toString(d.kind))}, {"name", d.name}};
  if (d.threads > 0) j["threads"] = d.threads;
  if (d.count > 0) j["count"] = d.count;
  return j;
}

}  // namespace

namespace detail {

Calibration readCalibrationBody(JsonReader& r, const json& j, const std::string& path) {
  Calibration c;
  if (!r.expectObject(j, path)) return c;
  if (auto s = r.string(j, path, "source")) c.source = *s;
  if (auto s = r.string(j, path, "created", false, true)) c.created = *s;
  if (const json* d = r.member(j, path, "device", false, "")) c.device = readDevice(r, *d, childPath(path, "device"));
  const json* coeffs = r.member(j, path, "coefficients", true, "an object of fitted coefficients");
  const std::string cpath = childPath(path, "coefficients");
  if (coeffs && r.expectObject(*coeffs, cpath)) {
    const auto& known = knownCalibrationCoefficients();
    for (const auto& [name, value] : coeffs->items()) {
      const std::string npath = childPath(cpath, name);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string list;
        for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        r.fail(npath, "unknown coefficient; expected one of " + list);
        continue;
      }
      FittedCoefficient f;
      if (value.is_number()) {  // shorthand: the value alone
        if (auto x = r.numberValue(value, npath, 0.0, kInf, true)) f.value = *x;
      } else if (r.expectObject(value, npath)) {
        if (auto x = r.number(value, npath, "value", true, 0.0, kInf, true)) f.value = *x;
        if (auto x = r.number(value, npath, "std_error", false, 0.0, kInf)) f.std_error = *x;
      }
      c.coefficients[name] = f;
    }
    // The cache term needs both its size and its cost: one alone would be ignored, silently.
    const bool size = c.coefficients.contains("cache_bytes"), cost = c.coefficients.contains("cache_miss_ns");
    if (size != cost)
      r.fail(childPath(cpath, size ? "cache_miss_ns" : "cache_bytes"),
             std::string("missing: the cache term takes cache_bytes and cache_miss_ns together, this calibration "
                         "has only ") +
                 (size ? "cache_bytes" : "cache_miss_ns"));
  }
  c.collectives = readCollectiveCurves(r, j, path);
  if (const json* fit = r.member(j, path, "fit", false, ""); fit && r.expectObject(*fit, childPath(path, "fit"))) {
    const std::string fpath = childPath(path, "fit");
    if (auto x = r.integer(*fit, fpath, "samples", true, 0)) c.fit.samples = *x;
    if (auto x = r.number(*fit, fpath, "mape", true, 0.0, kInf)) c.fit.mape = *x;
    if (auto x = r.number(*fit, fpath, "holdout_mape", false, 0.0, kInf)) c.fit.holdout_mape = *x;
  }
  return c;
}

}  // namespace detail

nlohmann::ordered_json toJson(const Calibration& c) {
  nlohmann::ordered_json j;
  j["schema"] = kCalibrationSchema;
  j["source"] = c.source;
  j["created"] = c.created;
  if (c.device.kind != DeviceClass::Unknown) j["device"] = deviceJson(c.device);
  auto& coeffs = j["coefficients"] = nlohmann::ordered_json::object();
  for (const auto& [name, f] : c.coefficients) coeffs[name] = {{"value", f.value}, {"std_error", f.std_error}};
  if (!c.collectives.empty()) j["collectives"] = detail::collectiveCurvesToJson(c.collectives);
  nlohmann::ordered_json fit = {{"samples", c.fit.samples}, {"mape", c.fit.mape}};
  if (c.fit.holdout_mape >= 0) fit["holdout_mape"] = c.fit.holdout_mape;
  j["fit"] = fit;
  return j;
}

Result<Calibration> calibrationFromJson(const nlohmann::json& j, const std::string& source) {
  return detail::readDocument<Calibration>(j, source, kCalibrationSchema, detail::readCalibrationBody);
}

}  // namespace shardscope::core
