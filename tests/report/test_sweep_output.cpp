// One grid's per-rank detail as `shardscope-cli plan` prints it: past 40
// ranks the middle is left out, but never the slowest rank or a rank over
// its memory.
#include <QtTest>
#include <sstream>
#include <string>

#include "shardscope/report/sweep_output.h"

namespace planner = shardscope::planner;
using shardscope::report::printGridDetail;

namespace {

planner::GridResult gridOf(std::uint32_t ranks, std::uint32_t slowest, std::uint32_t over_memory) {
  planner::GridResult g;
  g.grid.group_size = ranks;
  g.grid.replicas = 1;
  g.critical_rank = slowest;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    planner::RankResult rank;
    rank.group_rank = r;
    rank.load_ms = r == slowest ? 9.0 : 1.0;
    rank.capacity_bytes = std::uint64_t{80} << 30;
    rank.memory_bytes = r == over_memory ? std::uint64_t{90} << 30 : std::uint64_t{10} << 30;
    g.ranks.push_back(rank);
  }
  return g;
}

std::string detail(const planner::GridResult& g) {
  std::ostringstream o;
  printGridDetail(o, g);
  return o.str();
}

bool hasRow(const std::string& text, std::uint32_t rank) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == std::to_string(rank) && line.find(" ms") == std::string::npos) return true;
  }
  return false;
}

}  // namespace

class TestSweepOutput : public QObject {
  Q_OBJECT

 private slots:
  void fortyRanksAreAllShown() {
    const std::string text = detail(gridOf(40, 25, 99));
    for (std::uint32_t r = 0; r < 40; ++r) QVERIFY2(hasRow(text, r), text.c_str());
    QVERIFY(text.find("more ranks") == std::string::npos);
  }

  void theSlowestAndAnOverfullRankStayInTheMiddle() {
    const std::string text = detail(gridOf(128, 72, 100));
    QVERIFY2(hasRow(text, 0) && hasRow(text, 19) && hasRow(text, 108) && hasRow(text, 127), text.c_str());
    QVERIFY2(!hasRow(text, 20) && !hasRow(text, 71) && !hasRow(text, 73), text.c_str());
    QVERIFY2(hasRow(text, 72) && text.find("<- slowest") != std::string::npos, text.c_str());
    QVERIFY2(hasRow(text, 100), text.c_str());
    // 20..71, 73..99 and 101..107 left out, each run said once.
    QVERIFY2(text.find("   ... 52 more ranks ...\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("   ... 27 more ranks ...\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("   ... 7 more ranks ...\n") != std::string::npos, text.c_str());
  }
};

QTEST_APPLESS_MAIN(TestSweepOutput)
#include "test_sweep_output.moc"
