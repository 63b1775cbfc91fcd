// What the agent lets a job ask for and take, without an agent: the checks
// before anything is planned, admission on the agent's own cluster (nodes,
// grid or plan, the memory estimate against the limits), the shapes describe
// offers, the profile request a job runs and the memory estimate itself.
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/profiler/agent/job_admission.h"
#include "shardscope/profiler/agent/job_memory.h"

using namespace shardscope;
namespace proto = core::protocol;

namespace {

core::ModelSpec tinyModel() { return core::loadModel(SHARDSCOPE_TEST_DATA_DIR "/engine/tiny_model.json").value(); }
core::ClusterSpec cpu4() { return core::loadCluster(SHARDSCOPE_TEST_DATA_DIR "/engine/cpu4.json").value(); }

// The agent's config: emulate only unless a launcher is named; generous memory.
profiler::AgentConfig config(profiler::LauncherKind launcher = profiler::LauncherKind::None) {
  profiler::AgentConfig c;
  c.launcher = launcher;
  if (launcher != profiler::LauncherKind::None) c.launcher_argv = {"mpirun", "-np", "{ranks}"};
  c.limits.job_memory_bytes = std::uint64_t{4} << 30;
  c.limits.total_memory_bytes = std::uint64_t{8} << 30;
  c.limits.job_threads = 2;
  c.limits.job_seconds = 60;
  c.limits.max_ranks = 64;
  return c;
}

// A spec of the tiny model planned by the client on `cluster`.
proto::JobSpec spec(const core::ClusterSpec& cluster = cpu4()) {
  proto::JobSpec s;
  s.label = "admission test";
  s.project.name = "admission test";
  s.project.model = tinyModel();
  s.project.cluster = cluster;
  s.steps = 2;
  s.warmup = 0;
  return s;
}

// Two nodes of four CPU ranks.
core::ClusterSpec twoNodes() {
  core::ClusterSpec c = cpu4();
  c.nodes = 2;
  return c;
}

const profiler::JobRefusal& refusal(const std::variant<profiler::Admission, profiler::JobRefusal>& v) {
  return std::get<profiler::JobRefusal>(v);
}

// Why it was refused, or "" when admitted.
const char* why(const std::variant<profiler::Admission, profiler::JobRefusal>& v) {
  const auto* r = std::get_if<profiler::JobRefusal>(&v);
  return r != nullptr ? r->error.message.c_str() : "";
}

}  // namespace

class TestJobAdmission : public QObject {
  Q_OBJECT

 private slots:
  void requestsWithinTheLimitsPass() {
    QVERIFY(!profiler::checkJobRequest(spec(), config(), 0, 0));
    proto::JobSpec mpi = spec();
    mpi.mode = proto::JobMode::Mpi;
    QVERIFY(!profiler::checkJobRequest(mpi, config(profiler::LauncherKind::Srun), 3, 0));
  }

  void requestsPastALimitOrAModeAreRefused() {
    profiler::AgentConfig c = config();
    proto::JobSpec s = spec();
    s.steps = c.limits.max_steps + 1;
    auto r = profiler::checkJobRequest(s, c, 0, 0);
    QVERIFY(r && r->code == proto::ErrorCode::LimitExceeded);
    QVERIFY2(r->error.message.find("(limits.max_steps)") != std::string::npos, r->error.message.c_str());

    c.limits.max_tables = 2;  // the tiny model has five
    r = profiler::checkJobRequest(spec(), c, 0, 0);
    QVERIFY(r && r->code == proto::ErrorCode::LimitExceeded);
    QVERIFY(r->error.message.find("a model of 5 tables exceeds this agent's 2") != std::string::npos);

    r = profiler::checkJobRequest(spec(), config(), config().limits.max_jobs, 0);
    QVERIFY(r && r->code == proto::ErrorCode::LimitExceeded);
    QVERIFY(r->error.message.find("(limits.max_jobs)") != std::string::npos);

    s = spec();
    s.mode = proto::JobMode::Mpi;
    r = profiler::checkJobRequest(s, config(), 0, 0);
    QVERIFY(r && r->code == proto::ErrorCode::InvalidJob);
    QVERIFY(r->error.message.find("emulate jobs only") != std::string::npos);

    s = spec();
    s.device = proto::JobDevice::Cuda;  // an emulate job on a machine without GPUs (or an engine without CUDA)
    r = profiler::checkJobRequest(s, config(), 0, 0);
    QVERIFY(r && r->code == proto::ErrorCode::InvalidJob);
  }

  void aJobRunsOnTheAgentsClusterWithThePlanThatRuns() {
    proto::JobSpec s = spec(core::clusterPreset("h100x8").value());  // planned by the client for 8 GPUs
    s.grid = 2;
    auto admitted = profiler::admitJob(s, config(), cpu4(), 0);
    QVERIFY2(std::holds_alternative<profiler::Admission>(admitted), why(admitted));
    const auto& a = std::get<profiler::Admission>(admitted);
    QCOMPARE(a.spec.project.cluster, cpu4());
    QCOMPARE(a.spec.nodes.value_or(0), 1u);
    QVERIFY(!a.spec.grid);
    QVERIFY(a.spec.plan && a.spec.plan->world_size == 4 && a.spec.plan->sharding_group_size == 2);
    QVERIFY(a.memory.bytes > 0 && a.memory.bytes == a.memory.process_bytes + a.memory.state_bytes +
                                                        a.memory.buffer_bytes + a.memory.trace_bytes);
  }

  void nodesGridsAndPlansAreCheckedAgainstTheAgentsCluster() {
    proto::JobSpec s = spec();
    s.nodes = 3;
    auto r = profiler::admitJob(s, config(), twoNodes(), 0);
    QVERIFY(refusal(r).code == proto::ErrorCode::InvalidJob);
    QCOMPARE(refusal(r).error.json_path, std::string("/job/nodes"));
    QVERIFY(refusal(r).error.message.find("ask for 1 to 2 nodes") != std::string::npos);

    profiler::AgentConfig small = config();
    small.limits.max_ranks = 4;  // one node of the two
    s.nodes.reset();
    r = profiler::admitJob(s, small, twoNodes(), 0);
    QVERIFY(refusal(r).code == proto::ErrorCode::LimitExceeded);
    s.nodes = 1;
    QVERIFY(std::holds_alternative<profiler::Admission>(profiler::admitJob(s, small, twoNodes(), 0)));

    s = spec();
    s.grid = 3;
    r = profiler::admitJob(s, config(), cpu4(), 0);
    QCOMPARE(refusal(r).error.json_path, std::string("/job/grid"));
    QVERIFY(refusal(r).error.message.find("expected 1, 2 or 4") != std::string::npos);

    s = spec();
    core::ShardPlan plan;
    plan.world_size = 8;
    s.plan = plan;
    r = profiler::admitJob(s, config(), cpu4(), 0);
    QCOMPARE(refusal(r).error.json_path, std::string("/job/plan/world_size"));
  }

  void theMemoryEstimateMustFitWhatIsLeft() {
    auto admitted = profiler::admitJob(spec(), config(), cpu4(), 0);
    QVERIFY(std::holds_alternative<profiler::Admission>(admitted));
    const std::uint64_t need = std::get<profiler::Admission>(admitted).memory.bytes;

    profiler::AgentConfig tight = config();
    tight.limits.job_memory_bytes = need - 1;
    auto r = profiler::admitJob(spec(), tight, cpu4(), 0);
    QVERIFY(refusal(r).code == proto::ErrorCode::LimitExceeded);
    QVERIFY(refusal(r).error.message.find("(limits.job_memory_bytes)") != std::string::npos);

    const std::uint64_t reserved = config().limits.total_memory_bytes - need + 1;
    r = profiler::admitJob(spec(), config(), cpu4(), reserved);
    QVERIFY(refusal(r).code == proto::ErrorCode::LimitExceeded);
    QVERIFY(refusal(r).error.message.find("try again when one has ended") != std::string::npos);
    QVERIFY(std::holds_alternative<profiler::Admission>(profiler::admitJob(spec(), config(), cpu4(), reserved - 1)));
  }

  void shapesAreWholeNodesWithinMaxRanks() {
    auto shapes = profiler::jobShapes(twoNodes(), 64);
    QCOMPARE(shapes.size(), std::size_t{2});
    QCOMPARE(shapes[0], (proto::JobShape{1, 4, {1, 2, 4}}));
    QCOMPARE(shapes[1], (proto::JobShape{2, 8, {1, 2, 4, 8}}));
    QCOMPARE(profiler::jobShapes(twoNodes(), 7).size(), std::size_t{1});
    QVERIFY(profiler::jobShapes(twoNodes(), 3).empty());
  }

  void theProfileRequestRunsTheEngineAsAChild() {
    proto::JobSpec s = spec(twoNodes());
    s.mode = proto::JobMode::Mpi;
    s.label = "mine";
    profiler::AgentConfig c = config(profiler::LauncherKind::Mpirun);
    c.limits.job_threads = 8;
    c.engine = "/opt/shardscope-engine";
    const profiler::ProfileRequest req = profiler::jobProfileRequest(s, "/srv/jobs/j3", c);
    QCOMPARE(req.store, std::string("/srv/jobs/j3/store.sqlite"));
    QCOMPARE(req.mode, profiler::ProfileMode::Mpi);
    QCOMPARE(req.threads, 2u);  // 8 threads among a node's 4 ranks
    QVERIFY(req.emulate_in_engine);
    QCOMPARE(req.engine.value_or(""), std::string("/opt/shardscope-engine"));
    QCOMPARE(req.label.value_or(""), std::string("mine"));
    s.mode = proto::JobMode::Emulate;
    s.label.clear();
    const profiler::ProfileRequest emulate = profiler::jobProfileRequest(s, "/srv/jobs/j4", c);
    QCOMPARE(emulate.threads, 8u);
    QVERIFY(!emulate.label);
  }

  void theEstimateCountsTheBusiestMachine() {
    proto::JobSpec s = spec();
    auto admitted = profiler::admitJob(s, config(profiler::LauncherKind::Mpirun), cpu4(), 0);
    QVERIFY(std::holds_alternative<profiler::Admission>(admitted));
    profiler::ProfileRequest req =
        profiler::jobProfileRequest(std::get<profiler::Admission>(admitted).spec, {}, config());
    req.plan = *std::get<profiler::Admission>(admitted).spec.plan;
    auto emulate = profiler::estimateJobMemory(req);
    QVERIFY(emulate);
    QCOMPARE(emulate->processes, 1u);
    QVERIFY(emulate->where.starts_with("its largest rank"));
    req.mode = profiler::ProfileMode::Mpi;
    auto mpi = profiler::estimateJobMemory(req);
    QVERIFY(mpi);
    QCOMPARE(mpi->processes, 4u);  // one node of four ranks, a process each
    QVERIFY(mpi->bytes > emulate->bytes);
    QVERIFY(profiler::describeEstimate(*mpi).find("for node 0 (4 ranks)") != std::string::npos);
    // A plan table the model lacks is an error, not a guess.
    req.plan.tables.front().name = "no such table";
    QVERIFY(!profiler::estimateJobMemory(req));
  }
};

QTEST_APPLESS_MAIN(TestJobAdmission)
#include "test_job_admission.moc"
