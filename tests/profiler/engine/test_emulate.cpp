// Emulate mode and the shard inputs it shares with the distributed engine:
// which shards a rank holds, the memory-budget cap, routing of ids to shards,
// and complete, cancelled and capped emulate runs in a trace store.
#include <QtTest>

#include <atomic>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/presets.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/engine/shard_inputs.h"

using namespace shardscope;
using profiler::RankShard;
namespace store = core::store;

namespace {

core::TableSpec table(std::string name, std::uint64_t rows, std::uint32_t dim, core::DType dtype,
                      core::AccessSpec access, core::PoolingSpec pooling) {
  core::TableSpec t;
  t.name = std::move(name);
  t.rows = rows;
  t.dim = dim;
  t.dtype = dtype;
  t.access = std::move(access);
  t.pooling = pooling;
  return t;
}

core::ModelSpec smallModel() {
  core::AccessSpec zipf;
  zipf.kind = core::AccessKind::Zipf;
  zipf.alpha = 1.05;
  core::AccessSpec hot;
  hot.kind = core::AccessKind::HotSet;
  hot.hot_fraction = 0.1;
  hot.hot_probability = 0.9;
  core::ModelSpec m;
  m.name = "small";
  m.tables = {table("big", 200'000, 16, core::DType::FP32, zipf, {core::PoolingKind::Fixed, 4, 0}),
              table("mid", 20'000, 32, core::DType::FP16, {}, {core::PoolingKind::Uniform, 3, 2}),
              table("small", 1000, 16, core::DType::FP32, hot, {core::PoolingKind::Fixed, 2, 0}),
              table("tiny", 8, 8, core::DType::FP32, {}, {core::PoolingKind::Fixed, 1, 0}),
              table("wide", 5000, 64, core::DType::BF16, {}, {core::PoolingKind::Fixed, 1.5, 0})};
  m.batch_size_per_gpu = 32;
  m.dense.parameters = 1'000'000;
  m.dense.flops_per_sample = 1e6;
  return m;
}

core::ClusterSpec fourGpus() {
  core::ClusterSpec c = core::clusterPreset("h100x8").value();
  c.name = "h100x4";
  c.nodes = 1;
  c.gpus_per_node = 4;
  return c;
}

core::ShardPlan sweptPlan(const core::ModelSpec& model, const core::ClusterSpec& cluster, std::uint32_t M) {
  planner::SweepOptions o;
  o.only_group_size = M;
  o.only_layout = core::RankLayout::Strided;
  const planner::SweepResult r = planner::sweep(model, cluster, nullptr, {}, o);
  if (r.grids.empty()) qFatal("sweep gave no grid for M=%u", M);
  return r.grids.front().plan;
}

core::Shard shard(std::uint32_t group_rank, std::uint64_t row_offset, std::uint64_t rows, std::uint32_t col_offset,
                  std::uint32_t cols) {
  return core::Shard{group_rank, row_offset, rows, col_offset, cols};
}

// M = 2, R = 2 with every kind of shard: row-wise, column-wise, table-wise,
// data-parallel, and two row pieces of one table on the same rank.
core::ShardPlan handPlan(const core::ModelSpec& m) {
  core::ShardPlan p;
  p.model = m.name;
  p.world_size = 4;
  p.gpus_per_node = 4;
  p.sharding_group_size = 2;
  p.replicas = 2;
  p.sharding_groups = core::shardingGroups(4, 2, core::RankLayout::Strided);
  p.replica_groups = core::replicaGroups(4, 2, core::RankLayout::Strided);
  using core::ShardingType;
  p.tables = {
      {"big", 200'000, 16, ShardingType::RowWise, {shard(0, 0, 120'000, 0, 16), shard(1, 120'000, 80'000, 0, 16)}},
      {"mid", 20'000, 32, ShardingType::ColumnWise, {shard(0, 0, 20'000, 0, 16), shard(1, 0, 20'000, 16, 16)}},
      {"small", 1000, 16, ShardingType::TableWise, {shard(1, 0, 1000, 0, 16)}},
      {"tiny", 8, 8, ShardingType::DataParallel, {shard(0, 0, 8, 0, 8), shard(1, 0, 8, 0, 8)}},
      {"wide", 5000, 64, ShardingType::TableRowWise, {shard(0, 0, 2500, 0, 64), shard(0, 2500, 2500, 0, 64)}}};
  return p;
}

using RankTable = std::pair<int, std::string>;

// Lookups every (global rank, table) must serve over the measured steps,
// worked out from the workload generator and the plan alone.
std::map<RankTable, std::int64_t> expectedLookups(const core::ModelSpec& model, const core::ShardPlan& plan,
                                                  const profiler::EmulateOptions& o, std::uint32_t groups) {
  const profiler::WorkloadGenerator gen(model, o.seed);
  const std::uint32_t M = plan.sharding_group_size, R = plan.replicas, B = model.batch_size_per_gpu;
  std::map<RankTable, std::int64_t> out;
  for (std::uint32_t g = 0; g < groups; ++g) {
    for (std::uint32_t i = 0; i < M; ++i) {
      const int rank = static_cast<int>(plan.sharding_groups[g][i]);
      for (const auto& tp : plan.tables) {
        std::size_t t = 0;
        while (model.tables[t].name != tp.name) ++t;
        for (const auto& s : tp.shards) {
          if (s.group_rank != i) continue;
          const bool dp = tp.sharding_type == core::ShardingType::DataParallel;
          for (std::uint32_t k = o.warmup; k < o.warmup + o.steps; ++k) {
            const std::uint64_t first = (std::uint64_t{k} * R + g) * M * B + (dp ? std::uint64_t{i} * B : 0);
            const profiler::Batch b = gen.batch(t, first, dp ? B : M * B);
            std::int64_t n = 0;
            for (std::uint64_t id : b.ids) n += (id >= s.row_offset && id < s.row_offset + s.rows) ? 1 : 0;
            out[{rank, tp.name}] += n;
          }
        }
      }
    }
  }
  return out;
}

struct StoredRun {
  store::RunRecord record;
  std::vector<store::RankInfo> ranks;
  std::vector<store::StepSummary> steps;
  std::vector<store::TableStat> tables;
  std::vector<store::Span> spans;
  std::map<std::int64_t, std::string> names;
  [[nodiscard]] std::string str(store::StringId id) const {
    const auto it = names.find(static_cast<std::int64_t>(id));
    return it == names.end() ? std::string() : it->second;
  }
  [[nodiscard]] nlohmann::json config() const { return nlohmann::json::parse(record.config_json); }
};

StoredRun readRun(const std::filesystem::path& path, store::RunId run) {
  auto db = store::openStore(path);
  if (!db) qFatal("open: %s", db.error().message.c_str());
  StoredRun out;
  out.record = db->run(run).value();
  out.ranks = db->ranks(run).value();
  out.steps = db->stepSummaries(run).value();
  out.tables = db->tableStats(run).value();
  out.spans = db->spansInWindow(run, {}, std::numeric_limits<std::int64_t>::min() / 2,
                                std::numeric_limits<std::int64_t>::max() / 2)
                  .value();
  const auto strings = db->strings();
  const auto keep = [&](store::StringId id) {
    out.names[static_cast<std::int64_t>(id)] = std::string(strings->at(id));
  };
  for (const auto& s : out.spans) keep(s.kind), keep(s.name), keep(s.table);
  for (const auto& t : out.tables) keep(t.table);
  return out;
}

std::map<RankTable, std::int64_t> storedLookups(const StoredRun& r) {
  std::map<RankTable, std::int64_t> out;
  for (const auto& t : r.tables) out[{t.rank, r.str(t.table)}] += t.lookups;
  return out;
}

profiler::EmulateOptions quickOptions() {
  profiler::EmulateOptions o;
  o.steps = 2;
  o.warmup = 1;
  o.seed = 11;
  o.threads = 2;
  o.memory_budget_bytes = std::uint64_t{1} << 30;
  return o;
}

// A complete run of `measured` ranks: every row kind covers every rank and
// step, spans add up to the summaries, and lookups are exactly the workload's.
void checkCompleteRun(const core::ModelSpec& model, const core::ShardPlan& plan, const profiler::EmulateOptions& o,
                      const profiler::EmulateResult& result, const StoredRun& run, std::uint32_t groups) {
  QVERIFY(run.record.isComplete());
  QVERIFY(run.record.kind == store::RunKind::Emulate);
  std::vector<int> measured;
  for (std::uint32_t g = 0; g < groups; ++g)
    for (std::uint32_t r : plan.sharding_groups[g]) measured.push_back(static_cast<int>(r));
  const nlohmann::json config = run.config();
  QCOMPARE(config.at("schema").get<std::string>(), std::string("shardscope.engine-run/1"));
  QCOMPARE(config.at("mode").get<std::string>(), std::string("emulate"));
  QVERIFY(config.at("ranks_measured").get<std::vector<int>>() == measured);
  QCOMPARE(config.at("steps").get<int>(), static_cast<int>(o.steps));
  QCOMPARE(result.ranks.size(), measured.size());

  std::set<int> rank_rows;
  for (const auto& r : run.ranks) rank_rows.insert(r.rank);
  QVERIFY(rank_rows == std::set<int>(measured.begin(), measured.end()));

  QCOMPARE(run.steps.size(), measured.size() * o.steps);
  std::map<std::pair<int, std::int64_t>, std::int64_t> fwd_spans, bwd_spans;
  std::map<std::pair<int, std::string>, int> kinds;
  for (const auto& s : run.spans) {
    const std::string kind = run.str(s.kind);
    ++kinds[{s.rank, kind}];
    QVERIFY(s.step >= 0 && s.step < static_cast<std::int64_t>(o.steps));
    if (kind == "emb_fwd") fwd_spans[{s.rank, s.step}] += s.end_ns - s.start_ns;
    if (kind == "emb_bwd") bwd_spans[{s.rank, s.step}] += s.end_ns - s.start_ns;
    if (kind == "emb_fwd" || kind == "emb_bwd") QCOMPARE(run.str(s.name), run.str(s.table));
  }
  for (const auto& sum : run.steps) {
    QVERIFY(sum.total_ns > 0);
    QVERIFY(sum.emb_fwd_ns + sum.emb_bwd_ns <= sum.total_ns);
    QCOMPARE(sum.emb_fwd_ns, (fwd_spans[{sum.rank, sum.step}]));
    QCOMPARE(sum.emb_bwd_ns, (bwd_spans[{sum.rank, sum.step}]));
  }
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const int rank = measured[i];
    const auto shards = profiler::shardsOfRank(model, plan, result.ranks[i].group_rank);
    QVERIFY(shards.ok());
    QCOMPARE(result.ranks[i].rank, static_cast<std::uint32_t>(rank));
    QCOMPARE((kinds[{rank, "step"}]), static_cast<int>(o.steps));
    QCOMPARE((kinds[{rank, "input"}]), static_cast<int>(o.steps));
    QCOMPARE((kinds[{rank, "emb_fwd"}]), static_cast<int>(o.steps * shards->size()));
    QCOMPARE((kinds[{rank, "emb_bwd"}]), static_cast<int>(o.steps * shards->size()));
  }
  const auto expected = expectedLookups(model, plan, o, groups);
  const auto stored = storedLookups(run);
  for (const auto& [key, n] : expected) {
    const auto it = stored.find(key);
    QVERIFY2(it != stored.end(),
             qPrintable(QString("no table stat for rank %1 table %2").arg(key.first).arg(key.second.c_str())));
    QVERIFY2(it->second == n, qPrintable(QString("rank %1 table %2: %3 lookups, expected %4")
                                             .arg(key.first)
                                             .arg(key.second.c_str())
                                             .arg(it->second)
                                             .arg(n)));
  }
  QCOMPARE(stored.size(), expected.size());
  // Row-split tables: the group's ranks together serve every id of its samples.
  const profiler::WorkloadGenerator gen(model, o.seed);
  const std::uint32_t M = plan.sharding_group_size, R = plan.replicas, B = model.batch_size_per_gpu;
  for (const auto& tp : plan.tables) {
    if (tp.sharding_type == core::ShardingType::DataParallel || tp.sharding_type == core::ShardingType::ColumnWise ||
        tp.sharding_type == core::ShardingType::TableColumnWise || tp.sharding_type == core::ShardingType::GridShard)
      continue;
    std::size_t t = 0;
    while (model.tables[t].name != tp.name) ++t;
    for (std::uint32_t g = 0; g < groups; ++g) {
      std::int64_t ids = 0, served = 0;
      for (std::uint32_t k = o.warmup; k < o.warmup + o.steps; ++k)
        ids += static_cast<std::int64_t>(gen.batch(t, (std::uint64_t{k} * R + g) * M * B, M * B).ids.size());
      for (std::uint32_t r : plan.sharding_groups[g])
        served += stored.count({static_cast<int>(r), tp.name}) ? stored.at({static_cast<int>(r), tp.name}) : 0;
      QCOMPARE(served, ids);
    }
  }
}

}  // namespace

class TestEmulate : public QObject {
  Q_OBJECT
 private slots:
  // ---- shard inputs

  void shardsOfRankListsTheRanksShardsInPlanOrder() {
    const auto model = smallModel();
    const auto plan = handPlan(model);
    auto r0 = profiler::shardsOfRank(model, plan, 0);
    QVERIFY(r0.ok());
    std::vector<std::string> names;
    for (const auto& s : *r0) names.push_back(model.tables[s.table].name);
    QVERIFY((names == std::vector<std::string>{"big", "mid", "tiny", "wide", "wide"}));
    QVERIFY((*r0)[2].dataParallel());
    QCOMPARE((*r0)[3].shard.row_offset, std::uint64_t{0});
    QCOMPARE((*r0)[4].shard.row_offset, std::uint64_t{2500});
    auto r1 = profiler::shardsOfRank(model, plan, 1);
    QVERIFY(r1.ok());
    QCOMPARE(r1->size(), std::size_t{4});
    QCOMPARE(model.tables[(*r1)[2].table].name, std::string("small"));
    QCOMPARE((*r1)[1].shard.col_offset, 16u);
    for (const auto& s : *r1) QCOMPARE(s.physical_rows, s.shard.rows);
    QVERIFY(!profiler::shardsOfRank(model, plan, 2).ok());
  }

  void shardsOfRankSkipsEmptyRowBlocks() {
    // "tiny" (8 rows) row-wise as TorchRec cuts 8 rows over 2 ranks is 4, 4; over
    // a plan where rank 1's block is empty (all rows on rank 0), rank 1 holds nothing of it.
    const auto model = smallModel();
    auto plan = handPlan(model);
    plan.tables[3] = {"tiny", 8, 8, core::ShardingType::RowWise, {shard(0, 0, 8, 0, 8), shard(1, 8, 0, 0, 8)}};
    auto r1 = profiler::shardsOfRank(model, plan, 1);
    QVERIFY2(r1.ok(), r1.ok() ? "" : r1.error().message.c_str());
    for (const auto& s : *r1) QVERIFY(model.tables[s.table].name != "tiny");
    auto r0 = profiler::shardsOfRank(model, plan, 0);
    QVERIFY(r0.ok());
    QCOMPARE(
        std::count_if(r0->begin(), r0->end(), [&](const RankShard& s) { return model.tables[s.table].name == "tiny"; }),
        std::ptrdiff_t{1});
  }

  void shardsOfRankNamesTheMismatchedPlanTable() {
    auto model = smallModel();
    auto plan = handPlan(model);
    plan.tables[2].name = "smalll";
    auto r = profiler::shardsOfRank(model, plan, 1);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("plan table \"smalll\""), r.error().message.c_str());
    plan = handPlan(model);
    model.tables[1].dim = 48;
    r = profiler::shardsOfRank(model, plan, 0);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("plan table \"mid\"") &&
                 QString::fromStdString(r.error().message).contains("dim 48"),
             r.error().message.c_str());
  }

  void routeKeepsIdsInTheShardsRowRangeAsLocalRows() {
    RankShard s;
    s.type = core::ShardingType::RowWise;
    s.shard = shard(0, 100, 50, 0, 8);
    s.physical_rows = 50;
    const profiler::Batch batch{{3, 0, 2}, {99, 100, 149, 150, 120}};
    profiler::ShardBags bags;
    profiler::routeToShard(batch, s, bags);
    QVERIFY((bags.offsets == std::vector<std::uint32_t>{0, 2, 2, 3}));
    QVERIFY((bags.ids == std::vector<std::uint32_t>{0, 49, 20}));
    QCOMPARE(bags.lookups(), std::uint64_t{3});
    QCOMPARE(bags.view().count(), std::size_t{3});
    // Reused between steps: nothing of the previous batch stays.
    profiler::routeToShard(profiler::Batch{{1}, {5}}, s, bags);
    QVERIFY((bags.offsets == std::vector<std::uint32_t>{0, 0}));
    QVERIFY(bags.ids.empty());
  }

  void routeFoldsIdsOfACappedShard() {
    RankShard s;
    s.type = core::ShardingType::RowWise;
    s.shard = shard(0, 1000, 1000, 0, 8);
    s.physical_rows = 300;
    QVERIFY(s.capped());
    const profiler::Batch batch{{4}, {1000, 1299, 1300, 1999}};
    profiler::ShardBags bags;
    profiler::routeToShard(batch, s, bags);
    QVERIFY((bags.ids == std::vector<std::uint32_t>{0, 299, 0, 999 % 300}));
    QCOMPARE(profiler::foldRow(1999, 1000, 300), 999u % 300u);
  }

  void dataParallelAndColumnWiseShardsTakeEveryId() {
    const profiler::Batch batch{{2, 1, 0, 3}, {0, 7, 3, 1, 1, 6}};
    for (auto type : {core::ShardingType::DataParallel, core::ShardingType::ColumnWise}) {
      RankShard s;
      s.type = type;
      s.shard = shard(1, 0, 8, type == core::ShardingType::ColumnWise ? 4 : 0, 4);
      s.physical_rows = 8;
      profiler::ShardBags bags;
      profiler::routeToShard(batch, s, bags);
      QVERIFY((bags.offsets == std::vector<std::uint32_t>{0, 2, 3, 3, 6}));
      QVERIFY((bags.ids == std::vector<std::uint32_t>{0, 7, 3, 1, 1, 6}));
    }
  }

  void memoryBudgetWaterFillsTheLargestShards() {
    core::ModelSpec m;
    m.tables = {table("a", 100, 4, core::DType::FP32, {}, {}), table("b", 1000, 4, core::DType::FP32, {}, {}),
                table("c", 10'000, 4, core::DType::FP16, {}, {})};
    std::vector<RankShard> shards(3);
    for (std::size_t i = 0; i < 3; ++i) {
      shards[i].table = i;
      shards[i].shard = shard(0, 0, m.tables[i].rows, 0, 4);
      shards[i].physical_rows = m.tables[i].rows;
    }
    // Bytes per row: fp32 4 x 4 + 4 = 20; fp16 4 x 2 + 4 = 12.
    QCOMPARE(profiler::shardStateBytes(shards[0], m), std::uint64_t{2000});
    QCOMPARE(profiler::shardStateBytes(shards[2], m), std::uint64_t{120'000});
    auto uncapped = shards;
    profiler::applyMemoryBudget(uncapped, m, 0);
    for (const auto& s : uncapped) QVERIFY(!s.capped());
    profiler::applyMemoryBudget(uncapped, m, 2000 + 20'000 + 120'000);
    for (const auto& s : uncapped) QVERIFY(!s.capped());
    // 100 rows of a fit; b and c are cut to one common row count C with
    // 2000 + 20 C + 12 C <= budget: budget 2000 + 32 x 500 + 31 gives C = 500.
    auto capped = shards;
    profiler::applyMemoryBudget(capped, m, 2000 + 32 * 500 + 31);
    QCOMPARE(capped[0].physical_rows, std::uint64_t{100});
    QCOMPARE(capped[1].physical_rows, std::uint64_t{500});
    QCOMPARE(capped[2].physical_rows, std::uint64_t{500});
    QVERIFY(!capped[0].capped() && capped[1].capped() && capped[2].capped());
    // Only c exceeds: a and b keep every row.
    capped = shards;
    profiler::applyMemoryBudget(capped, m, 2000 + 20'000 + 12 * 4321);
    QCOMPARE(capped[1].physical_rows, std::uint64_t{1000});
    QCOMPARE(capped[2].physical_rows, std::uint64_t{4321});
    // Nothing fits: one row each.
    capped = shards;
    profiler::applyMemoryBudget(capped, m, 1);
    for (const auto& s : capped) QCOMPARE(s.physical_rows, std::uint64_t{1});
  }

  void memoryBudgetCapsAtTwoToTheThirtyTwoRows() {
    core::ModelSpec m;
    m.tables = {table("huge", 10'000'000'000ULL, 4, core::DType::FP32, {}, {})};
    std::vector<RankShard> shards(1);
    shards[0].shard = shard(0, 0, m.tables[0].rows, 0, 4);
    shards[0].physical_rows = m.tables[0].rows;
    profiler::applyMemoryBudget(shards, m, 0);
    QCOMPARE(shards[0].physical_rows, std::uint64_t{0xFFFFFFFFULL});
  }

  // Budgets cap each group rank on its own; the copies of a data-parallel table then take the fewest
  // rows any got (one all-reduce size, equal copies), sharded tables keep theirs.
  void dataParallelCopiesGetTheFewestRowsOfAnyRank() {
    std::vector<std::vector<RankShard>> group(3, std::vector<RankShard>(2));
    const std::uint64_t dp_rows[] = {900, 400, 700};
    for (std::size_t g = 0; g < 3; ++g) {
      group[g][0].table = 0;
      group[g][0].type = core::ShardingType::DataParallel;
      group[g][0].shard = shard(static_cast<std::uint32_t>(g), 0, 1000, 0, 4);
      group[g][0].physical_rows = dp_rows[g];
      group[g][1].table = 1;
      group[g][1].type = core::ShardingType::RowWise;
      group[g][1].shard = shard(static_cast<std::uint32_t>(g), 100 * g, 100, 0, 4);
      group[g][1].physical_rows = 50 + g;
    }
    profiler::equalizeDataParallelRows(group);
    for (std::size_t g = 0; g < 3; ++g) {
      QCOMPARE(group[g][0].physical_rows, std::uint64_t{400});
      QCOMPARE(group[g][1].physical_rows, std::uint64_t{50 + g});
    }
  }

  // ---- emulate runs

  void sweptPlanWritesACompleteRun_data() {
    QTest::addColumn<int>("M");
    QTest::newRow("M=2 R=2") << 2;
    QTest::newRow("M=4 R=1") << 4;
  }
  void sweptPlanWritesACompleteRun() {
    QFETCH(int, M);
    const auto model = smallModel();
    const auto cluster = fourGpus();
    const auto plan = sweptPlan(model, cluster, static_cast<std::uint32_t>(M));
    QCOMPARE(plan.sharding_group_size, static_cast<std::uint32_t>(M));
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    const auto o = quickOptions();
    std::uint64_t calls = 0, last_done = 0, total = 0;
    auto opts = o;
    opts.progress = [&](std::uint64_t done, std::uint64_t t, std::string_view) {
      ++calls;
      last_done = done;
      total = t;
    };
    auto r = profiler::runEmulate(model, cluster, plan, opts, path);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(!r->cancelled);
    QCOMPARE(calls, std::uint64_t(M) * (o.warmup + o.steps));
    QCOMPARE(last_done, total);
    const StoredRun run = readRun(path, r->run);
    checkCompleteRun(model, plan, o, *r, run, 1);
    QCOMPARE(run.record.label, "emulate small M=" + std::to_string(M) + " R=" + std::to_string(4 / M));
    QVERIFY(run.config().at("capped").empty());
    QVERIFY(!run.record.model_json.empty() && !run.record.cluster_json.empty() && !run.record.plan_json.empty());
  }

  void handPlanRoutesEveryShardingType() {
    const auto model = smallModel();
    const auto plan = handPlan(model);
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    const auto o = quickOptions();
    auto r = profiler::runEmulate(model, fourGpus(), plan, o, path);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    checkCompleteRun(model, plan, o, *r, readRun(path, r->run), 1);
    // Result: the rank's tables in plan order, two "wide" pieces as one table.
    QCOMPARE(r->ranks[0].tables.size(), std::size_t{4});
    QCOMPARE(r->ranks[0].tables[3].table, std::string("wide"));
    QVERIFY(r->ranks[0].tables[3].lookups_per_step > 0);
    QVERIFY(r->ranks[0].state_bytes > 0);
  }

  void allGroupsMeasuresEveryRank() {
    const auto model = smallModel();
    const auto plan = handPlan(model);
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    auto o = quickOptions();
    o.all_groups = true;
    o.steps = 1;
    auto r = profiler::runEmulate(model, fourGpus(), plan, o, path);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    checkCompleteRun(model, plan, o, *r, readRun(path, r->run), 2);
    // Strided layout: group 0 is ranks 0, 2; group 1 is 1, 3.
    QCOMPARE(r->ranks[2].rank, 1u);
    QCOMPARE(r->ranks[2].group, 1u);
  }

  void spansOffKeepsSummariesAndTableStats() {
    const auto model = smallModel();
    const auto plan = handPlan(model);
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    auto o = quickOptions();
    o.trace_spans = false;
    auto r = profiler::runEmulate(model, fourGpus(), plan, o, path);
    QVERIFY(r.ok());
    const StoredRun run = readRun(path, r->run);
    QVERIFY(run.record.isComplete());
    QVERIFY(run.spans.empty());
    QCOMPARE(run.steps.size(), std::size_t{2 * o.steps});
    QVERIFY(storedLookups(run) == expectedLookups(model, plan, o, 1));
    QCOMPARE(run.config().at("tracing").get<bool>(), false);
  }

  void cappedRunRecordsTheCapAndServesTheSameLookups() {
    const auto model = smallModel();
    const auto plan = handPlan(model);
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    auto o = quickOptions();
    o.memory_budget_bytes = 2'000'000;  // "big" alone needs 120000 x 68 bytes on group rank 0
    auto r = profiler::runEmulate(model, fourGpus(), plan, o, path);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(!r->capped.empty());
    QCOMPARE(r->capped[0].table, std::string("big"));
    for (const auto& rank : r->ranks) QVERIFY(rank.state_bytes <= o.memory_budget_bytes);
    const StoredRun run = readRun(path, r->run);
    checkCompleteRun(model, plan, o, *r, run, 1);
    const nlohmann::json capped = run.config().at("capped");
    QCOMPARE(capped.size(), r->capped.size());
    QCOMPARE(capped[0].at("table").get<std::string>(), std::string("big"));
    QVERIFY(capped[0].at("physical_rows").get<std::uint64_t>() < capped[0].at("rows").get<std::uint64_t>());
    QCOMPARE(run.config().at("memory_budget_bytes").get<std::uint64_t>(), o.memory_budget_bytes);
    // Folded ids update at most the physical rows.
    for (const auto& rank : r->ranks)
      for (const auto& t : rank.tables)
        if (t.table == "big")
          QVERIFY(t.unique_rows_per_step <= static_cast<double>(capped[0].at("physical_rows").get<std::uint64_t>()));
  }

  void budgetBelowTheStepBuffersIsRefusedBeforeARun() {
    const auto model = smallModel();
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    auto o = quickOptions();
    o.memory_budget_bytes = 1000;
    auto r = profiler::runEmulate(model, fourGpus(), handPlan(model), o, path);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("memory budget of 1000 bytes"),
             r.error().message.c_str());
    QVERIFY(!std::filesystem::exists(path));
  }

  void cancelFailsThisRunAndLeavesOthersAlone() {
    const auto model = smallModel();
    const auto plan = handPlan(model);
    const auto cluster = fourGpus();
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    const auto o = quickOptions();
    auto first = profiler::runEmulate(model, cluster, plan, o, path);
    QVERIFY(first.ok());
    const StoredRun before = readRun(path, first->run);

    std::atomic<bool> cancel{false};
    auto opts = o;
    opts.cancel = &cancel;
    opts.progress = [&](std::uint64_t done, std::uint64_t, std::string_view) {
      if (done == 2) cancel = true;
    };
    auto second = profiler::runEmulate(model, cluster, plan, opts, path);
    QVERIFY2(second.ok(), second.ok() ? "" : second.error().message.c_str());
    QVERIFY(second->cancelled);
    QVERIFY(second->run != first->run);
    const StoredRun cancelled = readRun(path, second->run);
    QVERIFY(cancelled.record.status == store::RunStatus::Failed);
    QCOMPARE(cancelled.record.error, std::string("cancelled"));

    const StoredRun after = readRun(path, first->run);
    QVERIFY(after.record.isComplete());
    QCOMPARE(after.spans.size(), before.spans.size());
    QVERIFY(after.steps == before.steps);
    QVERIFY(after.tables == before.tables);
  }

  void inconsistentInputsAreRefusedBeforeARun() {
    auto model = smallModel();
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    auto plan = handPlan(model);
    plan.tables[0].name = "bigger";
    auto r = profiler::runEmulate(model, fourGpus(), plan, quickOptions(), path);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("plan table \"bigger\""), r.error().message.c_str());
    auto o = quickOptions();
    o.steps = 0;
    r = profiler::runEmulate(model, fourGpus(), handPlan(model), o, path);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("steps"), r.error().message.c_str());
    auto cluster = fourGpus();
    cluster.gpus_per_node = 8;
    r = profiler::runEmulate(model, cluster, handPlan(model), quickOptions(), path);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("world size 4"), r.error().message.c_str());
    QVERIFY(!std::filesystem::exists(path));
  }

  void sameSeedGivesTheSameLookupsAndUniqueRows() {
    const auto model = smallModel();
    const auto plan = handPlan(model);
    QTemporaryDir dir;
    const std::filesystem::path path = (dir.path() + "/runs.sqlite").toStdString();
    auto a = profiler::runEmulate(model, fourGpus(), plan, quickOptions(), path);
    auto b = profiler::runEmulate(model, fourGpus(), plan, quickOptions(), path);
    QVERIFY(a.ok() && b.ok());
    const StoredRun ra = readRun(path, a->run), rb = readRun(path, b->run);
    QCOMPARE(ra.tables.size(), rb.tables.size());
    for (std::size_t i = 0; i < ra.tables.size(); ++i) {
      QCOMPARE(ra.tables[i].lookups, rb.tables[i].lookups);
      QCOMPARE(ra.tables[i].unique_rows, rb.tables[i].unique_rows);
    }
  }
};

QTEST_GUILESS_MAIN(TestEmulate)
#include "test_emulate.moc"
