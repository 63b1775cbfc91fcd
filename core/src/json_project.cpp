// shardscope.project/1 <-> Project. A project holds its model and cluster
// inline, or names a built-in preset ("model": "dcnv2"). Format:
// docs/formats/project.md.
#include <filesystem>

#include "json_parts.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/presets.h"

namespace shardscope::core {

namespace {
using detail::childPath;
using detail::json;
using detail::JsonReader;

// An inline object must carry its own schema tag only if it has one.
bool checkNestedSchema(JsonReader& r, const json& v, const std::string& path, std::string_view expected) {
  if (!v.is_object() || !v.contains("schema")) return true;
  if (v["schema"].is_string() && v["schema"].get<std::string>() == expected) return true;
  r.fail(childPath(path, "schema"),
         "expected \"" + std::string(expected) + "\" (or no schema), got " + detail::describe(v["schema"]));
  return false;
}

template <class Spec, class PresetFn, class BodyFn>
Spec readPart(JsonReader& r, const json& j, std::string_view key, std::string_view schema, PresetFn preset,
              BodyFn body) {
  const std::string path = childPath("", key);
  const json* v = r.member(j, "", key, true, "a preset name or an inline object");
  if (!v) return Spec{};
  if (v->is_string()) {
    // A preset name, or a file path relative to the project file.
    std::string name = v->get<std::string>();
    if (name.find('/') != std::string::npos || name.ends_with(".json")) {
      const std::filesystem::path base = std::filesystem::path(r.source()).parent_path();
      if (std::filesystem::path(name).is_relative() && !base.empty()) name = (base / name).string();
    }
    auto p = preset(name);
    if (!p) {
      r.fail(path, p.error().message);
      return Spec{};
    }
    return std::move(p).value();
  }
  if (!checkNestedSchema(r, *v, path, schema)) return Spec{};
  return body(r, *v, path);
}
}  // namespace

nlohmann::ordered_json toJson(const Project& p) {
  nlohmann::ordered_json j;
  j["schema"] = kProjectSchema;
  j["name"] = p.name;
  j["model"] = toJson(p.model);
  j["cluster"] = toJson(p.cluster);
  j["calibration"] = p.calibration ? toJson(*p.calibration) : nlohmann::ordered_json(nullptr);
  j["constraints"] = toJson(p.constraints);
  j["sync_interval"] = p.sync_interval;
  j["target"] = toString(p.target);
  j["trace_store"] = p.trace_store.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.trace_store);
  if (p.access)
    j["access"] = {{"file", p.access->file}, {"source", p.access->source}, {"tables", p.access->tables}};
  else
    j["access"] = nullptr;
  if (p.chosen_group_size) {
    nlohmann::ordered_json g{{"sharding_group_size", *p.chosen_group_size}};
    if (p.chosen_layout) g["layout"] = toString(*p.chosen_layout);
    j["chosen_grid"] = std::move(g);
  } else {
    j["chosen_grid"] = nullptr;
  }
  return j;
}

Result<Project> projectFromJson(const nlohmann::json& j, const std::string& source) {
  JsonReader r(source);
  if (!r.schema(j, kProjectSchema)) return r.error();
  Project p;
  if (auto s = r.string(j, "", "name")) p.name = *s;
  p.model = readPart<ModelSpec>(r, j, "model", kModelSchema, loadModelByNameOrFile, detail::readModelBody);
  p.cluster = readPart<ClusterSpec>(r, j, "cluster", kClusterSchema, loadClusterByNameOrFile, detail::readClusterBody);
  if (const json* c = r.member(j, "", "calibration", false, "")) {
    if (checkNestedSchema(r, *c, "/calibration", kCalibrationSchema))
      p.calibration = detail::readCalibrationBody(r, *c, "/calibration");
  }
  if (const json* c = r.member(j, "", "constraints", false, "")) {
    if (checkNestedSchema(r, *c, "/constraints", kConstraintsSchema))
      p.constraints = detail::readConstraintsBody(r, *c, "/constraints");
  }
  if (auto k = r.integer(j, "", "sync_interval", false, 1, 1000000)) p.sync_interval = static_cast<std::uint32_t>(*k);
  if (auto t = r.string(j, "", "target", false)) {
    if (auto target = planTargetFromString(*t))
      p.target = *target;
    else
      r.fail("/target", "expected \"torchrec\" or \"shardscope\", got \"" + *t + "\"");
  }
  if (auto s = r.string(j, "", "trace_store", false)) p.trace_store = *s;
  if (const json* a = r.member(j, "", "access", false, ""); a && r.expectObject(*a, "/access")) {
    Project::AttachedAccess attached;
    if (auto s = r.string(*a, "/access", "file", false, true)) attached.file = *s;
    if (auto s = r.string(*a, "/access", "source", false, true)) attached.source = *s;
    if (const json* t = r.member(*a, "/access", "tables", false, ""); t && r.expectArray(*t, "/access/tables")) {
      for (std::size_t i = 0; i < t->size(); ++i) {
        if ((*t)[i].is_string())
          attached.tables.push_back((*t)[i].get<std::string>());
        else
          r.fail(childPath("/access/tables", i), "expected a table name, got " + detail::describe((*t)[i]));
      }
    }
    p.access = std::move(attached);
  }
  if (const json* g = r.member(j, "", "chosen_grid", false, ""); g && r.expectObject(*g, "/chosen_grid")) {
    if (auto m = r.integer(*g, "/chosen_grid", "sharding_group_size", true, 1, kMaxWorldSize)) {
      const std::uint32_t n = p.cluster.worldSize();
      if (n && n % *m != 0)
        r.fail("/chosen_grid/sharding_group_size",
               "expected a divisor of the cluster's " + std::to_string(n) + " GPUs, got " + std::to_string(*m));
      else
        p.chosen_group_size = static_cast<std::uint32_t>(*m);
    }
    if (auto l = r.string(*g, "/chosen_grid", "layout", false)) {
      if (auto layout = rankLayoutFromString(*l))
        p.chosen_layout = *layout;
      else
        r.fail("/chosen_grid/layout", "expected \"strided\" or \"contiguous\", got \"" + *l + "\"");
    }
  }
  if (!r.ok()) return r.error();
  return p;
}

}  // namespace shardscope::core
