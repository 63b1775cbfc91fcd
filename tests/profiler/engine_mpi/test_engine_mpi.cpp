// The distributed engine end to end: shardscope-engine under mpirun with 4
// ranks (M = 2, R = 2, strided), a small model with row-wise, table-wise,
// column-wise and data-parallel tables, 1 warm-up + 3 measured steps.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/trace_store.h"

using namespace shardscope;
namespace store = shardscope::core::store;

namespace {

constexpr const char* kModel = R"({"schema": "shardscope.model/1", "name": "tiny", "batch_size_per_gpu": 16,
 "dense": {"parameters": 1000, "flops_per_sample": 20000},
 "tables": [
  {"name": "rw", "rows": 1000, "dim": 8, "pooling": 3, "access": {"kind": "zipf", "alpha": 1.1}},
  {"name": "tw0", "rows": 200, "dim": 8, "pooling": 2},
  {"name": "tw1", "rows": 300, "dim": 16, "dtype": "fp16", "pooling": {"kind": "uniform", "mean": 3, "spread": 2}},
  {"name": "cw", "rows": 100, "dim": 16, "pooling": 1},
  {"name": "dp", "rows": 5, "dim": 4, "pooling": 1},
  {"name": "rw16", "rows": 500, "dim": 8, "dtype": "fp16", "pooling": 2}]})";

constexpr const char* kCluster = R"({"schema": "shardscope.cluster/1", "name": "cpu4", "nodes": 1, "gpus_per_node": 4,
 "world_size": 4, "gpu": {"name": "CPU", "hbm_bytes": 8589934592, "hbm_bandwidth_gbps": 100, "peak_dense_tflops": 1},
 "intra_node": {"bandwidth_gbps": 10, "latency_us": 5}, "inter_node": {"bandwidth_gbps": 10, "latency_us": 5}})";

// Strided N = 4, M = 2: sharding groups {0,2} {1,3}, replica groups {0,1} {2,3}.
constexpr const char* kPlan = R"({"schema": "shardscope.plan/1", "model": "tiny", "world_size": 4, "gpus_per_node": 4,
 "grid": {"sharding_group_size": 2, "replicas": 2, "layout": "strided"},
 "sharding_groups": [[0, 2], [1, 3]], "replica_groups": [[0, 1], [2, 3]],
 "tables": [
  {"name": "rw", "rows": 1000, "dim": 8, "sharding_type": "row_wise", "shards": [
    {"group_rank": 0, "row_offset": 0, "rows": 500, "col_offset": 0, "cols": 8},
    {"group_rank": 1, "row_offset": 500, "rows": 500, "col_offset": 0, "cols": 8}]},
  {"name": "tw0", "rows": 200, "dim": 8, "sharding_type": "table_wise", "shards": [
    {"group_rank": 0, "row_offset": 0, "rows": 200, "col_offset": 0, "cols": 8}]},
  {"name": "tw1", "rows": 300, "dim": 16, "sharding_type": "table_wise", "shards": [
    {"group_rank": 1, "row_offset": 0, "rows": 300, "col_offset": 0, "cols": 16}]},
  {"name": "cw", "rows": 100, "dim": 16, "sharding_type": "column_wise", "shards": [
    {"group_rank": 0, "row_offset": 0, "rows": 100, "col_offset": 0, "cols": 8},
    {"group_rank": 1, "row_offset": 0, "rows": 100, "col_offset": 8, "cols": 8}]},
  {"name": "dp", "rows": 5, "dim": 4, "sharding_type": "data_parallel", "shards": [
    {"group_rank": 0, "row_offset": 0, "rows": 5, "col_offset": 0, "cols": 4},
    {"group_rank": 1, "row_offset": 0, "rows": 5, "col_offset": 0, "cols": 4}]},
  {"name": "rw16", "rows": 500, "dim": 8, "sharding_type": "row_wise", "shards": [
    {"group_rank": 0, "row_offset": 0, "rows": 250, "col_offset": 0, "cols": 8},
    {"group_rank": 1, "row_offset": 250, "rows": 250, "col_offset": 0, "cols": 8}]}]})";

const std::vector<std::vector<int>> kShardingGroups = {{0, 2}, {1, 3}};
const std::vector<std::vector<int>> kReplicaGroups = {{0, 1}, {2, 3}};
constexpr int kSteps = 3;

struct EngineRun {
  int exit_code = -1;
  QString out, err;
};

EngineRun runEngine(int np, const QStringList& args) {
  QProcess p;
  QStringList all = {"-np", QString::number(np), "--oversubscribe", SHARDSCOPE_ENGINE};
  all << args;
  p.start(SHARDSCOPE_MPIEXEC, all);
  EngineRun r;
  if (!p.waitForStarted(30000) || !p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished(5000);
    r.err = "mpirun did not start or finish in time";
    return r;
  }
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  return r;
}

bool writeText(const QString& path, const char* text) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  return f.write(text) > 0;
}

QJsonObject readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

QString groupText(const std::vector<int>& ranks) {
  QStringList parts;
  for (int r : ranks) parts << QString::number(r);
  return parts.join(',');
}

// rank -> "table@row_offset,col_offset" -> digest
using Digests = std::map<int, std::map<QString, QString>>;
Digests digestsOf(const QJsonObject& summary) {
  Digests d;
  for (const auto& rv : summary["ranks"].toArray()) {
    const QJsonObject r = rv.toObject();
    for (const auto& sv : r["shards"].toArray()) {
      const QJsonObject s = sv.toObject();
      const QString key = s["table"].toString() + "@" + QString::number(s["row_offset"].toDouble()) + "," +
                          QString::number(s["col_offset"].toDouble());
      d[r["rank"].toInt()][key] = s["digest"].toString();
    }
  }
  return d;
}

}  // namespace

class TestEngineMpi : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  EngineRun synced_;  // --sync-interval 3: a replica sync after the last step
  QJsonObject synced_summary_;
  std::optional<store::TraceStore> store_;
  store::RunRecord run_;

  QString path(const char* name) const { return dir_.filePath(name); }
  QStringList commonArgs(const QString& store_file, const QString& summary, int sync_interval) const {
    return {"--model",         path("model.json"),
            "--cluster",       path("cluster.json"),
            "--plan",          path("plan.json"),
            "--store",         store_file,
            "--steps",         QString::number(kSteps),
            "--warmup",        "1",
            "--threads",       "1",
            "--seed",          "7",
            "--sync-interval", QString::number(sync_interval),
            "--summary-json",  summary};
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QVERIFY(writeText(path("model.json"), kModel));
    QVERIFY(writeText(path("cluster.json"), kCluster));
    QVERIFY(writeText(path("plan.json"), kPlan));
    synced_ = runEngine(4, commonArgs(path("synced.db"), path("synced.json"), kSteps) << "--progress");
    QVERIFY2(synced_.exit_code == 0, qPrintable(synced_.err));
    synced_summary_ = readJson(path("synced.json"));
    auto s = store::openStore(path("synced.db").toStdString(), store::OpenMode::ReadOnly);
    QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
    store_.emplace(std::move(s).value());
    auto runs = store_->listRuns();
    QVERIFY(runs.ok());
    QCOMPARE(runs->size(), std::size_t{1});
    run_ = runs->front();
  }

  void rankZeroPrintsTheRunIdAndProgress() {
    const QStringList lines = synced_.out.split('\n', Qt::SkipEmptyParts);
    QVERIFY(!lines.isEmpty());
    QCOMPARE(lines.front(), QString("run %1").arg(static_cast<qint64>(run_.id)));
    QCOMPARE(lines.count("progress 4 4"), 1);  // warm-up + 3 measured; printed once (rank 0 only)
    QCOMPARE(lines.filter(QRegularExpression("^run ")).size(), 1);
    // Every measured step's time on each of the 4 ranks, once (rank 0 gathers them).
    const QStringList steps = lines.filter(QRegularExpression("^step "));
    QCOMPARE(steps.size(), kSteps);
    for (int s = 0; s < kSteps; ++s) {
      const QStringList fields = steps[s].split(' ');
      QCOMPARE(fields.size(), 2 + 4);
      QCOMPARE(fields[1].toInt(), s);
      for (int r = 0; r < 4; ++r) QVERIFY(fields[2 + r].toDouble() > 0);
    }
  }

  void theStoreHoldsOneCompleteMpiRunWithItsConfiguration() {
    QVERIFY(run_.kind == store::RunKind::Mpi);
    QVERIFY(run_.isComplete());
    QCOMPARE(QString::fromStdString(run_.label), QString("mpi tiny M=2 R=2"));
    const QJsonObject config = QJsonDocument::fromJson(QByteArray::fromStdString(run_.config_json)).object();
    QCOMPARE(config["schema"].toString(), QString("shardscope.engine-run/1"));
    QCOMPARE(config["mode"].toString(), QString("mpi"));
    QCOMPARE(config["steps"].toInt(), kSteps);
    QCOMPARE(config["sync_interval"].toInt(), kSteps);
    QCOMPARE(config["ranks_measured"].toArray().size(), 4);
    QVERIFY(!run_.plan_json.empty() && !run_.model_json.empty() && !run_.cluster_json.empty());
  }

  void ranksAndSpansCoverRanksZeroToThree() {
    auto ranks = store_->ranks(run_.id);
    QVERIFY(ranks.ok());
    QCOMPARE(ranks->size(), std::size_t{4});
    for (const store::RankInfo& r : *ranks) {
      const auto rank = static_cast<std::size_t>(r.rank);
      QVERIFY(rank < 4);
      QCOMPARE(r.sharding_group, static_cast<int>(rank % 2));  // strided: group g = ranks g, g + R
      QCOMPARE(r.replica_group, static_cast<int>(rank / 2));
    }
    auto extents = store_->spanExtents(run_.id);
    QVERIFY(extents.ok());
    std::set<int> with_spans;
    for (const auto& e : *extents)
      if (e.span_count > 0) with_spans.insert(e.rank);
    QVERIFY(with_spans == (std::set<int>{0, 1, 2, 3}));
  }

  void everyPhaseOfEveryMeasuredStepIsTracedOnEveryRank() {
    auto spans = store_->spansInWindow(run_.id, {}, INT64_MIN, INT64_MAX);
    auto strings = store_->strings();
    QVERIFY(spans.ok() && strings.ok());
    // (rank, step) -> kinds seen
    std::map<std::pair<int, std::int64_t>, std::set<QString>> seen;
    for (const store::Span& s : *spans) {
      QVERIFY2(s.step >= 0 && s.step < kSteps, "only measured steps are recorded");
      seen[{s.rank, s.step}].insert(
          QString::fromUtf8(strings->at(s.kind).data(), static_cast<qsizetype>(strings->at(s.kind).size())));
    }
    const QStringList every_step = {"step",  "input",     "a2a_ids", "emb_fwd",      "a2a_pooled",
                                    "dense", "a2a_grads", "emb_bwd", "dp_allreduce", "dense_allreduce"};
    for (int rank = 0; rank < 4; ++rank)
      for (int step = 0; step < kSteps; ++step) {
        const auto& kinds = seen[{rank, step}];
        for (const QString& k : every_step)
          QVERIFY2(kinds.count(k) == 1, qPrintable(QString("rank %1 step %2 lacks %3").arg(rank).arg(step).arg(k)));
        // K = 3: the replica sync runs after measured step 2 only.
        QCOMPARE(kinds.count("replica_sync"), std::size_t{step == kSteps - 1 ? 1u : 0u});
      }
  }

  void collectivesRunOnThePlansGroups() {
    auto collectives = store_->collectives(run_.id);
    auto strings = store_->strings();
    QVERIFY(collectives.ok() && strings.ok());
    std::map<int, std::set<QString>> all_to_all_groups, all_reduce_groups;
    for (const store::Collective& c : *collectives) {
      const QString op = QString::fromStdString(std::string(strings->at(c.op)));
      const QString group = QString::fromStdString(std::string(strings->at(c.group)));
      QVERIFY(c.bytes > 0);
      QVERIFY(c.end_ns >= c.start_ns);
      if (op == "all_to_all") {
        all_to_all_groups[c.rank].insert(group);
        QCOMPARE(c.peers, 1);
      } else {
        QCOMPARE(op, QString("all_reduce"));
        all_reduce_groups[c.rank].insert(group);
      }
    }
    for (int rank = 0; rank < 4; ++rank) {
      const QString sharding = groupText(kShardingGroups[static_cast<std::size_t>(rank % 2)]);
      const QString replica = groupText(kReplicaGroups[static_cast<std::size_t>(rank / 2)]);
      QVERIFY(all_to_all_groups[rank] == (std::set<QString>{sharding}));
      // dp_allreduce in the sharding group, replica_sync in the replica group, dense over the world.
      QVERIFY(all_reduce_groups[rank] == (std::set<QString>{sharding, replica, "0,1,2,3"}));
    }
  }

  void stepSummariesAndTableStatsCoverEveryRank() {
    auto steps = store_->stepSummaries(run_.id);
    auto tables = store_->tableStats(run_.id);
    QVERIFY(steps.ok() && tables.ok());
    QCOMPARE(steps->size(), std::size_t{4 * kSteps});
    for (const store::StepSummary& s : *steps) {
      QVERIFY(s.total_ns > 0);
      QVERIFY(s.emb_fwd_ns + s.emb_bwd_ns + s.dense_ns + s.comm_ns <= s.total_ns);
    }
    std::set<int> ranks;
    for (const store::TableStat& t : *tables) {
      ranks.insert(t.rank);
      QVERIFY(t.lookups >= 0);
    }
    QVERIFY(ranks == (std::set<int>{0, 1, 2, 3}));
    // What the run looked up per table: every rank's ids of every measured step.
    auto access = store_->tableAccess(run_.id);
    QVERIFY(access.ok());
    QVERIFY(!access->empty());
    for (const auto& [name, text] : *access) {
      const auto j = nlohmann::json::parse(text);
      QCOMPARE(j.at("name").get<std::string>(), name);
      std::uint64_t sum = 0;
      for (const auto& c : j.at("buckets")) sum += c.get<std::uint64_t>();
      QCOMPARE(sum, j.at("lookups").get<std::uint64_t>());
      QVERIFY(sum > 0);
    }
  }

  void replicasHoldIdenticalShardsAfterTheSync() {
    QCOMPARE(synced_summary_["world_size"].toInt(), 4);
    QCOMPARE(synced_summary_["sharding_group_size"].toInt(), 2);
    QCOMPARE(synced_summary_["replicas"].toInt(), 2);
    const Digests d = digestsOf(synced_summary_);
    QCOMPARE(d.size(), std::size_t{4});
    for (const auto& group : kReplicaGroups) {
      const auto& first = d.at(group[0]);
      QVERIFY(!first.empty());
      for (int member : group) QVERIFY2(d.at(member) == first, qPrintable(QString("rank %1").arg(member)));
    }
    // The data-parallel table is the same everywhere: equal in each sharding group, then averaged.
    for (int rank = 1; rank < 4; ++rank) QCOMPARE(d.at(rank).at("dp@0,0"), d.at(0).at("dp@0,0"));
  }

  void replicasDifferBeforeAnySync() {
    // K > steps: the measured steps never sync, and the replicas saw different samples.
    const EngineRun r = runEngine(4, commonArgs(path("unsynced.db"), path("unsynced.json"), kSteps + 2));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const Digests d = digestsOf(readJson(path("unsynced.json")));
    QCOMPARE(d.size(), std::size_t{4});
    for (const auto& group : kReplicaGroups) {
      const auto& a = d.at(group[0]);
      const auto& b = d.at(group[1]);
      QCOMPARE(a.size(), b.size());
      for (const auto& [shard, digest] : a)
        QVERIFY2(b.at(shard) != digest, qPrintable(shard + " is equal on both replicas"));
    }
    // Inside a sharding group the data-parallel copies still agree (gradients all-reduced).
    for (const auto& group : kShardingGroups) QCOMPARE(d.at(group[1]).at("dp@0,0"), d.at(group[0]).at("dp@0,0"));
  }

  void aMismatchedWorldSizeFailsWithOneClearMessage() {
    const EngineRun r = runEngine(2, commonArgs(path("mismatch.db"), path("mismatch.json"), 1));
    QVERIFY(r.exit_code != 0);
    QCOMPARE(r.err.count("world_size 4"), 1);  // rank 0 prints it, once
    QVERIFY2(r.err.contains("MPI started 2 processes"), qPrintable(r.err));
    QVERIFY(!QFile::exists(path("mismatch.json")));
  }
};

QTEST_GUILESS_MAIN(TestEngineMpi)
#include "test_engine_mpi.moc"
