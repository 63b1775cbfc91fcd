// Runs under mpirun -np 4: sharding and replica communicators match the plan.
#include <QtTest>

#include "shardscope/core/rank_layout.h"
#include "shardscope/profiler/engine_mpi/mpi_groups.h"

using namespace shardscope;

namespace {
core::ShardPlan planFor(int n, std::uint32_t m, core::RankLayout layout) {
  core::ShardPlan p;
  p.world_size = static_cast<std::uint32_t>(n);
  p.sharding_group_size = m;
  p.replicas = p.world_size / m;
  p.layout = layout;
  p.sharding_groups = core::shardingGroups(p.world_size, m, layout);
  p.replica_groups = core::replicaGroups(p.world_size, m, layout);
  return p;
}

std::vector<int> membersOf(MPI_Comm c) {
  int size = 0, me = 0;
  MPI_Comm_size(c, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::vector<int> out(static_cast<std::size_t>(size));
  MPI_Allgather(&me, 1, MPI_INT, out.data(), 1, MPI_INT, c);
  return out;
}
}  // namespace

class TestMpiGroups : public QObject {
  Q_OBJECT
 private slots:
  void communicatorsFollowThePlanInBothLayouts() {
    int n = 0, me = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    QVERIFY2(n >= 2 && n % 2 == 0, "run with an even number of ranks");
    for (auto layout : {core::RankLayout::Strided, core::RankLayout::Contiguous}) {
      const core::ShardPlan p = planFor(n, static_cast<std::uint32_t>(n / 2), layout);
      auto c = profiler::makeGridComms(MPI_COMM_WORLD, p);
      QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
      const auto& group = p.sharding_groups[static_cast<std::size_t>(c->sharding_group)];
      const auto members = membersOf(c->sharding);
      QCOMPARE(members.size(), group.size());
      for (std::size_t i = 0; i < group.size(); ++i)
        QCOMPARE(members[i], static_cast<int>(group[i]));  // comm rank = group rank
      const auto& replicas = p.replica_groups[static_cast<std::size_t>(c->replica_group)];
      const auto rmembers = membersOf(c->replica);
      for (std::size_t i = 0; i < replicas.size(); ++i) QCOMPARE(rmembers[i], static_cast<int>(replicas[i]));
      // A weight sync: the replica all-reduce averages what the replicas hold.
      double w = me, sum = 0;
      MPI_Allreduce(&w, &sum, 1, MPI_DOUBLE, MPI_SUM, c->replica);
      double expect = 0;
      for (auto r : replicas) expect += r;
      QCOMPARE(sum, expect);
    }
  }

  void planOfAnotherSizeIsRefused() {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    auto c = profiler::makeGridComms(MPI_COMM_WORLD, planFor(n * 2, 2, core::RankLayout::Strided));
    QVERIFY(!c.ok());
    QVERIFY(QString::fromStdString(c.error().message).contains("MPI started"));
  }
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  TestMpiGroups t;
  // Only rank 0 prints; every rank runs the collectives.
  QStringList args = {argv[0]};
  if (me != 0) args << "-silent";
  const int rc = QTest::qExec(&t, args);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
#include "test_mpi_groups.moc"
