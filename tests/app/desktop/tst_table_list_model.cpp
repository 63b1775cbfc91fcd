// TableListModel: the embedding tables of a model as rows, with the display
// strings the Tables view shows and numeric sorting through a proxy.
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "display_format.h"
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
    QCOMPARE(headers, (QStringList{"Name", "Rows", "Dim", "DType", "Pooling", "Access", "Size (GB)"}));
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
    // 40e6 rows x 128 x 4 bytes = 20.48e9 bytes.
    QCOMPARE(text(model, 0, TableListModel::SizeGB), QString("20.48"));
  }

  void sortingBySizeThroughProxyIsNumeric() {
    TableListModel model;
    model.setTables(core::defaultProject().model.tables);
    QSortFilterProxyModel proxy;
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setSortRole(TableListModel::SortRole);

    proxy.sort(TableListModel::SizeGB, Qt::DescendingOrder);
    quint64 previous = UINT64_MAX;
    for (int r = 0; r < proxy.rowCount(); ++r) {
      const quint64 bytes = proxy.index(r, TableListModel::SizeGB).data(TableListModel::SortRole).toULongLong();
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
      return proxy.index(row, TableListModel::SizeGB).data(TableListModel::SortRole).toULongLong();
    };
    QCOMPARE(bytesAt(0), largest);

    proxy.sort(TableListModel::SizeGB, Qt::AscendingOrder);
    QCOMPARE(bytesAt(0), smallest);
    QCOMPARE(bytesAt(proxy.rowCount() - 1), largest);
  }

  void replacingTablesResetsTheModel() {
    TableListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTables(core::defaultProject().model.tables);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setTables({});
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 0);
  }

  void accessAndPoolingTextCoverEveryKind() {
    core::AccessSpec hot;
    hot.kind = core::AccessKind::HotSet;
    hot.hot_fraction = 0.1;
    hot.hot_probability = 0.9;
    QCOMPARE(QString::fromStdString(shardscope::app::accessText(hot)), QString::fromUtf8("hot 10% \u2192 90%"));
    core::AccessSpec hist;
    hist.kind = core::AccessKind::Histogram;
    hist.histogram = {0.5, 0.25, 0.25};
    QCOMPARE(QString::fromStdString(shardscope::app::accessText(hist)), QString("histogram (3 buckets)"));
    QCOMPARE(QString::fromStdString(shardscope::app::accessText(core::AccessSpec{})), QString("uniform"));
    core::PoolingSpec uniform{core::PoolingKind::Uniform, 20.0, 5.0};
    QCOMPARE(QString::fromStdString(shardscope::app::poolingText(uniform)), QString::fromUtf8("uniform 20 \u00b1 5"));
  }

  void countsAndSizesAreFormattedForPeople() {
    using shardscope::app::formatCount;
    using shardscope::app::formatGigabytes;
    QCOMPARE(formatCount(0), std::string("0"));
    QCOMPARE(formatCount(999), std::string("999"));
    QCOMPARE(formatCount(1000), std::string("1,000"));
    QCOMPARE(formatCount(123456), std::string("123,456"));
    QCOMPARE(formatGigabytes(0), std::string("0"));
    QCOMPARE(formatGigabytes(1536), std::string("< 0.01"));
    QCOMPARE(formatGigabytes(20'480'000'000ULL), std::string("20.48"));
  }
};

QTEST_MAIN(TestTableListModel)
#include "tst_table_list_model.moc"
