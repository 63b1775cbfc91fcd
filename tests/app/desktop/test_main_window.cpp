// MainWindow and ProjectDocument: what the window shows for a project, and
// that opening and saving never lose the project that is loaded.
#include <QAction>
#include <QFile>
#include <QLabel>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QDir>
#include <QtTest>
#include <qcustomplot.h>

#include <nlohmann/json.hpp>

#include "main_window.h"
#include "project_document.h"
#include "model_page.h"
#include "page_warmer.h"
#include "screenshot.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "table_size_chart.h"

using shardscope::app::MainWindow;
namespace core = shardscope::core;

namespace {

// Counts the resize events of the widgets it watches.
class ResizeCounter : public QObject {
 public:
  int count = 0;
  QStringList names;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::Resize) {
      ++count;
      names << QStringLiteral("%1 '%2'").arg(QString::fromLatin1(watched->metaObject()->className()),
                                             watched->objectName());
    }
    return QObject::eventFilter(watched, event);
  }
};

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // Recent files go to a throwaway settings location, not the user's.
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_main_window"));
  }

  void opensTheDefaultProject() {
    MainWindow window;
    QCOMPARE(window.document()->project(), core::defaultProject());
    QVERIFY(window.document()->filePath().isEmpty());
    QVERIFY(!window.document()->isModified());
    QCOMPARE(window.modelPage()->tablesView()->model()->rowCount(), 26);
    QCOMPARE(window.modelPage()->sizeChart()->tableCount(), 26);
  }

  void showsTheClusterWorldSize() {
    MainWindow window;
    QCOMPARE(window.modelPage()->summaryValue("model.tables"), QString("26"));
    const auto* status = window.findChild<QLabel*>("statusWorldSize");
    QVERIFY(status != nullptr);
    QVERIFY2(status->text().startsWith("N = 64 GPUs"), qPrintable(status->text()));
  }

  void titleNamesTheProjectWithModifiedMarker() {
    MainWindow window;
    const QString name = QString::fromStdString(core::defaultProject().name);
    QCOMPARE(window.windowTitle(), name + QString::fromUtf8("[*] \u2014 ShardScope"));
    QVERIFY(!window.isWindowModified());
    core::Project edited = window.document()->project();
    edited.model.batch_size_per_gpu *= 2;
    window.document()->edit(edited);
    QVERIFY(window.isWindowModified());
  }

  void fileActionsHaveTheirShortcuts() {
    MainWindow window;
    const auto* save_as = window.findChild<QAction*>(QStringLiteral("actionSaveAs"));
    QVERIFY(save_as != nullptr);
    QVERIFY(!save_as->shortcut().isEmpty());  // Ctrl+Shift+S where the platform has none
    QCOMPARE(window.findChild<QAction*>(QStringLiteral("actionImportTraces"))->shortcut(),
             QKeySequence(Qt::CTRL | Qt::Key_I));
    QCOMPARE(window.findChild<QAction*>(QStringLiteral("actionProfile"))->shortcut(),
             QKeySequence(Qt::CTRL | Qt::Key_R));
  }

  void theDefaultNameFollowsTheClusterUntilRenamed() {
    MainWindow window;
    shardscope::app::ProjectDocument* doc = window.document();
    core::Project p = doc->project();
    p.cluster = core::clusterPreset("h200x512").value();
    doc->edit(p);
    QCOMPARE(doc->displayName(), QStringLiteral("DLRM-DCNv2 on 512 H200"));
    QVERIFY(window.windowTitle().contains(QStringLiteral("512 H200")));
    core::Project renamed = doc->project();
    renamed.name = "prod job";
    doc->edit(renamed);
    core::Project moved = doc->project();
    moved.cluster = core::clusterPreset("h100x64").value();
    doc->edit(moved);
    QCOMPARE(doc->displayName(), QStringLiteral("prod job"));
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    QCOMPARE(doc->displayName(), QStringLiteral("DLRM-DCNv2 on 512 H200"));
  }

  void saveAsThenReopenGivesAnEqualProject() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("roundtrip.shardscope");

    MainWindow window;
    core::Project edited = window.document()->project();
    edited.name = "Round trip";
    window.document()->edit(edited);
    QVERIFY(window.document()->isModified());

    const core::Status saved = window.saveProjectAs(path);
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
    QVERIFY(!window.document()->isModified());
    QCOMPARE(window.document()->filePath(), path);

    MainWindow reopened;
    const core::Status opened = reopened.openProject(path);
    QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message.c_str());
    QVERIFY(reopened.document()->project() == edited);
    QVERIFY(reopened.windowTitle().startsWith("Round trip"));
  }

  // A store opened for the project is recorded in it (relative to its folder)
  // and found again when it is reopened, also after Save As elsewhere.
  void theProjectRecordsItsTraceStore() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("stores")) && QDir(dir.path()).mkpath(QStringLiteral("moved")));
    const QString project = dir.filePath(QStringLiteral("lab.shardscope"));
    const QString store = dir.filePath(QStringLiteral("stores/shared.sqlite"));
    MainWindow window;
    QVERIFY(window.saveProjectAs(project).ok());
    QCOMPARE(window.storePath(), dir.filePath(QStringLiteral("lab.runs.sqlite")));
    window.openStore(store);
    QCOMPARE(window.storePath(), store);
    QCOMPARE(window.document()->project().trace_store, std::string("stores/shared.sqlite"));
    QVERIFY(window.windowTitle().contains(QStringLiteral("shared.sqlite")));
    QVERIFY(window.saveProject().ok());
    MainWindow reopened;
    QVERIFY(reopened.openProject(project).ok());
    QCOMPARE(reopened.storePath(), store);
    const QString moved = dir.filePath(QStringLiteral("moved/lab.shardscope"));
    QVERIFY(reopened.saveProjectAs(moved).ok());
    QCOMPARE(reopened.document()->project().trace_store, std::string("../stores/shared.sqlite"));
    MainWindow again;
    QVERIFY(again.openProject(moved).ok());
    QCOMPARE(again.storePath(), store);
    // Undo forgets it: back to the store next to the project.
    window.document()->undoStack()->undo();
    QCOMPARE(window.storePath(), dir.filePath(QStringLiteral("lab.runs.sqlite")));
  }

  void saveWithoutAFileFailsWithoutDialogs() {
    MainWindow window;
    const core::Status saved = window.saveProject();
    QVERIFY(!saved.ok());
  }

  void malformedFileReportsFileAndJsonPathAndKeepsTheProject() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("broken.shardscope");
    nlohmann::ordered_json j = core::toJson(core::defaultProject());
    j["model"]["tables"][3]["rows"] = "lots";
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(j.dump(1)));
    file.close();

    MainWindow window;
    core::Project loaded_before = window.document()->project();
    loaded_before.name = "Keep me";
    window.document()->reset(loaded_before, QStringLiteral("/somewhere/keep.shardscope"));

    const core::Status opened = window.openProject(path);
    QVERIFY(!opened.ok());
    const QString message = QString::fromStdString(opened.error().message);
    QVERIFY2(message.contains("broken.shardscope"), qPrintable(message));
    QVERIFY2(message.contains("/model/tables/3/rows"), qPrintable(message));
    QVERIFY(window.document()->project() == loaded_before);
    QCOMPARE(window.document()->filePath(), QStringLiteral("/somewhere/keep.shardscope"));
    QCOMPARE(window.modelPage()->tablesView()->model()->rowCount(), 26);
  }

  void missingFileReportsTheFile() {
    MainWindow window;
    const core::Status opened = window.openProject("/nonexistent/dir/nothing.shardscope");
    QVERIFY(!opened.ok());
    QVERIFY2(QString::fromStdString(opened.error().message).contains("nothing.shardscope"),
             opened.error().message.c_str());
    QVERIFY(window.document()->project() == core::defaultProject());
  }

  void newFromDefaultReplacesTheProject() {
    MainWindow window;
    core::Project other = window.document()->project();
    other.model.tables.resize(3);
    window.document()->reset(other, "/x/y.shardscope");
    QCOMPARE(window.modelPage()->tablesView()->model()->rowCount(), 3);
    window.newFromDefault();
    QCOMPARE(window.modelPage()->tablesView()->model()->rowCount(), 26);
    QVERIFY(window.document()->filePath().isEmpty());
  }

  void hiddenPagesAreLaidOutWhileIdleSoASwitchIsAPaint() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QStackedWidget* pages = window.pages();
    QWidget* plan = pages->widget(static_cast<int>(MainWindow::Page::Plan));
    QVERIFY(pages->currentWidget() != plan);
    QVERIFY(window.pageWarmer()->pendingPages() > 0);  // the hidden pages have never been laid out
    QTRY_COMPARE_WITH_TIMEOUT(window.pageWarmer()->pendingPages(), 0, 10000);
    QCOMPARE(plan->size(), pages->size());
    // Shown now, the Plan page's charts are not resized (a resize replots a chart).
    ResizeCounter resizes;
    const QList<QCustomPlot*> charts = plan->findChildren<QCustomPlot*>();
    QVERIFY(charts.size() >= 2);
    for (QCustomPlot* chart : charts) chart->installEventFilter(&resizes);
    window.showPage(MainWindow::Page::Plan);
    QCoreApplication::processEvents();
    QVERIFY2(resizes.count == 0, qPrintable(resizes.names.join(QStringLiteral(", "))));
    // A new window size: the hidden pages are laid out again once it holds.
    window.resize(1300, 850);
    QCoreApplication::processEvents();
    QVERIFY(window.pageWarmer()->pendingPages() > 0);
    QTRY_COMPARE_WITH_TIMEOUT(window.pageWarmer()->pendingPages(), 0, 10000);
    QWidget* model = pages->widget(static_cast<int>(MainWindow::Page::Model));
    QCOMPARE(model->size(), pages->size());
  }

  void screenshotRendersANonEmptyPng() {
    MainWindow window;
    const QString path = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/main_window_1600x1000.png");
    QFile::remove(path);
    const core::Status saved = shardscope::app::saveScreenshot(window, path, QSize(1600, 1000));
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
    QImage image(path);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1600, 1000));
    // Not one flat colour: something was drawn.
    const QRgb first = image.pixel(0, 0);
    bool varied = false;
    for (int y = 0; y < image.height() && !varied; y += 7) {
      for (int x = 0; x < image.width() && !varied; x += 7) varied = image.pixel(x, y) != first;
    }
    QVERIFY(varied);
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
