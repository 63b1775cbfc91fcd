// The File > Open Recent list, kept in QSettings: newest first, no
// duplicates, at most kMaxEntries, files that vanished are dropped when read.
#pragma once

#include <QObject>
#include <QStringList>

namespace shardscope::app {

class RecentProjects : public QObject {
  Q_OBJECT

 public:
  static constexpr int kMaxEntries = 8;

  explicit RecentProjects(QObject* parent = nullptr);

  [[nodiscard]] QStringList paths() const;
  void add(const QString& path);
  void remove(const QString& path);
  void clear();

 signals:
  void changed();

 private:
  void store(const QStringList& paths);
};

}  // namespace shardscope::app
