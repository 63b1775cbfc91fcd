// `shardscope-cli import` end to end through QProcess: Kineto files and a
// folder into a store, the summary (text and JSON), `report` on the run, and
// the exit codes of bad input, bad rules, duplicate ranks and usage errors.
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {
const QString kData = QStringLiteral(SHARDSCOPE_TEST_DATA_DIR "/import/");

using cli_test::Run;

void writeText(const QString& path, const std::string& text) {
  std::ofstream f(path.toStdString(), std::ios::binary);
  f << text;
}

// A 4-rank TorchRec job: one table per rank (TorchRec's table-wise plan),
// Kineto traces whose embedding kernels take longer on higher ranks.
struct TrainerJob {
  QString model, plan, traces[4];
};
TrainerJob writeTrainerJob(const QTemporaryDir& dir) {
  TrainerJob job;
  nlohmann::json model = {{"schema", "shardscope.model/1"},
                          {"name", "four tables"},
                          {"batch_size_per_gpu", 512},
                          {"optimizer", "rowwise_adagrad"},
                          {"dense", {{"parameters", 100000}, {"flops_per_sample", 100000}}},
                          {"tables", nlohmann::json::array()}};
  nlohmann::json plan = {{"plan", {{"sparse_arch.embedding_bag_collection", nlohmann::json::object()}}}};
  for (int t = 0; t < 4; ++t) {
    const std::string name = QString("t%1").arg(t).toStdString();
    const int rows = 100000 * (t + 1), dim = t < 2 ? 64 : 128;
    model["tables"].push_back({{"name", name}, {"rows", rows}, {"dim", dim}, {"pooling", 2 + 4 * t}});
    nlohmann::json shard = {{"shard_offsets", {0, 0}},
                            {"shard_sizes", {rows, dim}},
                            {"placement", QString("rank:%1/cuda:%1").arg(t).toStdString()}};
    nlohmann::json entry = {{"sharding_type", "table_wise"}, {"compute_kernel", "fused"}};
    entry["ranks"] = nlohmann::json::array({t});
    entry["shards"] = nlohmann::json::array({shard});
    plan["plan"]["sparse_arch.embedding_bag_collection"][name] = entry;
  }
  job.model = dir.filePath("model.json");
  job.plan = dir.filePath("torchrec_plan.json");
  writeText(job.model, model.dump());
  writeText(job.plan, plan.dump());
  for (int r = 0; r < 4; ++r) {
    nlohmann::json events = nlohmann::json::array();
    for (int step = 1; step <= 3; ++step) {
      const double t0 = 1000.0 * step * 10;
      events.push_back({{"ph", "X"},
                        {"cat", "user_annotation"},
                        {"name", QString("ProfilerStep#%1").arg(step).toStdString()},
                        {"pid", 1},
                        {"tid", 1},
                        {"ts", t0},
                        {"dur", 9000}});
      events.push_back({{"ph", "X"},
                        {"cat", "kernel"},
                        {"name", "void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float>()"},
                        {"pid", 0},
                        {"tid", 7},
                        {"ts", t0 + 100},
                        {"dur", 150 + 90 * r + 40 * r * r},
                        {"args", {{"device", 0}, {"stream", 7}}}});
      events.push_back({{"ph", "X"},
                        {"cat", "kernel"},
                        {"name",
                         "void fbgemm_gpu::split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_"
                         "warp_per_row_1<float>()"},
                        {"pid", 0},
                        {"tid", 7},
                        {"ts", t0 + 5000},
                        {"dur", 300 + 200 * r + 60 * r * r},
                        {"args", {{"device", 0}, {"stream", 7}}}});
    }
    nlohmann::json trace = {{"schemaVersion", 1},
                            {"distributedInfo", {{"backend", "nccl"}, {"rank", r}, {"world_size", 4}}},
                            // The GPU the trainer ran on: its times compare with predictions for H100s.
                            {"deviceProperties", {{{"id", 0}, {"name", "NVIDIA H100 80GB HBM3"}}}},
                            {"traceEvents", events}};
    job.traces[r] = dir.filePath(QString("rank%1.json").arg(r));
    writeText(job.traces[r], trace.dump());
  }
  return job;
}

Run cli(const QStringList& args) { return cli_test::runCli(args); }
}  // namespace

class TestCliImport : public QObject {
  Q_OBJECT

 private slots:
  void importsKinetoAndReports() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    auto r = cli({"import", "kineto", kData + "rank0.json", kData + "rank1.json.gz", "--store", store});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("imported run 1 (import-kineto)"), qPrintable(r.out));
    QVERIFY2(r.out.contains("-5000.123 ms"), qPrintable(r.out));  // rank 1's clock offset
    QVERIFY(r.out.contains("ProfilerStep#5 start"));
    QVERIFY(r.out.contains("unknown category \"python_function\""));
    QVERIFY(r.out.contains("shardscope-cli report --store"));
    auto rep = cli({"report", "--store", store, "--json"});
    QVERIFY2(rep.code == 0, qPrintable(rep.err));
    const auto j = nlohmann::json::parse(rep.out.toStdString(), nullptr, false);
    QVERIFY(!j.is_discarded());
    const std::string text = j.dump();
    QVERIFY2(text.find("import-kineto") != std::string::npos, text.c_str());
    QVERIFY2(text.find("a2a_ids") != std::string::npos, text.c_str());
    auto txt = cli({"report", "--store", store});
    QVERIFY(txt.code == 0);
    QVERIFY2(txt.out.contains("overall 1.375"), qPrintable(txt.out));
  }

  void folderAndJson() {
    QTemporaryDir dir;
    namespace fs = std::filesystem;
    const fs::path traces = fs::path(dir.path().toStdString()) / "traces";
    fs::create_directories(traces);
    fs::copy_file(kData.toStdString() + "rank0.json", traces / "rank0.json");
    fs::copy_file(kData.toStdString() + "rank1.json.gz", traces / "rank1.json.gz");
    const QString store = dir.filePath("s.sqlite");
    auto r = cli(
        {"import", "kineto", QString::fromStdString(traces.string()), "--store", store, "--json", "--label", "job 7"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto j = nlohmann::json::parse(r.out.toStdString(), nullptr, false);
    if (j.is_discarded()) QFAIL("import --json did not print JSON");
    QCOMPARE(j["ranks"].size(), std::size_t{2});
    QCOMPARE(j["ranks"][1]["clock_offset_ns"].get<std::int64_t>(), std::int64_t{-5'000'123'500});
    QCOMPARE(j["spans_by_kind"]["emb_fwd"].get<int>(), 4);
    QCOMPARE(j["events"].get<int>(), 76);
  }

  void errorsAndExitCodes() {
    QTemporaryDir dir;
    const QString store = dir.filePath("s.sqlite");
    auto trunc = cli({"import", "kineto", kData + "truncated.json", "--store", store});
    QCOMPARE(trunc.code, 1);
    QVERIFY2(trunc.err.contains("truncated.json: byte "), qPrintable(trunc.err));
    QVERIFY(trunc.err.contains("marked failed"));
    auto dup = cli({"import", "kineto", kData + "rank0.json", kData + "rank0.json", "--store", store});
    QCOMPARE(dup.code, 1);
    QVERIFY2(dup.err.contains("rank 0 was already imported"), qPrintable(dup.err));
    auto rules = cli({"import", "kineto", kData + "rank0.json", "--store", store, "--rules", kData + "bad_rules.json"});
    QCOMPARE(rules.code, 1);
    QVERIFY2(rules.err.contains("/rules/1/pattern: invalid regular expression"), qPrintable(rules.err));
    QCOMPARE(cli({"import", "kineto", kData + "rank0.json"}).code, 2);  // no --store
    QCOMPARE(cli({"import", "perfetto", kData + "rank0.json", "--store", store}).code, 2);
    QCOMPARE(cli({"import", "kineto", "--store", store}).code, 2);  // no file
    QCOMPARE(cli({"import", "kineto", kData + "rank0.json", "--store", store, "--bogus"}).code, 2);
    auto missing = cli({"import", "kineto", kData + "nope.json", "--store", store});
    QCOMPARE(missing.code, 1);
    QVERIFY(missing.err.contains("nope.json"));
    auto help = cli({"import", "--help"});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains("import kineto"));
  }

  void trainerPlanGivesPredictionsAndACalibration() {
    QTemporaryDir dir;
    const TrainerJob job = writeTrainerJob(dir);
    const QString store = dir.filePath("s.sqlite");
    auto imp = cli({"import", "kineto", job.traces[0], job.traces[1], job.traces[2], job.traces[3], "--store", store});
    QVERIFY2(imp.code == 0, qPrintable(imp.err));
    // Without the plan: measured only, and one line saying what to give.
    auto bare = cli({"report", "--store", store});
    QVERIFY2(bare.code == 0, qPrintable(bare.err));
    QVERIFY2(bare.out.contains("give --plan"), qPrintable(bare.out));
    QVERIFY(!bare.out.contains("is empty"));
    // With the trainer's TorchRec plan and model: predicted vs measured per rank.
    auto rep = cli({"report", "--store", store, "--plan", job.plan, "--model", job.model, "--json"});
    QVERIFY2(rep.code == 0, qPrintable(rep.err));
    const auto j = nlohmann::json::parse(rep.out.toStdString(), nullptr, false);
    QVERIFY(!j.is_discarded());
    QCOMPARE(j["plan"].get<std::string>(), std::string("M=4 R=1 strided"));
    QCOMPARE(j["ranks"].size(), std::size_t{4});
    for (const auto& r : j["ranks"]) QVERIFY(r["predicted_model_ms"].is_number());
    QVERIFY(j["prediction_mape"]["model"].is_number());
    // A calibration from the imported run, which the planner reads.
    const QString cal = dir.filePath("cal.json");
    auto c =
        cli({"calibrate", "--store", store, "--runs", "1", "--plan", job.plan, "--model", job.model, "--out", cal});
    QVERIFY2(c.code == 0, qPrintable(c.err + c.out));
    QVERIFY2(c.out.contains("imported runs 1"), qPrintable(c.out));
    QVERIFY2(c.out.contains("4 whole ranks"), qPrintable(c.out));
    QCOMPARE(cli({"validate", cal}).code, 0);
    auto plan = cli({"plan", "--model", job.model, "--cluster", "h100x8", "--calibration", cal});
    QVERIFY2(plan.code == 0, qPrintable(plan.err));
    // The calibrated model prices the measured ranks better than the defaults.
    auto calibrated =
        cli({"report", "--store", store, "--plan", job.plan, "--model", job.model, "--calibration", cal, "--json"});
    QVERIFY2(calibrated.code == 0, qPrintable(calibrated.err));
    const auto jc = nlohmann::json::parse(calibrated.out.toStdString(), nullptr, false);
    QVERIFY(jc["prediction_mape"]["model"].get<double>() < j["prediction_mape"]["model"].get<double>());
    // Errors: options without --plan, --plan without --model, a plan that is not there,
    // a cluster of another size, --world-size on a shardscope plan.
    QCOMPARE(cli({"report", "--store", store, "--model", job.model}).code, 2);
    QCOMPARE(cli({"report", "--store", store, "--plan", job.plan}).code, 2);
    QCOMPARE(cli({"calibrate", "--store", store, "--runs", "1", "--plan", job.plan}).code, 2);
    auto missing = cli({"report", "--store", store, "--plan", dir.filePath("nope.json"), "--model", job.model});
    QCOMPARE(missing.code, 1);
    QVERIFY(missing.err.contains("nope.json"));
    auto size = cli({"report", "--store", store, "--plan", job.plan, "--model", job.model, "--cluster", "h100x8",
                     "--world-size", "4"});
    QCOMPARE(size.code, 1);
    QVERIFY2(size.err.contains("the plan is for 4 GPUs but cluster"), qPrintable(size.err));
    auto nocal = cli({"calibrate", "--store", store, "--runs", "1"});
    QCOMPARE(nocal.code, 1);
    QVERIFY2(nocal.err.contains("give --plan, --model and --cluster"), qPrintable(nocal.err));
  }

  void importKeepsTheTrainersPlanWithTheRun() {
    QTemporaryDir dir;
    const TrainerJob job = writeTrainerJob(dir);
    const QString store = dir.filePath("s.sqlite");
    // A plan that does not load is refused before anything is written.
    auto bad = cli({"import", "kineto", job.traces[0], "--store", store, "--plan", dir.filePath("nope.json"), "--model",
                    job.model});
    QCOMPARE(bad.code, 1);
    QVERIFY(bad.err.contains("nope.json"));
    QVERIFY(!QFile::exists(store));
    QCOMPARE(cli({"import", "kineto", job.traces[0], "--store", store, "--plan", job.plan}).code, 2);  // no --model
    auto imp = cli({"import", "kineto", job.traces[0], job.traces[1], job.traces[2], job.traces[3], "--store", store,
                    "--plan", job.plan, "--model", job.model});
    QVERIFY2(imp.code == 0, qPrintable(imp.err));
    QVERIFY2(imp.out.contains("the trainer's plan M=4 R=1 on 4 GPUs kept with it"), qPrintable(imp.out));
    QVERIFY(imp.out.contains("shardscope-cli calibrate --store"));
    // report and calibrate read it from the run.
    auto rep = cli({"report", "--store", store, "--json"});
    QVERIFY2(rep.code == 0, qPrintable(rep.err));
    const auto j = nlohmann::json::parse(rep.out.toStdString(), nullptr, false);
    QCOMPARE(j["plan"].get<std::string>(), std::string("M=4 R=1 strided"));
    QVERIFY(j["ranks"][3]["predicted_model_ms"].is_number());
    QVERIFY(j["warnings"].dump().find("plan") == std::string::npos);
    auto c = cli({"calibrate", "--store", store, "--runs", "1"});
    QVERIFY2(c.code == 0, qPrintable(c.err));
    QVERIFY(c.out.contains("4 whole ranks"));
  }

  void importsNsysExport() {
    // The nsys importer's fixture (SQL text of a small export) made into a database.
    std::ifstream in(kData.toStdString() + "nsys_small.sql");
    QVERIFY2(in.good(), "tests/data/import/nsys_small.sql is checked in and must be there");
    std::stringstream sql;
    sql << in.rdbuf();
    QTemporaryDir dir;
    const std::string db = dir.filePath("rank0.sqlite").toStdString();
    sqlite3* h = nullptr;
    QVERIFY(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql.str().c_str(), nullptr, nullptr, &err);
    const std::string msg = err != nullptr ? err : "";
    sqlite3_free(err);
    sqlite3_close(h);
    QVERIFY2(rc == SQLITE_OK, msg.c_str());
    const QString store = dir.filePath("s.sqlite");
    auto r = cli({"import", "nsys", QString::fromStdString(db), "--store", store});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("(import-nsys)"), qPrintable(r.out));
    auto rep = cli({"report", "--store", store});
    QVERIFY2(rep.code == 0, qPrintable(rep.err));
  }

  void nsysIsWired() {
    QTemporaryDir dir;
    auto r = cli({"import", "nsys", kData + "rank0.json", "--store", dir.filePath("s.sqlite")});
    QCOMPARE(r.code, 1);  // not an SQLite export: the nsys importer says so, naming the file
    QVERIFY2(r.err.contains("rank0.json"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestCliImport)
#include "test_cli_import.moc"
