// The model and cluster summaries `shardscope-cli summary` prints.
#include <QtTest/QtTest>

#include <sstream>
#include <string>
#include <vector>

#include "shardscope/core/presets.h"
#include "shardscope/report/project_summary.h"
#include "shardscope/report/text_table.h"

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

  void longAndNonAsciiNamesWidenTheirColumn() {
    ModelSpec m = modelPreset("dcnv2").value();
    m.tables.resize(3);
    m.tables[0].name = "user_embedding_table_clicks_last_7d";
    m.tables[1].name = "user_embedding_table_clicks_last_30d";
    m.tables[2].name = "caf\xc3\xa9_table";
    const std::string s = formatModelSummary(m);
    QVERIFY2(s.find("user_embedding_table_clicks_last_7d ") != std::string::npos, s.c_str());
    QVERIFY2(s.find("user_embedding_table_clicks_last_30d ") != std::string::npos, s.c_str());
    // Each row's size column ends at the same terminal column as the header's.
    std::istringstream lines(s);
    std::string line;
    std::vector<std::size_t> ends;
    while (std::getline(lines, line))
      if (line.find("table") != std::string::npos && line.find("tables:") == std::string::npos)
        ends.push_back(shardscope::report::textWidth(line));
    QCOMPARE(ends.size(), std::size_t{4});
    for (std::size_t e : ends) QCOMPARE(e, ends.front());
  }
};

QTEST_APPLESS_MAIN(TestProjectSummary)
#include "test_project_summary.moc"
