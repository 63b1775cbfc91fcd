// The Profile dialog: an emulate run of the tiny engine model on 4 CPU ranks
// from the form into a store, then a cancelled one that the store keeps as
// failed; the Runs page sees both; the GPU device's refusal without a GPU.
// Screenshots of the dialog.
#include <QComboBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

#include "profile_dialog.h"
#include "runs_page.h"
#include "run_list_model.h"
#include "screenshot.h"
#include "tiny_project.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/workflow/profile_run.h"

using namespace shardscope;
using namespace shardscope::app;
namespace st = core::store;
using test::tinyProject;

namespace {

constexpr int kTimeoutMs = 60000;

}  // namespace

class TestProfileDialog : public QObject {
  Q_OBJECT

 private slots:
  void runsAndCancelsIntoTheStore() {
    QTemporaryDir dir;
    const QString store = dir.filePath(QStringLiteral("runs.sqlite"));
    ProfileDialog dialog(tinyProject(), std::nullopt, store);
    QCOMPARE(dialog.planChoice()->count(), 3);  // M = 1, 2, 4 on 4 ranks
    dialog.planChoice()->setCurrentIndex(1);    // M = 2
    dialog.stepsBox()->setValue(2);             // the plot asserts count two points per rank
    dialog.threadsBox()->setValue(1);
    QSignalSpy profiled(&dialog, &ProfileDialog::profiled);
    QSignalSpy failed(&dialog, &ProfileDialog::failed);
    dialog.start();
    QVERIFY(dialog.isRunning());
    QVERIFY(profiled.wait(kTimeoutMs));
    QCOMPARE(failed.size(), 0);
    const qint64 run = profiled.last().at(0).toLongLong();
    // The live plot: one graph per measured rank of group 0 (M = 2), a point per measured step.
    QTRY_COMPARE_WITH_TIMEOUT(dialog.stepTimePlot()->graphCount(), 2, kTimeoutMs);
    for (int g = 0; g < 2; ++g) {
      QTRY_COMPARE_WITH_TIMEOUT(dialog.stepTimePlot()->graph(g)->dataCount(), 2, kTimeoutMs);
      QVERIFY(dialog.stepTimePlot()->graph(g)->data()->at(0)->value > 0);
    }
    {
      auto opened = st::openStore(store.toStdString());
      QVERIFY(opened.ok());
      QCOMPARE(opened->run(st::RunId{run})->status, st::RunStatus::Complete);
    }

    const QString shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/profile_dialog.png");
    QVERIFY(saveScreenshot(dialog, shot, QSize(720, 640)).ok());

    // Many steps, cancelled at once: the run is kept, marked failed.
    dialog.stepsBox()->setValue(100000);
    dialog.start();
    QCOMPARE(dialog.stepTimePlot()->graphCount(), 0);  // a new run starts a new plot
    dialog.cancel();
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(failed.last().at(0).toString().contains(QStringLiteral("cancel")),
             qPrintable(failed.last().at(0).toString()));
    QVERIFY(!dialog.isRunning());

    RunsPage page;
    QSignalSpy listed(&page, &RunsPage::listed);
    page.setStorePath(store);
    QVERIFY(listed.wait(kTimeoutMs));
    QCOMPARE(listed.last().at(0).toInt(), 2);
    const profiler::RunRow* cancelled = page.model()->runAt(0);  // newest first
    QCOMPARE(cancelled->status, st::RunStatus::Failed);
    const profiler::RunRow* done = page.model()->runAt(1);
    QCOMPARE(done->status, st::RunStatus::Complete);
    QCOMPARE(done->sharding_group_size, 2u);
    QCOMPARE(done->steps, std::int64_t{2});
  }

  // The GPU device: offered when the build has the GPU engine, disabled (with
  // the reason as its tooltip) when not; without a GPU the run fails with the
  // reason and the store is not touched.
  void gpuDeviceSaysWhyItCannotRun() {
    QTemporaryDir dir;
    const QString store = dir.filePath(QStringLiteral("gpu.sqlite"));
    ProfileDialog dialog(tinyProject(), std::nullopt, store);
    QComboBox* device = dialog.deviceChoice();
    QCOMPARE(device->count(), 2);
    QCOMPARE(device->itemData(1).toString(), QStringLiteral("cuda"));
    if (!profiler::gpuEngineBuilt()) {
      QVERIFY(!device->itemData(1, Qt::ToolTipRole).toString().isEmpty());
      QSKIP("this build has no GPU engine: the item is disabled");
    }
    auto gpus = profiler::queryGpuDevices();
    if (gpus.ok() && gpus->size() >= 4) QSKIP("this machine has GPUs: the gpu-labelled checks run the engine");
    device->setCurrentIndex(1);
    dialog.stepsBox()->setValue(1);
    QSignalSpy failed(&dialog, &ProfileDialog::failed);
    dialog.start();
    QVERIFY(failed.wait(kTimeoutMs));
    const QString message = failed.last().at(0).toString();
    QVERIFY2(message.contains(QStringLiteral("GPU")), qPrintable(message));
    QVERIFY(!QFile::exists(store));  // refused before a run began
    const QString shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/profile_dialog_gpu.png");
    QVERIFY(saveScreenshot(dialog, shot, QSize(720, 640)).ok());
  }
};

QTEST_MAIN(TestProfileDialog)
#include "test_profile_dialog.moc"
