// What a planning or profiling job starts from: the built-in default project,
// replaced by a project file and then part by part by a model, cluster,
// calibration or constraints (each a preset name or a file), the way the CLI's
// --project/--model/--cluster/--calibration/--constraints and the desktop's
// open dialogs give them.
#pragma once

#include <optional>
#include <string>

#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

struct ProjectSources {
  std::optional<std::string> project;      // a .shardscope file
  std::optional<std::string> model;        // a preset name or a file (loadModelByNameOrFile)
  std::optional<std::string> cluster;      // a preset name or a file
  std::optional<std::string> calibration;  // a shardscope.calibration/1 file
  std::optional<std::string> constraints;  // a shardscope.constraints/1 file
};

// The default project with the sources applied in that order; the first part
// that does not load is the error (its message names the file and field).
[[nodiscard]] Result<Project> resolveProject(const ProjectSources& sources);

}  // namespace shardscope::core
