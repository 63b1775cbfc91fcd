#include "project_document.h"

#include <QFileInfo>
#include <QUndoCommand>
#include <QUndoStack>

#include "project_files.h"
#include "shardscope/core/presets.h"
#include "shardscope/report/grid_choice.h"

namespace shardscope::app {

// One undoable change: the whole project before and after. Projects are
// small values (a 1,000-table model is ~100 KB), so whole copies keep undo
// exact without per-field commands.
class ProjectEditCommand : public QUndoCommand {
 public:
  ProjectEditCommand(ProjectDocument* document, core::Project before, core::Project after, const QString& text)
      : QUndoCommand(text), document_(document), before_(std::move(before)), after_(std::move(after)) {}
  void undo() override { document_->apply(before_); }
  void redo() override { document_->apply(after_); }

 private:
  ProjectDocument* document_;
  core::Project before_;
  core::Project after_;
};

ProjectDocument::ProjectDocument(QObject* parent)
    : QObject(parent), project_(core::defaultProject()), undo_(new QUndoStack(this)) {
  connect(undo_, &QUndoStack::cleanChanged, this, [this](bool clean) { emit modifiedChanged(!clean); });
}

bool ProjectDocument::isModified() const { return !undo_->isClean(); }

QString ProjectDocument::displayName() const {
  if (!project_.name.empty()) return QString::fromStdString(project_.name);
  if (!file_path_.isEmpty()) return QFileInfo(file_path_).completeBaseName();
  return tr("Untitled");
}

void ProjectDocument::reset(core::Project project, const QString& path) {
  project_ = std::move(project);
  undo_->clear();  // back to the clean state: emits modifiedChanged(false) if it was modified
  setFilePath(path);
  emit projectChanged();
  emit chosenGridChanged();
}

void ProjectDocument::resetToDefault() { reset(core::defaultProject()); }

void ProjectDocument::edit(core::Project project, const QString& description) {
  project = core::withFollowedName(project_, std::move(project));
  if (project == project_) return;
  undo_->push(new ProjectEditCommand(this, project_, std::move(project),
                                     description.isEmpty() ? tr("Edit project") : description));
}

void ProjectDocument::chooseGrid(std::optional<std::uint32_t> group_size, std::optional<core::RankLayout> layout) {
  if (!group_size) layout.reset();
  if (project_.chosen_group_size == group_size && project_.chosen_layout == layout) {
    emit chosenGridChanged();  // chosen again: views re-select it
    return;
  }
  core::Project after = project_;
  after.chosen_group_size = group_size;
  after.chosen_layout = layout;
  const QString text = group_size ? tr("Choose grid M = %1").arg(*group_size) : tr("Clear chosen grid");
  undo_->push(new ProjectEditCommand(this, project_, std::move(after), text));
}

void ProjectDocument::apply(const core::Project& project) {
  const bool planning_changed = !report::samePlanningInput(project, project_);
  const bool choice_changed =
      project.chosen_group_size != project_.chosen_group_size || project.chosen_layout != project_.chosen_layout;
  project_ = project;
  if (planning_changed) emit projectChanged();
  if (choice_changed) emit chosenGridChanged();
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
  if (saved) undo_->setClean();
  return saved;
}

core::Status ProjectDocument::saveAs(const QString& path) {
  core::Status saved = writeProjectFile(path, project_);
  if (!saved) return saved;
  setFilePath(QFileInfo(path).absoluteFilePath());
  undo_->setClean();
  return saved;
}

void ProjectDocument::setFilePath(const QString& path) {
  if (path == file_path_) return;
  file_path_ = path;
  emit filePathChanged(file_path_);
}

}  // namespace shardscope::app
