#include "project_document.h"

#include <QFileInfo>

#include "project_files.h"
#include "shardscope/core/presets.h"

namespace shardscope::app {

ProjectDocument::ProjectDocument(QObject* parent) : QObject(parent), project_(core::defaultProject()) {}

QString ProjectDocument::displayName() const {
  if (!project_.name.empty()) return QString::fromStdString(project_.name);
  if (!file_path_.isEmpty()) return QFileInfo(file_path_).completeBaseName();
  return tr("Untitled");
}

void ProjectDocument::reset(core::Project project, const QString& path) {
  project_ = std::move(project);
  setFilePath(path);
  setModified(false);
  emit projectChanged();
}

void ProjectDocument::resetToDefault() { reset(core::defaultProject()); }

void ProjectDocument::edit(core::Project project) {
  project_ = std::move(project);
  setModified(true);
  emit projectChanged();
}

void ProjectDocument::chooseGroupSize(std::optional<std::uint32_t> group_size) {
  if (project_.chosen_group_size != group_size) {
    project_.chosen_group_size = group_size;
    setModified(true);
  }
  emit chosenGridChanged();
}

core::Status ProjectDocument::open(const QString& path) {
  core::Result<core::Project> loaded = readProjectFile(path);
  if (!loaded) return loaded.error();
  reset(std::move(loaded).value(), QFileInfo(path).absoluteFilePath());
  return core::Ok{};
}

core::Status ProjectDocument::save() {
  if (file_path_.isEmpty()) return core::Error{"the project has no file yet; use Save As"};
  core::Status saved = writeProjectFile(file_path_, project_);
  if (saved) setModified(false);
  return saved;
}

core::Status ProjectDocument::saveAs(const QString& path) {
  core::Status saved = writeProjectFile(path, project_);
  if (!saved) return saved;
  setFilePath(QFileInfo(path).absoluteFilePath());
  setModified(false);
  return saved;
}

void ProjectDocument::setFilePath(const QString& path) {
  if (path == file_path_) return;
  file_path_ = path;
  emit filePathChanged(file_path_);
}

void ProjectDocument::setModified(bool modified) {
  if (modified == modified_) return;
  modified_ = modified;
  emit modifiedChanged(modified_);
}

}  // namespace shardscope::app
