// How the desktop spells core values for people: counts, sizes, pooling and
// access distributions, and the counts people type.
#include <QtTest>
#include <algorithm>

#include "shardscope/report/display_format.h"

namespace core = shardscope::core;

class TestDisplayFormat : public QObject {
  Q_OBJECT

 private slots:
  void accessAndPoolingTextCoverEveryKind() {
    core::AccessSpec hot;
    hot.kind = core::AccessKind::HotSet;
    hot.hot_fraction = 0.1;
    hot.hot_probability = 0.9;
    QCOMPARE(QString::fromStdString(shardscope::report::accessText(hot)), QString::fromUtf8("hot 10% \u2192 90%"));
    core::AccessSpec hist;
    hist.kind = core::AccessKind::Histogram;
    hist.histogram = {0.5, 0.25, 0.25};
    QCOMPARE(QString::fromStdString(shardscope::report::accessText(hist)), QString("measured (3 buckets)"));
    QCOMPARE(QString::fromStdString(shardscope::report::accessText(core::AccessSpec{})), QString("uniform"));
    core::PoolingSpec uniform{core::PoolingKind::Uniform, 20.0, 5.0};
    QCOMPARE(QString::fromStdString(shardscope::report::poolingText(uniform)),
             QString::fromUtf8("uniform 20 \u00b1 5"));
  }
  void countsAreFormattedInDigitGroups() {
    using shardscope::report::formatCount;
    QCOMPARE(formatCount(0), std::string("0"));
    QCOMPARE(formatCount(999), std::string("999"));
    QCOMPARE(formatCount(1000), std::string("1,000"));
    QCOMPARE(formatCount(123456), std::string("123,456"));
  }
  void sizesInOneUnitAreGibibytes() {
    using shardscope::report::formatGibibytes;
    QCOMPARE(formatGibibytes(0), std::string("0"));
    QCOMPARE(formatGibibytes(1536), std::string("< 0.01"));
    QCOMPARE(formatGibibytes(5ull << 20), std::string("< 0.01"));  // 0.0049 GiB
    QCOMPARE(formatGibibytes(6ull << 20), std::string("0.01"));    // 0.0059 GiB rounds up
    QCOMPARE(formatGibibytes(1ull << 30), std::string("1.00"));
    QCOMPARE(formatGibibytes(20'480'000'000ULL), std::string("19.07"));  // not "20.48": that is GB
    QCOMPARE(formatGibibytes(1ull << 40), std::string("1,024.00"));
    QCOMPARE(formatGibibytes((1ull << 30) - 1), std::string("1.00"));  // rounds into the next whole GiB
  }
  void aChangeReadsAsAPercentageUpToTenfoldThenAsAFactor() {
    using shardscope::report::formatChange;
    QCOMPARE(QString::fromStdString(formatChange(2.0, 2.7)), QStringLiteral("+35.0%"));
    QCOMPARE(QString::fromStdString(formatChange(2.0, 0.4)), QStringLiteral("-80.0%"));
    QCOMPARE(QString::fromStdString(formatChange(10.0, 10.35)), QStringLiteral("+3.5%"));
    QCOMPARE(QString::fromStdString(formatChange(1.0, 1.0)), QStringLiteral("+0.0%"));
    QCOMPARE(QString::fromStdString(formatChange(1.0, 11.0)), QStringLiteral("+1000.0%"));
    QCOMPARE(QString::fromStdString(formatChange(1.0, 12.0)), QStringLiteral("12.0x"));
    QCOMPARE(QString::fromStdString(formatChange(0.01, 4.5)), QStringLiteral("450x"));
    QCOMPARE(formatChange(0.0, 3.0), std::string());
  }
  void aDifferenceOfSharesReadsInPercentagePoints() {
    using shardscope::report::formatPointsDifference;
    QCOMPARE(QString::fromStdString(formatPointsDifference(0.25, 0.312)), QStringLiteral("+6.2 pp"));
    QCOMPARE(QString::fromStdString(formatPointsDifference(0.5, 0.496)), QStringLiteral("\u22120.4 pp"));
    QCOMPARE(QString::fromStdString(formatPointsDifference(0.5, 0.5)), QStringLiteral("0 pp"));
  }
  void countsParseOnlyWhenWholeAndUnambiguous() {
    using shardscope::report::parseCount;
    QVERIFY(parseCount("40000000") == 40000000ull);
    QVERIFY(parseCount("40,000,000") == 40000000ull);
    QVERIFY(parseCount("40_000_000") == 40000000ull);
    QVERIFY(parseCount("4e7") == 40000000ull);
    QVERIFY(parseCount("2.5M") == 2500000ull);
    QVERIFY(parseCount("18446744073709551615") == 18446744073709551615ull);
    for (const char* bad :
         {"", "x", "-1", "1.5", "1,23", "1,2345", "12,", "1e400", "18446744073709551616", "1.23456k"}) {
      QVERIFY2(!parseCount(bad).has_value(), bad);
    }
  }
  void summaryRowsSpeakGibibytes() {
    core::ModelSpec m;
    core::TableSpec t;
    t.name = "t";
    t.rows = 40'000'000;
    t.dim = 128;  // fp32: 20,480,000,000 bytes
    m.tables = {t};
    const auto model_rows = shardscope::report::modelSummaryRows(m);
    const auto size =
        std::find_if(model_rows.begin(), model_rows.end(), [](const auto& r) { return r.key == "embedding_size"; });
    QVERIFY(size != model_rows.end());
    QCOMPARE(size->value, std::string("19.07 GiB"));

    core::ClusterSpec c;
    c.gpu.hbm_bytes = 80ull << 30;
    const auto cluster_rows = shardscope::report::clusterSummaryRows(c);
    const auto hbm =
        std::find_if(cluster_rows.begin(), cluster_rows.end(), [](const auto& r) { return r.key == "hbm"; });
    QVERIFY(hbm != cluster_rows.end());
    QCOMPARE(hbm->value, std::string("80 GiB"));  // no decimal GB beside it
    c.gpus_per_node = 8;
    c.network.nvls = true;
    const auto with_network = shardscope::report::clusterSummaryRows(c);
    const auto net =
        std::find_if(with_network.begin(), with_network.end(), [](const auto& r) { return r.key == "network"; });
    QVERIFY(net != with_network.end());
    QCOMPARE(net->value, std::string("8 NICs per node, NVLS"));  // one NIC per GPU unless the file says otherwise
  }
};

QTEST_MAIN(TestDisplayFormat)
#include "test_display_format.moc"
