// Access skew: a row range gets the share of ids it really receives.
#include <QtTest>

#include <cmath>

#include "shardscope/planner/access_profile.h"

using namespace shardscope;
using planner::AccessProfile;

class TestAccessProfile : public QObject {
  Q_OBJECT
 private slots:
  void uniformMassIsProportionalToRows() {
    AccessProfile p({}, 1000);
    QCOMPARE(p.mass(0, 1000), 1.0);
    QVERIFY(std::abs(p.mass(0, 250) - 0.25) < 1e-12);
  }

  void zipfHeadGetsMostOfTheIds() {
    core::AccessSpec a;
    a.kind = core::AccessKind::Zipf;
    a.alpha = 1.05;
    AccessProfile p(a, 40'000'000);
    QVERIFY(std::abs(p.mass(0, 40'000'000) - 1.0) < 1e-9);
    // Row-wise over 8: the first block is far hotter than rows/W.
    const double first = p.mass(0, 5'000'000), last = p.mass(35'000'000, 40'000'000);
    QVERIFY2(first > 0.8, qPrintable(QString::number(first)));
    QVERIFY(last < 0.01);
    QVERIFY(p.segmentCount() < 300);
  }

  void zipfMassMatchesExactSumOnSmallTable() {
    core::AccessSpec a;
    a.kind = core::AccessKind::Zipf;
    a.alpha = 1.2;
    const std::uint64_t n = 5000;
    AccessProfile p(a, n);
    double total = 0, head = 0;
    for (std::uint64_t k = 1; k <= n; ++k) {
      total += std::pow(double(k), -1.2);
      if (k <= 100) head += std::pow(double(k), -1.2);
    }
    QVERIFY2(std::abs(p.mass(0, 100) - head / total) < 1e-3, qPrintable(QString::number(p.mass(0, 100))));
  }

  void hotSetSplitsTheMass() {
    core::AccessSpec a;
    a.kind = core::AccessKind::HotSet;
    a.hot_fraction = 0.1;
    a.hot_probability = 0.9;
    AccessProfile p(a, 1000);
    QVERIFY(std::abs(p.mass(0, 100) - 0.9) < 1e-12);
    QVERIFY(std::abs(p.mass(100, 1000) - 0.1) < 1e-12);
  }

  void histogramBucketsMapToRowRanges() {
    core::AccessSpec a;
    a.kind = core::AccessKind::Histogram;
    a.histogram = {0.5, 0.25, 0.25};
    AccessProfile p(a, 300);
    QVERIFY(std::abs(p.mass(0, 100) - 0.5) < 1e-12);
    QVERIFY(std::abs(p.mass(150, 300) - 0.375) < 1e-12);
  }

  void uniqueRowsSaturateAtTheRowCount() {
    AccessProfile p({}, 100);
    QVERIFY(p.expectedUniqueRows(0, 100, 1e6) > 99.99);
    // Few draws: nearly all distinct.
    QVERIFY(std::abs(p.expectedUniqueRows(0, 100, 1) - 1.0) < 1e-9);
    // Uniform: 100 draws over 100 rows -> 100 (1 - (1 - 1/100)^100) ~ 63.4.
    QVERIFY(std::abs(p.expectedUniqueRows(0, 100, 100) - 63.397) < 0.01);
  }

  void skewReducesUniqueRows() {
    core::AccessSpec a;
    a.kind = core::AccessKind::Zipf;
    a.alpha = 1.1;
    AccessProfile skewed(a, 1'000'000), flat({}, 1'000'000);
    QVERIFY(skewed.expectedUniqueRows(0, 1'000'000, 100'000) < 0.5 * flat.expectedUniqueRows(0, 1'000'000, 100'000));
  }
};

QTEST_APPLESS_MAIN(TestAccessProfile)
#include "test_access_profile.moc"
