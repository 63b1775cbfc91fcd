// Runs shardscope-cli (the SHARDSCOPE_CLI each CLI test is built with) as a
// user would, and keeps its exit code and what it printed: one runner for
// every CLI test.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <functional>
#include <optional>

namespace cli_test {

struct Run {
  int code = -1;  // -1: it timed out or was killed by a signal
  QString out;
  QString err;
};

struct RunOptions {
  int timeout_ms = 60000;
  std::optional<QProcessEnvironment> env = {};  // default: this process's
  std::function<void()> child_setup = {};       // runs in the child before exec (limits, user)
};

inline Run runCli(const QStringList& args, const RunOptions& o = {}) {
  QProcess p;
  if (o.env) p.setProcessEnvironment(*o.env);
  if (o.child_setup) p.setChildProcessModifier(o.child_setup);
  p.start(QStringLiteral(SHARDSCOPE_CLI), args);
  Run r;
  if (!p.waitForFinished(o.timeout_ms)) {
    p.kill();
    p.waitForFinished();
    r.err = QStringLiteral("timed out");
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

// Writes `text` to `name` in `dir`; returns its path.
inline QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly)) f.write(text);
  return path;
}

}  // namespace cli_test
