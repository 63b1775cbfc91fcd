#include "shardscope/report/model_tables.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string_view>

#include "shardscope/core/json_io.h"
#include "shardscope/core/model_csv.h"
#include "shardscope/planner/cost_model.h"

namespace shardscope::report {

namespace {

bool endsWithNoCase(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && std::equal(suffix.rbegin(), suffix.rend(), text.rbegin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         });
}

// Whether the file starts with '{' (after a UTF-8 BOM and white space); an
// unreadable file goes by its name.
bool looksLikeJson(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return endsWithNoCase(path, ".json");
  std::string head(256, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(file.gcount()));
  std::string_view s = head;
  if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);
  const auto first = s.find_first_not_of(" \t\n\v\f\r");
  return first != std::string_view::npos && s[first] == '{';
}

}  // namespace

std::string freeName(const std::string& base, const std::unordered_set<std::string>& taken) {
  if (!taken.contains(base)) return base;
  for (int i = 2;; ++i) {
    std::string name = base;
    name += std::to_string(i);
    if (!taken.contains(name)) return name;
  }
}

std::unordered_set<std::string> namesOf(const std::vector<core::TableSpec>& tables) {
  std::unordered_set<std::string> names;
  for (const core::TableSpec& t : tables) names.insert(t.name);
  return names;
}

std::uint64_t stateBytes(const core::Project& project) {
  std::uint64_t total = 0;
  for (const core::TableSpec& t : project.model.tables)
    total += planner::stateBytesOf(t, project.model.optimizer, t.rows, t.dim);
  return total;
}

core::Result<ImportedTables> readTablesFile(const std::string& path) {
  ImportedTables out;
  if (!looksLikeJson(path)) {
    core::Result<core::TablesCsv> csv = core::loadTablesCsv(path);
    if (!csv) return csv.error();
    out.tables = std::move(csv->tables);
    out.warnings = std::move(csv->warnings);
    return out;
  }
  core::Result<nlohmann::json> j = core::readJsonFile(path);
  if (!j) return j.error();
  core::Result<core::FormatKind> kind = core::detectFormat(*j, path);
  if (!kind) return kind.error();
  if (*kind == core::FormatKind::Model) {
    core::Result<core::ModelSpec> m = core::modelFromJson(*j, path);
    if (!m) return m.error();
    out.model = std::move(m).value();
  } else if (*kind == core::FormatKind::Project) {
    core::Result<core::Project> project = core::projectFromJson(*j, path);
    if (!project) return project.error();
    out.model = std::move(project->model);
  } else {
    return core::Error{path + ": holds no tables (" + j->value("schema", std::string("?")) +
                       "); expected a CSV of tables, a model (shardscope.model/1) or a project file"};
  }
  out.tables = out.model->tables;
  return out;
}

}  // namespace shardscope::report
