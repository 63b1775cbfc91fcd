#include "shardscope/core/project_inputs.h"

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"

namespace shardscope::core {

namespace {
// Replaces `part` with what `load` reads from `source`, when there is one.
template <class Part, class Load>
Status replaceFrom(const std::optional<std::string>& source, Load load, Part& part) {
  if (!source) return Ok{};
  auto loaded = load(*source);
  if (!loaded) return loaded.error();
  part = std::move(loaded).value();
  return Ok{};
}
}  // namespace

Result<Project> resolveProject(const ProjectSources& sources) {
  Project project = defaultProject();
  // In this order, each only when the one before loaded.
  Status s = replaceFrom(sources.project, loadProject, project);
  if (s) s = replaceFrom(sources.model, loadModelByNameOrFile, project.model);
  if (s) s = replaceFrom(sources.cluster, loadClusterByNameOrFile, project.cluster);
  if (s) s = replaceFrom(sources.calibration, loadCalibration, project.calibration);
  if (s) s = replaceFrom(sources.constraints, loadConstraints, project.constraints);
  if (!s) return s.error();
  return project;
}

}  // namespace shardscope::core
