// shardscope.plan/1: the keys trainers read, and the checks that protect them.
#include <QtTest>

#include "shardscope/core/json_io.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
// N = 8 GPUs, 2 per node, M = 4, R = 2, contiguous (node groups of 2 group
// ranks). Table "big" row-wise over 4 ranks (10 rows -> 3,3,3,1), "wide"
// grid-sharded 2 x 2 (a column block per node group), "tiny" data-parallel.
json validPlan() {
  return json::parse(R"({
    "schema": "shardscope.plan/1", "model": "tiny", "world_size": 8, "gpus_per_node": 2,
    "grid": {"sharding_group_size": 4, "replicas": 2, "layout": "contiguous"},
    "sharding_groups": [[0, 1, 2, 3], [4, 5, 6, 7]],
    "replica_groups": [[0, 4], [1, 5], [2, 6], [3, 7]],
    "tables": [
      {"name": "big", "rows": 10, "dim": 128, "sharding_type": "row_wise", "shards": [
        {"group_rank": 0, "row_offset": 0, "rows": 3, "col_offset": 0, "cols": 128},
        {"group_rank": 1, "row_offset": 3, "rows": 3, "col_offset": 0, "cols": 128},
        {"group_rank": 2, "row_offset": 6, "rows": 3, "col_offset": 0, "cols": 128},
        {"group_rank": 3, "row_offset": 9, "rows": 1, "col_offset": 0, "cols": 128}]},
      {"name": "wide", "rows": 100, "dim": 256, "sharding_type": "grid_shard", "shards": [
        {"group_rank": 0, "row_offset": 0, "rows": 50, "col_offset": 0, "cols": 128},
        {"group_rank": 1, "row_offset": 50, "rows": 50, "col_offset": 0, "cols": 128},
        {"group_rank": 2, "row_offset": 0, "rows": 50, "col_offset": 128, "cols": 128},
        {"group_rank": 3, "row_offset": 50, "rows": 50, "col_offset": 128, "cols": 128}]},
      {"name": "tiny", "rows": 3, "dim": 128, "sharding_type": "data_parallel", "shards": [
        {"group_rank": 0, "row_offset": 0, "rows": 3, "col_offset": 0, "cols": 128},
        {"group_rank": 1, "row_offset": 0, "rows": 3, "col_offset": 0, "cols": 128},
        {"group_rank": 2, "row_offset": 0, "rows": 3, "col_offset": 0, "cols": 128},
        {"group_rank": 3, "row_offset": 0, "rows": 3, "col_offset": 0, "cols": 128}]}
    ],
    "predicted": {"step_ms": 12.5, "lower_bound_ms": 12.0,
                  "ranks": [{"group_rank": 0, "compute_ms": 4.0, "comm_ms": 2.0, "memory_bytes": 1000}],
                  "imbalance": {"max_over_mean": 1.04}},
    "provenance": {"tool": "shardscope 0.1.0", "calibration": null, "created": "2026-12-02T00:00:00Z"}})");
}
QString errorOf(const json& j) {
  auto r = planFromJson(j, "plan.json");
  return r ? QString() : QString::fromStdString(r.error().message);
}
}  // namespace

class TestJsonPlan : public QObject {
  Q_OBJECT
 private slots:
  void loadsAValidPlan() {
    auto r = planFromJson(validPlan(), "plan.json");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->sharding_group_size, 4u);
    QCOMPARE(r->layout, RankLayout::Contiguous);
    QCOMPARE(r->target, PlanTarget::TorchRec);  // no "target": held to TorchRec's rules
    QCOMPARE(r->tables[1].sharding_type, ShardingType::GridShard);
    QCOMPARE(r->tables[0].shards[3].rows, 1u);
    QCOMPARE(r->predicted.max_over_mean, 1.04);
    QVERIFY(!r->provenance.calibration);
  }

  void anImbalanceARoundingBelowOneReadsAsOne() {
    // A sum of floats can put max / mean one ulp under 1; what a writer wrote must read back.
    json j = validPlan();
    j["predicted"]["imbalance"]["max_over_mean"] = 0.9999999999999999;
    auto r = planFromJson(j, "plan.json");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->predicted.max_over_mean, 1.0);
    ShardPlan p = *r;
    p.predicted.max_over_mean = 0.9999999999999999;
    QCOMPARE(toJson(p)["predicted"]["imbalance"]["max_over_mean"].get<double>(), 1.0);
    j["predicted"]["imbalance"]["max_over_mean"] = 0.5;  // really below: still an error with its path
    QVERIFY(errorOf(j).contains("/predicted/imbalance/max_over_mean"));
  }

  void writesTheKeysTrainersRead() {
    auto r = planFromJson(validPlan(), "plan.json");
    QVERIFY(r.ok());
    const auto j = toJson(*r);
    for (const char* key : {"schema", "model", "world_size", "gpus_per_node", "grid", "sharding_groups",
                            "replica_groups", "tables", "predicted", "provenance"})
      QVERIFY2(j.contains(key), key);
    QCOMPARE(j["grid"]["layout"].get<std::string>(), std::string("contiguous"));
    QCOMPARE(j["grid"]["node_group_size"].get<int>(), 2);
    QCOMPARE(j["target"].get<std::string>(), std::string("torchrec"));
    QCOMPARE(j["tables"][2]["sharding_type"].get<std::string>(), std::string("data_parallel"));
    QVERIFY(j["provenance"]["calibration"].is_null());
    auto again = planFromJson(json::parse(j.dump()), "again.json");
    QVERIFY(again.ok());
    QVERIFY(*again == *r);
  }

  void readsAndWritesTheTarget() {
    json j = validPlan();
    j["target"] = "shardscope";
    auto r = planFromJson(j, "plan.json");
    QVERIFY(r.ok());
    QCOMPARE(r->target, PlanTarget::ShardScope);
    QCOMPARE(toJson(*r)["target"].get<std::string>(), std::string("shardscope"));
    j["target"] = "trainer";
    QVERIFY2(errorOf(j).contains("plan.json: /target: expected \"torchrec\" or \"shardscope\", got \"trainer\""),
             qPrintable(errorOf(j)));
  }

  void nodeGroupSizeMustBeTheLayouts() {
    json j = validPlan();
    j["grid"]["node_group_size"] = 4;
    QVERIFY2(errorOf(j).contains("/grid/node_group_size: expected 2, the node group size of 8 GPUs (2 per node) as "
                                 "4 x 2 contiguous, got 4"),
             qPrintable(errorOf(j)));
  }

  void emptyRowBlocksAreAcceptedOnlyForRowSplitTypes() {
    json j = validPlan();
    // 5 rows over 4 ranks, as TorchRec cuts them: 2, 2, 1, 0.
    j["tables"][0]["rows"] = 5;
    const int rows[] = {2, 2, 1, 0}, offsets[] = {0, 2, 4, 5};
    for (int k = 0; k < 4; ++k) {
      j["tables"][0]["shards"][k]["rows"] = rows[k];
      j["tables"][0]["shards"][k]["row_offset"] = offsets[k];
    }
    auto r = planFromJson(j, "plan.json");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->tables[0].shards[3].rows, 0u);
    j["tables"][2]["shards"][1]["rows"] = 0;  // a data-parallel copy cannot be empty
    QVERIFY2(errorOf(j).contains("/tables/2/shards/1/rows: expected an integer >= 1 (only row_wise, table_row_wise "
                                 "and grid_shard row blocks may be empty), got 0 for a data_parallel table"),
             qPrintable(errorOf(j)));
  }

  void torchRecTargetRejectsRowBlocksOnOtherRanks() {
    json j = validPlan();
    j["target"] = "torchrec";
    j["tables"][0]["shards"][0]["group_rank"] = 1;
    j["tables"][0]["shards"][1]["group_rank"] = 0;
    const QString e = errorOf(j);
    QVERIFY2(e.contains("plan.json: /tables/0/shards/0: expected block 0 of table \"big\" to be rows [0, 3) on group "
                        "rank 0 (TorchRec gives row block k of ceil(rows / 4) rows to group rank k"),
             qPrintable(e));
    QVERIFY(!e.contains("/target: missing"));
    // ShardScope's engine runs the permuted blocks.
    j["target"] = "shardscope";
    QVERIFY(planFromJson(j, "plan.json").ok());
    // Without a target the plan is held to TorchRec's rules, and the message says how to mark it.
    j.erase("target");
    QVERIFY(errorOf(j).contains("/target: missing, so the plan is held to TorchRec's layout rules"));
  }

  void predictionAndProvenanceAreOptionalOnRead() {
    json j = validPlan();
    j.erase("predicted");
    j.erase("provenance");
    QVERIFY(planFromJson(j, "plan.json").ok());
  }

  void rejectsGridThatDoesNotMultiplyToWorldSize() {
    json j = validPlan();
    j["grid"]["replicas"] = 3;
    QVERIFY(
        errorOf(j).contains("plan.json: /grid: expected sharding_group_size x replicas = world_size, got 4 x 3 != 8"));
  }

  void rejectsGroupsThatAreNotTheLayouts() {
    json j = validPlan();
    j["grid"]["layout"] = "strided";
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/sharding_groups/0: expected the strided layout's group [0, 2, 4, 6], got [0, 1, 2, 3]"),
             qPrintable(e));
  }

  void rejectsGroupOfWrongSize() {
    json j = validPlan();
    j["sharding_groups"][1] = json::array({1, 3, 5});
    QVERIFY(errorOf(j).contains("/sharding_groups/1: expected 4 ranks, got 3"));
  }

  void rejectsRankOutsideTheWorld() {
    json j = validPlan();
    j["replica_groups"][3][1] = 9;
    QVERIFY(errorOf(j).contains("/replica_groups/3/1: expected an integer in [0, 7], got 9"));
  }

  void rejectsShardsWithAGap() {
    json j = validPlan();
    j["tables"][0]["shards"][3]["row_offset"] = 9;
    j["tables"][0]["shards"][2]["rows"] = 2;  // rows 8..9 uncovered
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/tables/0/shards: expected shards to cover table \"big\" exactly once: rows [8, 9) of columns "
                        "[0, 128) are not covered"),
             qPrintable(e));
  }

  void rejectsOverlappingShards() {
    json j = validPlan();
    j["tables"][1]["shards"][3]["row_offset"] = 40;
    j["tables"][1]["shards"][3]["rows"] = 60;
    const QString e = errorOf(j);
    QVERIFY2(e.contains("/tables/1/shards: expected shards to cover table \"wide\" exactly once: rows [40, 50) of "
                        "columns [128, 256) are covered twice"),
             qPrintable(e));
  }

  void rejectsMissingColumns() {
    json j = validPlan();
    j["tables"][1]["shards"][3]["cols"] = 64;
    QVERIFY(errorOf(j).contains("columns [192, 256) are not covered"));
  }

  void rejectsShardOutsideTable() {
    json j = validPlan();
    j["tables"][0]["shards"][3]["rows"] = 5;
    QVERIFY(errorOf(j).contains(
        "/tables/0/shards/3: expected rows [row_offset, row_offset + rows) inside the table's 10 rows, got [9, 14)"));
  }

  void rejectsGroupRankOutsideGroup() {
    json j = validPlan();
    j["tables"][0]["shards"][0]["group_rank"] = 4;
    QVERIFY(errorOf(j).contains("/tables/0/shards/0/group_rank: expected an integer in [0, 3], got 4"));
  }

  void rejectsDataParallelTableMissingARank() {
    json j = validPlan();
    j["tables"][2]["shards"][3]["group_rank"] = 2;
    const QString e = errorOf(j);
    QVERIFY2(e.contains("group_rank 2 has two"), qPrintable(e));
    QVERIFY2(e.contains("group_rank 3 has none"), qPrintable(e));
  }

  void rejectsPartialDataParallelShard() {
    json j = validPlan();
    j["tables"][2]["shards"][1]["rows"] = 2;
    QVERIFY(errorOf(j).contains("/tables/2/shards/1: expected a full-table shard (data_parallel)"));
  }

  void rejectsUnknownShardingType() {
    json j = validPlan();
    j["tables"][0]["sharding_type"] = "diagonal";
    QVERIFY(errorOf(j).contains("/tables/0/sharding_type: expected one of table_wise, row_wise"));
  }

  void rejectsDuplicateTables() {
    json j = validPlan();
    j["tables"][1]["name"] = "big";
    QVERIFY(errorOf(j).contains("/tables/1/name: expected a unique table name"));
  }

  void rejectsNegativePrediction() {
    json j = validPlan();
    j["predicted"]["step_ms"] = -1;
    QVERIFY(errorOf(j).contains("/predicted/step_ms: expected a number >= 0, got -1"));
  }

  void rejectsUnknownLayout() {
    json j = validPlan();
    j["grid"]["layout"] = "diagonal";
    QVERIFY(errorOf(j).contains("/grid/layout: expected \"strided\" or \"contiguous\", got \"diagonal\""));
  }
};

QTEST_APPLESS_MAIN(TestJsonPlan)
#include "test_json_plan.moc"
