// The Runs page: the runs of a store listed off the GUI thread, renamed in
// place and deleted, a bad store said on the page; RunListModel checked by
// QAbstractItemModelTester; screenshots at 1280x800 and 1920x1080.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "main_window.h"
#include "run_list_model.h"
#include "runs_page.h"
#include "screenshot.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"

using namespace shardscope;
using namespace shardscope::app;
namespace st = core::store;

namespace {

constexpr int kTimeoutMs = 20000;

// A complete emulate-like run with `steps` step summaries of 4 ranks, labelled `label`.
st::RunId writeRun(const std::string& path, const std::string& label, int steps, std::int64_t step_ns) {
  st::RunHeader header;
  header.kind = st::RunKind::Emulate;
  header.label = label;
  header.model_json = R"({"name": "tiny"})";
  header.config_json = R"({"mode": "emulate", "grid": {"sharding_group_size": 2, "replicas": 2}})";
  auto writer = st::RunWriter::begin(path, header);
  if (!writer) qFatal("%s", writer.error().message.c_str());
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < 4; ++r) {
      st::StepSummary sum;
      sum.step = s;
      sum.rank = r;
      sum.total_ns = step_ns;
      if (!writer->addStepSummary(sum).ok()) qFatal("step summary");
    }
  const st::RunId id = writer->run();
  if (!writer->finish().ok()) qFatal("finish");
  return id;
}

}  // namespace

class TestRunsPage : public QObject {
  Q_OBJECT

 private slots:
  void listsRenamesAndDeletes() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId a = writeRun(path.toStdString(), "first", 3, 2'000'000);
    const st::RunId b = writeRun(path.toStdString(), "second", 5, 4'000'000);

    RunsPage page;
    QAbstractItemModelTester tester(page.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy listed(&page, &RunsPage::listed);
    page.setStorePath(path);
    QVERIFY(listed.wait(kTimeoutMs));
    QCOMPARE(listed.last().at(0).toInt(), 2);
    RunListModel* model = page.model();
    QCOMPARE(model->rowCount(), 2);
    const int row_b = model->rowOf(static_cast<qint64>(b));
    QVERIFY(row_b >= 0);
    QCOMPARE(model->data(model->index(row_b, RunListModel::Name)).toString(), QStringLiteral("second"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Grid)).toString(), QStringLiteral("M=2 \u00d7 R=2"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Steps)).toString(), QStringLiteral("5"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::MedianStep), RunListModel::kSortRole).toDouble(), 4.0);
    QCOMPARE(model->data(model->index(row_b, RunListModel::Model)).toString(), QStringLiteral("tiny"));
    // The view sorts newest first.
    const QModelIndex top = page.view()->model()->index(0, RunListModel::Id);
    QCOMPARE(page.view()->model()->data(top).toString(), QString::number(static_cast<qint64>(b)));

    // Rename in place: the store gets the new label.
    QSignalSpy edited(&page, &RunsPage::edited);
    QVERIFY(model->setData(model->index(model->rowOf(static_cast<qint64>(a)), RunListModel::Name),
                           QStringLiteral("baseline 1D")));
    QVERIFY(edited.wait(kTimeoutMs));
    QVERIFY(edited.last().at(0).toString().isEmpty());
    {
      auto store = st::openStore(path.toStdString());
      QCOMPARE(store->run(a)->label, std::string("baseline 1D"));
    }

    // Side by side: the step phase of B is 4 ms, of A 2 ms (every rank's total).
    QSignalSpy compared(&page, &RunsPage::compared);
    page.compareRuns(static_cast<qint64>(a), static_cast<qint64>(b));
    QVERIFY(compared.wait(kTimeoutMs));
    QVERIFY2(compared.last().at(0).toString().isEmpty(), qPrintable(compared.last().at(0).toString()));
    QTableWidget* table = page.comparisonTable();
    QCOMPARE(table->rowCount(), 5 + 4);  // five phases, four ranks
    QCOMPARE(table->item(4, 0)->text(), QStringLiteral("step"));
    QCOMPARE(table->item(4, 1)->text(), QLocale().toString(2.0, 'f', 3));
    QCOMPARE(table->item(4, 2)->text(), QLocale().toString(4.0, 'f', 3));
    QCOMPARE(table->item(4, 3)->text(), QLocale().toString(2.0, 'f', 3));
    QCOMPARE(table->item(4, 4)->text(), QStringLiteral("2.00\u00d7"));

    // Delete one run: the other stays, with its rows.
    listed.clear();
    page.deleteRun(static_cast<qint64>(b));
    QVERIFY(listed.wait(kTimeoutMs));
    QCOMPARE(model->rowCount(), 1);
    auto store = st::openStore(path.toStdString());
    QCOMPARE(store->listRuns()->size(), std::size_t{1});
    QCOMPARE(store->stepSummaries(a)->size(), std::size_t{12});
  }

  void aFileThatIsNotAStoreIsSaid() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("not_a_store.sqlite"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(4096, 'x'));
    file.close();
    RunsPage page;
    QSignalSpy failed(&page, &RunsPage::failed);
    page.setStorePath(path);
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(failed.last().at(0).toString().contains(path), qPrintable(failed.last().at(0).toString()));
    QCOMPARE(page.model()->rowCount(), 0);
    QCOMPARE(file.size(), qint64{4096});  // untouched
  }

  void importsTracesAndNamesTheBadFile() {
    QTemporaryDir dir;
    const QString store = dir.filePath(QStringLiteral("runs.sqlite"));
    const QString data = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/import/");
    RunsPage page;
    QSignalSpy listed(&page, &RunsPage::listed);
    page.setStorePath(store);
    QVERIFY(listed.wait(kTimeoutMs));

    // A file that is not a trace: refused before a run begins, the file named.
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"traceEvents\": [{\"ph\": ");
    file.close();
    QSignalSpy imported(&page, &RunsPage::imported);
    page.importTraces(QStringLiteral("kineto"), {bad});
    QVERIFY(imported.wait(kTimeoutMs));
    QCOMPARE(imported.last().at(0).toLongLong(), qint64{0});
    QVERIFY2(imported.last().at(1).toString().contains(QStringLiteral("bad.json")),
             qPrintable(imported.last().at(1).toString()));

    // Two ranks of a real trainer: one run of kind import-kineto.
    listed.clear();
    page.importTraces(QStringLiteral("kineto"),
                      {data + QStringLiteral("rank0.json"), data + QStringLiteral("rank1.json.gz")});
    QVERIFY(imported.wait(kTimeoutMs));
    QVERIFY2(imported.last().at(0).toLongLong() > 0, qPrintable(imported.last().at(1).toString()));
    QVERIFY(listed.wait(kTimeoutMs) || !listed.isEmpty());
    bool found = false;
    for (const auto& row : page.model()->rows())
      if (static_cast<qint64>(row.id) == imported.last().at(0).toLongLong()) {
        found = true;
        QCOMPARE(row.kind, std::string("import-kineto"));
        QCOMPARE(row.status, st::RunStatus::Complete);
      }
    QVERIFY(found);

    // The NCCL profiler plugin's traces: a run of kind import-nccl.
    page.importTraces(QStringLiteral("nccl"), {data + QStringLiteral("nccl/two_comms_steps.jsonl")});
    QVERIFY(imported.wait(kTimeoutMs));
    const qint64 nccl_run = imported.last().at(0).toLongLong();
    QVERIFY2(nccl_run > 0, qPrintable(imported.last().at(1).toString()));
    QTRY_VERIFY_WITH_TIMEOUT(page.model()->rowOf(nccl_run) >= 0, kTimeoutMs);
    QCOMPARE(page.model()->runAt(page.model()->rowOf(nccl_run))->kind, std::string("import-nccl"));
  }

  void aProjectStoreIsNotCreatedByLooking() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("p.runs.sqlite"));
    RunsPage page;
    QSignalSpy listed(&page, &RunsPage::listed);
    page.setStorePath(path, /*create=*/false);
    QCOMPARE(listed.size(), 1);
    QVERIFY(!QFile::exists(path));
  }

  void screenshotsOfTheRunsPage() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    for (int i = 0; i < 6; ++i)
      writeRun(path.toStdString(), "run " + std::to_string(i), 2 + i, 1'500'000 + 250'000 * i);
    MainWindow window;
    window.openStore(path);
    QSignalSpy listed(window.runsPage(), &RunsPage::listed);
    QVERIFY(listed.wait(kTimeoutMs));
    window.showPage(MainWindow::Page::Runs);
    QSignalSpy compared(window.runsPage(), &RunsPage::compared);
    window.runsPage()->compareRuns(1, 6);
    QVERIFY(compared.wait(kTimeoutMs));
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("statusStore"))->text().contains(QStringLiteral("runs.sqlite")));
    for (const QSize size : {QSize(1280, 800), QSize(1920, 1080)}) {
      const QString shot =
          QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/runs_page_%1x%2.png").arg(size.width()).arg(size.height());
      const core::Status saved = saveScreenshot(window, shot, size);
      QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
      QCOMPARE(QImage(shot).size(), size);
    }
  }
};

QTEST_MAIN(TestRunsPage)
#include "tst_runs_page.moc"
