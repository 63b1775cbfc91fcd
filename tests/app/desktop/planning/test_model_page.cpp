// The Model page on a real ProjectDocument: every change is one undoable
// edit that undo restores exactly; imports replace or append tables, or fail
// naming file, line and column with the project untouched; filter, summary
// and histogram follow the model.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "model_page.h"
#include "project_document.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/model_csv.h"
#include "shardscope/core/presets.h"
#include "table_list_model.h"
#include "table_size_chart.h"

using shardscope::app::ModelPage;
using shardscope::app::ProjectDocument;
using shardscope::app::TableListModel;
namespace core = shardscope::core;

namespace {

// A page on the default project with both item models under test for the
// whole life of the page.
struct Fixture {
  ProjectDocument document;
  ModelPage page{&document};
  QAbstractItemModelTester source_tester{page.tablesModel(), QAbstractItemModelTester::FailureReportingMode::QtTest};
  QAbstractItemModelTester proxy_tester{page.tablesProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest};

  [[nodiscard]] const std::vector<core::TableSpec>& tables() const { return document.project().model.tables; }
  [[nodiscard]] QUndoStack* undo() const { return document.undoStack(); }
  // The proxy (view) index of a table's cell, found by name.
  [[nodiscard]] QModelIndex cell(const QString& name, int column) const {
    QSortFilterProxyModel* proxy = page.tablesProxy();
    for (int r = 0; r < proxy->rowCount(); ++r) {
      if (proxy->index(r, TableListModel::Name).data().toString() == name) return proxy->index(r, column);
    }
    return {};
  }
};

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& content) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  file.write(content);
  return path;
}

// Five tables of known weight: 1 MiB, 2 MiB, 5 MiB and twice 1 GiB (fp32, dim 4).
const QByteArray kFiveTables =
    "name,rows,dim,dtype,pooling,access\n"
    "a,65536,4,fp32,1,uniform\n"
    "b,131072,4,fp32,2,zipf:1.1\n"
    "c,327680,4,fp32,1,hot:0.1:0.9\n"
    "d,67108864,4,fp32,3,\n"
    "e,67108864,4,fp32,1,\n";
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

}  // namespace

class TestModelPage : public QObject {
  Q_OBJECT

 private slots:
  void showsTheDefaultModel() {
    Fixture f;
    QCOMPARE(f.page.tablesView()->model()->rowCount(), 26);
    QCOMPARE(f.page.summaryValue("model.tables"), QString("26"));
    QCOMPARE(f.page.summaryValue("model.lookups"), QString("214"));
    QCOMPARE(f.page.summaryValue("model.batch"), QString("1,024"));
    QCOMPARE(f.page.summaryValue("model.optimizer"), QString("Row-wise Adagrad"));
    QVERIFY2(f.page.summaryValue("model.largest").startsWith("cat_0, 19.07 GiB"),
             qPrintable(f.page.summaryValue("model.largest")));
    QCOMPARE(f.page.filterSummary(), QString("26 tables"));
    QCOMPARE(f.page.sizeChart()->tableCount(), 26);
  }

  void optimizerStateIsAddedToTheWeights() {
    Fixture f;
    // Row-wise Adagrad keeps one fp32 per row: 4 bytes x all rows on top of the weights.
    std::uint64_t rows = 0;
    for (const auto& t : f.tables()) rows += t.rows;
    const QString state = f.page.summaryValue("model.state_size");
    const double expected_gib =
        (static_cast<double>(f.document.project().model.totalWeightBytes()) + 4.0 * static_cast<double>(rows)) /
        static_cast<double>(kGiB);
    QVERIFY2(state.startsWith(QString::number(expected_gib, 'f', 2) + " GiB"), qPrintable(state));
  }

  void editingACellThroughTheViewIsOneUndoableStep() {
    Fixture f;
    f.page.tablesView()->sortByColumn(TableListModel::SizeGiB, Qt::DescendingOrder);  // view rows != model rows
    const core::Project before = f.document.project();
    const QModelIndex rows = f.cell("cat_3", TableListModel::Rows);
    QVERIFY(rows.isValid());
    // As the view's delegate does it: an editor, its text, then setModelData.
    QAbstractItemDelegate* delegate = f.page.tablesView()->itemDelegateForIndex(rows);
    std::unique_ptr<QWidget> editor(delegate->createEditor(f.page.tablesView()->viewport(), {}, rows));
    auto* line = qobject_cast<QLineEdit*>(editor.get());
    QVERIFY(line != nullptr);
    delegate->setEditorData(line, rows);
    QCOMPARE(line->text(), QString("7,424"));
    line->setText("5,000,000,000");
    delegate->setModelData(line, f.page.tablesProxy(), rows);

    QCOMPARE(f.tables()[3].rows, 5000000000ull);
    QCOMPARE(f.undo()->count(), 1);
    QCOMPARE(f.undo()->undoText(), QString("Edit rows of cat_3"));
    QVERIFY(f.document.isModified());
    QCOMPARE(f.cell("cat_3", TableListModel::Rows).data().toString(), QString("5,000,000,000"));

    f.undo()->undo();
    QVERIFY(f.document.project() == before);
    QCOMPARE(f.tables()[3].rows, 7424u);
    QCOMPARE(f.cell("cat_3", TableListModel::Rows).data().toString(), QString("7,424"));
    QCOMPARE(f.page.tablesModel()->tables(), before.model.tables);

    f.undo()->redo();
    QCOMPARE(f.tables()[3].rows, 5000000000ull);
    QCOMPARE(f.cell("cat_3", TableListModel::Rows).data().toString(), QString("5,000,000,000"));
  }

  void undoAndRedoUpdateValuesWithoutResettingTheView() {
    Fixture f;
    QVERIFY(f.page.tablesProxy()->setData(f.cell("cat_7", TableListModel::Dim), 64));
    QSignalSpy reset(f.page.tablesModel(), &QAbstractItemModel::modelReset);
    QSignalSpy changed(f.page.tablesModel(), &QAbstractItemModel::dataChanged);
    f.undo()->undo();
    f.undo()->redo();
    QCOMPARE(reset.count(), 0);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(f.tables()[7].dim, 64u);
  }

  void eachKindOfCellEditNamesItsStep() {
    Fixture f;
    QSortFilterProxyModel* proxy = f.page.tablesProxy();
    QVERIFY(proxy->setData(f.cell("cat_2", TableListModel::Name), QString("user_id")));
    QCOMPARE(f.undo()->undoText(), QString("Rename cat_2 to user_id"));
    QVERIFY(proxy->setData(f.cell("user_id", TableListModel::DType), QString("fp16")));
    QCOMPARE(f.undo()->undoText(), QString("Edit dtype of user_id"));
    QVERIFY(proxy->setData(f.cell("user_id", TableListModel::Access), QString("zipf 0.8")));
    QCOMPARE(f.undo()->undoText(), QString("Edit access of user_id"));
    QCOMPARE(f.tables()[2].name, std::string("user_id"));
    QVERIFY(f.tables()[2].dtype == core::DType::FP16);
    QCOMPARE(f.tables()[2].access.alpha, 0.8);
    QCOMPARE(f.undo()->count(), 3);
  }

  void rejectedEditChangesNothingAndSaysWhy() {
    Fixture f;
    const core::Project before = f.document.project();
    QVERIFY(!f.page.tablesProxy()->setData(f.cell("cat_4", TableListModel::Dim), 6));
    QVERIFY(f.document.project() == before);
    QCOMPARE(f.undo()->count(), 0);
    QCOMPARE(f.page.message(), QString("Dim of cat_4: expected a positive multiple of 4, got 6"));
    QCOMPARE(f.cell("cat_4", TableListModel::Dim).data().toString(), QString("128"));
  }

  void addAppendsAUniquelyNamedTable() {
    Fixture f;
    const int row = f.page.addTable();
    QCOMPARE(row, 26);
    QCOMPARE(f.tables().size(), 27u);
    QCOMPARE(f.tables()[26].name, std::string("table_27"));
    QCOMPARE(f.tables()[26].rows, 1000000u);
    QCOMPARE(f.tables()[26].dim, 128u);
    QVERIFY(core::checkTable(f.tables()[26]).ok());
    QCOMPARE(f.undo()->undoText(), QString("Add table table_27"));
    QCOMPARE(f.page.filterSummary(), QString("27 tables"));
    QCOMPARE(f.page.sizeChart()->tableCount(), 27);
    f.page.addTable();
    QCOMPARE(f.tables()[27].name, std::string("table_28"));
    f.undo()->undo();
    f.undo()->undo();
    QCOMPARE(f.tables().size(), 26u);
    QCOMPARE(f.page.tablesView()->model()->rowCount(), 26);
  }

  void duplicateInsertsCopiesAfterTheirOriginals() {
    Fixture f;
    const QList<int> copies = f.page.duplicateRows({2, 0});
    QCOMPARE(copies, (QList<int>{1, 4}));
    QCOMPARE(f.tables()[1].name, std::string("cat_0_copy"));
    QCOMPARE(f.tables()[4].name, std::string("cat_2_copy"));
    QCOMPARE(f.tables()[1].rows, f.tables()[0].rows);
    QCOMPARE(f.undo()->undoText(), QString("Duplicate 2 tables"));
    f.page.duplicateRows({0});
    QCOMPARE(f.tables()[1].name, std::string("cat_0_copy2"));
    QCOMPARE(f.undo()->undoText(), QString("Duplicate cat_0"));
    QCOMPARE(f.page.tablesView()->model()->rowCount(), 29);
  }

  void removeTakesTheRowsButNeverTheLastTable() {
    Fixture f;
    QVERIFY(f.page.removeRows({25, 0, 3}).ok());
    QCOMPARE(f.tables().size(), 23u);
    QCOMPARE(f.tables()[0].name, std::string("cat_1"));
    QCOMPARE(f.undo()->undoText(), QString("Remove 3 tables"));
    QVERIFY(f.page.removeRows({0}).ok());
    QCOMPARE(f.undo()->undoText(), QString("Remove cat_1"));

    const core::Project before = f.document.project();
    QList<int> all;
    for (int i = 0; i < 22; ++i) all << i;
    const core::Status none_left = f.page.removeRows(all);
    QVERIFY(!none_left.ok());
    QVERIFY2(none_left.error().message.find("at least one table") != std::string::npos,
             none_left.error().message.c_str());
    QVERIFY(f.document.project() == before);

    f.undo()->undo();
    f.undo()->undo();
    QVERIFY(f.document.project() == core::defaultProject());
  }

  void buttonsFollowTheSelectionAndDeleteRemoves() {
    Fixture f;
    auto* remove = f.page.findChild<QToolButton*>("removeTablesButton");
    auto* duplicate = f.page.findChild<QToolButton*>("duplicateTablesButton");
    QVERIFY(remove != nullptr && duplicate != nullptr);
    QVERIFY(!remove->isEnabled());
    QVERIFY(!duplicate->isEnabled());
    f.page.selectRows({4, 6});
    QCOMPARE(f.page.selectedRows(), (QList<int>{4, 6}));
    QVERIFY(remove->isEnabled());
    QVERIFY(duplicate->isEnabled());

    auto* del = f.page.tablesView()->findChild<QAction*>("actionRemoveTables");
    QVERIFY(del != nullptr);
    QVERIFY(del->shortcut() == QKeySequence(QKeySequence::Delete));
    del->trigger();
    QCOMPARE(f.tables().size(), 24u);
    QCOMPARE(f.tables()[4].name, std::string("cat_5"));
    QCOMPARE(f.undo()->undoText(), QString("Remove 2 tables"));
    QCOMPARE(f.page.selectedRows(), (QList<int>{4}));  // ready for the next Delete
  }

  void dtypeOfManyTablesIsOneEdit() {
    Fixture f;
    const std::uint64_t before = f.document.project().model.totalWeightBytes();
    f.page.setDType({0, 9, 19, 20, 21}, core::DType::FP16);  // the five 40M-row tables
    QCOMPARE(f.undo()->count(), 1);
    QCOMPARE(f.undo()->undoText(), QString("Set dtype of 5 tables to fp16"));
    QCOMPARE(f.document.project().model.totalWeightBytes(), before - 5 * 10240000000ull);
    QVERIFY(f.tables()[1].dtype == core::DType::FP32);
    QCOMPARE(f.cell("cat_9", TableListModel::SizeGiB).data().toString(), QString("9.54"));  // 10.24e9 bytes
  }

  void filterMatchesNamesIgnoringCase() {
    Fixture f;
    f.page.setFilterText("CAT_1");
    QCOMPARE(f.page.tablesView()->model()->rowCount(), 11);  // cat_1, cat_10 .. cat_19
    QCOMPARE(f.page.filterSummary(), QString("11 of 26 tables"));
    f.page.addTable();  // filtered out, but counted
    QCOMPARE(f.page.filterSummary(), QString("11 of 27 tables"));
    f.page.setFilterText({});
    QCOMPARE(f.page.filterSummary(), QString("27 tables"));
  }

  void csvImportReplacesTheTablesAndFillsTheHistogram() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = writeFile(dir, "tables.csv", kFiveTables);
    Fixture f;
    const core::ModelSpec before = f.document.project().model;

    const core::Status imported = f.page.importTables(path);
    QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().message.c_str());
    QCOMPARE(f.tables().size(), 5u);
    QCOMPARE(f.tables()[1].access.alpha, 1.1);
    // Only the tables change; the model's other fields stay.
    QCOMPARE(f.document.project().model.name, before.name);
    QCOMPARE(f.document.project().model.batch_size_per_gpu, before.batch_size_per_gpu);
    QCOMPARE(f.undo()->undoText(), QString("Import 5 tables from tables.csv"));
    QCOMPARE(f.page.tablesView()->model()->rowCount(), 5);
    QCOMPARE(f.page.summaryValue("model.tables"), QString("5"));

    const shardscope::app::TableSizeChart* chart = f.page.sizeChart();
    QCOMPARE(chart->tableCount(), 5);
    QCOMPARE(chart->tablesInBinOf(kMiB), 2);  // 1 MiB and 2 MiB share [1 MiB, 4 MiB)
    QCOMPARE(chart->tablesInBinOf(5 * kMiB), 1);
    QCOMPARE(chart->tablesInBinOf(kGiB), 2);
    QCOMPARE(chart->bins().size(), 6u);  // 1 MiB .. 4 GiB, empty bins kept
    QCOMPARE(chart->bins().front().low_bytes, static_cast<double>(kMiB));
    int counted = 0;
    for (const auto& bin : chart->bins()) counted += bin.tables;
    QCOMPARE(counted, 5);
    QCOMPARE(chart->bins().back().names, (QStringList{"d", "e"}));

    f.undo()->undo();
    QVERIFY(f.document.project().model == before);
    QCOMPARE(f.page.sizeChart()->tableCount(), 26);
  }

  void sizeChartTicksAreWholeBinarySizesThatDoNotOverlap() {
    shardscope::app::TableSizeChart chart;
    chart.setTables(core::defaultProject().model.tables);  // 1.5 KiB .. 19.1 GiB
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const QRegularExpression whole(QStringLiteral("^(1|4|16|64|256) (B|KiB|MiB|GiB|TiB)$"));
    for (int width : {320, 640, 1000, 1400}) {
      chart.resize(width, 260);
      QCoreApplication::processEvents();
      chart.plot()->replot();
      QCPAxis* axis = chart.plot()->xAxis;
      const QVector<QString> labels = axis->tickVectorLabels();
      const QVector<double> ticks = axis->tickVector();
      QVERIFY2(labels.size() >= 2, qPrintable(QString::number(width)));
      QCOMPARE(labels.front(), QString("1 KiB"));  // the axis starts and ends on whole units
      QCOMPARE(labels.back(), QString("1 TiB"));
      const QFontMetrics metrics(axis->tickLabelFont());
      for (qsizetype i = 0; i < labels.size(); ++i) {
        QVERIFY2(whole.match(labels[i]).hasMatch(), qPrintable(labels[i]));
        if (i == 0) continue;
        const double gap = axis->coordToPixel(ticks[i]) - axis->coordToPixel(ticks[i - 1]);
        const double needed = (metrics.horizontalAdvance(labels[i]) + metrics.horizontalAdvance(labels[i - 1])) / 2.0;
        QVERIFY2(gap > needed, qPrintable(QStringLiteral("%1 px: %2 and %3").arg(width).arg(labels[i - 1], labels[i])));
      }
      if (width == 1400) QVERIFY(labels.contains(QString("256 MiB")));  // room for every bin edge
    }
  }

  void sizeChartToolTipNamesBinaryEdges() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Fixture f;
    QVERIFY(f.page.importTables(writeFile(dir, "tables.csv", kFiveTables)).ok());
    const shardscope::app::TableSizeChart* chart = f.page.sizeChart();
    QCOMPARE(chart->binToolTip(0), QString("<b>2 tables</b> of 1 MiB to 4 MiB, 3.0 MiB in all<br>b, a"));
    QCOMPARE(chart->binToolTip(2), QString("<b>0 tables</b> of 16 MiB to 64 MiB"));
  }

  void csvImportCanAppendWhenNamesDoNotClash() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Fixture f;
    const QString clash = writeFile(dir, "clash.csv", "name,rows,dim\ncat_3,10,4\nnew,10,4\n");
    const core::Status refused = f.page.importTables(clash, ModelPage::ImportMode::Append);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message.find("clash.csv: 1 table with names the model already uses: cat_3") !=
                 std::string::npos,
             refused.error().message.c_str());
    QVERIFY(f.document.project() == core::defaultProject());

    const core::Status appended =
        f.page.importTables(writeFile(dir, "tables.csv", kFiveTables), ModelPage::ImportMode::Append);
    QVERIFY(appended.ok());
    QCOMPARE(f.tables().size(), 31u);
    QCOMPARE(f.tables()[26].name, std::string("a"));
    QCOMPARE(f.undo()->undoText(), QString("Append 5 tables from tables.csv"));
  }

  void malformedCsvNamesFileLineAndColumnAndKeepsTheProject() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = writeFile(dir, "bad.csv", "name,rows,dim\r\na,10,4\r\n\r\nb,10,6\r\n");
    Fixture f;
    f.page.addTable();  // something of the user's to keep
    const core::Project before = f.document.project();
    const int steps = f.undo()->count();

    const core::Status imported = f.page.importTables(path);
    QVERIFY(!imported.ok());
    const QString message = QString::fromStdString(imported.error().message);
    QCOMPARE(message, path + ":4: column \"dim\": expected a positive multiple of 4, got 6");
    QVERIFY(f.document.project() == before);
    QCOMPARE(f.undo()->count(), steps);
    QCOMPARE(f.page.tablesView()->model()->rowCount(), 27);
  }

  void unknownCsvColumnsAreReported() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Fixture f;
    QVERIFY(f.page.importTables(writeFile(dir, "owned.csv", "name,rows,dim,owner\na,10,4,ads\n")).ok());
    QVERIFY2(f.page.message().contains("column \"owner\" is not a table field; ignored"), qPrintable(f.page.message()));
  }

  void modelFileImportReplacesTheWholeModel() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const core::ModelSpec kaggle = core::modelPreset("criteo_kaggle").value();
    const QString path = dir.filePath("kaggle.json");
    QVERIFY(core::writeJsonFile(path.toStdString(), core::toJson(kaggle)).ok());
    Fixture f;
    QVERIFY(f.page.importTables(path).ok());
    QVERIFY(f.document.project().model == kaggle);
    QCOMPARE(f.page.summaryValue("model.batch"), QString("2,048"));
    QVERIFY2(f.undo()->undoText().startsWith("Import model"), qPrintable(f.undo()->undoText()));
    f.undo()->undo();
    QVERIFY(f.document.project() == core::defaultProject());
  }

  void malformedModelFileNamesTheJsonPath() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    nlohmann::ordered_json j = core::toJson(core::modelPreset("criteo_kaggle").value());
    j["tables"][2]["dim"] = 6;
    const QString path = writeFile(dir, "broken.json", QByteArray::fromStdString(j.dump(1)));
    const QString cluster = dir.filePath("cluster.json");
    QVERIFY(core::writeJsonFile(cluster.toStdString(), core::toJson(core::defaultProject().cluster)).ok());
    Fixture f;
    const core::Status broken = f.page.importTables(path);
    QVERIFY(!broken.ok());
    QVERIFY2(broken.error().message.find("broken.json: /tables/2/dim: expected a positive multiple of 4, got 6") !=
                 std::string::npos,
             broken.error().message.c_str());
    const core::Status wrong_kind = f.page.importTables(cluster);
    QVERIFY(!wrong_kind.ok());
    QVERIFY2(wrong_kind.error().message.find("holds no tables") != std::string::npos,
             wrong_kind.error().message.c_str());
    const core::Status missing = f.page.importTables(dir.filePath("nothing.csv"));
    QVERIFY(!missing.ok());
    QVERIFY2(missing.error().message.find("nothing.csv: cannot open") != std::string::npos,
             missing.error().message.c_str());
    QVERIFY(f.document.project() == core::defaultProject());
    QCOMPARE(f.undo()->count(), 0);
  }

  void exportedCsvImportsBackToTheSameTables() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Fixture f;
    QVERIFY(f.page.tablesProxy()->setData(f.cell("cat_1", TableListModel::Pooling), QString("20 \u00b1 5")));
    QVERIFY(f.page.tablesProxy()->setData(f.cell("cat_2", TableListModel::Access), QString("hot 1% 80%")));
    const std::vector<core::TableSpec> tables = f.tables();
    const QString path = dir.filePath("out.csv");
    QVERIFY(f.page.exportCsv(path).ok());
    QVERIFY(f.page.removeRows({0, 1, 2}).ok());
    QVERIFY(f.page.importTables(path).ok());
    QVERIFY(f.tables() == tables);
  }

  void batchNameAndOptimizerAreUndoableEdits() {
    Fixture f;
    f.page.batchSpinBox()->setValue(2048);
    QCOMPARE(f.document.project().model.batch_size_per_gpu, 2048u);
    QCOMPARE(f.undo()->undoText(), QString("Set batch per GPU to 2,048"));

    QComboBox* optimizer = f.page.optimizerComboBox();
    optimizer->setCurrentIndex(optimizer->findText("Adam"));
    emit optimizer->activated(optimizer->currentIndex());  // as a user's pick does
    QVERIFY(f.document.project().model.optimizer == core::Optimizer::Adam);
    QCOMPARE(f.undo()->undoText(), QString("Set optimizer to Adam"));

    QLineEdit* name = f.page.modelNameEdit();
    name->setText("DLRM big");
    emit name->editingFinished();
    QCOMPARE(f.document.project().model.name, std::string("DLRM big"));
    name->setText("   ");
    emit name->editingFinished();  // rejected: a model needs a name
    QCOMPARE(f.document.project().model.name, std::string("DLRM big"));
    QCOMPARE(name->text(), QString("DLRM big"));

    f.undo()->undo();
    f.undo()->undo();
    f.undo()->undo();
    QVERIFY(f.document.project() == core::defaultProject());
    QCOMPARE(f.page.summaryValue("model.batch"), QString("1,024"));
    QCOMPARE(f.page.summaryValue("model.optimizer"), QString("Row-wise Adagrad"));
    QCOMPARE(f.page.summaryValue("model.name"), QString::fromStdString(core::defaultProject().model.name));
  }

  void openingAnotherProjectReplacesTheTables() {
    Fixture f;
    core::Project other = core::defaultProject();
    other.model.tables.resize(3);
    f.document.reset(other);
    QCOMPARE(f.page.tablesView()->model()->rowCount(), 3);
    QCOMPARE(f.page.sizeChart()->tableCount(), 3);
    QCOMPARE(f.page.summaryValue("model.tables"), QString("3"));
  }

  void aThousandTablesImportFilterAndSummarise() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QByteArray csv = "name,rows,dim\n";
    for (int i = 0; i < 1000; ++i) {
      csv += "t" + QByteArray::number(i).rightJustified(4, '0') + "," + QByteArray::number((i + 1) * 1000) + ",64\n";
    }
    Fixture f;
    QVERIFY(f.page.importTables(writeFile(dir, "many.csv", csv)).ok());
    QCOMPARE(f.page.summaryValue("model.tables"), QString("1,000"));
    QCOMPARE(f.page.sizeChart()->tableCount(), 1000);
    f.page.setFilterText("T000");
    QCOMPARE(f.page.filterSummary(), QString("10 of 1,000 tables"));
    f.page.setFilterText({});
    f.page.tablesView()->sortByColumn(TableListModel::Rows, Qt::DescendingOrder);
    QCOMPARE(f.page.tablesProxy()->index(0, TableListModel::Name).data().toString(), QString("t0999"));
    QVERIFY(f.page.tablesProxy()->setData(f.cell("t0500", TableListModel::Rows), QString("2M")));
    QCOMPARE(f.tables()[500].rows, 2000000u);
    QCOMPARE(f.page.tablesProxy()->index(0, TableListModel::Name).data().toString(), QString("t0500"));
  }
};

QTEST_MAIN(TestModelPage)
#include "test_model_page.moc"
