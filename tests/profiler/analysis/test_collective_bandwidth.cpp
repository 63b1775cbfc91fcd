// Bus bandwidth vs message size per collective call against the planner's
// alpha-beta model (collective_bandwidth.h, docs/analysis.md "Collectives
// page"): calls of generated runs compared with a brute-force computation
// from the rows the generator wrote per call, the group of each call (by
// process group name, by rank list against the plan or the ranks table, by
// size), the model curves against the cost model's own prices, the outliers,
// and the errors that say why a run has nothing to draw.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "shardscope/core/json_io.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/planner/cost_model.h"
#include "shardscope/planner/grid.h"
#include "shardscope/profiler/analysis/collective_bandwidth.h"

using namespace shardscope;
namespace st = core::store;
using profiler::CollectiveGroup;

namespace {

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kMs = 1'000'000;

// Two nodes of 4 GPUs: strided M=4 sharding groups span both nodes (a third
// of a member's peers on its node), replica pairs stay in a node, the world does not.
// A run on the cluster's GPUs: its calls are compared with the model in GB/s.
constexpr char kOnH100[] = R"({"mode": "mpi", "device": "cuda", "gpus": ["NVIDIA H100 80GB HBM3"]})";

core::ClusterSpec twoNodes() {
  core::ClusterSpec c;
  c.name = "two nodes";
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.gpu = {"H100 SXM 80GB", 80ull << 30, 2000.0, 100.0};
  c.intra_node = {100.0, 5.0};
  c.inter_node = {10.0, 20.0};
  return c;
}

core::ModelSpec oneTable() {
  core::ModelSpec m;
  m.name = "one table";
  core::TableSpec t;
  t.name = "a";
  t.rows = 1000;
  t.dim = 64;
  t.pooling.mean = 2;
  m.tables = {t};
  m.batch_size_per_gpu = 16;
  m.dense.parameters = 250'000;  // a 1e6-byte dense all-reduce
  m.dense.flops_per_sample = 1000;
  return m;
}

core::ShardPlan plan8(std::uint32_t m = 4) {
  core::ShardPlan p;
  p.model = "one table";
  p.world_size = 8;
  p.gpus_per_node = 4;
  p.sharding_group_size = m;
  p.replicas = 8 / m;
  p.layout = core::RankLayout::Strided;
  p.sharding_groups = core::shardingGroups(8, m, p.layout);
  p.replica_groups = core::replicaGroups(8, m, p.layout);
  p.tables = {{"a", 1000, 64, core::ShardingType::TableWise, {{0, 0, 1000, 0, 64}}}};
  p.provenance.tool = "test";
  p.provenance.created = "2026-01-01T00:00:00Z";
  return p;
}

std::string joined(const std::vector<std::uint32_t>& ranks) {
  std::string s;
  for (auto r : ranks) {
    if (!s.empty()) s += ',';
    s += std::to_string(r);
  }
  return s;
}

// A collective row with texts instead of string ids.
struct Row {
  int rank = 0;
  std::int64_t step = -1;
  std::string op, group, process_group;
  std::int64_t bytes = 0;
  int peers = 0;
  std::int64_t start = 0, end = 0;
  std::int64_t seq = -1;
};

// One call as the generator made it: what the analysis must find.
struct Expected {
  std::string op;
  CollectiveGroup group = CollectiveGroup::Other;
  int n = 0;
  std::int64_t step = -1;
  double size = 0.0;
  std::int64_t transfer_ns = 0;
  int slowest = -1;
  std::vector<int> members;
};

st::RunId writeRun(const std::filesystem::path& path, const st::RunHeader& h, const std::vector<Row>& rows,
                   const std::vector<st::RankInfo>& ranks) {
  auto w = st::RunWriter::begin(path, h);
  if (!w) qFatal("%s", w.error().message.c_str());
  auto id = [&](const std::string& s) { return s.empty() ? st::kNoString : w->intern(s).value(); };
  for (const auto& r : ranks)
    if (!w->addRank(r).ok()) qFatal("rank");
  for (const auto& r : rows) {
    st::Collective c;
    c.rank = r.rank;
    c.step = r.step;
    c.op = id(r.op);
    c.group = id(r.group);
    c.process_group = id(r.process_group);
    c.bytes = r.bytes;
    c.peers = r.peers;
    c.start_ns = r.start;
    c.end_ns = r.end;
    c.seq = r.seq;
    if (auto s = w->addCollective(c); !s) qFatal("%s", s.error().message.c_str());
  }
  const st::RunId run = w->run();
  if (!w->finish().ok()) qFatal("finish");
  return run;
}

st::RunHeader header(st::RunKind kind, bool with_plan, std::uint32_t m = 4) {
  st::RunHeader h;
  h.kind = kind;
  h.label = "collectives";
  h.model_json = core::toJson(oneTable()).dump();
  h.cluster_json = core::toJson(twoNodes()).dump();
  if (with_plan) h.plan_json = core::toJson(plan8(m)).dump();
  h.config_json = kOnH100;
  return h;
}

// Writes one call: every member ends at the same time, the one that arrives
// last runs `transfer_ns`, the others wait 3 us more per place before it.
struct CallWriter {
  std::vector<Row> rows;
  std::vector<Expected> expected;
  std::int64_t cursor = kMs;

  void add(const std::string& op, CollectiveGroup group, const std::vector<std::uint32_t>& ranks,
           std::int64_t store_bytes, std::int64_t transfer_ns, std::int64_t step, std::size_t last) {
    Expected e{op, group, static_cast<int>(ranks.size()), step, 0.0, transfer_ns, static_cast<int>(ranks[last]), {}};
    e.size = op == "all_to_all" ? static_cast<double>(store_bytes) / 2.0 : static_cast<double>(store_bytes);
    const std::int64_t end = cursor + transfer_ns + static_cast<std::int64_t>(ranks.size()) * 3 * kUs;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const std::int64_t wait =
          i == last ? 0 : static_cast<std::int64_t>(1 + (i + ranks.size() - last) % ranks.size()) * 3 * kUs;
      rows.push_back({static_cast<int>(ranks[i]), step, op, joined(ranks), "", store_bytes,
                      static_cast<int>(ranks.size()) - 1, end - transfer_ns - wait, end});
      e.members.push_back(static_cast<int>(ranks[i]));
    }
    std::sort(e.members.begin(), e.members.end());
    expected.push_back(std::move(e));
    cursor = end + 10 * kUs;
  }
};

// The planner's prices, from the cost model's own functions (not the
// analysis's): what a call of `op` in `group` of `size` NCCL-tests bytes costs.
struct PlannerPrices {
  planner::Grid grid;
  core::ModelSpec model = oneTable();
  core::ClusterSpec cluster = twoNodes();
  planner::CostConstants k;
  planner::CostModel cm;
  planner::GridCosts gc;
  explicit PlannerPrices(const core::Calibration* cal = nullptr, std::uint32_t m = 4)
      : grid(planner::makeGrid(8, 4, m, core::RankLayout::Strided)),
        k(planner::CostConstants::from(twoNodes(), cal)),
        cm(oneTable(), twoNodes(), k),
        gc(cm.gridCosts(grid)) {}

  // The sizes the generator uses where the cost model prices one call of a given size.
  [[nodiscard]] double dpBytes() const { return 1000.0 * 64.0 * 4.0; }  // the table's gradients
  [[nodiscard]] double denseBytes() const { return 250'000.0 * 4.0; }   // the dense parameters
  [[nodiscard]] double ms(const std::string& op, CollectiveGroup g, double size) const {
    if (op == "all_to_all") return 2.0 * size * gc.seconds_per_byte_group * 1e3 + gc.a2a_latency_ms / 3.0;
    // The sync and the data-parallel all-reduce at this size: the algorithm chosen for it.
    const planner::CollectivePricer pricer = cm.collectives();
    if (g == CollectiveGroup::Replica)
      return pricer.allReduce(planner::shapeOf(grid.worstReplicaTopology(), grid.replicas), size).ms(size);
    if (g == CollectiveGroup::Sharding)
      return pricer.allReduce(planner::shapeOf(grid.worstShardingTopology(), grid.group_size), size).ms(size);
    // Dense: a model whose parameters are this all-reduce.
    core::ModelSpec dense = model;
    dense.dense.parameters = static_cast<std::uint64_t>(size / 4.0);
    return planner::CostModel(dense, cluster, k).gridCosts(grid).dense_allreduce_ms;
  }
  [[nodiscard]] int n(CollectiveGroup g) const {
    return g == CollectiveGroup::Sharding  ? static_cast<int>(grid.group_size)
           : g == CollectiveGroup::Replica ? static_cast<int>(grid.replicas)
                                           : static_cast<int>(grid.world_size);
  }
  [[nodiscard]] double busbw(const std::string& op, CollectiveGroup g, double size) const {
    return size / (ms(op, g, size) * 1e6) * profiler::busBandwidthFactor(op, n(g));
  }
};

// Two steps of an M=4 R=2 strided run on two nodes: per sharding group three
// all-to-alls and a data-parallel all-reduce, per replica pair a weight sync,
// one dense all-reduce. Each call runs `slow` times the planner's time (some
// of them far slower: the outliers).
CallWriter twoDimRun() {
  const PlannerPrices p;
  const auto sharding = core::shardingGroups(8, 4, core::RankLayout::Strided);
  const auto replica = core::replicaGroups(8, 4, core::RankLayout::Strided);
  std::vector<std::uint32_t> world(8);
  for (std::uint32_t r = 0; r < 8; ++r) world[r] = r;
  const double slow[] = {1.25, 1.6, 2.5, 1.1, 4.0, 1.4, 1.2};
  std::size_t k = 0;
  CallWriter w;
  auto call = [&](const std::string& op, CollectiveGroup g, const std::vector<std::uint32_t>& ranks,
                  std::int64_t store_bytes, std::int64_t step) {
    const double size = op == "all_to_all" ? static_cast<double>(store_bytes) / 2.0 : static_cast<double>(store_bytes);
    const double factor = slow[k % std::size(slow)];
    const auto transfer = static_cast<std::int64_t>(std::llround(p.ms(op, g, size) * 1e6 * factor));
    w.add(op, g, ranks, store_bytes, transfer, step, k % ranks.size());
    ++k;
  };
  for (std::int64_t step = 0; step < 2; ++step) {
    for (const auto& g : sharding) {
      call("all_to_all", CollectiveGroup::Sharding, g, 64 << 10, step);
      call("all_to_all", CollectiveGroup::Sharding, g, 2 << 20, step);
      call("all_to_all", CollectiveGroup::Sharding, g, 2 << 20, step);
      call("all_reduce", CollectiveGroup::Sharding, g, static_cast<std::int64_t>(p.dpBytes()), step);
    }
    for (const auto& g : replica) call("all_reduce", CollectiveGroup::Replica, g, 4 << 20, step);
    call("all_reduce", CollectiveGroup::World, world, static_cast<std::int64_t>(p.denseBytes()), step);
  }
  return w;
}

std::vector<st::RankInfo> ranksOf2D() {
  std::vector<st::RankInfo> out;
  for (int r = 0; r < 8; ++r) out.push_back({r, r < 4 ? "node0" : "node1", r % 4, r % 2, r / 2});
  return out;
}

// fitCollectives over one stored run.
core::Result<std::vector<profiler::CollectiveLinkFit>> fitsOf(const std::filesystem::path& path, st::RunId run,
                                                              std::vector<std::string>& warnings) {
  auto store = st::openStore(path);
  if (!store) return store.error();
  const st::RunId runs[] = {run};
  return profiler::fitCollectives(*store, runs, nullptr, &warnings);
}

struct Fixture {
  QTemporaryDir dir;
  std::filesystem::path path;
  Fixture() : path(std::filesystem::path(dir.path().toStdString()) / "runs.sqlite") {}
};

profiler::CollectiveBandwidth analyse(const std::filesystem::path& path, st::RunId run,
                                      const profiler::CollectiveBandwidthOptions& options = {}) {
  auto store = st::openStore(path);
  if (!store) qFatal("%s", store.error().message.c_str());
  auto r = profiler::collectiveBandwidth(*store, run, options);
  if (!r) qFatal("%s", r.error().message.c_str());
  return std::move(r).value();
}

QString errorOf(const std::filesystem::path& path, st::RunId run) {
  auto store = st::openStore(path);
  if (!store) qFatal("%s", store.error().message.c_str());
  auto r = profiler::collectiveBandwidth(*store, run);
  return r ? QString() : QString::fromStdString(r.error().message);
}

// A call named for lookups: (op, step, members, size, transfer ns); the generator never repeats one.
using CallId = std::tuple<std::string, std::int64_t, std::vector<int>, double, std::int64_t>;

CallId idOf(const profiler::CallBandwidth& c) {
  return {c.op, c.step, c.members, c.size_bytes, static_cast<std::int64_t>(std::llround(c.transfer_ms * 1e6))};
}

// Groups compared by name: QCOMPARE on the enum would find profiler::toString
// by ADL, which returns a string_view, not Qt's char*.
QString name(CollectiveGroup g) { return QString::fromUtf8(profiler::toString(g)); }

}  // namespace

class TestCollectiveBandwidth : public QObject {
  Q_OBJECT

 private slots:
  void pointsAreTheBruteForceCalls() {
    Fixture f;
    const CallWriter gen = twoDimRun();
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), gen.rows, ranksOf2D());
    const auto r = analyse(f.path, run);
    QCOMPARE(r.calls.size(), gen.expected.size());
    QCOMPARE(r.grid, std::string("M=4 R=2 strided, 4 GPUs per node"));
    std::map<CallId, const Expected*> want;
    for (const auto& e : gen.expected) want[{e.op, e.step, e.members, e.size, e.transfer_ns}] = &e;
    QCOMPARE(want.size(), gen.expected.size());
    for (const auto& c : r.calls) {
      const auto it = want.find(idOf(c));
      QVERIFY2(it != want.end(), c.op.c_str());
      const Expected& e = *it->second;
      QCOMPARE(name(c.group), name(e.group));
      QCOMPARE(c.group_size, e.n);
      QCOMPARE(c.slowest_rank, e.slowest);
      const double busbw = e.size / static_cast<double>(e.transfer_ns) * profiler::busBandwidthFactor(e.op, e.n);
      QCOMPARE(c.busbw_gbps, busbw);
      want.erase(it);
    }
    QVERIFY(want.empty());
    // By op, group and size; one series per (op, group), each with the planner's curve.
    for (std::size_t i = 1; i < r.calls.size(); ++i) {
      const auto& a = r.calls[i - 1];
      const auto& b = r.calls[i];
      QVERIFY(std::tie(a.op, a.group, a.size_bytes) <= std::tie(b.op, b.group, b.size_bytes));
    }
    QCOMPARE(r.series.size(), std::size_t{4});
    std::size_t in_series = 0;
    for (const auto& s : r.series) {
      QVERIFY(s.curve >= 0);
      in_series += s.calls.size();
      for (const std::size_t i : s.calls) {
        QCOMPARE(r.calls[i].op, s.op);
        QCOMPARE(name(r.calls[i].group), name(s.group));
      }
    }
    QCOMPARE(in_series, r.calls.size());
    QVERIFY(r.notes.empty());
  }

  // Calls timed as latency + size x bus factor / busbw per op and link: the fit gets both back, per link.
  void collectiveFitsRecoverEachOpAndLink() {
    Fixture f;
    const auto sharding = core::shardingGroups(8, 4, core::RankLayout::Strided);  // across the two nodes
    const auto replica = core::replicaGroups(8, 4, core::RankLayout::Strided);    // inside one node
    std::vector<std::uint32_t> world(8);
    for (std::uint32_t r = 0; r < 8; ++r) world[r] = r;
    CallWriter w;
    auto call = [&](const std::string& op, CollectiveGroup g, const std::vector<std::uint32_t>& ranks,
                    std::int64_t store_bytes, double latency_us, double busbw_gbps, std::int64_t step) {
      const double size =
          op == "all_to_all" ? static_cast<double>(store_bytes) / 2.0 : static_cast<double>(store_bytes);
      const double u = size * profiler::busBandwidthFactor(op, static_cast<int>(ranks.size()));
      const auto ns = static_cast<std::int64_t>(std::llround(latency_us * 1e3 + u / busbw_gbps));
      w.add(op, g, ranks, store_bytes, ns, step, 0);
    };
    for (std::int64_t step = 0; step < 2; ++step) {
      for (const std::int64_t b : {std::int64_t{128} << 10, std::int64_t{2} << 20, std::int64_t{8} << 20})
        for (const auto& g : sharding) call("all_to_all", CollectiveGroup::Sharding, g, b, 30.0, 5.0, step);
      for (const std::int64_t b : {std::int64_t{1} << 20, std::int64_t{4} << 20, std::int64_t{16} << 20})
        for (const auto& g : replica) call("all_reduce", CollectiveGroup::Replica, g, b, 10.0, 40.0, step);
      for (const std::int64_t b : {std::int64_t{1} << 20, std::int64_t{2} << 20, std::int64_t{8} << 20})
        call("all_reduce", CollectiveGroup::World, world, b, 50.0, 20.0, step);
    }
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), w.rows, ranksOf2D());
    std::vector<std::string> warnings;
    auto fits = fitsOf(f.path, run, warnings);
    QVERIFY2(fits.ok(), fits.ok() ? "" : fits.error().message.c_str());
    QCOMPARE(fits->size(), std::size_t{3});
    std::map<std::string, profiler::CollectiveLinkFit> by;
    for (const auto& x : *fits) by[x.coefficientPrefix()] = x;
    const auto near = [](double a, double b) { return std::abs(a / b - 1.0) < 1e-3; };
    QVERIFY(near(by.at("all_to_all_inter_node").busbw_gbps, 5.0));
    QVERIFY(near(by.at("all_to_all_inter_node").latency_us, 30.0));
    QVERIFY(near(by.at("all_reduce_intra_node").busbw_gbps, 40.0));
    QVERIFY(near(by.at("all_reduce_intra_node").latency_us, 10.0));
    QVERIFY(near(by.at("all_reduce_inter_node").busbw_gbps, 20.0));
    QVERIFY(near(by.at("all_reduce_inter_node").latency_us, 50.0));
    QVERIFY(by.at("all_reduce_inter_node").mape < 1e-3);
    QCOMPARE(by.at("all_to_all_inter_node").calls, std::size_t{2 * 3 * 2});
    // all_to_all is fitted across nodes only: said, since the model prices it inside a node.
    QVERIFY(std::any_of(warnings.begin(), warnings.end(),
                        [](const std::string& x) { return x.starts_with("all_to_all is fitted across nodes only"); }));
    // A calibration that carries them prices those calls as measured: the curve passes through the calls.
    core::Calibration cal;
    cal.source = "fitted";
    for (const auto& x : *fits) {
      cal.coefficients[x.coefficientPrefix() + "_busbw_gbps"] = {x.busbw_gbps, 0.0};
      cal.coefficients[x.coefficientPrefix() + "_latency_us"] = {x.latency_us, 0.0};
    }
    profiler::CollectiveBandwidthOptions options;
    options.calibration = &cal;
    const auto r = analyse(f.path, run, options);
    for (const auto& c : r.calls) QVERIFY2(std::abs(c.calibrated_busbw_gbps / c.busbw_gbps - 1.0) < 1e-3, c.op.c_str());
  }

  // Calls that no line through them explains (two sizes; or times that fall as sizes grow) are not fitted.
  void collectiveFitsRefuseWhatALineDoesNotExplain() {
    Fixture f;
    const auto replica = core::replicaGroups(8, 4, core::RankLayout::Strided);
    CallWriter w;
    for (std::int64_t step = 0; step < 3; ++step) {
      // Two sizes only.
      for (const std::int64_t b : {std::int64_t{1} << 20, std::int64_t{16} << 20})
        w.add("all_reduce", CollectiveGroup::Replica, replica[0], b, 100'000 + b / 10, step, 0);
      // Three sizes, but a latency far above the smallest call's time: the fastest call is the largest.
      std::vector<std::uint32_t> world(8);
      for (std::uint32_t r = 0; r < 8; ++r) world[r] = r;
      w.add("all_reduce", CollectiveGroup::World, world, 1 << 20, 9'000'000, step, 0);
      w.add("all_reduce", CollectiveGroup::World, world, 4 << 20, 9'500'000, step, 0);
      w.add("all_reduce", CollectiveGroup::World, world, 16 << 20, 100'000, step, 0);
    }
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), w.rows, ranksOf2D());
    std::vector<std::string> warnings;
    auto fits = fitsOf(f.path, run, warnings);
    QVERIFY(fits.ok());
    QVERIFY(fits->empty());
    QCOMPARE(warnings.size(), std::size_t{2});
    for (const auto& x : warnings) QVERIFY2(x.find("the model prices it") != std::string::npos, x.c_str());
  }

  void curvesAreTheCostModelsPrices() {
    Fixture f;
    const CallWriter gen = twoDimRun();
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), gen.rows, ranksOf2D());
    core::Calibration cal;
    cal.source = "links measured";
    cal.coefficients["intra_node_bandwidth_gbps"] = {50.0, 0.0};
    cal.coefficients["inter_node_latency_us"] = {40.0, 0.0};
    profiler::CollectiveBandwidthOptions options;
    options.calibration = &cal;
    const auto r = analyse(f.path, run, options);
    const PlannerPrices defaults, calibrated(&cal);
    QCOMPARE(r.curves.size(), std::size_t{4});
    QCOMPARE(r.size_lo, 1024.0);
    QCOMPARE(r.size_hi, 1024.0 * 1024.0 * 1024.0);
    // The docs' formulas by hand for the all-to-all of 4 ranks, 2 per node, on two nodes of 4 GPUs with a NIC
    // each: per buffer byte max(1/4 / (0.78 x 100 GB/s), 2/4 / (0.9 x 10 GB/s)); latency 10 us + 5 us x log2 2
    // + 10 x 20 us + 0.65 x 1 remote node x 20 us.
    QCOMPARE(r.series[3].op, std::string("all_to_all"));  // after all_reduce in the sharding, replica, world group
    const auto& a2a = r.curves[static_cast<std::size_t>(r.series[3].curve)];
    QCOMPARE(a2a.model.at(1e6).latency_ms, 0.228);
    QCOMPARE(a2a.model.at(1e6).ms_per_byte, 0.5 / (0.9 * 10e9) * 1e3);
    // The sharding group's all-to-all as the planner charges it: a rank's bytes sent + received, two per buffer byte.
    QCOMPARE(2.0 * 1e6 * defaults.gc.seconds_per_byte_group * 1e3 + defaults.gc.a2a_latency_ms / 3.0,
             a2a.model.timeMs(1e6));
    QCOMPARE(a2a.link, std::string("intra- and inter-node (33% of peers on the node)"));
    QCOMPARE(a2a.priced_as, std::string("each of a step's three all-to-alls in the sharding group"));
    for (const auto& curve : r.curves) {
      QCOMPARE(curve.group_size, defaults.n(curve.group));
      QCOMPARE(curve.sizes.size(), curve.busbw_gbps.size());
      QCOMPARE(curve.sizes.size(), curve.calibrated_busbw_gbps.size());
      QCOMPARE(curve.sizes.size(), std::size_t{20 * 4 + 1});
      QVERIFY(curve.calibrated.has_value());
      for (std::size_t i = 0; i < curve.sizes.size(); i += 4) {  // whole powers of two: bytes the cost model takes
        const double size = curve.sizes[i];
        QCOMPARE(size, std::exp2(10.0 + static_cast<double>(i / 4)));
        QCOMPARE(curve.model.timeMs(size), defaults.ms(curve.op, curve.group, size));
        QCOMPARE(curve.calibrated->timeMs(size), calibrated.ms(curve.op, curve.group, size));
        QCOMPARE(curve.busbw_gbps[i], defaults.busbw(curve.op, curve.group, size));
        QCOMPARE(curve.calibrated_busbw_gbps[i], calibrated.busbw(curve.op, curve.group, size));
      }
      // Latency-bound at 1 KiB, bandwidth-bound at 1 GiB.
      QVERIFY(curve.busbw_gbps.back() > 10.0 * curve.busbw_gbps.front());
    }
    // The replica sync runs intra-node, the dense all-reduce inter-node: the calibration moves only the first.
    for (const auto& curve : r.curves) {
      if (curve.group == CollectiveGroup::Replica) QCOMPARE(curve.link, std::string("intra-node"));
      if (curve.group == CollectiveGroup::World) QCOMPARE(curve.link, std::string("inter-node"));
      if (curve.group == CollectiveGroup::Replica)
        QVERIFY(curve.calibrated_busbw_gbps.back() < curve.busbw_gbps.back());
    }
    // Every call carries both models at its size.
    for (const auto& c : r.calls) {
      QCOMPARE(c.model_busbw_gbps, defaults.busbw(c.op, c.group, c.size_bytes));
      QCOMPARE(c.calibrated_busbw_gbps, calibrated.busbw(c.op, c.group, c.size_bytes));
      QCOMPARE(c.ratio, c.busbw_gbps / c.calibrated_busbw_gbps);
    }
  }

  void aCalibrationWithoutLinkConstantsIsSaid() {
    Fixture f;
    const CallWriter gen = twoDimRun();
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), gen.rows, ranksOf2D());
    core::Calibration cal;
    cal.source = "embedding fit";
    cal.coefficients["embedding_bandwidth_gbps"] = {900.0, 1.0};
    profiler::CollectiveBandwidthOptions options;
    options.calibration = &cal;
    const auto r = analyse(f.path, run, options);
    QCOMPARE(r.calibration, std::string("embedding fit"));
    QCOMPARE(r.notes.size(), std::size_t{1});
    QVERIFY(r.notes.front().find("no link constants") != std::string::npos);
    for (const auto& curve : r.curves) QCOMPARE(curve.calibrated_busbw_gbps, curve.busbw_gbps);
  }

  void outliersAreTheCallsFarBelowTheModelWorstFirst() {
    Fixture f;
    const CallWriter gen = twoDimRun();
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), gen.rows, ranksOf2D());
    const PlannerPrices p;
    for (const double fraction : {0.5, 0.75}) {
      profiler::CollectiveBandwidthOptions options;
      options.outlier_fraction = fraction;
      const auto r = analyse(f.path, run, options);
      // Brute force: every generated call's busbw against the planner's at its size.
      std::map<CallId, double> want;
      for (const auto& e : gen.expected) {
        const double busbw = e.size / static_cast<double>(e.transfer_ns) * profiler::busBandwidthFactor(e.op, e.n);
        const double ratio = busbw / p.busbw(e.op, e.group, e.size);
        if (ratio < fraction) want[{e.op, e.step, e.members, e.size, e.transfer_ns}] = ratio;
      }
      QVERIFY(!want.empty());
      QVERIFY(want.size() < gen.expected.size());
      QCOMPARE(r.outliers.size(), want.size());
      for (std::size_t i = 0; i < r.outliers.size(); ++i) {
        const auto& c = r.calls[r.outliers[i]];
        const auto it = want.find(idOf(c));
        QVERIFY(it != want.end());
        QCOMPARE(c.ratio, it->second);
        QVERIFY(c.slowest_rank >= 0);
        if (i > 0) QVERIFY(r.calls[r.outliers[i - 1]].ratio <= c.ratio);  // worst first
        want.erase(it);
      }
      QVERIFY(want.empty());
    }
  }

  // A CPU run against a cluster of H100s: no curves, and a call is an outlier
  // against the run's own calls of its op, group and size, never the model.
  void acrossDevicesCallsAreComparedWithTheRunsOwnMedian() {
    Fixture f;
    const CallWriter gen = twoDimRun();
    st::RunHeader h = header(st::RunKind::Mpi, true);
    h.config_json =
        R"({"schema": "shardscope.engine-run/1", "mode": "mpi", "cpu": "Intel Xeon Gold 6230", "threads": 2})";
    const st::RunId run = writeRun(f.path, h, gen.rows, ranksOf2D());
    const auto r = analyse(f.path, run);
    QVERIFY(!r.devices.absolute);
    QVERIFY(!r.againstModel());
    QVERIFY(r.curves.empty());
    QVERIFY(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
      return n.find("no model curves: this run ran on CPU") != std::string::npos &&
             n.find("predictions are for H100") != std::string::npos;
    }));
    for (const std::size_t i : r.outliers) {
      const auto& c = r.calls[i];
      QVERIFY(c.model_busbw_gbps < 0);
      QVERIFY(c.ratio > 0 && c.ratio < r.outlier_fraction);
      // Brute force: the median of the calls of its series within half to twice its size.
      std::vector<double> similar;
      for (const auto& o : r.calls)
        if (o.op == c.op && o.group == c.group && o.size_bytes >= c.size_bytes / 2 && o.size_bytes <= c.size_bytes * 2)
          similar.push_back(o.busbw_gbps);
      std::sort(similar.begin(), similar.end());
      const std::size_t n = similar.size();
      const double median = n % 2 == 1 ? similar[n / 2] : (similar[n / 2 - 1] + similar[n / 2]) / 2.0;
      QCOMPARE(c.ratio, c.busbw_gbps / median);
    }
    QVERIFY(!r.outliers.empty());
    QVERIFY(r.outliers.size() < r.calls.size() / 2);  // rings only on outliers
  }

  void groupsByProcessGroupName() {
    Fixture f;
    st::RunHeader h;
    h.kind = st::RunKind::ImportKineto;
    std::vector<Row> rows;
    std::int64_t t = kMs;
    auto call = [&](const std::string& op, const std::string& pg, const std::string& group, int peers,
                    std::vector<int> members, std::int64_t seq) {
      // Rank r arrives r us late; every member ends together.
      for (int r : members) rows.push_back({r, 0, op, group, pg, 1 << 20, peers, t + r * kUs, t + 200 * kUs, seq});
      t += kMs;
    };
    call("all_to_all", "sharding:0x00000000000000ab", "0,1", 1, {0, 1}, 0);
    call("all_reduce", "Replica", "0,2", 1, {0, 2}, 0);
    call("all_reduce", "world", "", 3, {0, 1, 2, 3}, 0);
    call("all_reduce", "worldwide", "0,1,2,3", 3, {0, 1, 2, 3}, 0);  // not "world": the rank list decides
    call("all_gather", "7", "0,1", 1, {0, 1}, 0);
    call("reduce_scatter", "", "", 3, {0, 1, 2, 3}, -1);  // an nsys export: the group of its size
    call("broadcast", "", "", 3, {2}, -1);                // one rank of four recorded it: the world is the only one
    std::vector<st::RankInfo> ranks;
    for (int r = 0; r < 4; ++r) ranks.push_back({r, "", r, 0, 0});  // an import's placeholder groups
    const st::RunId run = writeRun(f.path, h, rows, ranks);
    const auto r = analyse(f.path, run);
    std::map<std::string, std::pair<QString, int>> got;
    for (const auto& c : r.calls) got[c.op + "/" + c.process_group] = {name(c.group), c.slowest_rank};
    QCOMPARE(got.size(), std::size_t{7});
    QCOMPARE(got.at("all_to_all/sharding:0x00000000000000ab").first, QString("sharding"));
    QCOMPARE(got.at("all_reduce/Replica").first, QString("replica"));
    QCOMPARE(got.at("all_reduce/world").first, QString("world"));
    QCOMPARE(got.at("all_reduce/worldwide").first, QString("world"));
    QCOMPARE(got.at("all_gather/7").first, QString("other"));
    QCOMPARE(got.at("reduce_scatter/").first, QString("world"));
    QCOMPARE(got.at("broadcast/").first, QString("world"));
    // The highest rank arrives last; with one member nobody waited: unknown.
    QCOMPARE(got.at("all_gather/7").second, 1);
    QCOMPARE(got.at("reduce_scatter/").second, 3);
    QCOMPARE(got.at("broadcast/").second, -1);
    // An import without a plan has no grid: points only, and the page says why.
    QVERIFY(r.curves.empty());
    QCOMPARE(r.grid, std::string());
    QCOMPARE(r.notes.size(), std::size_t{1});
    QVERIFY(r.notes.front().find("an imported run has no plan") != std::string::npos);
    for (const auto& c : r.calls) QCOMPARE(c.ratio, -1.0);
  }

  void groupsByRanksTableWithoutAPlan() {
    Fixture f;
    // An engine run of M=4 R=2 whose plan is missing: the ranks table gives the groups and the grid.
    const CallWriter gen = twoDimRun();
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, false), gen.rows, ranksOf2D());
    const auto r = analyse(f.path, run);
    QCOMPARE(r.grid, std::string("M=4 R=2 strided, 4 GPUs per node"));
    QCOMPARE(r.curves.size(), std::size_t{4});
    std::map<CollectiveGroup, std::size_t> per_group;
    for (const auto& c : r.calls) ++per_group[c.group];
    QCOMPARE(per_group[CollectiveGroup::Sharding], std::size_t{16});
    QCOMPARE(per_group[CollectiveGroup::Replica], std::size_t{8});
    QCOMPARE(per_group[CollectiveGroup::World], std::size_t{2});
    QCOMPARE(per_group[CollectiveGroup::Other], std::size_t{0});
  }

  void aSuppliedPlanGivesAnImportItsCurves() {
    Fixture f;
    const CallWriter gen = twoDimRun();
    st::RunHeader h;
    h.kind = st::RunKind::ImportNsys;
    h.config_json = R"({"schema": "shardscope.import/1", "gpus": ["NVIDIA H100 80GB HBM3"]})";
    std::vector<st::RankInfo> ranks;
    for (int r = 0; r < 8; ++r) ranks.push_back({r, "", r, 0, 0});
    const st::RunId run = writeRun(f.path, h, gen.rows, ranks);
    profiler::RunInputs supplied;
    supplied.cluster = twoNodes();
    supplied.plan = plan8();
    profiler::CollectiveBandwidthOptions options;
    options.supplied = &supplied;
    const auto r = analyse(f.path, run, options);
    QCOMPARE(r.curves.size(), std::size_t{4});
    for (const auto& c : r.calls) QVERIFY(c.ratio > 0);
  }

  void whenTheGridIsAllSharding() {
    // M = N: the sharding group is the world; its all-to-alls are the sharding group's, its all-reduces the world's.
    Fixture f;
    const PlannerPrices p(nullptr, 8);
    CallWriter w;
    std::vector<std::uint32_t> world(8);
    for (std::uint32_t r = 0; r < 8; ++r) world[r] = r;
    w.add("all_to_all", CollectiveGroup::Sharding, world, 1 << 20, 200 * kUs, 0, 3);
    w.add("all_reduce", CollectiveGroup::World, world, 1 << 20, 300 * kUs, 0, 5);
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true, 8), w.rows, {});
    const auto r = analyse(f.path, run);
    QCOMPARE(r.calls.size(), std::size_t{2});
    QCOMPARE(r.calls[0].op, std::string("all_reduce"));  // by op
    QCOMPARE(name(r.calls[0].group), QString("world"));
    QCOMPARE(name(r.calls[1].group), QString("sharding"));
    QCOMPARE(r.curves.size(), std::size_t{2});
    for (const auto& c : r.calls) QCOMPARE(c.model_busbw_gbps, p.busbw(c.op, c.group, c.size_bytes));
  }

  void opsThePlannerDoesNotPriceHaveNoCurve() {
    Fixture f;
    CallWriter w;
    w.add("reduce_scatter", CollectiveGroup::Sharding, {0, 2, 4, 6}, 1 << 20, 200 * kUs, 0, 1);
    w.add("all_to_all", CollectiveGroup::Sharding, {0, 2, 4, 6}, 1 << 20, 200 * kUs, 0, 1);
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), w.rows, ranksOf2D());
    const auto r = analyse(f.path, run);
    QCOMPARE(r.series.size(), std::size_t{2});
    QCOMPARE(r.series[0].op, std::string("all_to_all"));
    QVERIFY(r.series[0].curve >= 0);
    QCOMPARE(r.series[1].op, std::string("reduce_scatter"));
    QCOMPARE(r.series[1].curve, -1);
    QCOMPARE(r.notes.size(), std::size_t{1});
    QVERIFY(r.notes.front().find("reduce_scatter in the sharding group") != std::string::npos);
  }

  void rowsWithoutSizeAreLeftOutAndSaid() {
    Fixture f;
    CallWriter w;
    w.add("all_to_all", CollectiveGroup::Sharding, {0, 2, 4, 6}, 1 << 20, 200 * kUs, 0, 1);
    w.add("all_to_all", CollectiveGroup::Sharding, {0, 2, 4, 6}, 0, 200 * kUs, 0, 1);
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), w.rows, ranksOf2D());
    const auto r = analyse(f.path, run);
    QCOMPARE(r.calls.size(), std::size_t{1});
    QCOMPARE(r.notes.size(), std::size_t{1});
    QCOMPARE(r.notes.front(), std::string("4 of 8 collective rows have no message size or duration: left out"));
  }

  void errorsSayWhyThereIsNothingToDraw() {
    Fixture f;
    CallWriter w;
    w.add("all_to_all", CollectiveGroup::Sharding, {0, 2}, 1 << 20, 200 * kUs, 0, 1);
    const st::RunId run = writeRun(f.path, header(st::RunKind::Mpi, true), w.rows, {});
    QVERIFY(errorOf(f.path, st::RunId{static_cast<std::int64_t>(run) + 100}).contains("has no run"));

    st::RunHeader emulate;
    emulate.kind = st::RunKind::Emulate;
    emulate.config_json = R"({"mode": "emulate"})";
    const QString e = errorOf(f.path, writeRun(f.path, emulate, {}, {}));
    QVERIFY2(e.contains("has no collectives") && e.contains("emulate run runs none"), qPrintable(e));

    st::RunHeader imported;
    imported.kind = st::RunKind::ImportKineto;
    const QString i = errorOf(f.path, writeRun(f.path, imported, {}, {}));
    QVERIFY2(i.contains("has no collectives") && i.contains("no NCCL kernels"), qPrintable(i));

    CallWriter sizeless;
    sizeless.add("all_reduce", CollectiveGroup::World, {0, 1}, 0, 100 * kUs, 0, 0);
    const QString s = errorOf(f.path, writeRun(f.path, imported, sizeless.rows, {}));
    QVERIFY2(s.contains("none of its 2 collectives has a message size"), qPrintable(s));
  }
};

QTEST_APPLESS_MAIN(TestCollectiveBandwidth)
#include "test_collective_bandwidth.moc"
