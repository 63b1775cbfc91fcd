// The project open in a window: the core::Project, the file it came from,
// whether it changed since it was saved, and the undo history of its edits.
// Pages read it and listen to its signals; they never load or save files
// themselves, and they change it only through edit()/chooseGrid() so every
// change can be undone.
#pragma once

#include <QObject>
#include <QString>
#include <cstdint>
#include <optional>

#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

class QUndoStack;

namespace shardscope::app {

class ProjectDocument : public QObject {
  Q_OBJECT

 public:
  // Starts with core::defaultProject(), untitled and unmodified.
  explicit ProjectDocument(QObject* parent = nullptr);

  [[nodiscard]] const core::Project& project() const { return project_; }
  [[nodiscard]] const QString& filePath() const { return file_path_; }
  // Differs from the file (or, untitled, from how it started): the undo
  // stack is away from its clean state.
  [[nodiscard]] bool isModified() const;
  // The project's name, else the file's base name, else "Untitled".
  [[nodiscard]] QString displayName() const;
  // Undo/redo of edits; cleared when a project is opened or reset.
  [[nodiscard]] QUndoStack* undoStack() const { return undo_; }

  // Replaces the project as loaded from `path` (empty: not from a file);
  // the result is unmodified and the undo history is cleared.
  void reset(core::Project project, const QString& path = {});
  void resetToDefault();
  // An edit: replaces the project, as one undoable step named `description`
  // ("Edit rows of t3"). Emits projectChanged (the sweep reruns). An edit
  // that changes nothing is ignored.
  void edit(core::Project project, const QString& description = {});
  // Records the grid the user picked (its M and layout; nullopt: none), as
  // an undoable step. Emits chosenGridChanged, not projectChanged (the
  // choice does not change what is planned).
  void chooseGrid(std::optional<std::uint32_t> group_size, std::optional<core::RankLayout> layout = std::nullopt);
  void chooseGroupSize(std::optional<std::uint32_t> group_size) { chooseGrid(group_size); }

  // On failure the document is unchanged and the error names file and JSON path.
  [[nodiscard]] core::Status open(const QString& path);
  // Saves to filePath(); fails when the document has no file yet.
  [[nodiscard]] core::Status save();
  // On success the document's file becomes `path` and it is unmodified.
  [[nodiscard]] core::Status saveAs(const QString& path);

 signals:
  void projectChanged();
  void filePathChanged(const QString& path);
  void modifiedChanged(bool modified);
  void chosenGridChanged();

 private:
  friend class ProjectEditCommand;
  // Applied by the undo commands: sets the project and emits what changed.
  void apply(const core::Project& project);
  void setFilePath(const QString& path);

  core::Project project_;
  QString file_path_;
  QUndoStack* undo_;
};

}  // namespace shardscope::app
