// Imported runs name the GPUs their traces ran on: a Kineto trace's deviceProperties (before or
// after its events) and an Nsight Systems export's TARGET_INFO_GPU give each rank's GPU, the run's
// configuration carries them as "gpus" in rank order, and profiler::runDevice reads the run's
// device from it. A device list that is malformed in any way leaves the GPU unknown, never fails.
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/import/nsys_import.h"
#include "shardscope/profiler/import/store_import_sink.h"
#include "shardscope/profiler/trace/run_device.h"

using namespace shardscope;
namespace st = core::store;

namespace {

constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";
constexpr const char* kA100 = "NVIDIA A100-SXM4-80GB";

// Where a Kineto trace writes its deviceProperties.
enum class Props { Before, After };

// A Kineto trace of one rank: a profiler step, a launch and its embedding kernel on GPU `device`
// (none when device < 0), and `device_properties` (JSON text; "" for none) before or after the
// events. With `late_rank`, distributedInfo follows the events too, as a streamed writer puts it.
std::string kinetoTrace(int rank, int device, const std::string& device_properties, Props where = Props::Before,
                        bool late_rank = false, int world_size = 2) {
  const std::string dist = R"("distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(rank) +
                           R"(, "world_size": )" + std::to_string(world_size) + "}";
  const std::string props = device_properties.empty() ? "" : R"("deviceProperties": )" + device_properties;
  std::string events = R"("traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000, "dur": 100},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1010, "dur": 5,
     "args": {"correlation": 7}})";
  if (device >= 0)
    events += R"(,
    {"ph": "X", "cat": "kernel", "name": "split_embedding_codegen_forward_unweighted_kernel", "pid": )" +
              std::to_string(device) + R"(, "tid": 7, "ts": 1020, "dur": 30, "args": {"device": )" +
              std::to_string(device) + R"(, "stream": 7, "correlation": 7}})";
  events += "]";
  std::vector<std::string> members;
  if (!late_rank) members.push_back(dist);
  if (!props.empty() && where == Props::Before) members.push_back(props);
  members.push_back(events);
  if (late_rank) members.push_back(dist);
  if (!props.empty() && where == Props::After) members.push_back(props);
  members.push_back(R"("baseTimeNanoseconds": 1733000000000000000)");
  std::string doc = "{";
  for (std::size_t i = 0; i < members.size(); ++i) doc += (i > 0 ? ",\n" : "\n") + members[i];
  return doc + "\n}";
}

// deviceProperties as PyTorch writes it, one entry per (id, name).
std::string deviceProperties(const std::vector<std::pair<int, std::string>>& gpus) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [id, name] : gpus)
    a.push_back({{"id", id}, {"name", name}, {"totalGlobalMem", 85045559296}, {"computeMajor", 9}});
  return a.dump();
}

std::string writeFile(const QTemporaryDir& dir, const std::string& name, const std::string& text) {
  const std::string p = dir.filePath(QString::fromStdString(name)).toStdString();
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// The stored run of an import: its configuration, and the import's outcome.
struct StoredRun {
  core::Status status = core::Ok{};
  nlohmann::json config;
  profiler::EngineRunConfig read = {};  // the configuration as readEngineRunConfig reads it
};

StoredRun readBack(const std::string& store, st::RunId run) {
  StoredRun out;
  auto ts = st::openStore(store, st::OpenMode::ReadOnly);
  if (!ts) {
    out.status = ts.error();
    return out;
  }
  auto rec = ts->run(run);
  if (!rec) {
    out.status = rec.error();
    return out;
  }
  if (!rec->isComplete()) out.status = core::Error{"the run is not complete: " + rec->error};
  out.config = nlohmann::json::parse(rec->config_json, nullptr, false);
  auto read = profiler::readEngineRunConfig(rec->config_json, "config_json");
  if (!read) {
    out.status = read.error();
    return out;
  }
  out.read = std::move(read).value();
  return out;
}

// Imports Kineto files as one run of a fresh store in `dir`.
StoredRun importKinetoRun(const QTemporaryDir& dir, const std::vector<std::string>& files,
                          profiler::StoreImportOptions options = {}) {
  const std::string store = dir.filePath("run.sqlite").toStdString();
  auto sink = profiler::StoreImportSink::create(store, options);
  if (!sink) return {sink.error(), {}};
  for (const std::string& f : files) {
    auto r = profiler::importKineto(f, **sink);
    if (!r) {
      (void)(*sink)->fail(r.error().message);
      return {r.error(), {}};
    }
  }
  if (auto f = (*sink)->finish(); !f) return {f, {}};
  return readBack(store, (*sink)->run());
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// An nsys export: the importer's fixture (one rank, kernels on device 0) and `extra_sql`.
bool makeNsysExport(const std::string& path, const std::string& extra_sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return false;
  }
  const std::string sql = readText(SHARDSCOPE_TEST_DATA_DIR "/import/nsys_small.sql") + extra_sql;
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) qWarning("fixture SQL failed: %s", err != nullptr ? err : "?");
  sqlite3_free(err);
  sqlite3_close(db);
  return rc == SQLITE_OK;
}

// Imports nsys exports (rank = position) as one run of a fresh store in `dir`.
StoredRun importNsysRun(const QTemporaryDir& dir, const std::vector<std::string>& files) {
  const std::string store = dir.filePath("run.sqlite").toStdString();
  profiler::StoreImportOptions o;
  o.kind = st::RunKind::ImportNsys;
  auto sink = profiler::StoreImportSink::create(store, o);
  if (!sink) return {sink.error(), {}};
  for (std::size_t i = 0; i < files.size(); ++i) {
    profiler::NsysOptions no;
    no.rank = static_cast<int>(i);
    if (auto s = profiler::importNsys(files[i], **sink, no); !s) {
      (void)(*sink)->fail(s.error().message);
      return {s, {}};
    }
  }
  if (auto f = (*sink)->finish(); !f) return {f, {}};
  return readBack(store, (*sink)->run());
}

// TARGET_INFO_GPU as recent exports write it (a subset of its columns), with one row per GPU.
std::string targetInfoGpu(const std::vector<std::pair<int, std::string>>& gpus) {
  std::string sql =
      "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, "
      "totalMemory INTEGER, smCount INTEGER, chipName TEXT, cuDevice INTEGER, computeMajor INTEGER, "
      "computeMinor INTEGER);\n";
  for (const auto& [cu, name] : gpus)
    sql += "INSERT INTO TARGET_INFO_GPU VALUES (0, " + std::to_string(cu + 10) + ", '" + name +
           "', '0000:" + std::to_string(cu) + "0:00.0', 85045559296, 132, 'GH100', " + std::to_string(cu) +
           ", 9, 0);\n";
  return sql;
}

// The configuration's "gpus" as JSON text, to compare with list().
std::string gpusOf(const StoredRun& r) {
  return r.config.is_object() && r.config.contains("gpus") ? r.config["gpus"].dump() : std::string("(none)");
}
std::string list(const std::vector<std::string>& names) { return nlohmann::json(names).dump(); }

const char* message(const core::Status& s) { return s ? "" : s.error().message.c_str(); }

}  // namespace

class TestImportDevices : public QObject {
  Q_OBJECT

 private slots:
  void kinetoRanksNameTheirGpusWhetherDevicePropertiesComeBeforeOrAfterTheEvents() {
    QTemporaryDir dir;
    const std::string props = deviceProperties({{0, kH100}, {1, kH100}});
    // Rank 1 as a streaming writer leaves it: rank and devices after the events; given first.
    const std::string r1 = writeFile(dir, "r1.json", kinetoTrace(1, 1, props, Props::After, true));
    const std::string r0 = writeFile(dir, "r0.json", kinetoTrace(0, 0, props, Props::Before));
    const StoredRun run = importKinetoRun(dir, {r1, r0});
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({kH100, kH100}));
    QCOMPARE(run.config.value("mode", ""), std::string("import-kineto"));  // the rest is kept
    const core::DeviceInfo d = profiler::runDevice(run.read);
    QVERIFY(d.kind == core::DeviceClass::Gpu);
    QCOMPARE(d.name, std::string(kH100));
    QCOMPARE(d.count, 2u);
  }

  void aRanksGpuIsTheOneItsKernelsRanOn() {
    QTemporaryDir dir;
    const std::string props = deviceProperties({{0, kA100}, {1, kH100}});
    const StoredRun run = importKinetoRun(dir, {writeFile(dir, "r0.json", kinetoTrace(0, 1, props, Props::After))});
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({kH100}));
  }

  void withoutKernelsOrWithAnUnlistedDeviceTheFirstListedGpuNamesTheRank() {
    QTemporaryDir dir;
    const std::string props = deviceProperties({{0, kA100}, {1, kH100}});
    const std::string cpu_only = writeFile(dir, "r0.json", kinetoTrace(0, -1, props));
    const std::string unlisted = writeFile(dir, "r1.json", kinetoTrace(1, 5, props));
    const StoredRun run = importKinetoRun(dir, {cpu_only, unlisted});
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({kA100, kA100}));
  }

  void aRankWhoseFileListsNoGpuIsEmptyAndTheRunTakesTheOthers() {
    QTemporaryDir dir;
    const std::string named = writeFile(dir, "r0.json", kinetoTrace(0, 0, deviceProperties({{0, kH100}})));
    const std::string silent = writeFile(dir, "r1.json", kinetoTrace(1, 0, ""));
    const StoredRun run = importKinetoRun(dir, {silent, named});  // in rank order whatever the files' order
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({kH100, ""}));
    const core::DeviceInfo d = profiler::runDevice(run.read);
    QVERIFY(d.kind == core::DeviceClass::Gpu);
    QCOMPARE(d.name, std::string(kH100));
    QCOMPARE(d.count, 1u);  // the GPUs the run names
  }

  void aRunWhoseFilesListNoGpuHasAnUnknownDevice() {
    QTemporaryDir dir;
    const StoredRun run =
        importKinetoRun(dir, {writeFile(dir, "r0.json", kinetoTrace(0, 0, "", Props::Before, false, 1))});
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({""}));
    QVERIFY(profiler::runDevice(run.read).kind == core::DeviceClass::Unknown);
  }

  void aStreamedRankNamesItsGpuFromDevicePropertiesAfterItsEvents() {
    QTemporaryDir dir;
    profiler::StoreImportOptions o;
    o.max_buffered_events = 2;  // written as it streams from its second event
    const std::string f = writeFile(dir, "r0.json", kinetoTrace(0, 0, deviceProperties({{0, kH100}}), Props::After));
    const StoredRun run = importKinetoRun(dir, {f}, o);
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({kH100}));
  }

  void malformedDevicePropertiesNeverFailTheImport_data() {
    QTest::addColumn<QString>("props");
    QTest::addColumn<QString>("gpu");
    QTest::newRow("an object, not an array") << R"({"id": 0, "name": "NVIDIA H100 80GB HBM3"})"
                                             << "";
    QTest::newRow("a string") << R"("NVIDIA H100 80GB HBM3")"
                              << "";
    QTest::newRow("null") << "null"
                          << "";
    QTest::newRow("an empty array") << "[]"
                                    << "";
    QTest::newRow("an entry without a name") << R"([{"id": 0, "totalGlobalMem": 85045559296}])"
                                             << "";
    QTest::newRow("a number as the name") << R"([{"id": 0, "name": 100}])"
                                          << "";
    QTest::newRow("null as the name") << R"([{"id": 0, "name": null}])"
                                      << "";
    QTest::newRow("an object as the name") << R"([{"id": 0, "name": {"model": "H100"}}])"
                                           << "";
    QTest::newRow("entries that are not objects") << R"([0, "NVIDIA H100", null, [{"id": 0, "name": "H100"}]])"
                                                  << "";
    QTest::newRow("a name of control characters only") << R"([{"id": 0, "name": "\u0001\t\n\u007f"}])"
                                                       << "";
    QTest::newRow("an id that is not a number") << R"([{"id": "0", "name": "NVIDIA H100 80GB HBM3"}])"
                                                << "NVIDIA H100 80GB HBM3";
    QTest::newRow("an id out of range") << R"([{"id": -1e300, "name": "NVIDIA H100 80GB HBM3"}])"
                                        << "NVIDIA H100 80GB HBM3";
    QTest::newRow("control characters in the name")
        << R"([{"id": 0, "name": "\u0000NVIDIA\tH100 \n 80GB\u0085HBM3\u001b"}])"
        << "NVIDIA H100 80GB HBM3";
    QTest::newRow("a nameless entry before a named one") << R"([{"id": 0}, {"id": 0, "name": "NVIDIA H100 80GB HBM3"}])"
                                                         << "NVIDIA H100 80GB HBM3";
    QTest::newRow("non-ASCII kept") << R"([{"id": 0, "name": "GPU \u00e9t\u00e9 \ud83d\ude80"}])"
                                    << QString::fromUtf8("GPU été 🚀");
    const std::string huge(100'000, 'A');
    QTest::newRow("a huge name") << QString::fromStdString(R"([{"id": 0, "name": ")" + huge + R"("}])")
                                 << QString::fromStdString(std::string(256, 'A'));
    // 1 + 200 x 2 bytes: cut at 255 bytes, not in the middle of a character.
    std::string accents = "x";
    for (int i = 0; i < 200; ++i) accents += "\xC3\xA9";
    QTest::newRow("a huge non-ASCII name") << QString::fromStdString(R"([{"id": 0, "name": ")" + accents + R"("}])")
                                           << QString::fromStdString(accents.substr(0, 255));
  }
  void malformedDevicePropertiesNeverFailTheImport() {
    QFETCH(QString, props);
    QFETCH(QString, gpu);
    for (const Props where : {Props::Before, Props::After}) {
      QTemporaryDir dir;
      const std::string f = writeFile(dir, "r0.json", kinetoTrace(0, 0, props.toStdString(), where, false, 1));
      const StoredRun run = importKinetoRun(dir, {f});
      QVERIFY2(run.status.ok(), message(run.status));
      QCOMPARE(gpusOf(run), list({gpu.toStdString()}));
      QVERIFY(profiler::runDevice(run.read).kind ==
              (gpu.isEmpty() ? core::DeviceClass::Unknown : core::DeviceClass::Gpu));
    }
  }

  void devicePropertiesThatAreNotJsonAreASyntaxError_data() {
    QTest::addColumn<QString>("props");
    QTest::newRow("a comma after the last entry") << R"([{"id": 0, "name": "NVIDIA H100 80GB HBM3"},])";
    QTest::newRow("a comma after the last member") << R"([{"id": 0, "name": "NVIDIA H100 80GB HBM3",}])";
    QTest::newRow("a raw control character") << "[{\"id\": 0, \"name\": \"NVIDIA\x01H100\"}]";
    QTest::newRow("an unclosed entry") << R"([{"id": 0, "name": "NVIDIA H100 80GB HBM3"])";
  }
  void devicePropertiesThatAreNotJsonAreASyntaxError() {
    QFETCH(QString, props);
    QTemporaryDir dir;
    const std::string f = writeFile(dir, "r0.json", kinetoTrace(0, 0, props.toStdString(), Props::Before, false, 1));
    const StoredRun run = importKinetoRun(dir, {f});
    QVERIFY(!run.status.ok());
    QVERIFY2(run.status.error().message.find("syntax error") != std::string::npos, message(run.status));
  }

  void nsysExportsNameTheirGpusFromTargetInfoGpu() {
    QTemporaryDir dir;
    // The fixture's kernels run on CUDA device 0; TARGET_INFO_GPU's own ids differ from it.
    const std::string r0 = dir.filePath("rank0.sqlite").toStdString();
    const std::string r1 = dir.filePath("rank1.sqlite").toStdString();
    QVERIFY(makeNsysExport(r0, targetInfoGpu({{0, kH100}, {1, kA100}})));
    QVERIFY(makeNsysExport(r1, targetInfoGpu({{1, kA100}, {0, kH100}})));
    const StoredRun run = importNsysRun(dir, {r0, r1});
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({kH100, kH100}));
    QCOMPARE(run.config.value("mode", ""), std::string("import-nsys"));
    const core::DeviceInfo d = profiler::runDevice(run.read);
    QVERIFY(d.kind == core::DeviceClass::Gpu);
    QCOMPARE(d.name, std::string(kH100));
    QCOMPARE(d.count, 2u);
  }

  void anNsysExportWithoutTargetInfoGpuHasAnUnknownGpu() {
    QTemporaryDir dir;
    const std::string f = dir.filePath("rank0.sqlite").toStdString();
    QVERIFY(makeNsysExport(f, ""));
    const StoredRun run = importNsysRun(dir, {f});
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({""}));
    QVERIFY(profiler::runDevice(run.read).kind == core::DeviceClass::Unknown);
  }

  void nsysGpuTablesOfOtherShapesAreReadOrLeftUnknown_data() {
    QTest::addColumn<QString>("sql");
    QTest::addColumn<QString>("gpu");
    QTest::newRow("no cuDevice column: id") << "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
                                               "INSERT INTO TARGET_INFO_GPU VALUES (1, 'NVIDIA A100-SXM4-80GB');"
                                               "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3');"
                                            << kH100;
    QTest::newRow("a NULL cuDevice: id") << "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, cuDevice INTEGER);"
                                            "INSERT INTO TARGET_INFO_GPU VALUES (1, 'NVIDIA A100-SXM4-80GB', 1);"
                                            "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', NULL);"
                                         << kH100;
    QTest::newRow("early 2021: TARGET_INFO_CUDA_GPU")
        << "CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INTEGER, name TEXT, numMultiprocessors INTEGER);"
           "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132);"
        << kH100;
    QTest::newRow("no device column: the first listed")
        << "CREATE TABLE TARGET_INFO_GPU (name TEXT); INSERT INTO TARGET_INFO_GPU VALUES ('NVIDIA H100 80GB HBM3');"
        << kH100;
    QTest::newRow("no name column") << "CREATE TABLE TARGET_INFO_GPU (id INTEGER, chipName TEXT);"
                                       "INSERT INTO TARGET_INFO_GPU VALUES (0, 'GH100');"
                                    << "";
    QTest::newRow("no rows") << "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
                             << "";
    QTest::newRow("names that are not text")
        << "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name);"
           "INSERT INTO TARGET_INFO_GPU VALUES (0, NULL), (0, 100), (0, X'4E5649444941'), (0, 1.5);"
        << "";
    QTest::newRow("an id of another type") << "CREATE TABLE TARGET_INFO_GPU (id, name TEXT);"
                                              "INSERT INTO TARGET_INFO_GPU VALUES ('zero', 'NVIDIA H100 80GB HBM3');"
                                           << kH100;
    QTest::newRow("control characters and bytes that are not UTF-8")
        << "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
           "INSERT INTO TARGET_INFO_GPU VALUES (0, CAST(X'4E5649444941FF0948313030C0AF0A' AS TEXT));"
        << "NVIDIA H100";
    QTest::newRow("a huge name") << "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
                                    "INSERT INTO TARGET_INFO_GPU VALUES (0, printf('%.100000c', 'B'));"
                                 << QString(256, 'B');
  }
  void nsysGpuTablesOfOtherShapesAreReadOrLeftUnknown() {
    QFETCH(QString, sql);
    QFETCH(QString, gpu);
    QTemporaryDir dir;
    const std::string f = dir.filePath("rank0.sqlite").toStdString();
    QVERIFY(makeNsysExport(f, sql.toStdString()));
    const StoredRun run = importNsysRun(dir, {f});
    QVERIFY2(run.status.ok(), message(run.status));
    QCOMPARE(gpusOf(run), list({gpu.toStdString()}));
  }

  // The import's summary names each rank's GPU too.
  void theSinkReportsEachRanksGpu() {
    QTemporaryDir dir;
    const std::string store = dir.filePath("run.sqlite").toStdString();
    auto sink = profiler::StoreImportSink::create(store, {});
    QVERIFY(sink.ok());
    const std::string f = writeFile(dir, "r0.json", kinetoTrace(0, 0, deviceProperties({{0, kH100}})));
    QVERIFY(profiler::importKineto(f, **sink).ok());
    QVERIFY((*sink)->finish().ok());
    QCOMPARE((*sink)->ranks().size(), std::size_t{1});
    QCOMPARE((*sink)->ranks().front().gpu, std::string(kH100));
  }
};

QTEST_GUILESS_MAIN(TestImportDevices)
#include "test_import_devices.moc"
