// shardscope.constraints/1: user requirements on a plan.
#include <QtTest>

#include "shardscope/core/json_io.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
json validConstraints() {
  return json::parse(R"({"schema": "shardscope.constraints/1",
    "tables": [{"table": "cat_20", "pin_ranks": [0, 3], "forbid": ["data_parallel"]},
               {"table": "cat_0", "force": "row_wise"}],
    "rank_memory_caps": [{"group_rank": 2, "bytes": 40000000000}]})");
}
QString errorOf(const json& j) {
  auto r = constraintsFromJson(j, "c.json");
  return r ? QString() : QString::fromStdString(r.error().message);
}
}  // namespace

class TestJsonConstraints : public QObject {
  Q_OBJECT
 private slots:
  void loadsAndRoundTrips() {
    auto r = constraintsFromJson(validConstraints(), "c.json");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->tables.size(), 2u);
    QCOMPARE(r->find("cat_20")->pin_ranks, (std::vector<std::uint32_t>{0, 3}));
    QCOMPARE(r->find("cat_0")->force, std::optional(ShardingType::RowWise));
    QCOMPARE(r->rank_memory_caps[0].bytes, 40000000000ull);
    auto again = constraintsFromJson(json::parse(toJson(*r).dump()), "again.json");
    QVERIFY(again.ok());
    QVERIFY(*again == *r);
  }

  void rejectsForcedAndForbiddenSameType() {
    json j = validConstraints();
    j["tables"][1]["forbid"] = json::array({"row_wise"});
    QVERIFY(errorOf(j).contains("c.json: /tables/1: contradicting entries: \"row_wise\" is both forced and forbidden"));
  }

  void rejectsTwoEntriesForOneTable() {
    json j = validConstraints();
    j["tables"][1]["table"] = "cat_20";
    QVERIFY(errorOf(j).contains("/tables/1/table: expected one entry per table, \"cat_20\" is also at /tables/0"));
  }

  void rejectsUnknownShardingType() {
    json j = validConstraints();
    j["tables"][0]["forbid"][0] = "sideways";
    QVERIFY(errorOf(j).contains("/tables/0/forbid/0: expected a sharding type"));
  }

  void rejectsRepeatedPins() {
    json j = validConstraints();
    j["tables"][0]["pin_ranks"] = json::array({1, 1});
    QVERIFY(errorOf(j).contains("/tables/0/pin_ranks: expected distinct group ranks"));
  }

  void rejectsZeroMemoryCap() {
    json j = validConstraints();
    j["rank_memory_caps"][0]["bytes"] = 0;
    QVERIFY(errorOf(j).contains("/rank_memory_caps/0/bytes: expected an integer > 0, got 0"));
  }
};

QTEST_APPLESS_MAIN(TestJsonConstraints)
#include "test_json_constraints.moc"
