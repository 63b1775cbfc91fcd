// Built-in presets, embedded from resources/ at build time.
#include "shardscope/core/presets.h"

#include <filesystem>
#include <string_view>
#include <utility>

#include "shardscope/core/json_io.h"

namespace shardscope::core {

namespace embedded {
const std::vector<std::pair<std::string_view, std::string_view>>& models();
const std::vector<std::pair<std::string_view, std::string_view>>& clusters();
}  // namespace embedded

namespace {
template <class T, class F>
Result<T> fromPreset(const std::vector<std::pair<std::string_view, std::string_view>>& items, std::string_view name,
                     std::string_view what, F from) {
  for (const auto& [n, text] : items) {
    if (n != name) continue;
    const std::string source = "<built-in " + std::string(what) + " " + std::string(n) + ">";
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    return from(*j, source);
  }
  std::string list;
  for (const auto& item : items) list += (list.empty() ? "" : ", ") + std::string(item.first);
  return Error{"unknown " + std::string(what) + " preset \"" + std::string(name) + "\"; expected one of " + list +
               " or a path to a file"};
}

std::vector<std::string> names(const std::vector<std::pair<std::string_view, std::string_view>>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.emplace_back(item.first);
  return out;
}

bool looksLikePath(const std::string& s) { return s.find('/') != std::string::npos || s.ends_with(".json"); }
}  // namespace

std::vector<std::string> modelPresetNames() { return names(embedded::models()); }
std::vector<std::string> clusterPresetNames() { return names(embedded::clusters()); }

Result<ModelSpec> modelPreset(std::string_view name) {
  return fromPreset<ModelSpec>(embedded::models(), name, "model", modelFromJson);
}
Result<ClusterSpec> clusterPreset(std::string_view name) {
  return fromPreset<ClusterSpec>(embedded::clusters(), name, "cluster", clusterFromJson);
}

Result<ModelSpec> loadModelByNameOrFile(const std::string& s) {
  return looksLikePath(s) ? loadModel(s) : modelPreset(s);
}
Result<ClusterSpec> loadClusterByNameOrFile(const std::string& s) {
  return looksLikePath(s) ? loadCluster(s) : clusterPreset(s);
}

Project defaultProject() {
  Project p;
  // The presets are compiled in and covered by tests, so they always load.
  p.model = modelPreset(kDefaultModelPreset).value();
  p.cluster = clusterPreset(kDefaultClusterPreset).value();
  p.name = defaultProjectName(p.model, p.cluster);
  return p;
}

std::string defaultProjectName(const ModelSpec& model, const ClusterSpec& cluster) {
  const std::string short_model = model.name.substr(0, model.name.find(" ("));
  const std::string gpu = cluster.gpu.name.substr(0, cluster.gpu.name.find(' '));
  return short_model + " on " + std::to_string(cluster.worldSize()) + " " + gpu;
}

namespace {

// `name` reads "<model> on <any world size> <gpu>" for this model and GPU.
bool isDefaultFormName(const std::string& name, const ModelSpec& model, const ClusterSpec& cluster) {
  const std::string full = defaultProjectName(model, cluster);
  const std::string head = full.substr(0, full.find(" on ") + 4);
  const std::string tail = full.substr(full.rfind(' '));
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  const std::string middle = name.substr(head.size(), name.size() - head.size() - tail.size());
  return middle.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

Project withFollowedName(const Project& before, Project after) {
  const bool was_default = isDefaultFormName(before.name, before.model, before.cluster);
  const bool still_default = after.name == before.name || isDefaultFormName(after.name, before.model, before.cluster) ||
                             isDefaultFormName(after.name, after.model, after.cluster);
  if (was_default && still_default) after.name = defaultProjectName(after.model, after.cluster);
  return after;
}

}  // namespace shardscope::core
