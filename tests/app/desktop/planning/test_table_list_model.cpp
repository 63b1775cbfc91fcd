// TableListModel: the embedding tables of a model as rows, with the display
// strings the Tables view shows, numeric sorting through a proxy, the
// smallest change signals when the tables change, and validated editing.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStyleOptionViewItem>
#include <QtTest>
#include <memory>

#include "shardscope/core/presets.h"
#include "table_list_model.h"

using shardscope::app::TableListModel;
namespace core = shardscope::core;

class TestTableListModel : public QObject {
  Q_OBJECT

 private:
  static QString text(const QAbstractItemModel& m, int row, int column) {
    return m.index(row, column).data(Qt::DisplayRole).toString();
  }

 private slots:
  void defaultProjectHas26Rows() {
    TableListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTables(core::defaultProject().model.tables);
    QCOMPARE(model.rowCount(), 26);
    QCOMPARE(model.columnCount(), int(TableListModel::ColumnCount));
  }

  void headersNameTheColumns() {
    TableListModel model;
    QStringList headers;
    for (int c = 0; c < model.columnCount(); ++c) headers << model.headerData(c, Qt::Horizontal).toString();
    QCOMPARE(headers, (QStringList{"Name", "Rows", "Dim", "DType", "Pooling", "Access", "Size (GiB)"}));
  }

  void firstTableShowsItsDisplayStrings() {
    TableListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTables(core::defaultProject().model.tables);
    QCOMPARE(text(model, 0, TableListModel::Name), QString("cat_0"));
    QCOMPARE(text(model, 0, TableListModel::Rows), QString("40,000,000"));
    QCOMPARE(text(model, 0, TableListModel::Dim), QString("128"));
    QCOMPARE(text(model, 0, TableListModel::DType), QString::fromLatin1(core::toString(core::DType::FP32)));
    QCOMPARE(text(model, 0, TableListModel::Pooling), QString("fixed 3"));
    QCOMPARE(text(model, 0, TableListModel::Access), QString("zipf 1.05"));
    // 40e6 rows x 128 x 4 bytes = 20.48e9 bytes = 19.07 GiB.
    QCOMPARE(text(model, 0, TableListModel::SizeGiB), QString("19.07"));
  }

  void sizeIsInGibibytesWithExactBytesInTheToolTip() {
    TableListModel model;
    std::vector<core::TableSpec> tables = core::defaultProject().model.tables;
    tables.resize(2);
    tables[1].rows = 12;  // 12 x 128 x 4 = 6,144 bytes: below a hundredth of a GiB
    model.setTables(tables);
    QCOMPARE(text(model, 1, TableListModel::SizeGiB), QString("< 0.01"));
    QCOMPARE(model.index(1, TableListModel::SizeGiB).data(Qt::ToolTipRole).toString(),
             QString("6,144 bytes of weights (6.0 KiB)"));
    QCOMPARE(model.index(0, TableListModel::SizeGiB).data(Qt::EditRole).toDouble(), 20'480'000'000.0 / (1ull << 30));
    QVERIFY(model.headerData(TableListModel::SizeGiB, Qt::Horizontal, Qt::ToolTipRole)
                .toString()
                .contains(QString::fromUtf8("1 GiB = 2\u00b3\u2070 bytes")));
  }

  void sortingBySizeThroughProxyIsNumeric() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QSortFilterProxyModel proxy;
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setSortRole(TableListModel::SortRole);

    proxy.sort(TableListModel::SizeGiB, Qt::DescendingOrder);
    quint64 previous = UINT64_MAX;
    for (int r = 0; r < proxy.rowCount(); ++r) {
      const quint64 bytes = proxy.index(r, TableListModel::SizeGiB).data(TableListModel::SortRole).toULongLong();
      QVERIFY2(bytes <= previous, qPrintable(QString("row %1 out of order").arg(r)));
      previous = bytes;
    }
    // Largest first; sorting the text ("9.xx" > "20.48") would get this wrong.
    quint64 largest = 0;
    quint64 smallest = UINT64_MAX;
    for (const auto& t : model.tables()) {
      largest = std::max<quint64>(largest, t.weightBytes());
      smallest = std::min<quint64>(smallest, t.weightBytes());
    }
    const auto bytesAt = [&proxy](int row) {
      return proxy.index(row, TableListModel::SizeGiB).data(TableListModel::SortRole).toULongLong();
    };
    QCOMPARE(bytesAt(0), largest);

    proxy.sort(TableListModel::SizeGiB, Qt::AscendingOrder);
    QCOMPARE(bytesAt(0), smallest);
    QCOMPARE(bytesAt(proxy.rowCount() - 1), largest);
  }

  void equalTablesSignalNothing() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setTables(core::defaultProject().model.tables);
    QCOMPARE(changed.count(), 0);
    QCOMPARE(reset.count(), 0);
  }

  void changedValuesSignalDataChangedForThoseRowsOnly() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    auto tables = core::defaultProject().model.tables;
    tables[3].rows = 5;
    tables[7].dim = 64;
    model.setTables(tables);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed[0][0].toModelIndex().row(), 3);
    QCOMPARE(changed[0][1].toModelIndex().row(), 7);
    QCOMPARE(text(model, 3, TableListModel::Rows), QString("5"));
  }

  void aBlockAddedOrRemovedIsAnInsertOrARemove() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    auto tables = core::defaultProject().model.tables;
    tables.insert(tables.begin() + 4, tables[4]);
    tables[5].name = "cat_4_copy";
    model.setTables(tables);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted[0][1].toInt(), 5);
    QCOMPARE(text(model, 5, TableListModel::Name), QString("cat_4_copy"));
    model.setTables(core::defaultProject().model.tables);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(removed[0][1].toInt(), 5);
    model.setTables({});
    QCOMPARE(removed.count(), 2);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(reset.count(), 0);
  }

  void unrelatedTablesResetTheModel() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    auto tables = core::defaultProject().model.tables;
    tables.erase(tables.begin() + 20);
    tables.erase(tables.begin() + 2);  // two separate holes
    model.setTables(tables);
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 24);
  }

  // ---- editing

  void everyColumnButSizeIsEditable() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    for (int c = 0; c < TableListModel::ColumnCount; ++c) {
      const bool editable = model.flags(model.index(0, c)).testFlag(Qt::ItemIsEditable);
      QVERIFY2(editable == (c != TableListModel::SizeGiB), qPrintable(QString::number(c)));
    }
  }

  void editingRowsThroughAProxyChangesTheTableAndSaysWhich() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(TableListModel::SortRole);
    QAbstractItemModelTester source_tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.sort(TableListModel::Rows, Qt::AscendingOrder);  // cat_5 (3 rows) first
    QCOMPARE(proxy.index(0, TableListModel::Name).data().toString(), QString("cat_5"));
    QSignalSpy edited(&model, &TableListModel::tableEdited);
    // Beyond 32 bits: 4e9 rows.
    QVERIFY(proxy.setData(proxy.index(0, TableListModel::Rows), QString("4e9")));
    QCOMPARE(model.tables()[5].rows, 4000000000ull);
    QCOMPARE(edited.count(), 1);
    QCOMPARE(edited[0][0].toInt(), 5);
    QCOMPARE(edited[0][1].toInt(), int(TableListModel::Rows));
    // Sorted again: now the largest count.
    QCOMPARE(proxy.index(proxy.rowCount() - 1, TableListModel::Name).data().toString(), QString("cat_5"));
  }

  void rowsAcceptTheFormsPeopleType() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    const std::pair<QVariant, quint64> cases[] = {
        {QString("40,000,000"), 40000000ull},
        {QString("40M"), 40000000ull},
        {QString("1.5k"), 1500ull},
        {QString(" 12 000 "), 12000ull},
        {QString("4B"), 4000000000ull},
        {QVariant::fromValue<qulonglong>(7), 7ull},
        {QString("12000000000"), 12000000000ull},
    };
    for (const auto& [value, rows] : cases) {
      QVERIFY2(model.setData(model.index(0, TableListModel::Rows), value), qPrintable(model.lastError()));
      QCOMPARE(model.tables()[0].rows, rows);
    }
  }

  void rejectedValuesLeaveTheTableAndSayWhy() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy rejected(&model, &TableListModel::editRejected);
    QSignalSpy edited(&model, &TableListModel::tableEdited);
    const auto before = model.tables();
    const std::pair<int, QVariant> bad[] = {
        {TableListModel::Dim, 6},
        {TableListModel::Dim, 0},
        {TableListModel::Rows, QString("0")},
        {TableListModel::Rows, QString("1.5")},
        {TableListModel::Rows, QString("-3")},
        {TableListModel::Rows, QString("lots")},
        {TableListModel::Rows, QString("1,2345")},
        {TableListModel::Name, QString("  ")},
        {TableListModel::Name, QString("cat_1")},
        {TableListModel::DType, QString("fp64")},
        {TableListModel::Pooling, QString("0")},
        {TableListModel::Pooling, QString("2 \u00b1 5")},
        {TableListModel::Access, QString("zipf 12")},
        {TableListModel::Access, QString("hot 10%")},
        {TableListModel::SizeGiB, 3.0},
    };
    for (const auto& [column, value] : bad) {
      QVERIFY2(!model.setData(model.index(0, column), value), qPrintable(value.toString()));
      QVERIFY2(model.lastError().startsWith(model.headerData(column, Qt::Horizontal).toString() + " of cat_0: "),
               qPrintable(model.lastError()));
    }
    QCOMPARE(rejected.count(), int(std::size(bad)));
    QCOMPARE(edited.count(), 0);
    QVERIFY(model.tables() == before);
    QVERIFY(!model.setData(model.index(0, TableListModel::Dim), 6));
    QCOMPARE(model.lastError(), QString("Dim of cat_0: expected a positive multiple of 4, got 6"));
    QVERIFY(!model.setData(model.index(0, TableListModel::Name), QString("cat_1")));
    QCOMPARE(model.lastError(), QString("Name of cat_0: another table (row 2) is already named \"cat_1\""));
  }

  void dtypePoolingAndAccessEditsReadTheirText() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QVERIFY(model.setData(model.index(0, TableListModel::DType), QString("FP16")));
    QVERIFY(model.tables()[0].dtype == core::DType::FP16);
    QCOMPARE(text(model, 0, TableListModel::SizeGiB), QString("9.54"));  // half the bytes
    QVERIFY(model.setData(model.index(0, TableListModel::Pooling), QString("20 \u00b1 5")));
    QVERIFY(model.tables()[0].pooling == (core::PoolingSpec{core::PoolingKind::Uniform, 20.0, 5.0}));
    QVERIFY(model.setData(model.index(0, TableListModel::Pooling), QString("8")));  // keeps uniform, spread 5
    QVERIFY(model.tables()[0].pooling == (core::PoolingSpec{core::PoolingKind::Uniform, 8.0, 5.0}));
    QVERIFY(model.setData(model.index(0, TableListModel::Pooling), QString("fixed 2.5")));
    QVERIFY(model.tables()[0].pooling == (core::PoolingSpec{core::PoolingKind::Fixed, 2.5, 0.0}));
    QVERIFY(model.setData(model.index(0, TableListModel::Access), QString("hot 10% 90%")));
    QCOMPARE(text(model, 0, TableListModel::Access), QString::fromUtf8("hot 10% \u2192 90%"));
    QVERIFY(model.setData(model.index(0, TableListModel::Access), QString("uniform")));
    QVERIFY(model.tables()[0].access == core::AccessSpec{});
    QVERIFY(model.setData(model.index(0, TableListModel::Name), QString("  user_id ")));
    QCOMPARE(model.tables()[0].name, std::string("user_id"));
  }

  void committingTheUnchangedEditTextIsNoEdit() {
    auto tables = core::defaultProject().model.tables;
    tables[0].access.kind = core::AccessKind::HotSet;
    tables[0].access.hot_fraction = 0.123456789;  // shown rounded: "hot 12.3457% → 90%"
    tables[0].access.hot_probability = 0.9;
    TableListModel model;
    model.setTables(tables);
    QSignalSpy edited(&model, &TableListModel::tableEdited);
    const QModelIndex access = model.index(0, TableListModel::Access);
    QVERIFY(model.setData(access, access.data(Qt::EditRole)));
    QCOMPARE(edited.count(), 0);
    QCOMPARE(model.tables()[0].access.hot_fraction, 0.123456789);
  }

  // ---- the delegate, as a view uses it

  void delegateEditorsFitTheirColumns() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    shardscope::app::TableItemDelegate delegate;
    QWidget parent;
    const QStyleOptionViewItem option;

    std::unique_ptr<QWidget> dim(delegate.createEditor(&parent, option, proxy.index(0, TableListModel::Dim)));
    auto* spin = qobject_cast<QSpinBox*>(dim.get());
    QVERIFY(spin != nullptr);
    QCOMPARE(spin->singleStep(), 4);
    delegate.setEditorData(spin, proxy.index(0, TableListModel::Dim));
    QCOMPARE(spin->value(), 128);

    std::unique_ptr<QWidget> dtype(delegate.createEditor(&parent, option, proxy.index(0, TableListModel::DType)));
    QVERIFY(qobject_cast<QComboBox*>(dtype.get()) != nullptr);

    std::unique_ptr<QWidget> rows(delegate.createEditor(&parent, option, proxy.index(0, TableListModel::Rows)));
    auto* edit = qobject_cast<QLineEdit*>(rows.get());
    QVERIFY(edit != nullptr);
    delegate.setEditorData(edit, proxy.index(0, TableListModel::Rows));
    QCOMPARE(edit->text(), QString("40,000,000"));
    // Typing something wrong flags the editor at once, with the reason.
    edit->clear();
    QTest::keyClicks(edit, "40x");
    QVERIFY2(edit->toolTip().contains("expected a whole number of rows"), qPrintable(edit->toolTip()));
    QTest::keyClick(edit, Qt::Key_Backspace);
    QVERIFY(edit->toolTip().isEmpty());
    edit->setText("6e9");
    delegate.setModelData(edit, &proxy, proxy.index(0, TableListModel::Rows));
    QCOMPARE(model.tables()[0].rows, 6000000000ull);
  }
};

QTEST_MAIN(TestTableListModel)
#include "test_table_list_model.moc"
