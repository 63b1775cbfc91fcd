// Importing TorchRec's serialized sharding plan (ShardingPlan._serialize()):
// group-local ranks spread over an N = M x R grid, every problem named by its
// JSON pointer inside the TorchRec plan.
#include <QtTest>

#include <algorithm>
#include <tuple>

#include "shardscope/core/json_io.h"
#include "shardscope/core/torchrec_plan.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
const std::string kDir = std::string(SHARDSCOPE_TEST_DATA_DIR) + "/torchrec/";
const std::string kEbc = "/plan/sparse_arch.embedding_bag_collection";

// 8 group ranks: cat_rw row-wise 16 x 64 (2 rows per rank), cat_tw 1000 x 128
// on rank 3, cat_cw 500 x 256 in two column shards on ranks 5 and 6, and
// cat_dp data-parallel (no shards, as TorchRec writes it) in a second module.
json fixture() {
  auto j = readJsonFile(kDir + "rw_tw_cw_dp_8.json");
  if (!j) qFatal("%s", j.error().message.c_str());
  return *j;
}
json& table(json& j, const char* name) { return j["plan"]["sparse_arch.embedding_bag_collection"][name]; }

ModelSpec model() {
  ModelSpec m;
  m.name = "tiny-dlrm";
  m.batch_size_per_gpu = 1024;
  for (auto [name, rows, dim] : {std::tuple{"cat_rw", 16u, 64u}, std::tuple{"cat_tw", 1000u, 128u},
                                 std::tuple{"cat_cw", 500u, 256u}, std::tuple{"cat_dp", 3u, 128u}}) {
    TableSpec t;
    t.name = name;
    t.rows = rows;
    t.dim = dim;
    m.tables.push_back(t);
  }
  return m;
}

TorchRecImportOptions options(std::uint32_t world_size, const ModelSpec* m) {
  TorchRecImportOptions o;
  o.world_size = world_size;
  o.model = m;
  return o;
}

// ranks_only_4.json lays table_row_wise and grid_shard out on node groups of
// 2 group ranks: GPUs 2 per node.
TorchRecImportOptions twoPerNode() {
  TorchRecImportOptions o;
  o.gpus_per_node = 2;
  return o;
}

QString errorOf(const json& j, const TorchRecImportOptions& o) {
  auto r = shardPlanFromTorchRec(j, "tr.json", o);
  return r ? QString() : QString::fromStdString(r.error().message);
}
const TablePlacement* find(const ShardPlan& p, const std::string& name) {
  for (const auto& t : p.tables)
    if (t.name == name) return &t;
  return nullptr;
}
}  // namespace

class TestTorchRecPlan : public QObject {
  Q_OBJECT
 private slots:
  void importsTheFixtureAsTheExpectedPlan() {
    const ModelSpec m = model();
    auto r = shardPlanFromTorchRec(fixture(), "tr.json", options(16, &m));
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());

    ShardPlan e;
    e.model = "tiny-dlrm";
    e.world_size = 16;
    e.gpus_per_node = 8;
    e.sharding_group_size = 8;
    e.replicas = 2;
    e.layout = RankLayout::Strided;
    e.sharding_groups = {{0, 2, 4, 6, 8, 10, 12, 14}, {1, 3, 5, 7, 9, 11, 13, 15}};
    e.replica_groups = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}};
    // Modules, then tables, in key order (a JSON object has no other):
    // sparse_arch.dense_embeddings sorts before sparse_arch.embedding_bag_collection.
    TablePlacement cw{"cat_cw", 500, 256, ShardingType::ColumnWise, {{5, 0, 500, 0, 128}, {6, 0, 500, 128, 128}}};
    TablePlacement rw{"cat_rw", 16, 64, ShardingType::RowWise, {}};
    for (std::uint32_t g = 0; g < 8; ++g) rw.shards.push_back({g, 2ull * g, 2, 0, 64});
    TablePlacement tw{"cat_tw", 1000, 128, ShardingType::TableWise, {{3, 0, 1000, 0, 128}}};
    TablePlacement dp{"cat_dp", 3, 128, ShardingType::DataParallel, {}};
    for (std::uint32_t g = 0; g < 8; ++g) dp.shards.push_back({g, 0, 3, 0, 128});
    e.tables = {dp, cw, rw, tw};
    e.provenance.tool = "torchrec (imported)";
    QCOMPARE(toJson(*r).dump(), toJson(e).dump());
    QVERIFY(*r == e);
  }

  void importedPlanRoundTripsThroughThePlanFormat() {
    const ModelSpec m = model();
    auto r = shardPlanFromTorchRec(fixture(), "tr.json", options(16, &m));
    QVERIFY(r.ok());
    auto again = planFromJson(json::parse(toJson(*r).dump()), "again.json");
    QVERIFY2(again.ok(), again.ok() ? "" : again.error().message.c_str());
    QVERIFY(*again == *r);
  }

  void contiguousLayoutGivesContiguousGroups() {
    const ModelSpec m = model();
    TorchRecImportOptions o = options(16, &m);
    o.layout = RankLayout::Contiguous;
    auto r = shardPlanFromTorchRec(fixture(), "tr.json", o);
    QVERIFY(r.ok());
    QCOMPARE(r->sharding_groups[1], (std::vector<std::uint32_t>{8, 9, 10, 11, 12, 13, 14, 15}));
    QCOMPARE(r->replica_groups[0], (std::vector<std::uint32_t>{0, 8}));
  }

  void infersGroupSizeAndDefaultsWorldSizeToIt() {
    auto r = loadTorchRecPlan(kDir + "ranks_only_4.json", twoPerNode());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->sharding_group_size, 4u);
    QCOMPARE(r->world_size, 4u);
    QCOMPARE(r->replicas, 1u);
    QCOMPARE(r->sharding_groups, (RankGroups{{0, 1, 2, 3}}));
  }

  void groupSizeCountsRanksListsAsWellAsPlacements() {
    json j = json::parse(R"({"plan": {"ebc": {
      "t": {"sharding_type": "table_wise", "ranks": [5],
            "shards": [{"shard_offsets": [0, 0], "shard_sizes": [10, 16], "placement": "rank:1/cuda:1"}]}}}})");
    auto r = shardPlanFromTorchRec(j, "tr.json", TorchRecImportOptions{});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->sharding_group_size, 6u);
    QCOMPARE(r->tables[0].shards[0].group_rank, 1u);  // the placement wins over the ranks list
  }

  void worldSizeMustBeAMultipleOfTheGroupSize() {
    const ModelSpec m = model();
    const QString e = errorOf(fixture(), options(12, &m));
    QVERIFY2(e.contains("tr.json: /plan: expected world_size 12 to be a multiple of the sharding group size M = 8"),
             qPrintable(e));
  }

  void worldSizeMultipleOfTheGroupSizeGivesReplicas() {
    // Contiguous keeps each node group of the plan (2 ranks) on a node.
    TorchRecImportOptions o = twoPerNode();
    o.world_size = 32;
    o.layout = RankLayout::Contiguous;
    auto r = loadTorchRecPlan(kDir + "ranks_only_4.json", o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->replicas, 8u);
    QCOMPARE(r->replica_groups[3], (std::vector<std::uint32_t>{3, 7, 11, 15, 19, 23, 27, 31}));
  }

  void ranksListGivesTheRankOfShardsWithoutPlacement() {
    auto r = loadTorchRecPlan(kDir + "ranks_only_4.json", twoPerNode());
    QVERIFY(r.ok());
    const TablePlacement* trw = find(*r, "t_trw");
    QVERIFY(trw);
    QCOMPARE(trw->sharding_type, ShardingType::TableRowWise);
    QCOMPARE(trw->shards[0].group_rank, 2u);
    QCOMPARE(trw->shards[1].group_rank, 3u);
    QCOMPARE(trw->shards[1].row_offset, 5u);
    const TablePlacement* grid = find(*r, "t_grid");
    QVERIFY(grid);
    QCOMPARE(grid->rows, 100u);
    QCOMPARE(grid->dim, 256u);
    QCOMPARE(grid->shards[2].group_rank, 2u);
    QCOMPARE(grid->shards[2].col_offset, 128u);
  }

  void acceptsPlacementWithoutDevice() {
    json j = fixture();
    table(j, "cat_tw")["shards"][0]["placement"] = "rank:3";
    const ModelSpec m = model();
    auto r = shardPlanFromTorchRec(j, "tr.json", options(0, &m));
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(find(*r, "cat_tw")->shards[0].group_rank, 3u);
  }

  void rejectsMissingPlan() {
    const QString e = errorOf(json::parse(R"({"tables": []})"), {});
    QVERIFY2(e.startsWith("tr.json: /plan: missing required field"), qPrintable(e));
  }

  void rejectsPlanThatIsNotAnObject() {
    const QString e = errorOf(json::parse(R"({"plan": [1, 2]})"), {});
    QVERIFY2(e.contains("tr.json: /plan: expected an object, got an array"), qPrintable(e));
  }

  void rejectsFieldsOfWrongType() {
    json j = fixture();
    table(j, "cat_tw")["ranks"] = "3";
    table(j, "cat_cw")["shards"][1]["shard_sizes"] = "500x128";
    table(j, "cat_rw")["shards"][2]["placement"] = 2;
    const QString e = errorOf(j, {});
    QVERIFY2(
        e.contains(QString::fromStdString("tr.json: " + kEbc + "/cat_tw/ranks: expected an array, got string \"3\"")),
        qPrintable(e));
    QVERIFY2(e.contains(QString::fromStdString(
                 kEbc + "/cat_cw/shards/1/shard_sizes: expected an array of 2 integers [rows, columns], got string")),
             qPrintable(e));
    QVERIFY2(e.contains(QString::fromStdString(
                 kEbc + "/cat_rw/shards/2/placement: expected a string \"rank:<R>/cuda:<L>\", got 2")),
             qPrintable(e));
  }

  void rejectsUnknownShardingType() {
    json j = fixture();
    table(j, "cat_tw")["sharding_type"] = "diagonal_wise";
    const QString e = errorOf(j, {});
    QVERIFY2(e.contains(QString::fromStdString("tr.json: " + kEbc +
                                               "/cat_tw/sharding_type: expected one of table_wise, row_wise")),
             qPrintable(e));
    QVERIFY2(e.contains("got \"diagonal_wise\""), qPrintable(e));
  }

  void rejectsNegativeOffset() {
    json j = fixture();
    table(j, "cat_rw")["shards"][1]["shard_offsets"][0] = -2;
    const QString e = errorOf(j, {});
    QVERIFY2(e.contains(QString::fromStdString("tr.json: " + kEbc +
                                               "/cat_rw/shards/1/shard_offsets/0: expected an integer >= 0, got -2")),
             qPrintable(e));
  }

  void rejectsNonIntegerOffset() {
    json j = fixture();
    table(j, "cat_cw")["shards"][1]["shard_offsets"][1] = 127.5;
    const QString e = errorOf(j, {});
    QVERIFY2(
        e.contains(QString::fromStdString(
            kEbc +
            "/cat_cw/shards/1/shard_offsets/1: expected an integer in [0, 65535], got 127.5 (not a whole number)")),
        qPrintable(e));
  }

  void rejectsOffsetsOfWrongLength() {
    json j = fixture();
    table(j, "cat_tw")["shards"][0]["shard_offsets"] = json::array({0, 0, 0});
    const QString e = errorOf(j, {});
    QVERIFY2(e.contains(QString::fromStdString(kEbc + "/cat_tw/shards/0/shard_offsets: expected an array of 2 integers "
                                                      "[row offset, column offset], got an array of 3")),
             qPrintable(e));
  }

  void rejectsBadPlacement() {
    json j = fixture();
    table(j, "cat_rw")["shards"][4]["placement"] = "rank:x/cuda:0";
    const QString e = errorOf(j, {});
    QVERIFY2(e.contains(QString::fromStdString(
                 "tr.json: " + kEbc + "/cat_rw/shards/4/placement: expected \"rank:<R>/cuda:<L>\" or \"rank:<R>\"")),
             qPrintable(e));
    QVERIFY2(e.contains("got string \"rank:x/cuda:0\""), qPrintable(e));
  }

  void rejectsShardWithNoRankAnywhere() {
    json j = fixture();
    table(j, "cat_tw")["shards"][0].erase("placement");
    table(j, "cat_tw").erase("ranks");
    const QString e = errorOf(j, {});
    QVERIFY2(e.contains(QString::fromStdString(kEbc + "/cat_tw/shards/0: expected a \"placement\"")), qPrintable(e));
  }

  void rejectsShardsWithAGap() {
    json j = fixture();
    table(j, "cat_rw")["shards"].erase(3);  // rows 6..8 on nobody
    const ModelSpec m = model();
    const QString e = errorOf(j, options(16, &m));
    QVERIFY2(e.contains(QString::fromStdString("tr.json: " + kEbc +
                                               "/cat_rw/shards: expected shards to cover table \"cat_rw\" exactly "
                                               "once: rows [6, 8) of columns [0, 64) are not covered")),
             qPrintable(e));
  }

  void rejectsOverlappingShards() {
    json j = fixture();
    table(j, "cat_cw")["shards"][1]["shard_offsets"][1] = 64;
    table(j, "cat_cw")["shards"][1]["shard_sizes"][1] = 192;
    const ModelSpec m = model();
    const QString e = errorOf(j, options(16, &m));
    QVERIFY2(
        e.contains(QString::fromStdString(kEbc + "/cat_cw/shards: expected shards to cover table \"cat_cw\" exactly "
                                                 "once: rows [0, 500) of columns [64, 128) are covered twice")),
        qPrintable(e));
  }

  void rejectsShardsThatDoNotSpanTheModelsTable() {
    json j = fixture();
    table(j, "cat_rw")["shards"].erase(7);  // the last 2 rows: a gap only the model can reveal
    const ModelSpec m = model();
    const QString e = errorOf(j, options(0, &m));
    QVERIFY2(
        e.contains(QString::fromStdString(kEbc + "/cat_rw/shards: expected shards spanning table \"cat_rw\" of model "
                                                 "\"tiny-dlrm\" (16 rows x dim 64), they span 14 rows x 64 columns")),
        qPrintable(e));
  }

  void rejectsDuplicateTableNamesAcrossModules() {
    json j = fixture();
    j["plan"]["sparse_arch.dense_embeddings"]["cat_tw"] = table(j, "cat_tw");
    const ModelSpec m = model();
    const QString e = errorOf(j, options(0, &m));
    QVERIFY2(e.contains(QString::fromStdString("tr.json: " + kEbc +
                                               "/cat_tw: expected table names unique across modules, \"cat_tw\" is "
                                               "also at /plan/sparse_arch.dense_embeddings/cat_tw")),
             qPrintable(e));
  }

  void dataParallelWithoutModelIsAClearError() {
    const QString e = errorOf(fixture(), options(16, nullptr));
    QVERIFY2(e.contains("tr.json: /plan/sparse_arch.dense_embeddings/cat_dp: data_parallel table \"cat_dp\" has no "
                        "shards, so its rows and dim are unknown: the model is needed"),
             qPrintable(e));
  }

  void dataParallelTableMissingFromTheModelIsAnError() {
    ModelSpec m = model();
    m.tables.pop_back();
    const QString e = errorOf(fixture(), options(16, &m));
    QVERIFY2(e.contains("/plan/sparse_arch.dense_embeddings/cat_dp: data_parallel table \"cat_dp\" has no shards, and "
                        "model \"tiny-dlrm\" has no table of that name"),
             qPrintable(e));
  }

  void dataParallelWithModelHasAFullShardOnEveryGroupRank() {
    const ModelSpec m = model();
    auto r = shardPlanFromTorchRec(fixture(), "tr.json", options(16, &m));
    QVERIFY(r.ok());
    const TablePlacement* dp = find(*r, "cat_dp");
    QVERIFY(dp);
    QCOMPARE(dp->sharding_type, ShardingType::DataParallel);
    QCOMPARE(dp->rows, 3u);
    QCOMPARE(dp->dim, 128u);
    QCOMPARE(dp->shards.size(), std::size_t{8});
    for (std::uint32_t g = 0; g < 8; ++g) QVERIFY(dp->shards[g] == (Shard{g, 0, 3, 0, 128}));
  }

  void dataParallelRanksMustBeTheWholeGroup() {
    json j = fixture();
    j["plan"]["sparse_arch.dense_embeddings"]["cat_dp"]["ranks"] = json::array({0, 1});
    const ModelSpec m = model();
    const QString e = errorOf(j, options(16, &m));
    QVERIFY2(e.contains("/plan/sparse_arch.dense_embeddings/cat_dp/ranks: expected every group rank 0..7 for a "
                        "data_parallel table, got [0, 1]"),
             qPrintable(e));
  }

  // The Python adapter (packaging/python) wrote from_strided_8x4.json from
  // plans/strided_8x4.json; importing it gives that plan back.
  void importsWhatThePythonAdapterWrites() {
    auto original = loadPlan(std::string(SHARDSCOPE_TEST_DATA_DIR) + "/plans/strided_8x4.json");
    QVERIFY2(original.ok(), original.ok() ? "" : original.error().message.c_str());
    ModelSpec m;  // data_parallel tables take rows and dim from it
    m.name = original->model;
    for (const auto& t : original->tables) {
      TableSpec spec;
      spec.name = t.name;
      spec.rows = t.rows;
      spec.dim = t.dim;
      m.tables.push_back(spec);
    }
    auto r = loadTorchRecPlan(kDir + "from_strided_8x4.json", options(original->world_size, &m));
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->model, original->model);
    QCOMPARE(r->sharding_group_size, original->sharding_group_size);
    QVERIFY(r->sharding_groups == original->sharding_groups);
    QVERIFY(r->replica_groups == original->replica_groups);
    auto tablesByName = [](const ShardPlan& p) {
      ShardPlan only;
      only.tables = p.tables;
      std::sort(only.tables.begin(), only.tables.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
      return toJson(only)["tables"].dump();
    };
    QCOMPARE(tablesByName(*r), tablesByName(*original));
  }

  void detectsTorchRecPlans() {
    QVERIFY(looksLikeTorchRecPlan(fixture()));
    QVERIFY(!looksLikeTorchRecPlan(json::parse(R"({"schema": "shardscope.plan/1", "plan": {}})")));
    QVERIFY(!looksLikeTorchRecPlan(json::parse(R"({"plan": []})")));
    QVERIFY(!looksLikeTorchRecPlan(json::array()));
  }

  void loadNamesTheFileInErrors() {
    auto r = loadTorchRecPlan(kDir + "rw_tw_cw_dp_8.json", options(16, nullptr));
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message)
                 .startsWith(QString::fromStdString(kDir + "rw_tw_cw_dp_8.json: /plan/")),
             r.error().message.c_str());
  }
};

QTEST_APPLESS_MAIN(TestTorchRecPlan)
#include "test_torchrec_plan.moc"
