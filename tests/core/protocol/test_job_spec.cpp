// The one job-spec builder (core/protocol's job_spec.h) the CLI and the
// desktop submit with: nothing local travels, the options' ranges are the
// protocol's, and for a described agent its cluster replaces the project's
// and what it would refuse is said before anything is sent.
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/protocol/job_spec.h"

using namespace shardscope;
using namespace shardscope::core::protocol;

namespace {

core::Project project() {
  core::Project p;
  p.name = "spec test";
  p.model = core::loadModel(SHARDSCOPE_TEST_DATA_DIR "/engine/tiny_model.json").value();
  p.cluster = core::clusterPreset("h100x8").value();
  p.trace_store = "/home/me/runs.sqlite";
  p.access = core::Project::AttachedAccess{"/home/me/access.json", "run 3", {"big_zipf"}};
  p.chosen_group_size = 4;
  p.chosen_layout = core::RankLayout::Strided;
  return p;
}

// An agent of one node of four CPU ranks, emulate only.
Description agent() {
  Description d;
  d.agent = "agent under test";
  d.launcher = "emulate-only";
  d.modes = {"emulate"};
  d.cluster = core::loadCluster(SHARDSCOPE_TEST_DATA_DIR "/engine/cpu4.json").value();
  d.cluster.nodes = 2;
  d.max_ranks = 8;
  d.max_steps = 50;
  d.shapes = {{1, 4, {1, 2, 4}}, {2, 8, {1, 2, 4, 8}}};
  return d;
}

}  // namespace

class TestJobSpec : public QObject {
  Q_OBJECT

 private slots:
  void nothingLocalTravels() {
    JobOptions o;
    o.grid = 2;
    o.steps = 4;
    o.all_groups = true;
    o.label = "a\nlabel";
    auto spec = makeJobSpec(project(), o);
    QVERIFY2(spec, spec ? "" : spec.error().message.c_str());
    QVERIFY(spec->project.trace_store.empty());
    QVERIFY(!spec->project.access && !spec->project.chosen_group_size && !spec->project.chosen_layout);
    QCOMPARE(spec->project.cluster, project().cluster);  // the agent replaces it with its own
    QCOMPARE(spec->grid.value_or(0), 2u);
    QVERIFY(!spec->plan && !spec->nodes);
    QCOMPARE(spec->label, std::string("alabel"));
    QCOMPARE(spec->steps, 4u);
    QVERIFY(spec->all_groups && spec->trace_spans);
    QCOMPARE(spec->mode, JobMode::Emulate);
    o.label.clear();
    QVERIFY(makeJobSpec(project(), o)->label.empty());  // the run's label is then the engine's
  }

  void aPlanWinsOverAGrid() {
    JobOptions o;
    o.plan = core::ShardPlan{};
    o.plan->world_size = 8;
    o.grid = 2;
    o.nodes = 1;
    o.mode = "mpi";
    o.cuda = true;
    auto spec = makeJobSpec(project(), o);
    QVERIFY(spec);
    QVERIFY(spec->plan && !spec->grid);
    QCOMPARE(spec->nodes.value_or(0), 1u);
    QCOMPARE(spec->mode, JobMode::Mpi);
    QCOMPARE(spec->device, JobDevice::Cuda);
  }

  void optionsOutOfTheProtocolsRangesAreRefused() {
    JobOptions o;
    o.mode = "batch";
    QVERIFY(!makeJobSpec(project(), o));
    o = {};
    o.steps = 0;
    QVERIFY(!makeJobSpec(project(), o));
    o = {};
    o.warmup = kMaxJobWarmup + 1;
    QVERIFY(!makeJobSpec(project(), o));
    o = {};
    o.seed = 0;
    const auto e = makeJobSpec(project(), o);
    QVERIFY(!e);
    QVERIFY(e.error().kind == core::ErrorKind::InvalidInput);
    QVERIFY(e.error().message.starts_with("cannot run on this agent: "));
  }

  void forAnAgentItsClusterReplacesTheProjects() {
    JobOptions o;
    o.grid = 2;
    auto spec = makeJobSpecFor(project(), agent(), o);
    QVERIFY2(spec, spec ? "" : spec.error().message.c_str());
    QCOMPARE(spec->project.cluster, agent().cluster);
    QVERIFY(spec->project.trace_store.empty());
    o.nodes = 1;
    spec = makeJobSpecFor(project(), agent(), o);
    QVERIFY(spec);
    QCOMPARE(spec->project.cluster.worldSize(), 4u);
    QCOMPARE(spec->nodes.value_or(0), 1u);
  }

  void whatTheAgentWouldRefuseIsSaidFirst() {
    const auto refusal = [](const JobOptions& o) {
      auto spec = makeJobSpecFor(project(), agent(), o);
      return spec ? std::string() : spec.error().message;
    };
    JobOptions o;
    o.mode = "mpi";
    QVERIFY(refusal(o).find("does not run mpi jobs") != std::string::npos);
    o = {};
    o.cuda = true;
    QVERIFY(refusal(o).find("built without CUDA") != std::string::npos);
    o = {};
    o.steps = 51;
    QVERIFY(refusal(o).find("51 measured steps; it allows 1 to 50") != std::string::npos);
    o = {};
    o.grid = 3;
    QVERIFY(refusal(o).find("M = 3 does not divide the agent's 8 GPUs") != std::string::npos);
    o = {};
    o.nodes = 3;
    QVERIFY(refusal(o).find("it has 2 nodes; 3 asked") != std::string::npos);
    o = {};
    o.plan = core::ShardPlan{};
    o.plan->world_size = 4;
    QVERIFY(refusal(o).find("the plan is for 4 GPUs") != std::string::npos);
    Description small = agent();
    small.max_ranks = 4;
    QVERIFY(!makeJobSpecFor(project(), small, {}));
    small = agent();
    small.cluster = {};
    QVERIFY(!makeJobSpecFor(project(), small, {}));
  }

  void labelsAndTargets() {
    QCOMPARE(cleanJobLabel(std::string("a\nb") + std::string(300, 'x')).size(), kMaxLabelBytes);
    const std::string accents(150, 'x');
    QVERIFY(cleanJobLabel(accents + "\xc3\xa9\xc3\xa9\xc3\xa9" + std::string(100, 'y')).size() <= kMaxLabelBytes);
    QCOMPARE(defaultJobLabel(project(), 2), std::string("spec test M=2"));
    QCOMPARE(defaultJobLabel(core::Project{}, 0), std::string("shardscope"));
    QVERIFY(agentRunsMode(agent(), "emulate") && !agentRunsMode(agent(), "mpi"));
    QCOMPARE(runTargetText("gpu01", agent()), "gpu01 (" + agent().cluster.name + ", 8 GPUs)");
  }
};

QTEST_APPLESS_MAIN(TestJobSpec)
#include "test_job_spec.moc"
