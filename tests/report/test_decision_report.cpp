// The decision report's building blocks: which grids the alternatives table
// lists, and HTML escaping of user strings.
#include <QtTest>
#include <algorithm>
#include <cstdio>

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

  void theSentenceNamesTheBestGridItsRunnerUpAndWhatDominates() {
    report::DecisionReportInput in;
    in.project = core::defaultProject();
    in.sweep = sweep_;
    in.decision = 0;
    const std::string s = report::decisionSentence(in);
    const auto& best = sweep_.grids.front();
    QVERIFY2(s.rfind("Best: M = " + std::to_string(best.grid.group_size), 0) == 0, s.c_str());
    // The runner-up is another grid: with R = 1 (or M = 1) the other layout places every rank alike.
    const auto other = std::find_if(sweep_.grids.begin() + 1, sweep_.grids.end(), [&best](const auto& g) {
      const bool same = g.grid.group_size == best.grid.group_size && g.grid.replicas == best.grid.replicas &&
                        (g.grid.layout == best.grid.layout || g.grid.replicas == 1 || g.grid.group_size == 1);
      return g.fits && !same;
    });
    QVERIFY(other != sweep_.grids.end());
    const std::string runner_up = "runner-up M = " + std::to_string(other->grid.group_size) +
                                  " \u00d7 R = " + std::to_string(other->grid.replicas) + " (" +
                                  std::string(core::toString(other->grid.layout)) + ")";
    QVERIFY2(s.find(runner_up) != std::string::npos, (s + " | want " + runner_up).c_str());
    QVERIFY2(s.find("dominates its step") != std::string::npos, s.c_str());
    QVERIFY2(s.find("samples/s") != std::string::npos, s.c_str());
  }

  void aChosenGridSlowerThanTheBestSaysByHowMuch() {
    report::DecisionReportInput in;
    in.project = core::defaultProject();
    in.sweep = sweep_;
    std::size_t slower = 1;
    while (slower < sweep_.grids.size() && !sweep_.grids[slower].fits) ++slower;
    QVERIFY(slower < sweep_.grids.size());
    in.decision = slower;
    in.chosen = true;
    const std::string s = report::decisionSentence(in);
    const double factor = sweep_.grids[slower].step.step_ms / sweep_.grids.front().step.step_ms;
    char want[32];
    std::snprintf(want, sizeof want, "%.2fx slower than the best", factor);
    QVERIFY2(s.rfind("Chosen: ", 0) == 0, s.c_str());
    QVERIFY2(s.find(want) != std::string::npos, s.c_str());
  }

  void calibratedFiguresAreMarkedWithTheDevice() {
    report::DecisionReportInput in;
    in.project = core::defaultProject();
    in.sweep = sweep_;
    in.decision = 0;
    core::Calibration cal;
    cal.source = "run 3";
    cal.device = {core::DeviceClass::Cpu, "AMD EPYC 9654", 2, 1};
    cal.coefficients["embedding_bandwidth_gbps"] = {100.0, 1.0};
    in.project.calibration = cal;
    const std::string html = report::decisionReportHtml(in);
    QVERIFY(html.find("calibrated on CPU (AMD EPYC 9654, 2 threads)") != std::string::npos);
    QVERIFY(html.find("the cluster is H100") != std::string::npos);  // the mismatch is said, not hidden
    QVERIFY(html.find("<th>embedding\u2020</th>") != std::string::npos);
    QVERIFY(html.find("<th>all-to-all</th>") != std::string::npos);  // the network constants were not fitted
    // Without a calibration nothing is marked.
    in.project.calibration.reset();
    QVERIFY(report::decisionReportHtml(in).find("\u2020") == std::string::npos);
  }

  void htmlEscapeCoversTheFiveCharacters() {
    QCOMPARE(QString::fromStdString(report::htmlEscape("a<b>&\"c'")), QStringLiteral("a&lt;b&gt;&amp;&quot;c&#39;"));
  }
};

QTEST_MAIN(TestDecisionReport)
#include "test_decision_report.moc"
