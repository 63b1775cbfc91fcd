#include "about.h"

#include <QMessageBox>
#include <QtGlobal>

#include "shardscope/core/version.h"

// The build defines these as 0/1 on targets that link shardscope_core.
#ifndef SHARDSCOPE_HAVE_CUDA
#define SHARDSCOPE_HAVE_CUDA 0
#endif
#ifndef SHARDSCOPE_HAVE_MPI
#define SHARDSCOPE_HAVE_MPI 0
#endif

namespace shardscope::app {

QString buildInfoText() {
  const auto yesNo = [](bool b) { return b ? QStringLiteral("yes") : QStringLiteral("no"); };
  return QStringLiteral("Qt %1 (runtime %2), CUDA: %3, MPI: %4")
      .arg(QStringLiteral(QT_VERSION_STR), QString::fromLatin1(qVersion()), yesNo(SHARDSCOPE_HAVE_CUDA != 0),
           yesNo(SHARDSCOPE_HAVE_MPI != 0));
}

QString aboutText() {
  return QObject::tr(
             "<h3>ShardScope %1</h3>"
             "<p>A workbench for planning and profiling two-dimensional sparse parallelism of "
             "DLRM-style recommendation models: embedding tables are sharded inside a group of "
             "M GPUs and the group is replicated R times (N = M \u00d7 R). ShardScope sweeps the "
             "grids, shards the tables so the slowest GPU is as fast as possible, measures real "
             "runs and exports a shard plan that trainers read.</p>"
             "<p><small>Build: %2</small></p>")
      .arg(QString::fromStdString(core::versionLine()), buildInfoText().toHtmlEscaped());
}

void showAboutDialog(QWidget* parent) { QMessageBox::about(parent, QObject::tr("About ShardScope"), aboutText()); }

}  // namespace shardscope::app
