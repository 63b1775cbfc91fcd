// Weak scaling as `shardscope-cli scaling` prints it: the table (one line per
// world size, memory where nothing fits, the cause of each drop) and its JSON.
#include <QtTest>
#include <sstream>
#include <string>

#include "shardscope/core/presets.h"
#include "shardscope/report/scaling_output.h"
#include "weak_scaling_fixture.h"

namespace core = shardscope::core;
namespace planner = shardscope::planner;
using shardscope::report::printWeakScaling;
using shardscope::report::weakScalingToJson;
using shardscope::test::threeWorldSizes;

namespace {

core::Project project() {
  core::Project p;
  p.model = core::modelPreset("dcnv2").value();
  p.cluster = core::clusterPreset("h100x64").value();
  return p;
}

}  // namespace

class TestScalingOutput : public QObject {
  Q_OBJECT

 private slots:
  void tableLinesUpUnderItsHeader() {
    const planner::ScalingResult r = threeWorldSizes();
    std::ostringstream o;
    printWeakScaling(o, r.weakScaling(), project());
    const std::string text = o.str();
    QVERIFY2(text.find("default constants\n\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("     8      -     - -") != std::string::npos, text.c_str());
    QVERIFY2(text.find("memory: no grid fits in HBM") != std::string::npos, text.c_str());
    QVERIFY2(text.find("replica sync (+2.000 ms)") != std::string::npos, text.c_str());
    // Every line of the table ends without blanks, and the header's last
    // column starts where the causes start.
    std::istringstream lines(text);
    std::string line, header;
    std::size_t cause_at = std::string::npos;
    while (std::getline(lines, line)) {
      QVERIFY2(line.empty() || line.back() != ' ', line.c_str());
      if (line.find("drop caused by") != std::string::npos) header = line;
      if (line.find("replica sync (+") != std::string::npos) cause_at = line.find("replica sync");
    }
    QCOMPARE(header.find("drop caused by"), cause_at);
  }

  void jsonHasOnePointPerWorldSize() {
    const planner::ScalingResult r = threeWorldSizes();
    const auto j = weakScalingToJson(r.weakScaling(), project(), true);
    QCOMPARE(j["cancelled"].get<bool>(), true);
    QCOMPARE(j["world_sizes"].size(), std::size_t{3});
    QCOMPARE(j["world_sizes"][0]["fits"].get<bool>(), false);
    QCOMPARE(j["world_sizes"][2]["cause"].get<std::string>(), std::string("replica sync"));
    QCOMPARE(j["world_sizes"][2]["replicas"].get<unsigned>(), 4u);
  }
};

QTEST_APPLESS_MAIN(TestScalingOutput)
#include "test_scaling_output.moc"
