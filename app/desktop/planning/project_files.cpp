#include "project_files.h"

#include <QCoreApplication>
#include <QFile>

#include "shardscope/core/json_io.h"

namespace shardscope::app {

std::string localPath(const QString& path) { return QFile::encodeName(path).toStdString(); }

QString projectFileFilter() {
  return QCoreApplication::translate("shardscope", "ShardScope projects (*.shardscope);;All files (*)");
}

core::Result<core::Project> readProjectFile(const QString& path) {
  if (path.isEmpty()) return core::Error{"no project file given"};
  return core::loadProject(localPath(path));
}

core::Status writeProjectFile(const QString& path, const core::Project& project) {
  if (path.isEmpty()) return core::Error{"no project file given"};
  return core::writeJsonFile(localPath(path), core::toJson(project));
}

}  // namespace shardscope::app
