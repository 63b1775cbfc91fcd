// Hostile inputs: every JSON reader refuses what it cannot hold before
// allocating from it, and names the file, the JSON path and the limit.
#include <QtTest>

#include <string>

#include "shardscope/core/calibration.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/torchrec_plan.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
std::string tinyModelText(const std::string& rows = "1000", const std::string& dim = "64") {
  return R"({"schema": "shardscope.model/1", "name": "m", "batch_size_per_gpu": 64,
             "tables": [{"name": "t0", "rows": )" +
         rows + R"(, "dim": )" + dim + R"(, "pooling": {"kind": "fixed", "mean": 2}}]})";
}

std::string modelError(const std::string& text) {
  auto j = parseJsonText(text, "m.json");
  if (!j) return j.error().message;
  auto m = modelFromJson(*j, "m.json");
  return m ? std::string() : m.error().message;
}

std::string planError(json j) {
  auto p = planFromJson(j, "plan.json");
  return p ? std::string() : p.error().message;
}

// A one-table shardscope plan on 2 GPUs (M = 2, R = 1), table-wise on group rank 0.
json tinyPlan() {
  return json::parse(R"({
    "schema": "shardscope.plan/1", "model": "m", "world_size": 2, "gpus_per_node": 2, "target": "shardscope",
    "grid": {"sharding_group_size": 2, "replicas": 1, "layout": "strided"},
    "sharding_groups": [[0, 1]], "replica_groups": [[0], [1]],
    "tables": [{"name": "t0", "rows": 1000, "dim": 64, "sharding_type": "table_wise", "shards": [
      {"group_rank": 0, "row_offset": 0, "rows": 1000, "col_offset": 0, "cols": 64}]}]})");
}
}  // namespace

class TestInputLimits : public QObject {
  Q_OBJECT
 private slots:
  void aDuplicateKeyIsAnErrorNamingKeyAndPath() {
    auto r = parseJsonText(R"({"tables": [{"name": "a"}, {"name": "b", "rows": 1, "rows": 2}]})", "m.json");
    QVERIFY(!r);
    QCOMPARE(QString::fromStdString(r.error().message),
             QString("m.json: /tables/1/rows: duplicate key \"rows\" (each key may appear once in an object)"));
    QCOMPARE(r.error().json_path, std::string("/tables/1/rows"));
    QVERIFY(r.error().kind == ErrorKind::InvalidInput);
    // Equal keys in different objects are fine.
    QVERIFY(parseJsonText(R"({"a": {"x": 1}, "b": {"x": 1}, "x": [{"x": 2}]})", "ok.json"));
  }

  void aNumberBeyondADoubleNamesPathAndLimit() {
    auto r = parseJsonText("{\n  \"dense\": {\"flops_per_sample\": 1e400}\n}", "m.json");
    QVERIFY(!r);
    const QString e = QString::fromStdString(r.error().message);
    QVERIFY2(e.startsWith("m.json: not valid JSON at line 2, column "), qPrintable(e));
    QVERIFY2(e.contains("(/dense/flops_per_sample): number overflow parsing '1e400'"), qPrintable(e));
    QVERIFY2(e.contains("|x| < 1.8e308"), qPrintable(e));
    QCOMPARE(r.error().json_path, std::string("/dense/flops_per_sample"));
    // In an array, the element's index.
    auto a = parseJsonText(R"({"h": [1, 2, -1e999]})", "a.json");
    QVERIFY(!a);
    QCOMPARE(a.error().json_path, std::string("/h/2"));
  }

  void deepNestingIsRefusedWithItsPath() {
    std::string text(kMaxJsonDepth + 1, '[');
    text += std::string(kMaxJsonDepth + 1, ']');
    auto r = parseJsonText(text, "deep.json");
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("nested deeper than 128 levels") != std::string::npos, r.error().message.c_str());
    std::string ok(kMaxJsonDepth, '[');
    ok += std::string(kMaxJsonDepth, ']');
    QVERIFY(parseJsonText(ok, "ok.json"));
  }

  void tableSizesHaveMaximaAndNeverWrap() {
    QVERIFY(modelError(tinyModelText()).empty());
    QVERIFY(modelError(tinyModelText("18446744073709551615"))
                .find("/tables/0/rows: expected an integer in [1, 281474976710656], got 18446744073709551615") !=
            std::string::npos);
    // 2^48 rows x 65536 x 4 bytes is 2^66: an error, not "0 B".
    const std::string e = modelError(tinyModelText("281474976710656", "65536"));
    QVERIFY2(e.find("m.json: /tables/0: expected a table of at most 1.0 PiB of weights") != std::string::npos,
             e.c_str());
    TableSpec t;
    t.rows = kMaxRows;
    t.dim = 65536;
    QCOMPARE(t.weightBytes(), UINT64_MAX);  // saturates for a table built in code
    QVERIFY(modelError(tinyModelText("1000", "131072")).find("/tables/0/dim: expected an integer in [1, 65536]") !=
            std::string::npos);
  }

  void sizeArithmeticCannotWrap() {
    QCOMPARE(mulChecked(std::uint64_t{1} << 32, std::uint64_t{1} << 31), std::optional<std::uint64_t>(1ull << 63));
    QVERIFY(!mulChecked(std::uint64_t{1} << 32, std::uint64_t{1} << 32));
    QVERIFY(!addChecked(UINT64_MAX, 1));
    QCOMPARE(toByteCount(1e30), UINT64_MAX);  // a plain cast is undefined here
    QCOMPARE(toByteCount(-5.0), std::uint64_t{0});
    QCOMPARE(toByteCount(std::nan("")), std::uint64_t{0});
    QCOMPARE(toByteCount(4096.7), std::uint64_t{4096});
  }

  void modelCountsAndBatchHaveMaxima() {
    json j = json::parse(tinyModelText());
    j["batch_size_per_gpu"] = std::uint64_t{1} << 40;
    QVERIFY(modelError(j.dump()).find("/batch_size_per_gpu: expected an integer in [1, 16777216]") !=
            std::string::npos);
    j = json::parse(tinyModelText());
    j["tables"][0]["pooling"]["mean"] = 1e12;
    QVERIFY(modelError(j.dump()).find("/tables/0/pooling/mean: expected a number in (0, 65536]") != std::string::npos);
    j = json::parse(tinyModelText());
    json many = json::array();
    for (std::uint64_t i = 0; i <= kMaxTables; ++i) many.push_back(j["tables"][0]);
    j["tables"] = std::move(many);
    QVERIFY(modelError(j.dump()).find("/tables: expected at most 100000 tables, got 100001") != std::string::npos);
  }

  void clusterSizeHasAMaximum() {
    json c = toJson(clusterPreset("h100x8").value());
    c["nodes"] = 1u << 20;
    c.erase("world_size");
    auto r = clusterFromJson(json::parse(c.dump()), "c.json");
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("c.json: /nodes: expected an integer in [1, 131072]") != std::string::npos,
             r.error().message.c_str());
    c["nodes"] = 1024;  // 1024 x 8 fits; 16384 x 8 does not
    QVERIFY(clusterFromJson(json::parse(c.dump()), "c.json"));
    c["nodes"] = 16384 * 2;
    r = clusterFromJson(json::parse(c.dump()), "c.json");
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("/nodes: expected at most 131072 GPUs (nodes x gpus_per_node), got 32768 x 8") !=
                 std::string::npos,
             r.error().message.c_str());
    c["nodes"] = 1;
    c["gpu"]["hbm_bytes"] = std::uint64_t{1} << 60;
    QVERIFY(!clusterFromJson(json::parse(c.dump()), "c.json"));
  }

  void planOffsetsCannotWrap() {
    QVERIFY(planError(tinyPlan()).empty());
    json p = tinyPlan();
    // row_offset + rows would wrap to 999 in 64 bits.
    p["tables"][0]["shards"][0]["row_offset"] = UINT64_MAX - 1000 + 1;
    const std::string e = planError(p);
    QVERIFY2(e.find("/tables/0/shards/0/row_offset: expected an integer in [0, 281474976710656]") != std::string::npos,
             e.c_str());
    p = tinyPlan();
    p["world_size"] = 1u << 24;
    QVERIFY(planError(p).find("/world_size: expected an integer in [1, 131072]") != std::string::npos);
  }

  void aTorchRecRankBeyondTheWorldIsRefusedBeforeAllocating() {
    // A 200-byte plan naming rank 16777215 once used to build a 16-million-rank plan.
    const json j = json::parse(R"({"plan": {"ebc": {"t0": {"sharding_type": "table_wise", "compute_kernel": "fused",
      "ranks": [16777215], "shards": [{"shard_offsets": [0, 0], "shard_sizes": [1000, 64],
      "placement": "rank:16777215/cuda:0"}]}}}})");
    TorchRecImportOptions o;
    auto r = shardPlanFromTorchRec(j, "tr.json", o);
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("/plan/ebc/t0/ranks/0: expected an integer in [0, 131071]") != std::string::npos,
             r.error().message.c_str());
    // Within the limit but beyond the cluster it is priced on: refused by the world size given.
    json k = j;
    k["plan"]["ebc"]["t0"]["ranks"] = {100};
    k["plan"]["ebc"]["t0"]["shards"][0]["placement"] = "rank:100/cuda:0";
    o.world_size = 8;
    r = shardPlanFromTorchRec(k, "tr.json", o);
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("rank 100") != std::string::npos, r.error().message.c_str());
  }

  void aCalibrationWithHalfTheCacheTermIsRefused() {
    const json only = json::parse(R"({"schema": "shardscope.calibration/1", "source": "x",
                                      "coefficients": {"cache_bytes": 1048576}})");
    auto r = calibrationFromJson(only, "cal.json");
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("cal.json: /coefficients/cache_miss_ns: missing: the cache term takes cache_bytes "
                                    "and cache_miss_ns together") != std::string::npos,
             r.error().message.c_str());
    json both = only;
    both["coefficients"]["cache_miss_ns"] = 2.5;
    QVERIFY(calibrationFromJson(both, "cal.json"));
    json miss = both;
    miss["coefficients"].erase("cache_bytes");
    QVERIFY(!calibrationFromJson(miss, "cal.json"));
  }
};

QTEST_APPLESS_MAIN(TestInputLimits)
#include "test_input_limits.moc"
