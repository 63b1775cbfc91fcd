#include "recent_projects.h"

#include <QFileInfo>
#include <QSettings>

namespace shardscope::app {

namespace {
constexpr auto kKey = "recentProjects";
}

RecentProjects::RecentProjects(QObject* parent) : QObject(parent) {}

QStringList RecentProjects::paths() const {
  QStringList existing;
  for (const QString& p : QSettings().value(kKey).toStringList()) {
    if (QFileInfo::exists(p)) existing.append(p);
  }
  return existing;
}

void RecentProjects::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList list = paths();
  list.removeAll(absolute);
  list.prepend(absolute);
  while (list.size() > kMaxEntries) list.removeLast();
  store(list);
}

void RecentProjects::remove(const QString& path) {
  QStringList list = paths();
  list.removeAll(QFileInfo(path).absoluteFilePath());
  store(list);
}

void RecentProjects::clear() { store({}); }

void RecentProjects::store(const QStringList& paths) {
  QSettings().setValue(kKey, paths);
  emit changed();
}

}  // namespace shardscope::app
