// A run's configuration (runs.config_json): what the engines write reads back
// the same; an import's configuration reads as its mode and GPUs; a text that
// is not a JSON object is an error naming it (and, for a listing, a
// configuration that says nothing); a member of another type is passed over.
#include <QtTest>

#include "shardscope/profiler/trace/engine_run_config.h"
#include "shardscope/profiler/trace/run_device.h"

using namespace shardscope;
using profiler::EngineRunConfig;

namespace {

EngineRunConfig written() {
  EngineRunConfig c;
  c.mode = "mpi";
  c.steps = 20;
  c.warmup = 2;
  c.seed = 7;
  c.threads = 3;
  c.batch_size_per_gpu = 256;
  c.sync_interval = 4;
  c.pooling = "mean";
  c.learning_rate = 0.01;
  c.eps = 1e-8;
  c.tracing = true;
  c.sharding_group_size = 2;
  c.replicas = 2;
  c.groups_measured = 2;
  c.ranks_measured = {0, 1, 2, 3};
  c.world_size = 4;
  c.memory_budget_bytes = 1u << 30;
  c.capped = {{"big", 1, 100, 0, 5000, 1000}};
  c.host = "node1";
  c.hosts = std::vector<std::string>{"node1", "node2"};
  c.cpu = "Test CPU";
  c.gpus = {"NVIDIA H100 80GB HBM3 (GPU 0)"};
  c.device = "cuda";
  c.gpu_tracing = profiler::GpuTracing{true, 10, 1, 2, 4096, 1.5, 1.6, 6.7, ""};
  c.started = "2026-12-07T15:04:05Z";
  return c;
}

}  // namespace

class TestEngineRunConfig : public QObject {
  Q_OBJECT

 private slots:
  void whatIsWrittenReadsBack() {
    const EngineRunConfig c = written();
    auto back = profiler::readEngineRunConfig(profiler::engineRunConfigJson(c), "run 1 config_json");
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    QCOMPARE(back->schema, std::string(profiler::kEngineRunSchema));
    QCOMPARE(back->mode, c.mode);
    QCOMPARE(back->steps, c.steps);
    QCOMPARE(back->seed, c.seed);
    QCOMPARE(back->batch_size_per_gpu, c.batch_size_per_gpu);
    QCOMPARE(back->sync_interval, c.sync_interval);
    QCOMPARE(back->pooling, c.pooling);
    QCOMPARE(back->learning_rate, c.learning_rate);
    QVERIFY(back->tracing && !back->replay);
    QCOMPARE(back->sharding_group_size, 2u);
    QCOMPARE(back->replicas, 2u);
    QCOMPARE(back->ranks_measured, c.ranks_measured);
    QCOMPARE(back->world_size, c.world_size);
    QCOMPARE(back->capped.size(), std::size_t{1});
    QCOMPARE(back->capped[0].table, std::string("big"));
    QCOMPARE(back->capped[0].physical_rows, std::uint64_t{1000});
    QCOMPARE(back->hosts, c.hosts);
    QCOMPARE(back->gpus, c.gpus);
    QCOMPARE(back->device, c.device);
    QVERIFY(back->gpu_tracing && back->gpu_tracing->records == 10 && back->gpu_tracing->overhead_pct == 6.7);
    QCOMPARE(back->started, c.started);  // kept: a configuration written again keeps its start
    EngineRunConfig now = c;
    now.started.clear();
    QVERIFY(!profiler::readEngineRunConfig(profiler::engineRunConfigJson(now), "x")->started.empty());
  }

  void anImportsConfigurationNamesItsModeAndGpus() {
    auto c = profiler::readEngineRunConfig(
        R"({"schema": "shardscope.import/1", "mode": "import-kineto", "files": ["a.json"],
            "gpus": ["NVIDIA H100 80GB HBM3", ""]})",
        "import");
    QVERIFY(c);
    QCOMPARE(c->schema, std::string(profiler::kImportRunSchema));
    QCOMPARE(c->mode, std::string("import-kineto"));
    QCOMPARE(c->sync_interval, 0u);  // not said: not the writer's default of 1
    const core::DeviceInfo d = profiler::runDevice(*c);
    QVERIFY(d.kind == core::DeviceClass::Gpu);
    QCOMPARE(d.count, 1u);
  }

  void membersOfAnotherTypeArePassedOver() {
    auto c = profiler::readEngineRunConfig(
        R"({"batch_size_per_gpu": "many", "steps": -3, "grid": [2], "capped": [3, {"table": 5, "rows": 10}],
            "gpus": "H100", "world_size": 1e20, "hosts": [1, "n1"], "device": 7})",
        "odd");
    QVERIFY(c);
    QCOMPARE(c->batch_size_per_gpu, 0u);
    QCOMPARE(c->steps, 0u);
    QCOMPARE(c->sharding_group_size, 0u);
    QCOMPARE(c->capped.size(), std::size_t{1});
    QCOMPARE(c->capped[0].table, std::string());
    QCOMPARE(c->capped[0].rows, std::uint64_t{10});
    QVERIFY(c->gpus.empty());
    QVERIFY(!c->world_size);
    QCOMPARE(c->hosts, std::optional<std::vector<std::string>>(std::vector<std::string>{"n1"}));
    QVERIFY(!c->device);
    QVERIFY(profiler::runDevice(*c).kind == core::DeviceClass::Unknown);
  }

  void aTextThatIsNotAnObjectIsAnError_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("path");
    QTest::newRow("empty") << ""
                           << "";
    QTest::newRow("not json") << "{\"mode\": "
                              << "";
    QTest::newRow("a key twice") << R"({"mode": "mpi", "mode": "emulate"})"
                                 << "/mode";
    QTest::newRow("an array") << "[1]"
                              << "/";
    QTest::newRow("too deep") << QString(200, '[') + QString(200, ']') << "";
  }
  void aTextThatIsNotAnObjectIsAnError() {
    QFETCH(QString, text);
    QFETCH(QString, path);
    auto c = profiler::readEngineRunConfig(text.toStdString(), "run 9 config_json");
    QVERIFY(!c);
    QVERIFY(c.error().kind == core::ErrorKind::InvalidInput);
    QVERIFY2(c.error().message.starts_with("run 9 config_json: "), c.error().message.c_str());
    if (!path.isEmpty()) QCOMPARE(QString::fromStdString(c.error().json_path), path);
    // A listing reads it as a configuration that says nothing.
    const EngineRunConfig nothing = profiler::storedRunConfig(text.toStdString());
    QVERIFY(nothing.mode.empty() && nothing.batch_size_per_gpu == 0 && nothing.sync_interval == 0);
    QVERIFY(profiler::runDevice(nothing).kind == core::DeviceClass::Unknown);
  }
};

QTEST_APPLESS_MAIN(TestEngineRunConfig)
#include "test_engine_run_config.moc"
