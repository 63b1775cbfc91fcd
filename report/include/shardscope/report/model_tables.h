// The Model page's table work that needs no window: free names for new and
// copied tables, the bytes the planner keeps per table (weights plus
// optimizer state), and the tables a CSV, model or project file holds, told
// apart by content.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "shardscope/core/model.h"
#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::report {

// `base`, else base2, base3, ... : the first name not in `taken`.
[[nodiscard]] std::string freeName(const std::string& base, const std::unordered_set<std::string>& taken);
// The names of `tables`.
[[nodiscard]] std::unordered_set<std::string> namesOf(const std::vector<core::TableSpec>& tables);

// Weights plus optimizer state, as the planner counts them (its cost model;
// access does not matter for bytes, so it is left out to keep this cheap).
[[nodiscard]] std::uint64_t stateBytes(const core::Project& project);

// What a file holds, read by content: a JSON model or project, else CSV.
struct ImportedTables {
  std::optional<core::ModelSpec> model;  // set for model and project files
  std::vector<core::TableSpec> tables;
  std::vector<std::string> warnings;
};

// A CSV of tables (docs/formats/model-csv.md), a shardscope.model/1 file or
// a project (its model). Errors name the file (and line/column or JSON path).
[[nodiscard]] core::Result<ImportedTables> readTablesFile(const std::string& path);

}  // namespace shardscope::report
