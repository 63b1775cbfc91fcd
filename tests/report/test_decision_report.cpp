// The decision report's building blocks: which grids the alternatives table
// lists, and HTML escaping of user strings.
#include <QtTest>
#include <algorithm>

#include "shardscope/core/presets.h"
#include "shardscope/planner/scaling_sweep.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/report/decision_report.h"

namespace core = shardscope::core;
namespace planner = shardscope::planner;
namespace report = shardscope::report;

class TestDecisionReport : public QObject {
  Q_OBJECT

 private:
  // The default project planned as the desktop plans it.
  planner::SweepResult sweep_;

 private slots:
  void initTestCase() {
    const core::Project p = core::defaultProject();
    const core::Calibration* cal = p.calibration ? &*p.calibration : nullptr;
    sweep_ = planner::sweep(p.model, p.cluster, cal, p.constraints, planner::sweepOptionsOf(p));
    QVERIFY(sweep_.best() != nullptr);
  }

  void alternativesListTheTopGridsAndTheBestOfEachGroupSize() {
    const auto& sweep = sweep_;
    const std::vector<std::size_t> rows = report::alternativeGrids(sweep, std::nullopt, 3);
    QVERIFY(std::is_sorted(rows.begin(), rows.end()));
    for (std::size_t i = 0; i < std::min<std::size_t>(3, sweep.grids.size()); ++i) {
      QVERIFY(std::find(rows.begin(), rows.end(), i) != rows.end());
    }
    const std::vector<std::size_t> per_m = report::bestGridPerGroupSize(sweep);
    QCOMPARE(per_m.size(), std::size_t{7});  // the divisors of 64
    for (std::size_t i : per_m) {
      QVERIFY(std::find(rows.begin(), rows.end(), i) != rows.end());
      for (std::size_t j = 0; j < i; ++j) QVERIFY(sweep.grids[j].grid.group_size != sweep.grids[i].grid.group_size);
    }
  }

  void htmlEscapeCoversTheFiveCharacters() {
    QCOMPARE(QString::fromStdString(report::htmlEscape("a<b>&\"c'")), QStringLiteral("a&lt;b&gt;&amp;&quot;c&#39;"));
  }
};

QTEST_MAIN(TestDecisionReport)
#include "test_decision_report.moc"
