// shardscope.project/1: a project names presets or holds its parts inline.
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/core/presets.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
QString errorOf(const json& j) {
  auto r = projectFromJson(j, "p.shardscope");
  return r ? QString() : QString::fromStdString(r.error().message);
}
}  // namespace

class TestJsonProject : public QObject {
  Q_OBJECT
 private slots:
  void loadsPresetNames() {
    auto r = projectFromJson(json::parse(R"({"schema": "shardscope.project/1", "name": "x", "model": "dcnv2",
                                             "cluster": "h200x512", "chosen_grid": {"sharding_group_size": 64}})"),
                             "p.shardscope");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->model.tables.size(), 26u);
    QCOMPARE(r->cluster.worldSize(), 512u);
    QCOMPARE(r->chosen_group_size, std::optional<std::uint32_t>(64));
  }

  void syncIntervalIsRangeChecked() {
    auto r = projectFromJson(json::parse(R"({"schema": "shardscope.project/1", "model": "dcnv2", "cluster": "h100x64",
                                             "sync_interval": 0})"),
                             "p.shardscope");
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("/sync_interval") != std::string::npos, r.error().message.c_str());
  }

  void targetDefaultsToTorchRecAndIsCheckedByName() {
    auto r = projectFromJson(json::parse(R"({"schema": "shardscope.project/1", "name": "x", "model": "dcnv2",
                                             "cluster": "h100x64"})"),
                             "p.shardscope");
    QVERIFY(r.ok());
    QCOMPARE(r->target, PlanTarget::TorchRec);
    r = projectFromJson(json::parse(R"({"schema": "shardscope.project/1", "name": "x", "model": "dcnv2",
                                        "cluster": "h100x64", "target": "megatron"})"),
                        "p.shardscope");
    QVERIFY(!r.ok());
    QVERIFY2(
        r.error().message.find("p.shardscope: /target: expected \"torchrec\" or \"shardscope\", got \"megatron\"") !=
            std::string::npos,
        r.error().message.c_str());
  }

  void chosenLayoutIsCheckedByName() {
    auto r = projectFromJson(json::parse(R"({"schema": "shardscope.project/1", "model": "dcnv2", "cluster": "h100x64",
                                             "chosen_grid": {"sharding_group_size": 8, "layout": "diagonal"}})"),
                             "p.shardscope");
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("/chosen_grid/layout: expected \"strided\" or \"contiguous\", got \"diagonal\"") !=
                 std::string::npos,
             r.error().message.c_str());
  }

  void savedProjectLoadsBackEqual() {
    Project p = defaultProject();
    p.chosen_group_size = 16;
    p.chosen_layout = RankLayout::Contiguous;
    p.sync_interval = 50;
    p.target = PlanTarget::ShardScope;
    Calibration c;
    c.source = "test";
    c.coefficients["dense_efficiency"] = {0.6, 0.01};
    p.calibration = c;
    QTemporaryDir dir;
    const std::string path = dir.filePath("p.shardscope").toStdString();
    QVERIFY(writeJsonFile(path, toJson(p)).ok());
    auto back = loadProject(path);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QVERIFY(*back == p);
  }

  void failedSaveKeepsThePreviousFile() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("p.shardscope").toStdString();
    QVERIFY(writeJsonFile(path, toJson(defaultProject())).ok());
    // A directory where the temp file would go makes the next write fail.
    QVERIFY(QDir().mkpath(QString::fromStdString(path + ".tmp-shardscope")));
    Project changed = defaultProject();
    changed.name = "changed";
    QVERIFY(!writeJsonFile(path, toJson(changed)).ok());
    auto back = loadProject(path);
    QVERIFY(back.ok());
    QCOMPARE(back->name, defaultProject().name);
  }

  void nestedErrorsCarryTheNestedPath() {
    json j = toJson(defaultProject());
    j["model"]["tables"][4]["dim"] = 6;
    j["cluster"]["gpus_per_node"] = "eight";
    const QString e = errorOf(j);
    QVERIFY2(e.contains("p.shardscope: /model/tables/4/dim: expected a positive multiple of 4, got 6"), qPrintable(e));
    QVERIFY2(e.contains("p.shardscope: /cluster/gpus_per_node: expected an integer in [1, 1024], got string \"eight\""),
             qPrintable(e));
  }

  void loadsPartsFromFilesRelativeToTheProject() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath("parts"));
    Project p = defaultProject();
    p.model.name = "from a file";
    QVERIFY(writeJsonFile(dir.filePath("parts/m.json").toStdString(), toJson(p.model)).ok());
    const std::string path = dir.filePath("p.shardscope").toStdString();
    QVERIFY(writeJsonFile(path, nlohmann::ordered_json{{"schema", "shardscope.project/1"},
                                                       {"name", "x"},
                                                       {"model", "parts/m.json"},
                                                       {"cluster", "a100x8"}})
                .ok());
    auto back = loadProject(path);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QCOMPARE(back->model.name, std::string("from a file"));
  }

  void rejectsMissingPartFile() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("p.shardscope").toStdString();
    QVERIFY(writeJsonFile(path, nlohmann::ordered_json{{"schema", "shardscope.project/1"},
                                                       {"name", "x"},
                                                       {"model", "nowhere/m.json"},
                                                       {"cluster", "a100x8"}})
                .ok());
    auto back = loadProject(path);
    QVERIFY(!back.ok());
    QVERIFY2(QString::fromStdString(back.error().message)
                 .contains("/model: " + dir.filePath("nowhere/m.json") + ": cannot open"),
             back.error().message.c_str());
  }

  void rejectsUnknownPreset() {
    json j = toJson(defaultProject());
    j["cluster"] = "tpu_v5";
    QVERIFY(errorOf(j).contains("/cluster: unknown cluster preset \"tpu_v5\"; expected one of"));
  }

  void rejectsNestedPartOfWrongFormat() {
    json j = toJson(defaultProject());
    j["model"]["schema"] = "shardscope.cluster/1";
    QVERIFY(errorOf(j).contains("/model/schema: expected \"shardscope.model/1\" (or no schema)"));
  }

  void rejectsChosenGridThatDoesNotDivideN() {
    json j = toJson(defaultProject());
    j["chosen_grid"] = {{"sharding_group_size", 48}};
    QVERIFY(
        errorOf(j).contains("/chosen_grid/sharding_group_size: expected a divisor of the cluster's 64 GPUs, got 48"));
  }

  void detectsEachFormat() {
    QCOMPARE(detectFormat(toJson(defaultProject()), "x").value(), FormatKind::Project);
    QCOMPARE(detectFormat(toJson(defaultProject().model), "x").value(), FormatKind::Model);
    QCOMPARE(detectFormat(toJson(defaultProject().cluster), "x").value(), FormatKind::Cluster);
    QVERIFY(!detectFormat(json{{"schema", "other/1"}}, "x").ok());
    QVERIFY(!detectFormat(json::array(), "x").ok());
  }
};

QTEST_APPLESS_MAIN(TestJsonProject)
#include "test_json_project.moc"
