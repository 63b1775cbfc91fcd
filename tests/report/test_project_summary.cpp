// The model and cluster summaries `shardscope-cli summary` prints.
#include <QtTest/QtTest>

#include <string>

#include "shardscope/core/presets.h"
#include "shardscope/report/project_summary.h"

using namespace shardscope::core;
using namespace shardscope::report;

class TestProjectSummary : public QObject {
  Q_OBJECT

 private slots:
  void modelSummaryListsLargestTablesFirst() {
    const std::string s = formatModelSummary(modelPreset("dcnv2").value());
    QVERIFY2(s.find("tables: 26, embedding weights 97.4 GiB, 214 lookups per sample") != std::string::npos, s.c_str());
    const auto first = s.find("cat_0");
    const auto small = s.find("cat_5");
    QVERIFY(first != std::string::npos && small != std::string::npos && first < small);
  }

  void clusterSummaryShowsTheGrid() {
    const std::string s = formatClusterSummary(clusterPreset("h100x64").value());
    QVERIFY2(s.find("8 nodes x 8 GPUs = 64 GPUs") != std::string::npos, s.c_str());
  }

  void longNamesAreCutToTheirColumn() {
    ModelSpec m = modelPreset("dcnv2").value();
    m.tables.resize(1);
    m.tables[0].name = "a_table_name_far_longer_than_sixteen";
    const std::string s = formatModelSummary(m);
    QVERIFY2(s.find("  a_table_name_far ") != std::string::npos, s.c_str());
    QVERIFY2(s.find("sixteen") == std::string::npos, s.c_str());
  }
};

QTEST_APPLESS_MAIN(TestProjectSummary)
#include "test_project_summary.moc"
