// Reading and writing `*.shardscope` project files for the desktop app. Kept
// behind plain functions (no widgets, no dialogs) so loading can move to a
// worker thread (QtConcurrent) without touching the callers' error handling.
#pragma once

#include <QString>
#include <string>

#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::app {

// File dialog filter for project files.
[[nodiscard]] QString projectFileFilter();
// A path as the C++ libraries take it: in the file system's encoding (QFile::encodeName).
[[nodiscard]] std::string localPath(const QString& path);

// Errors name the file and the JSON path (core's wording).
[[nodiscard]] core::Result<core::Project> readProjectFile(const QString& path);
// Atomic: a failed save leaves any existing file untouched.
[[nodiscard]] core::Status writeProjectFile(const QString& path, const core::Project& project);

}  // namespace shardscope::app
