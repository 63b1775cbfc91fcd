// The Runs page: the runs of a store listed off the GUI thread, renamed in
// place and deleted, a bad store said on the page; RunListModel checked by
// QAbstractItemModelTester; its columns fit at 1280 px; two runs compared as
// charts and a table, like with like; screenshots at 1280x800 and 1920x1080.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include "chart_style.h"
#include "comparison_chart.h"
#include "comparison_view.h"
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

constexpr char kCpuConfig[] = R"({"schema": "shardscope.engine-run/1", "mode": "emulate", "cpu": "Test CPU",
    "threads": 2, "batch_size_per_gpu": 512, "grid": {"sharding_group_size": 2, "replicas": 2}})";
constexpr char kH100Config[] = R"json({"schema": "shardscope.engine-run/1", "mode": "cuda", "device": "cuda",
    "batch_size_per_gpu": 512, "grid": {"sharding_group_size": 2, "replicas": 2},
    "gpus": ["NVIDIA H100 80GB HBM3 (GPU 0)", "NVIDIA H100 80GB HBM3 (GPU 1)"]})json";

// A complete emulate-like run with `steps` step summaries of 4 ranks, labelled `label`: every rank's step
// takes `step_ns`, of which rank r spends (r + 1) x `fwd_ns` in embedding forward.
st::RunId writeRun(const std::string& path, const std::string& label, int steps, std::int64_t step_ns,
                   const char* config = kCpuConfig, std::int64_t fwd_ns = 0) {
  st::RunHeader header;
  header.kind = st::RunKind::Emulate;
  header.label = label;
  header.model_json = R"({"name": "tiny"})";
  header.config_json = config;
  auto writer = st::RunWriter::begin(path, header);
  if (!writer) qFatal("%s", writer.error().message.c_str());
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < 4; ++r) {
      st::StepSummary sum;
      sum.step = s;
      sum.rank = r;
      sum.emb_fwd_ns = (r + 1) * fwd_ns;
      sum.total_ns = step_ns;
      if (!writer->addStepSummary(sum).ok()) qFatal("step summary");
    }
  const st::RunId id = writer->run();
  if (!writer->finish().ok()) qFatal("finish");
  return id;
}

// Lists the store at `path` on `page`.
void listStore(RunsPage& page, const QString& path) {
  QSignalSpy listed(&page, &RunsPage::listed);
  page.setStorePath(path);
  QVERIFY(listed.wait(kTimeoutMs));
}

void compare(RunsPage& page, qint64 a, qint64 b) {
  QSignalSpy compared(&page, &RunsPage::compared);
  page.compareRuns(a, b);
  QVERIFY(compared.wait(kTimeoutMs));
  QVERIFY2(compared.last().at(0).toString().isEmpty(), qPrintable(compared.last().at(0).toString()));
}

// Rows as the Runs page lists typical runs: engine runs on CPU and H100, an import of unknown device.
std::vector<profiler::RunRow> typicalRows() {
  std::vector<profiler::RunRow> rows;
  const auto row = [&rows](qint64 id, const char* kind, const char* label, core::DeviceInfo device) {
    profiler::RunRow r;
    r.id = st::RunId{id};
    r.kind = kind;
    r.label = label;
    r.model = "criteo_kaggle";
    r.sharding_group_size = 4;
    r.replicas = 16;
    r.layout = "contiguous";
    r.world_size = 64;
    r.measured_ranks = 64;
    r.batch_size_per_gpu = 65536;
    r.device = std::move(device);
    r.status = st::RunStatus::Complete;
    r.created_at = "2026-12-04T05:43:00Z";
    r.steps = 100;
    r.step_ms = 1234.567;
    rows.push_back(r);
  };
  row(1203, "emulate", "criteo_kaggle M=4 emulate", {core::DeviceClass::Cpu, "Intel(R) Xeon(R) Platinum 8480+", 2, 4});
  row(1204, "cuda", "criteo_kaggle M=4 cuda", {core::DeviceClass::Gpu, "NVIDIA H100 80GB HBM3", 0, 64});
  row(1205, "import-kineto", "kineto rank0.json (+63)", {});
  return rows;
}

// The widest label of a bar chart's category axis fits between its ticks: labels never overlap.
void verifyTickLabelsDoNotOverlap(QCustomPlot* plot) {
  const QVector<double> ticks = plot->xAxis->tickVector();
  const QVector<QString> labels = plot->xAxis->tickVectorLabels();
  QVERIFY2(!ticks.isEmpty(), qPrintable(plot->objectName()));
  const QFontMetrics metrics(plot->xAxis->tickLabelFont());
  for (qsizetype i = 1; i < ticks.size(); ++i) {
    int widest = 0;
    for (const QString& label : {labels[i - 1], labels[i]})
      for (const QString& line : label.split(QLatin1Char('\n')))
        widest = std::max(widest, metrics.horizontalAdvance(line));
    const double gap = plot->xAxis->coordToPixel(ticks[i]) - plot->xAxis->coordToPixel(ticks[i - 1]);
    QVERIFY2(gap >= widest,
             qPrintable(QStringLiteral("%1: %2 and %3 overlap").arg(plot->objectName(), labels[i - 1], labels[i])));
  }
}

// The legend sits outside the bars' rectangle, so it covers none.
void verifyLegendOutsideTheBars(QCustomPlot* plot) {
  QVERIFY(plot->legend->visible());
  QVERIFY2(!plot->legend->outerRect().intersects(plot->axisRect()->rect()), qPrintable(plot->objectName()));
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
    QCOMPARE(model->data(model->index(row_b, RunListModel::Layout)).toString(), QStringLiteral("M=2 \u00d7 R=2"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Source)).toString(), QStringLiteral("emulate"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Batch)).toString(), QLocale().toString(512));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Device)).toString(), QStringLiteral("CPU"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Device), Qt::ToolTipRole).toString(),
             QStringLiteral("CPU (Test CPU, 2 threads)"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Ranks)).toString(), QStringLiteral("4/4"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::Steps)).toString(), QStringLiteral("5"));
    QCOMPARE(model->data(model->index(row_b, RunListModel::StepTime), RunListModel::kSortRole).toDouble(), 4.0);
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

    // Side by side: the step of B is 4 ms, of A 2 ms (every rank's total).
    compare(page, static_cast<qint64>(a), static_cast<qint64>(b));
    QTableWidget* table = page.comparisonTable();
    QCOMPARE(table->rowCount(), 6 + 1 + 4);  // five phases and the step, the imbalance, four ranks
    QCOMPARE(table->item(5, 0)->text(), QStringLiteral("step"));
    QCOMPARE(table->item(5, 1)->text(), QLocale().toString(2.0, 'f', 3));
    QCOMPARE(table->item(5, 2)->text(), QLocale().toString(4.0, 'f', 3));
    QCOMPARE(table->item(5, 3)->text(), QStringLiteral("+") + QLocale().toString(2.0, 'f', 3));
    QCOMPARE(table->item(5, 4)->text(), QStringLiteral("+100.0%"));

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

  void everyColumnFitsItsContentsAt1280Pixels() {
    RunsPage page;
    page.model()->setRows(typicalRows());
    page.resize(1280, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QTableView* view = page.view();
    QHeaderView* header = view->horizontalHeader();
    QTRY_VERIFY(header->length() > 0);
    for (int c = 0; c < RunListModel::ColumnCount; ++c) {
      const int needed =
          std::max(static_cast<QAbstractItemView*>(view)->sizeHintForColumn(c), header->sectionSizeHint(c));
      QVERIFY2(header->sectionSize(c) >= needed,
               qPrintable(QStringLiteral("%1: %2 px for %3 px of text")
                              .arg(page.model()->headerData(c, Qt::Horizontal).toString())
                              .arg(header->sectionSize(c))
                              .arg(needed)));
    }
    QVERIFY2(
        header->length() <= view->viewport()->width(),
        qPrintable(QStringLiteral("%1 px of columns in %2 px").arg(header->length()).arg(view->viewport()->width())));
  }

  void theKindStaysVisibleAsTheSource() {
    RunListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRows(typicalRows());
    QCOMPARE(model.data(model.index(2, RunListModel::Source)).toString(), QStringLiteral("import-kineto"));
    QCOMPARE(model.data(model.index(2, RunListModel::Device)).toString(), QStringLiteral("unknown device"));
    QCOMPARE(model.data(model.index(2, RunListModel::Layout)).toString(), QStringLiteral("M=4 \u00d7 R=16 contiguous"));
    QCOMPARE(model.data(model.index(1, RunListModel::Device)).toString(), QStringLiteral("H100"));
    QCOMPARE(model.data(model.index(1, RunListModel::Ranks)).toString(), QStringLiteral("64/64"));
    QVERIFY(
        model.data(model.index(1, RunListModel::Name), Qt::ToolTipRole).toString().contains(QStringLiteral("cuda")));
  }

  void aComparisonIsDrawnAsChartsInThePhaseColours() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId a = writeRun(path.toStdString(), "A", 3, 2'000'000, kCpuConfig, 100'000);
    const st::RunId b = writeRun(path.toStdString(), "B", 3, 3'000'000, kCpuConfig, 200'000);
    RunsPage page;
    page.resize(1280, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    listStore(page, path);
    compare(page, static_cast<qint64>(a), static_cast<qint64>(b));
    ComparisonView* view = page.comparisonView();
    QVERIFY(view->isVisible());
    QCOMPARE(view->tabs()->currentWidget(), view->chart());
    QVERIFY2(view->notesText().contains(QStringLiteral("global rank")), qPrintable(view->notesText()));
    QCustomPlot* phases = view->chart()->phasePlot();
    QCustomPlot* ranks = view->chart()->rankPlot();
    for (QCustomPlot* plot : {phases, ranks}) plot->replot();
    // Only the phases the runs spent time in, each pair in its phase's colour: embedding forward, then the step.
    QList<QColor> solid;
    for (int i = 0; i < phases->plottableCount(); ++i) {
      auto* bars = qobject_cast<QCPBars*>(phases->plottable(i));
      if (bars != nullptr && !bars->data()->isEmpty() && bars->brush().color().alpha() == 255)
        solid.append(bars->brush().color());
    }
    QCOMPARE(solid, (QList<QColor>{phaseColor(report::Phase::EmbeddingForward), phaseColor(report::Phase::Step)}));
    // B's change over each pair: forward doubled, the step half as long again.
    QStringList changes;
    for (int i = 0; i < phases->itemCount(); ++i)
      if (auto* text = qobject_cast<QCPItemText*>(phases->item(i))) changes.append(text->text());
    QCOMPARE(changes, (QStringList{QStringLiteral("+100.0%"), QStringLiteral("+50.0%")}));
    // Ranks: 0.1 to 0.4 ms of forward in A, twice that in B.
    auto* rank_b = qobject_cast<QCPBars*>(ranks->plottable(ranks->plottableCount() - 1));
    QCOMPARE(rank_b->data()->size(), 4);
    QCOMPARE(rank_b->data()->at(3)->value, 0.8);
    for (QCustomPlot* plot : {phases, ranks}) {
      verifyLegendOutsideTheBars(plot);
      verifyTickLabelsDoNotOverlap(plot);
    }
  }

  void rankLabelsThinOutInsteadOfOverlapping() {
    profiler::RunComparison c;
    c.matching = profiler::RankMatching::GlobalRank;
    for (int r = 0; r < 512; ++r) {
      profiler::ComparedValue v;
      v.name = "rank " + std::to_string(r);
      v.a_rank = v.b_rank = r;
      v.a = 1.0 + r % 7;
      v.b = 1.0 + r % 5;
      c.ranks.push_back(v);
    }
    ComparisonChart chart;
    chart.resize(1100, 320);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setComparison(&c);
    chart.rankPlot()->replot();
    verifyTickLabelsDoNotOverlap(chart.rankPlot());
    QVERIFY(chart.rankPlot()->xAxis->tickVector().size() >= 8);
  }

  void runsOnDifferentDevicesAreComparedByShareAndSaySo() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId cpu = writeRun(path.toStdString(), "cpu", 3, 20'000'000, kCpuConfig, 1'000'000);
    const st::RunId gpu = writeRun(path.toStdString(), "h100", 3, 1'000'000, kH100Config, 10'000);
    RunsPage page;
    listStore(page, path);
    compare(page, static_cast<qint64>(cpu), static_cast<qint64>(gpu));
    ComparisonView* view = page.comparisonView();
    QVERIFY2(
        view->titleText().contains(QStringLiteral("on CPU")) && view->titleText().contains(QStringLiteral("on H100")),
        qPrintable(view->titleText()));
    QVERIFY2(view->notesText().contains(QStringLiteral("run 1 ran on CPU (Test CPU, 2 threads), run 2 on H100 (")),
             qPrintable(view->notesText()));
    QVERIFY2(view->notesText().contains(QStringLiteral("shares of the group's embedding work")),
             qPrintable(view->notesText()));
    // Rank r does (r + 1) tenths of its group's embedding work on either device: 0 pp apart.
    QTableWidget* table = page.comparisonTable();
    QStringList figures;
    for (int row = 0; row < table->rowCount(); ++row) figures.append(table->item(row, 0)->text());
    QVERIFY(!figures.contains(QStringLiteral("step")));
    const int rank3 = static_cast<int>(figures.indexOf(QStringLiteral("rank 3")));
    QVERIFY(rank3 >= 0);
    QCOMPARE(table->item(rank3, 1)->text(), QLocale().toString(40.0, 'f', 1) + QLatin1Char('%'));
    QCOMPARE(table->item(rank3, 2)->text(), QLocale().toString(40.0, 'f', 1) + QLatin1Char('%'));
    QCOMPARE(table->item(rank3, 3)->text(), QStringLiteral("0 pp"));
    QVERIFY(view->chart()->rankPlot()->yAxis->label().contains(QStringLiteral("%")));
  }

  void noChangeReadsAboveAThousandPercent() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId fast = writeRun(path.toStdString(), "fast", 3, 1'000'000, kCpuConfig, 10'000);
    const st::RunId slow = writeRun(path.toStdString(), "slow", 3, 50'000'000, kCpuConfig, 500'000);
    RunsPage page;
    listStore(page, path);
    compare(page, static_cast<qint64>(fast), static_cast<qint64>(slow));
    QStringList texts{page.comparisonView()->notesText()};
    QTableWidget* table = page.comparisonTable();
    for (int row = 0; row < table->rowCount(); ++row)
      for (int col = 0; col < table->columnCount(); ++col) texts.append(table->item(row, col)->text());
    QCustomPlot* phases = page.comparisonView()->chart()->phasePlot();
    for (int i = 0; i < phases->itemCount(); ++i)
      if (auto* text = qobject_cast<QCPItemText*>(phases->item(i))) texts.append(text->text());
    const QRegularExpression percent(QStringLiteral("([0-9][0-9,.]*)%"));
    for (const QString& text : texts)
      for (auto it = percent.globalMatch(text); it.hasNext();) {
        const double value = QLocale().toDouble(it.next().captured(1));
        QVERIFY2(value <= 1000.0, qPrintable(text));
      }
    QVERIFY2(texts.contains(QStringLiteral("50.0x")), qPrintable(texts.join(QLatin1Char('|'))));
  }

  void screenshotsOfTheRunsPage() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    for (int i = 0; i < 6; ++i)
      writeRun(path.toStdString(), "run " + std::to_string(i), 2 + i, 1'500'000 + 250'000 * i, kCpuConfig,
               50'000 * (i + 1));
    MainWindow window;
    window.openStore(path);
    QSignalSpy listed(window.runsPage(), &RunsPage::listed);
    QVERIFY(listed.wait(kTimeoutMs));
    window.showPage(MainWindow::Page::Runs);
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("statusStore"))->text().contains(QStringLiteral("runs.sqlite")));
    for (const char* state : {"list", "compared"}) {
      if (QByteArray(state) == "compared") compare(*window.runsPage(), 1, 6);
      for (const QSize size : {QSize(1280, 800), QSize(1920, 1080)}) {
        const QString shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/runs_page_%1_%2x%3.png")
                                 .arg(QString::fromLatin1(state))
                                 .arg(size.width())
                                 .arg(size.height());
        const core::Status saved = saveScreenshot(window, shot, size);
        QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
        QCOMPARE(QImage(shot).size(), size);
      }
    }
  }
};

QTEST_MAIN(TestRunsPage)
#include "test_runs_page.moc"
