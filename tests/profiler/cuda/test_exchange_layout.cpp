// The GPU engine's step layouts (exchange_layout.h), checked without a GPU:
// every rank's sends match its peers' receives block for block, the served
// bags and outputs tile their buffers, the combine blocks rebuild every
// table's columns, and the id exchange orders received ids as the bags' CSR.
#include <QTest>

#include <map>
#include <numeric>

#include "shardscope/profiler/cuda/exchange_layout.h"

using namespace shardscope;
using namespace shardscope::profiler;
using namespace shardscope::profiler::cuda;

namespace {

// Four tables over a group of three ranks: row-wise over all, table-wise on
// rank 1, column-wise over ranks 0 and 2, data-parallel everywhere.
struct Fixture {
  core::ModelSpec model;
  std::vector<std::vector<RankShard>> group;
  Fixture() {
    const std::uint32_t dims[] = {8, 16, 12, 4};
    for (std::size_t t = 0; t < 4; ++t) {
      core::TableSpec spec;
      spec.name = "t";
      spec.name += std::to_string(t);  // not "t" + ...: GCC 12's -Wrestrict misfires on it at -O3
      spec.rows = 90;
      spec.dim = dims[t];
      model.tables.push_back(spec);
    }
    group.resize(3);
    const auto add = [&](std::uint32_t d, std::size_t t, core::ShardingType type, std::uint64_t row_offset,
                         std::uint64_t rows, std::uint32_t col_offset, std::uint32_t cols) {
      RankShard s;
      s.table = t;
      s.placement = t;
      s.type = type;
      s.shard = {d, row_offset, rows, col_offset, cols};
      s.physical_rows = rows;
      group[d].push_back(s);
    };
    for (std::uint32_t d = 0; d < 3; ++d) add(d, 0, core::ShardingType::RowWise, 30 * d, 30, 0, 8);
    add(1, 1, core::ShardingType::TableWise, 0, 90, 0, 16);
    add(0, 2, core::ShardingType::ColumnWise, 0, 90, 0, 8);
    add(2, 2, core::ShardingType::ColumnWise, 0, 90, 8, 4);
    for (std::uint32_t d = 0; d < 3; ++d) add(d, 3, core::ShardingType::DataParallel, 0, 90, 0, 4);
  }
};

std::size_t total(const std::vector<A2aPart>& parts, std::uint32_t peer) {
  std::size_t n = 0;
  for (const A2aPart& p : parts)
    if (p.peer == peer) n += p.count;
  return n;
}

}  // namespace

class TestExchangeLayout : public QObject {
  Q_OBJECT

 private slots:
  void servedAndRemoteShards() {
    const Fixture f;
    const ExchangeLayout l = makeExchangeLayout(f.model, f.group, 0, 5);
    QCOMPARE(l.served, (std::vector<std::size_t>{0, 1}));  // row-wise t0, column slice of t2
    QCOMPARE(l.dp, (std::vector<std::size_t>{2}));
    QCOMPARE(l.remote[1], (std::vector<std::size_t>{0, 1}));  // t0 rows, t1 whole
    QCOMPARE(l.remote[2], (std::vector<std::size_t>{0, 1}));
    // Bags: served shard i has M x B bags, the data-parallel shard none.
    QCOMPARE(l.served_bag_begin, (std::vector<std::uint32_t>{0, 15, 30, 30}));
    QCOMPARE(l.dp_bag_begin, (std::vector<std::uint32_t>{0, 0, 0, 5}));
    QCOMPARE(l.served_out_offset[1], std::uint64_t{3 * 5 * 8});
    QCOMPARE(l.served_out_floats, std::size_t{3 * 5 * 8 + 3 * 5 * 8});
    // Every used table has B x dim pooled floats; dp output goes to its table's rows.
    QCOMPARE(l.pooled_floats, std::size_t{5 * (8 + 16 + 12 + 4)});
    QCOMPARE(l.dp_out_offset[2], l.table_offset[3]);
  }

  void sendsMatchTheirReceivesOnEveryPair() {
    const Fixture f;
    std::vector<ExchangeLayout> ls;
    for (std::uint32_t me = 0; me < 3; ++me) ls.push_back(makeExchangeLayout(f.model, f.group, me, 7));
    for (std::uint32_t a = 0; a < 3; ++a)
      for (std::uint32_t b = 0; b < 3; ++b) {
        // The blocks a sends b, in order, are the blocks b receives from a, in order.
        std::vector<std::size_t> sent, received;
        for (const A2aPart& p : ls[a].pooled_send)
          if (p.peer == b) sent.push_back(p.count);
        for (const A2aPart& p : ls[b].pooled_recv)
          if (p.peer == a) received.push_back(p.count);
        QCOMPARE(sent, received);
        QCOMPARE(total(ls[a].pooled_send, b), total(ls[b].pooled_recv, a));
      }
  }

  void blocksTileTheirBuffers() {
    const Fixture f;
    for (std::uint32_t me = 0; me < 3; ++me) {
      const ExchangeLayout l = makeExchangeLayout(f.model, f.group, me, 4);
      std::vector<int> covered(l.served_out_floats, 0);
      for (const A2aPart& p : l.pooled_send)
        for (std::size_t i = 0; i < p.count; ++i) ++covered[p.offset + i];
      QVERIFY(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }));
      std::vector<int> received(l.pooled_recv_floats, 0);
      for (const A2aPart& p : l.pooled_recv)
        for (std::size_t i = 0; i < p.count; ++i) ++received[p.offset + i];
      QVERIFY(std::all_of(received.begin(), received.end(), [](int c) { return c == 1; }));
    }
  }

  void combineBlocksRebuildEveryColumn() {
    const Fixture f;
    const ExchangeLayout l = makeExchangeLayout(f.model, f.group, 1, 4);
    QCOMPARE(l.combine.size(), l.pooled_recv.size());
    std::map<std::uint32_t, std::vector<int>> cols;  // per sharded table: how often each column is added
    for (const CombineBlock& b : l.combine) {
      auto& c = cols.try_emplace(b.table, f.model.tables[b.table].dim, 0).first->second;
      for (std::uint32_t x = 0; x < b.cols; ++x) ++c[b.col_offset + x];
    }
    QCOMPARE(cols.size(), std::size_t{3});
    QVERIFY(std::all_of(cols[0].begin(), cols[0].end(), [](int c) { return c == 3; }));  // a partial from each owner
    QVERIFY(std::all_of(cols[1].begin(), cols[1].end(), [](int c) { return c == 1; }));
    QVERIFY(std::all_of(cols[2].begin(), cols[2].end(), [](int c) { return c == 1; }));  // slices from ranks 0 and 2
    // Routing: t0's row pieces on ranks 0, 1, 2 in one routing; t1 whole on rank 1; t2's two column
    // slices each routed on their own (their rows overlap); the data-parallel table nowhere.
    QCOMPARE(l.route_groups.size(), std::size_t{4});
    QCOMPARE(l.route_groups[0].table, std::size_t{0});
    QCOMPARE(l.route_groups[0].targets.size(), std::size_t{3});
    for (const auto& g : l.route_groups) QVERIFY(g.table != 3);
    std::size_t slices = 0;
    for (const auto& g : l.route_groups)
      if (g.table == 2) {
        ++slices;
        QCOMPARE(g.targets.size(), std::size_t{1});
      }
    QCOMPARE(slices, std::size_t{2});
    // route_of finds each remote shard's routing and position.
    for (std::uint32_t d = 0; d < 3; ++d)
      for (std::size_t n = 0; n < l.remote[d].size(); ++n) {
        const auto [g, q] = l.route_of[d][n];
        QCOMPARE(l.route_groups[g].targets[q].group_rank, d);
        QCOMPARE(l.route_groups[g].targets[q].shard, l.remote[d][n]);
      }
  }

  void idExchangeOrdersIdsAsTheBagsCsr() {
    const Fixture f;
    const std::uint32_t B = 2;
    const ExchangeLayout l = makeExchangeLayout(f.model, f.group, 0, B);
    // Rank 0 serves two shards; source s sends (s + 1) x (i + 1) ids for served shard i.
    std::vector<std::vector<std::uint32_t>> recv(3, std::vector<std::uint32_t>(2));
    for (std::uint32_t s = 0; s < 3; ++s)
      for (std::uint32_t i = 0; i < 2; ++i) recv[s][i] = (s + 1) * (i + 1);
    std::vector<std::vector<RoutedBlock>> send(3);
    std::size_t at = 0;
    for (std::uint32_t d = 0; d < 3; ++d)
      for (std::size_t n = 0; n < l.remote[d].size(); ++n) {
        send[d].push_back({at, at + B, 3});
        at += B + 3;
      }
    const IdExchange x = makeIdExchange(l, send, recv);
    QCOMPARE(x.recv_id_total, std::size_t{(1 + 2 + 3) * (1 + 2)});
    // Served shard 0's ids from sources 0, 1, 2 come first, then shard 1's.
    QCOMPARE(x.id_recv.size(), std::size_t{6});
    const auto offsetOf = [&x](std::uint32_t source, std::size_t served) {
      return x.id_recv[source * 2 + served].offset;  // pushed per source, per served shard
    };
    QCOMPARE(offsetOf(0, 0), std::size_t{0});
    QCOMPARE(offsetOf(1, 0), std::size_t{1});
    QCOMPARE(offsetOf(2, 0), std::size_t{3});
    QCOMPARE(offsetOf(0, 1), std::size_t{6});
    QCOMPARE(offsetOf(2, 1), std::size_t{6 + 2 + 4});
    QCOMPARE(x.id_recv[2 * 2 + 1].peer, 2u);
    // Lengths: bag (i, s, b) at (i x M + s) x B.
    QCOMPARE(x.length_recv[1].offset, std::size_t{(1 * 3 + 0) * B});
    QCOMPARE(x.length_recv[2].offset, std::size_t{(0 * 3 + 1) * B});
    // Sends: per destination, per remote shard, B lengths and then its ids.
    QCOMPARE(x.length_send.size(), std::size_t{2 + 2 + 2});
    QCOMPARE(x.id_send[0].count, std::size_t{3});
  }
};

QTEST_GUILESS_MAIN(TestExchangeLayout)
#include "test_exchange_layout.moc"
