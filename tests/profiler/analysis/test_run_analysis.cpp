// The analysis of an engine run (docs/analysis.md): per-rank means, waits per
// collective call, imbalance, stragglers, predicted vs measured, per-table
// totals, flags for runs that are not complete or ran capped shards. Runs are
// written here directly with RunWriter, following docs/formats/engine-trace.md.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"

#include "cpu_cluster.h"

using namespace shardscope;
namespace st = core::store;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kUs = 1'000;

core::ModelSpec twoTables() {
  core::ModelSpec m;
  m.name = "two tables";
  core::TableSpec a;
  a.name = "a";
  a.rows = 1000;
  a.dim = 64;
  a.pooling.mean = 2;
  core::TableSpec b;
  b.name = "b";
  b.rows = 2000;
  b.dim = 32;
  b.pooling.mean = 1;
  m.tables = {a, b};
  m.batch_size_per_gpu = 16;
  m.dense.parameters = 1000;
  m.dense.flops_per_sample = 1000;
  return m;
}

using test::cpu4;
using test::h100ImportConfig;
using test::h100Ranks4;

// M = 2, R = 2, strided: groups [0,2] and [1,3]; table a on group rank 0, b on 1.
core::ShardPlan plan2x2() {
  core::ShardPlan p;
  p.model = "two tables";
  p.world_size = 4;
  p.gpus_per_node = 4;
  p.sharding_group_size = 2;
  p.replicas = 2;
  p.layout = core::RankLayout::Strided;
  p.sharding_groups = core::shardingGroups(4, 2, core::RankLayout::Strided);
  p.replica_groups = core::replicaGroups(4, 2, core::RankLayout::Strided);
  p.tables = {{"a", 1000, 64, core::ShardingType::TableWise, {{0, 0, 1000, 0, 64}}},
              {"b", 2000, 32, core::ShardingType::TableWise, {{1, 0, 2000, 0, 32}}}};
  p.predicted.step_ms = 3.0;
  p.predicted.ranks = {{0, 1.0, 0.1, 1000}, {1, 2.0, 0.1, 1000}};
  p.provenance.tool = "test";
  p.provenance.created = "2026-01-01T00:00:00Z";
  return p;
}

struct RankTimes {
  int rank;
  std::int64_t fwd_ns, bwd_ns;
};

struct Fixture {
  QTemporaryDir dir;
  std::filesystem::path path;
  Fixture() : path(std::filesystem::path(dir.path().toStdString()) / "runs.db") {}
};

st::RunHeader header(const nlohmann::json& config) {
  st::RunHeader h;
  h.kind = st::RunKind::Mpi;
  h.label = "mpi two tables M=2 R=2";
  h.model_json = core::toJson(twoTables()).dump();
  h.cluster_json = core::toJson(cpu4()).dump();
  h.plan_json = core::toJson(plan2x2()).dump();
  h.config_json = config.dump();
  return h;
}

nlohmann::json config() {
  return {{"schema", "shardscope.engine-run/1"},
          {"mode", "mpi"},
          {"steps", 2},
          {"batch_size_per_gpu", 16},
          {"ranks_measured", {0, 1, 2, 3}},
          {"capped", nlohmann::json::array()}};
}

// Two steps; compute per step: rank 0, 1, 2: 2 ms, rank 3: 4 ms (the straggler).
// Collectives per step: a2a_ids once, a2a_pooled twice (ranks 0 and 2 only), dense_allreduce once.
void writeRun(const std::filesystem::path& path, const nlohmann::json& cfg, bool spans, bool finish = true) {
  auto w = st::RunWriter::begin(path, header(cfg));
  if (!w) qFatal("%s", w.error().message.c_str());
  auto id = [&](const char* s) { return w->intern(s).value(); };
  const std::vector<RankTimes> times = {
      {0, 1 * kMs, 1 * kMs}, {1, 1 * kMs, 1 * kMs}, {2, 1 * kMs, 1 * kMs}, {3, 2 * kMs, 2 * kMs}};
  const std::map<int, std::int64_t> ids_dur = {{0, 100 * kUs}, {2, 300 * kUs}, {1, 500 * kUs}, {3, 200 * kUs}};
  const std::map<int, std::vector<std::int64_t>> pooled_dur = {{0, {100 * kUs, 400 * kUs}},
                                                               {2, {150 * kUs, 300 * kUs}}};
  const auto plan = plan2x2();
  for (const auto& r : times) {
    const int g = r.rank % 2, gr = r.rank / 2;
    QVERIFY(w->addRank({r.rank, "host", -1, g, gr}).ok());
    for (std::int64_t step = 0; step < 2; ++step) {
      const std::int64_t t0 = step * 10 * kMs;  // steps follow each other
      st::StepSummary s;
      s.step = step;
      s.rank = r.rank;
      s.emb_fwd_ns = r.fwd_ns;
      s.emb_bwd_ns = r.bwd_ns;
      s.dense_ns = 1 * kMs;
      s.comm_ns = 2 * kMs;
      s.total_ns = 10 * kMs;
      QVERIFY(w->addStepSummary(s).ok());
      if (!spans) continue;
      const char* table = gr == 0 ? "a" : "b";
      auto span = [&](const char* kind, const char* name, int stream, std::int64_t start, std::int64_t dur,
                      const char* tbl) {
        st::Span sp;
        sp.rank = r.rank;
        sp.stream = stream;
        sp.kind = id(kind);
        sp.name = id(name);
        sp.start_ns = start;
        sp.end_ns = start + dur;
        sp.step = step;
        sp.table = tbl ? id(tbl) : st::kNoString;
        QVERIFY(w->addSpan(sp).ok());
      };
      span("step", "step", 0, t0, 10 * kMs, nullptr);
      span("emb_fwd", table, 0, t0, r.fwd_ns, table);
      span("emb_bwd", table, 0, t0 + 5 * kMs, r.bwd_ns, table);
      span("a2a_ids", "all_to_all", 1, t0, ids_dur.at(r.rank), nullptr);
      if (pooled_dur.contains(r.rank)) {
        span("a2a_pooled", "all_to_all", 1, t0 + 1 * kMs, pooled_dur.at(r.rank)[0], nullptr);
        span("a2a_pooled", "all_to_all", 1, t0 + 2 * kMs, pooled_dur.at(r.rank)[1], nullptr);
      }
      span("dense_allreduce", "all_reduce", 1, t0 + 8 * kMs, (r.rank + 1) * 10 * kUs, nullptr);
    }
    const char* table = r.rank / 2 == 0 ? "a" : "b";
    QVERIFY(w->addTableStat({r.rank, id(table), 2 * 64, 2 * 50, r.fwd_ns * 2 + r.bwd_ns * 2}).ok());
  }
  if (finish)
    QVERIFY(w->finish().ok());
  else
    QVERIFY(w->fail("rank 3 died").ok());
}

const profiler::RankAnalysis& rankOf(const profiler::RunAnalysis& a, int rank) {
  for (const auto& r : a.ranks)
    if (r.rank == rank) return r;
  qFatal("rank %d not in the analysis", rank);
}

double waitOf(const profiler::RankAnalysis& r, const std::string& kind) {
  for (const auto& c : r.comm)
    if (c.kind == kind) return c.wait_ms;
  return -1.0;
}

profiler::RunAnalysis analyse(const std::filesystem::path& path, st::RunId id,
                              const profiler::AnalysisOptions& options = {}) {
  auto store = st::openStore(path);
  if (!store) qFatal("%s", store.error().message.c_str());
  auto a = profiler::analyzeRun(*store, id, options);
  if (!a) qFatal("%s", a.error().message.c_str());
  return std::move(a).value();
}

// One all-reduce call of an imported run: its rank, step, process group,
// sequence number (-1: none) and when it ran, in ms.
struct ImportedCall {
  int rank;
  std::int64_t step;
  std::string process_group;
  std::int64_t seq;
  double from_ms, to_ms;
};

// An imported two-rank run of `steps` steps holding `calls` (a span and a
// collective row each, 1 MiB all-reduces of ranks "0,1").
void writeImportedCalls(const std::string& path, std::int64_t steps, const std::vector<ImportedCall>& calls) {
  st::RunHeader h;
  h.kind = st::RunKind::ImportKineto;
  auto w = st::RunWriter::begin(path, h);
  QVERIFY(w.ok());
  const auto kind = w->intern("dense_allreduce").value(), op = w->intern("all_reduce").value();
  const auto ranks = w->intern("0,1").value();
  for (int rank = 0; rank < 2; ++rank) {
    QVERIFY(w->addRank({rank, "", rank, 0, 0}).ok());
    for (std::int64_t step = 0; step < steps; ++step)
      QVERIFY(w->addStepSummary({step, rank, kMs, kMs, 0, 0, 0, 10 * kMs}).ok());
  }
  for (const auto& c : calls) {
    const auto from = static_cast<std::int64_t>(c.from_ms * kMs), to = static_cast<std::int64_t>(c.to_ms * kMs);
    st::Span sp;
    sp.rank = c.rank;
    sp.stream = 7;
    sp.kind = kind;
    sp.name = kind;
    sp.step = c.step;
    sp.start_ns = from;
    sp.end_ns = to;
    QVERIFY(w->addSpan(sp).ok());
    st::Collective row{c.rank, c.step, op, ranks, st::kNoString, 1 << 20, 1, from, to};
    row.process_group = w->intern(c.process_group).value();
    row.seq = c.seq;
    QVERIFY(w->addCollective(row).ok());
  }
  QVERIFY(w->finish().ok());
}

}  // namespace

class TestRunAnalysis : public QObject {
  Q_OBJECT
 private slots:
  void perRankMeansComeFromStepSummaries() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(a.steps, std::int64_t{2});
    QCOMPARE(a.ranks.size(), std::size_t{4});
    QCOMPARE(a.mode, std::string("mpi"));
    QCOMPARE(rankOf(a, 3).emb_fwd_ms, 2.0);
    QCOMPARE(rankOf(a, 3).compute_ms, 4.0);
    QCOMPARE(rankOf(a, 0).compute_ms, 2.0);
    QCOMPARE(rankOf(a, 0).dense_ms, 1.0);
    QCOMPARE(rankOf(a, 0).step_ms, 10.0);
    QCOMPARE(rankOf(a, 2).group_rank, 1);
    QCOMPARE(rankOf(a, 2).sharding_group, 0);
    QVERIFY(a.warnings.empty());
  }

  void waitIsDurationMinusShortestOfTheSameCallInItsGroup() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    // a2a_ids: group 0 = ranks 0 (100 us), 2 (300 us); group 1 = ranks 1 (500 us), 3 (200 us).
    QVERIFY(std::abs(waitOf(rankOf(a, 0), "a2a_ids") - 0.0) < 1e-12);
    QVERIFY(std::abs(waitOf(rankOf(a, 2), "a2a_ids") - 0.2) < 1e-12);
    QVERIFY(std::abs(waitOf(rankOf(a, 1), "a2a_ids") - 0.3) < 1e-12);
    QVERIFY(std::abs(waitOf(rankOf(a, 3), "a2a_ids") - 0.0) < 1e-12);
    // Two a2a_pooled calls per step, matched call by call: rank 0 waits 0 + 100 us, rank 2 50 + 0 us.
    QVERIFY(std::abs(waitOf(rankOf(a, 0), "a2a_pooled") - 0.1) < 1e-12);
    QVERIFY(std::abs(waitOf(rankOf(a, 2), "a2a_pooled") - 0.05) < 1e-12);
    QCOMPARE(waitOf(rankOf(a, 1), "a2a_pooled"), -1.0);
    // dense_allreduce spans all four ranks: 10, 20, 30, 40 us.
    QVERIFY(std::abs(waitOf(rankOf(a, 3), "dense_allreduce") - 0.03) < 1e-12);
    QVERIFY(std::abs(rankOf(a, 2).wait_ms - (0.2 + 0.05 + 0.02)) < 1e-12);
  }

  void imbalanceIsMaxOverMeanOverallAndPerGroup() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(a.overall.max_over_mean, 4.0 / 2.5);
    QCOMPARE(a.overall.slowest_rank, 3);
    QCOMPARE(a.groups.size(), std::size_t{2});
    QCOMPARE(a.groups[0].max_over_mean, 1.0);
    QCOMPARE(a.groups[1].max_over_mean, 4.0 / 3.0);
    QCOMPARE(a.groups[1].slowest_rank, 3);
  }

  void stragglerIsAboveMinOfTwoSigmaAndTenPercentOverMedian() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(a.compute_median_ms, 2.0);
    QCOMPARE(a.straggler_threshold_ms, 2.2);  // 1.10 x median < mean + 2 sd = 4.23
    QCOMPARE(a.stragglers, std::vector<int>{3});
    QVERIFY(rankOf(a, 3).straggler);
    QVERIFY(!rankOf(a, 0).straggler);
  }

  void predictedComputeComesFromThePlanAndTheCostModel() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(rankOf(a, 0).predicted_plan_ms, 1.0);
    QCOMPARE(rankOf(a, 3).predicted_plan_ms, 2.0);
    // Mean |measured / predicted - 1|, as the err column: measured 2, 2, 2, 4 ms against 1, 1, 2, 2.
    QCOMPARE(a.plan_mape, (1.0 + 1.0 + 0.0 + 1.0) / 4.0);
    auto model = profiler::predictedComputeMs(twoTables(), cpu4(), plan2x2(), nullptr);
    QVERIFY(model.ok());
    QCOMPARE(model->size(), std::size_t{2});
    QVERIFY((*model)[0] > 0);
    QCOMPARE(rankOf(a, 1).predicted_model_ms, (*model)[0]);
    QCOMPARE(rankOf(a, 3).predicted_model_ms, (*model)[1]);
    QCOMPARE(a.model_constants, std::string("default constants"));
  }

  void calibrationChangesTheRepricedPrediction() {
    Fixture f;
    writeRun(f.path, config(), true);
    core::Calibration cal;
    cal.source = "test";
    cal.coefficients["embedding_bandwidth_gbps"] = {1.0, 0.0};  // 10x slower than the cluster's 10 GB/s
    profiler::AnalysisOptions o;
    o.calibration = &cal;
    const auto plain = analyse(f.path, st::RunId{1});
    const auto calibrated = analyse(f.path, st::RunId{1}, o);
    QVERIFY(rankOf(calibrated, 0).predicted_model_ms > 5.0 * rankOf(plain, 0).predicted_model_ms);
    QCOMPARE(calibrated.model_constants, std::string("calibration test"));
  }

  void tablesArePerStepSummedOverRanksHeaviestFirst() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(a.tables.size(), std::size_t{2});
    QCOMPARE(a.tables[0].table, std::string("b"));  // ranks 2 (2 ms) + 3 (4 ms)
    QCOMPARE(a.tables[0].ranks, 2);
    QCOMPARE(a.tables[0].ms_per_step, 6.0);
    QCOMPARE(a.tables[0].lookups_per_step, 128.0);
    QCOMPARE(a.tables[0].unique_rows_per_step, 100.0);
    QCOMPARE(a.tables[1].ms_per_step, 4.0);
  }

  void runThatIsNotCompleteIsAnalysedAndFlagged() {
    Fixture f;
    writeRun(f.path, config(), true, false);
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(a.ranks.size(), std::size_t{4});
    QVERIFY(!a.run.isComplete());
    QCOMPARE(a.warnings.size(), std::size_t{1});
    QVERIFY(a.warnings[0].find("failed") != std::string::npos);
    QVERIFY(a.warnings[0].find("rank 3 died") != std::string::npos);
    QVERIFY(profiler::formatReport(a).find("warning: run is failed") != std::string::npos);
  }

  void cappedShardsGiveAWarning() {
    Fixture f;
    auto cfg = config();
    cfg["capped"] = {{{"table", "b"}, {"group_rank", 1}, {"rows", 2000}, {"physical_rows", 500}}};
    writeRun(f.path, cfg, true);
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(a.capped.size(), std::size_t{1});
    QCOMPARE(a.capped[0].physical_rows, std::uint64_t{500});
    QCOMPARE(a.warnings.size(), std::size_t{1});
    QVERIFY(a.warnings[0].find("b on group rank 1 (500 of 2000 rows)") != std::string::npos);
  }

  void runWithoutSpansHasNoCollectiveBreakdown() {
    Fixture f;
    writeRun(f.path, config(), false);
    const auto a = analyse(f.path, st::RunId{1});
    QVERIFY(!a.has_spans);
    QVERIFY(rankOf(a, 2).comm.empty());
    QCOMPARE(rankOf(a, 2).comm_ms, 2.0);
    QCOMPARE(rankOf(a, 3).compute_ms, 4.0);
    QCOMPARE(a.warnings.size(), std::size_t{1});
  }

  void timelineGivesBusyIdleAndOverlapPerStep() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    // Rank 0 per step: compute 1 ms fwd + 1 ms bwd; collectives a2a_ids 0.1 ms
    // (inside the forward), a2a_pooled 0.1 + 0.4 ms, dense_allreduce 0.01 ms
    // at 8 ms. Device windows: step 0 until step 1's first work (10 ms), the
    // last step until its last work ends (8.01 ms).
    const auto& r0 = rankOf(a, 0);
    QVERIFY(std::abs(r0.window_ms - 9.005) < 1e-9);
    QVERIFY(std::abs(r0.comm_union_ms - 0.61) < 1e-9);
    QVERIFY(std::abs(r0.compute_union_ms - 2.0) < 1e-9);
    QVERIFY(std::abs(r0.overlap_ms - 0.1) < 1e-9);
    QVERIFY(std::abs(r0.busy_ms - 2.51) < 1e-9);
    QVERIFY(std::abs(r0.idle_ms - 6.495) < 1e-9);
    // Rank 1: a2a_ids 0.5 ms, all of it inside the 1 ms forward; allreduce 0.02 ms.
    const auto& r1 = rankOf(a, 1);
    QVERIFY(std::abs(r1.comm_union_ms - 0.52) < 1e-9);
    QVERIFY(std::abs(r1.overlap_ms - 0.5) < 1e-9);
    QVERIFY(std::abs(r1.busy_ms - 2.02) < 1e-9);
    const std::string text = profiler::formatReport(a);
    QVERIFY(text.find("Device timeline, ms per step") != std::string::npos);
    const auto j = profiler::reportJson(a);
    QVERIFY(std::abs(j["ranks"][0]["idle_ms"].get<double>() - 6.495) < 1e-9);
    // Without spans there is no timeline.
    Fixture g;
    writeRun(g.path, config(), false);
    const auto b = analyse(g.path, st::RunId{1});
    QCOMPARE(rankOf(b, 0).busy_ms, -1.0);
    QVERIFY(profiler::formatReport(b).find("Timeline") == std::string::npos);
    QVERIFY(profiler::reportJson(b)["ranks"][0]["idle_ms"].is_null());
  }

  void spansReadInSmallWindowsGiveTheSameAnalysis() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto whole = analyse(f.path, st::RunId{1});
    profiler::AnalysisOptions o;
    o.spans_per_window = 3;  // many windows per rank; spans cross their edges
    const auto windowed = analyse(f.path, st::RunId{1}, o);
    QCOMPARE(profiler::reportJson(windowed).dump(), profiler::reportJson(whole).dump());
    QVERIFY(rankOf(windowed, 0).busy_ms > 0);
  }

  void busBandwidthPerOpAndMessageSize() {
    QCOMPARE(profiler::busBandwidthFactor("all_reduce", 4), 1.5);
    QCOMPARE(profiler::busBandwidthFactor("all_to_all", 4), 0.75);
    QCOMPARE(profiler::busBandwidthFactor("all_gather", 2), 0.5);
    QCOMPARE(profiler::busBandwidthFactor("send_recv", 8), 1.0);
    QCOMPARE(profiler::busBandwidthFactor("broadcast", 8), 1.0);
    QCOMPARE(profiler::busBandwidthFactor("reduce", 8), 1.0);
    QCOMPARE(profiler::busBandwidthFactor("reduce_scatter", 8), 0.875);
    QCOMPARE(profiler::busBandwidthFactor("all_reduce", 1), 1.0);
    QCOMPARE(profiler::collectiveSizeBytes("all_to_all", 2048), 1024.0);
    QCOMPARE(profiler::collectiveSizeBytes("all_reduce", 2048), 2048.0);

    Fixture f;
    {
      auto w = st::RunWriter::begin(f.path, header(config()));
      QVERIFY(w.ok());
      const auto ar = w->intern("all_reduce").value(), a2a = w->intern("all_to_all").value();
      const auto world = w->intern("0,1,2,3").value(), g0 = w->intern("0,2").value();
      for (int rank = 0; rank < 4; ++rank) {
        QVERIFY(w->addRank({rank, "host", -1, rank % 2, rank / 2}).ok());
        QVERIFY(w->addStepSummary({0, rank, 1 * kMs, 1 * kMs, 0, 0, 0, 10 * kMs}).ok());
        // One 4 MiB all-reduce over the world: rank r takes (1 + r) x 1 ms; the call's transfer is 1 ms.
        QVERIFY(w->addCollective({rank, 0, ar, world, st::kNoString, 4 << 20, 3, 0, (1 + rank) * kMs}).ok());
        // Group 0's ranks: two all-to-alls, 64 KiB sent + received (32 KiB size), 0.1 and 0.2 ms.
        if (rank % 2 == 0) {
          QVERIFY(w->addCollective({rank, 0, a2a, g0, st::kNoString, 64 << 10, 1, 0, 100 * kUs}).ok());
          QVERIFY(w->addCollective({rank, 0, a2a, g0, st::kNoString, 64 << 10, 1, kMs, kMs + 200 * kUs}).ok());
          // Step 1: an uneven all-to-allv, rank 0 moves 2 MiB, rank 2 6 MiB (1 and 3 MiB sizes):
          // one call, in the 2-4 MiB bin, with both ranks' durations (1 and 3 ms).
          QVERIFY(w->addCollective({rank, 1, a2a, g0, st::kNoString, rank == 0 ? 2 << 20 : 6 << 20, 1, 0,
                                    rank == 0 ? kMs : 3 * kMs})
                      .ok());
        }
      }
      QVERIFY(w->finish().ok());
    }
    const auto a = analyse(f.path, st::RunId{1});
    QCOMPARE(a.bandwidth.size(), std::size_t{3});
    const auto& uneven = a.bandwidth[2];
    QCOMPARE(uneven.op, std::string("all_to_all"));
    QCOMPARE(uneven.size_lo, double(2 << 20));
    QCOMPARE(uneven.calls, std::size_t{1});
    QCOMPARE(uneven.median_bytes, double(3 << 20));
    QCOMPARE(uneven.median_ms, 2.0);  // ranks took 1 and 3 ms
    QCOMPARE(uneven.median_transfer_ms, 1.0);
    const auto& ar = a.bandwidth[0];
    QCOMPARE(ar.op, std::string("all_reduce"));
    QCOMPARE(ar.group_size, 4);
    QCOMPARE(ar.calls, std::size_t{1});
    QCOMPARE(ar.size_lo, double(4 << 20));
    QCOMPARE(ar.median_transfer_ms, 1.0);
    QCOMPARE(ar.median_ms, 2.5);  // ranks took 1, 2, 3, 4 ms
    QVERIFY(std::abs(ar.algbw_gbps - (4 << 20) / 1e6) < 1e-9);
    QVERIFY(std::abs(ar.busbw_gbps - 1.5 * (4 << 20) / 1e6) < 1e-9);
    const auto& a2 = a.bandwidth[1];
    QCOMPARE(a2.op, std::string("all_to_all"));
    QCOMPARE(a2.group_size, 2);
    QCOMPARE(a2.calls, std::size_t{2});  // two calls, each seen on two ranks
    QCOMPARE(a2.median_bytes, double(32 << 10));
    QVERIFY(std::abs(a2.median_transfer_ms - 0.15) < 1e-9);
    // algbw per call: 32 KiB / 0.1 ms and / 0.2 ms; median of two = their mean.
    const double expect = 0.5 * ((32 << 10) / 1e5 + (32 << 10) / 2e5);
    QVERIFY(std::abs(a2.algbw_gbps - expect) < 1e-9);
    QVERIFY(std::abs(a2.busbw_gbps - 0.5 * expect) < 1e-9);
    QVERIFY(std::abs(a2.max_busbw_gbps - 0.5 * (32 << 10) / 1e5) < 1e-9);
    QVERIFY(profiler::formatReport(a).find("Collective bandwidth by message size") != std::string::npos);
    QCOMPARE(profiler::reportJson(a)["collective_bandwidth"].size(), std::size_t{3});
  }

  void importedRunTakesTheSuppliedPlan() {
    Fixture f;
    {
      st::RunHeader h;
      h.kind = st::RunKind::ImportKineto;
      h.label = "kineto rank0.json (+3)";
      h.config_json = h100ImportConfig(4);
      auto w = st::RunWriter::begin(f.path, h);
      QVERIFY(w.ok());
      for (int rank = 0; rank < 4; ++rank) {
        QVERIFY(w->addRank({rank, "", -1, 0, 0}).ok());
        QVERIFY(w->addStepSummary({5, rank, 1 * kMs, 2 * kMs, 0, 0, 0, 10 * kMs}).ok());
      }
      QVERIFY(w->finish().ok());
    }
    // Without a plan: one warning that says what to give, no per-field noise.
    const auto bare = analyse(f.path, st::RunId{1});
    auto count = [](const std::vector<std::string>& w, const char* what) {
      return std::count_if(w.begin(), w.end(), [&](const std::string& x) { return x.find(what) != std::string::npos; });
    };
    QCOMPARE(count(bare.warnings, "give --plan"), 1);
    QCOMPARE(count(bare.warnings, "is empty"), 0);
    QCOMPARE(count(bare.warnings, "no valid plan"), 0);
    QCOMPARE(rankOf(bare, 0).predicted_model_ms, -1.0);
    profiler::RunInputs in;
    in.model = twoTables();
    in.cluster = h100Ranks4();
    in.plan = plan2x2();
    profiler::AnalysisOptions o;
    o.supplied = &in;
    const auto a = analyse(f.path, st::RunId{1}, o);
    QCOMPARE(count(a.warnings, "plan"), 0);
    QCOMPARE(a.plan_summary, std::string("M=2 R=2 strided"));
    for (const auto& r : a.ranks) {
      // Groups from the plan, not the import's placeholder group 0.
      QCOMPARE(r.group_rank, r.rank / 2);
      QCOMPARE(r.sharding_group, r.rank % 2);
      QCOMPARE(r.replica_group, r.rank / 2);
      QVERIFY(r.predicted_model_ms > 0);
      QVERIFY(r.predicted_plan_ms > 0);
    }
    QVERIFY(a.model_mape >= 0);
    QCOMPARE(count(a.warnings, "the plan is for"), 0);
    // Two ranks of the trainer's four: said, since each group then has one measured rank.
    {
      st::RunHeader h;
      h.kind = st::RunKind::ImportKineto;
      h.config_json = h100ImportConfig(2);
      auto w = st::RunWriter::begin(f.path, h);
      QVERIFY(w.ok());
      for (int rank = 0; rank < 2; ++rank) {
        QVERIFY(w->addRank({rank, "", -1, 0, 0}).ok());
        QVERIFY(w->addStepSummary({5, rank, 1 * kMs, 2 * kMs, 0, 0, 0, 10 * kMs}).ok());
      }
      QVERIFY(w->finish().ok());
    }
    const auto part = analyse(f.path, st::RunId{2}, o);
    QCOMPARE(count(part.warnings, "the plan is for 4 ranks but the run has 2"), 1);
  }

  void runWithoutStepSummariesIsAnError() {
    Fixture f;
    st::RunHeader h;
    h.kind = st::RunKind::ImportKineto;
    auto w = st::RunWriter::begin(f.path, h);
    QVERIFY(w.ok());
    QVERIFY(w->finish().ok());
    auto store = st::openStore(f.path);
    QVERIFY(store.ok());
    auto a = profiler::analyzeRun(*store, st::RunId{1});
    QVERIFY(!a.ok());
    QVERIFY(a.error().message.find("has no step summaries: the trace has no profiler steps") != std::string::npos);
    QVERIFY(a.error().message.find("import-kineto") != std::string::npos);
    QVERIFY(!profiler::analyzeRun(*store, st::RunId{7}).ok());
  }

  void latestRunIsTheHighestIdWhateverItsStatus() {
    Fixture f;
    writeRun(f.path, config(), true);
    writeRun(f.path, config(), true, false);
    auto store = st::openStore(f.path);
    QVERIFY(store.ok());
    auto latest = profiler::latestRun(*store);
    QVERIFY(latest.ok());
    QVERIFY(*latest == st::RunId{2});
    Fixture empty;
    auto s2 = st::openStore(empty.path, st::OpenMode::Create);
    QVERIFY(s2.ok());
    auto none = profiler::latestRun(*s2);
    QVERIFY(!none.ok());
    QVERIFY(none.error().message.find("has no runs") != std::string::npos);
  }

  void reportTextAndJsonCarryEveryRank() {
    Fixture f;
    writeRun(f.path, config(), true);
    const auto a = analyse(f.path, st::RunId{1});
    const std::string text = profiler::formatReport(a);
    QVERIFY(text.find("<- straggler") != std::string::npos);
    QVERIFY(text.find("a2a_pooled") != std::string::npos);
    QVERIFY(text.find("overall 1.600") != std::string::npos);
    const auto j = profiler::reportJson(a);
    QCOMPARE(j["ranks"].size(), std::size_t{4});
    QCOMPARE(j["stragglers"]["ranks"][0].get<int>(), 3);
    QCOMPARE(j["run"]["status"].get<std::string>(), std::string("complete"));
    QVERIFY(j["prediction_mape"]["plan"].is_number());
    QCOMPARE(j["tables"][0]["table"].get<std::string>(), std::string("b"));
  }

  void inputsTolerateMissingAndMalformedParts() {
    st::RunRecord r;
    r.model_json = "{not json";
    r.config_json = R"({"batch_size_per_gpu": "many", "capped": 3})";
    const auto in = profiler::runInputs(r);
    QVERIFY(!in.model);
    QVERIFY(!in.plan);
    QVERIFY(in.problems.size() >= 3);  // model syntax, cluster and plan empty
    // Members of another type are passed over: the configuration says nothing of them.
    QCOMPARE(in.config.batch_size_per_gpu, 0u);
    QVERIFY(in.config.capped.empty());
  }
  void pipelinedStepsCountIdleInTheDevicesOwnWindow() {
    // The device still runs step 0's kernels while the host launches step 1:
    // each launch step's work spills into the next, so "step - busy" per host
    // step says 0 idle, while the device waits 0.5 ms before step 1's kernels.
    Fixture f;
    {
      st::RunHeader h;
      h.kind = st::RunKind::ImportKineto;
      auto w = st::RunWriter::begin(f.path, h);
      QVERIFY(w.ok());
      const auto kernel = w->intern("kernel").value(), memcpy = w->intern("memcpy").value(),
                 a2a = w->intern("a2a_pooled").value(), step = w->intern("step").value();
      QVERIFY(w->addRank({0, "", 0, 0, 0}).ok());
      auto span = [&](st::StringId kind, int stream, std::int64_t step_of, double from_ms, double to_ms) {
        st::Span sp;
        sp.stream = stream;
        sp.kind = kind;
        sp.name = kind;
        sp.step = step_of;
        sp.start_ns = static_cast<std::int64_t>(from_ms * kMs);
        sp.end_ns = static_cast<std::int64_t>(to_ms * kMs);
        QVERIFY(w->addSpan(sp).ok());
      };
      span(step, 100000, 0, 0, 10);
      span(step, 100000, 1, 10, 20);
      span(kernel, 7, 0, 1, 6);
      span(kernel, 7, 0, 7, 12);  // launched in step 0, runs in step 1's host window
      span(kernel, 7, 1, 12.5, 17.5);
      span(kernel, 7, 1, 18, 23);
      // A collective while only a copy runs: not hidden behind compute.
      span(memcpy, 8, 0, 6, 7);
      span(a2a, 9, 0, 6, 7);
      for (std::int64_t s2 = 0; s2 < 2; ++s2) QVERIFY(w->addStepSummary({s2, 0, 0, 0, 0, 0, 0, 10 * kMs}).ok());
      QVERIFY(w->finish().ok());
    }
    const auto a = analyse(f.path, st::RunId{1});
    const auto& r = rankOf(a, 0);
    // Windows [1, 12.5) and [12.5, 23]: 22 ms over two steps; busy 5 + 1 + 5 + 5 + 5 = 21 ms.
    QVERIFY(std::abs(r.window_ms - 11.0) < 1e-9);
    QVERIFY(std::abs(r.busy_ms - 10.5) < 1e-9);
    QVERIFY(std::abs(r.idle_ms - 0.5) < 1e-9);
    QVERIFY(std::abs(r.compute_union_ms - 10.0) < 1e-9);
    QVERIFY(std::abs(r.comm_union_ms - 0.5) < 1e-9);
    QCOMPARE(r.overlap_ms, 0.0);  // the memcpy is not compute
    QVERIFY(profiler::formatReport(a).find("  0     11.000  10.500  0.500     4.5") != std::string::npos);
  }

  void importedWaitsPairCallsByProcessGroupAndSequence() {
    // Two process groups of the same two ranks; rank 1 runs group B's call
    // first, and records A's call in the next step. Pairing by position in
    // the step would compare A's call with B's.
    Fixture f;
    writeImportedCalls(f.path, 2,
                       {{0, 0, "1", 1, 1, 2},
                        {0, 0, "2", 7, 3, 8},  // A 1 ms, B 5 ms
                        {1, 0, "2", 7, 1, 3},
                        {1, 1, "1", 1, 4, 7}});  // B 2 ms, A 3 ms
    const auto a = analyse(f.path, st::RunId{1});
    QVERIFY(std::abs(rankOf(a, 0).wait_ms - 3.0 / 2) < 1e-9);  // B: 5 - 2, over two steps
    QVERIFY(std::abs(rankOf(a, 1).wait_ms - 2.0 / 2) < 1e-9);  // A: 3 - 1
  }

  void importedWaitsWithoutSequenceNeverPairAcrossProcessGroups() {
    // No sequence numbers: calls pair by order in the step within their own
    // process group; a call that one rank alone recorded has an unknown wait,
    // never one measured against another group's call.
    Fixture f;
    writeImportedCalls(f.path, 1,
                       {{0, 0, "1", -1, 1, 2},    // 1 ms, only rank 0 recorded it
                        {0, 0, "2", -1, 3, 8},    // 5 ms
                        {1, 0, "2", -1, 1, 3}});  // 2 ms: rank 1's first call, but B's
    const auto a = analyse(f.path, st::RunId{1});
    QVERIFY(std::abs(rankOf(a, 0).wait_ms - 3.0) < 1e-9);  // B: 5 - 2; A's wait is unknown
    QVERIFY(std::abs(rankOf(a, 1).wait_ms) < 1e-9);        // not 2 - 1 against A's call
  }

  void oneImportedRankHasUnknownWaits() {
    Fixture f;
    {
      st::RunHeader h;
      h.kind = st::RunKind::ImportKineto;
      auto w = st::RunWriter::begin(f.path, h);
      QVERIFY(w.ok());
      const auto kind = w->intern("a2a_ids").value(), op = w->intern("all_to_all").value(),
                 group = w->intern("0,1").value();
      QVERIFY(w->addRank({0, "", 0, 0, 0}).ok());
      QVERIFY(w->addStepSummary({0, 0, kMs, kMs, 0, kMs, 0, 10 * kMs}).ok());
      st::Span sp;
      sp.kind = kind;
      sp.name = kind;
      sp.step = 0;
      sp.start_ns = kMs;
      sp.end_ns = 2 * kMs;
      QVERIFY(w->addSpan(sp).ok());
      QVERIFY(w->addCollective({0, 0, op, group, st::kNoString, 1 << 20, 1, kMs, 2 * kMs}).ok());
      QVERIFY(w->finish().ok());
    }
    const auto a = analyse(f.path, st::RunId{1});
    QVERIFY(rankOf(a, 0).wait_ms < 0);
    QVERIFY(waitOf(rankOf(a, 0), "a2a_ids") < 0);
    const auto j = profiler::reportJson(a);
    QVERIFY(j["ranks"][0]["wait_ms"].is_null());
    QVERIFY(j["ranks"][0]["comm"][0]["wait_ms"].is_null());
    const std::string text = profiler::formatReport(a);
    QVERIFY2(text.find("  0       1.000     ?") != std::string::npos, text.c_str());
  }
};

QTEST_GUILESS_MAIN(TestRunAnalysis)
#include "test_run_analysis.moc"
