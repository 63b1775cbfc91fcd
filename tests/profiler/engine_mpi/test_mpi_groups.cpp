// Runs under mpirun -np 4: sharding and replica communicators match the plan.
#include <QtTest>

#include <algorithm>

#include "shardscope/core/rank_layout.h"
#include "shardscope/profiler/engine_mpi/mpi_groups.h"
#include "shardscope/profiler/engine_mpi/mpi_session.h"

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
  int worst = 0;
  {
    const profiler::MpiSession mpi(argc, argv);
    int me = -1, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int rc = (mpi.rank() == me && mpi.size() == n && mpi.threadSupport().ok()) ? 0 : 1;
    {
      // A second session in the same process joins the first and does not finalize MPI.
      const profiler::MpiSession joined(argc, argv);
      if (joined.rank() != me) rc = 1;
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return 1;
    TestMpiGroups t;
    // Only rank 0 prints; every rank runs the collectives.
    QStringList args = {argv[0]};
    if (me != 0) args << "-silent";
    rc = std::max(rc, QTest::qExec(&t, args));
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, mpi.world());
  }
  int finalized = 0;
  MPI_Finalized(&finalized);  // the session's end finalized MPI
  return finalized ? worst : 1;
}
#include "test_mpi_groups.moc"
