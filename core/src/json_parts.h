// Body readers and writers for each format, shared by the top-level loaders
// and by formats that nest others (a project holds a model and a cluster).
#pragma once

#include <array>
#include <optional>
#include <string>

#include "shardscope/core/json_reader.h"
#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/constraints.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"

namespace shardscope::core::detail {

ModelSpec readModelBody(JsonReader& r, const json& j, const std::string& path);
ClusterSpec readClusterBody(JsonReader& r, const json& j, const std::string& path);
Calibration readCalibrationBody(JsonReader& r, const json& j, const std::string& path);
Constraints readConstraintsBody(JsonReader& r, const json& j, const std::string& path);
std::vector<CollectiveCurve> readCollectiveCurves(JsonReader& r, const json& j, const std::string& path);
nlohmann::ordered_json collectiveCurvesToJson(const std::vector<CollectiveCurve>& curves);

// A whole document: check its schema tag, read its body, fail with every problem found.
template <class T, class Body>
Result<T> readDocument(const json& j, const std::string& source, std::string_view schema, Body body) {
  JsonReader r(source);
  if (!r.schema(j, schema)) return r.error();
  T value = body(r, j, "");
  if (!r.ok()) return r.error();
  return value;
}

// An enum spelled as one of `names` (index = enum value).
template <class E, std::size_t K>
std::optional<E> readEnum(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                          const std::array<std::string_view, K>& names, bool required) {
  std::string expected = "one of";
  for (std::size_t i = 0; i < K; ++i) expected += std::string(i ? ", " : " ") + "\"" + std::string(names[i]) + "\"";
  const json* v = r.member(obj, path, key, required, expected);
  if (!v) return std::nullopt;
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    for (std::size_t i = 0; i < K; ++i)
      if (names[i] == s) return static_cast<E>(i);
  }
  r.fail(childPath(path, key), "expected " + expected + ", got " + describe(*v));
  return std::nullopt;
}

}  // namespace shardscope::core::detail
