// The project open in a window: the core::Project, the file it came from and
// whether it changed since. Pages read it and listen to its signals; they
// never load or save files themselves.
#pragma once

#include <QObject>
#include <QString>
#include <cstdint>
#include <optional>

#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::app {

class ProjectDocument : public QObject {
  Q_OBJECT

 public:
  // Starts with core::defaultProject(), untitled and unmodified.
  explicit ProjectDocument(QObject* parent = nullptr);

  [[nodiscard]] const core::Project& project() const { return project_; }
  [[nodiscard]] const QString& filePath() const { return file_path_; }
  [[nodiscard]] bool isModified() const { return modified_; }
  // The project's name, else the file's base name, else "Untitled".
  [[nodiscard]] QString displayName() const;

  // Replaces the project as loaded from `path` (empty: not from a file);
  // the result is unmodified.
  void reset(core::Project project, const QString& path = {});
  void resetToDefault();
  // An edit: replaces the project and marks the document modified.
  void edit(core::Project project);
  // Records the grid the user picked (its M); marks the document modified
  // when that changes. Emits chosenGridChanged, not projectChanged (the
  // choice does not change what is planned).
  void chooseGroupSize(std::optional<std::uint32_t> group_size);

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
  void setFilePath(const QString& path);
  void setModified(bool modified);

  core::Project project_;
  QString file_path_;
  bool modified_ = false;
};

}  // namespace shardscope::app
