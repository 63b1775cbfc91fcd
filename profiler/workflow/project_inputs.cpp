#include "shardscope/profiler/workflow/project_inputs.h"

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"

namespace shardscope::profiler {

namespace {
// Replaces `part` with what `load` reads from `source`, when there is one.
template <class Part, class Load>
core::Status replaceFrom(const std::optional<std::string>& source, Load load, Part& part) {
  if (!source) return core::Ok{};
  auto loaded = load(*source);
  if (!loaded) return loaded.error();
  part = std::move(loaded).value();
  return core::Ok{};
}
}  // namespace

core::Result<core::Project> resolveProject(const ProjectSources& sources) {
  core::Project project = core::defaultProject();
  // In this order, each only when the one before loaded.
  core::Status s = replaceFrom(sources.project, core::loadProject, project);
  if (s) s = replaceFrom(sources.model, core::loadModelByNameOrFile, project.model);
  if (s) s = replaceFrom(sources.cluster, core::loadClusterByNameOrFile, project.cluster);
  if (s) s = replaceFrom(sources.calibration, core::loadCalibration, project.calibration);
  if (s) s = replaceFrom(sources.constraints, core::loadConstraints, project.constraints);
  if (!s) return s.error();
  return project;
}

}  // namespace shardscope::profiler
