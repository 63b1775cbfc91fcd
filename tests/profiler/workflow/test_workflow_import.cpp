// Trace imports without the CLI: files and folders into one run with its
// summary, checks that leave no run behind, failures and cancels that mark the
// begun run failed, ranks for files that say none, traces of different jobs
// refused, steps of traces without ProfilerStep, and what a run lacks said.
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/trace/run_device.h"
#include "shardscope/profiler/workflow/trace_import_job.h"
#include "test_workflow_support.h"

using namespace shardscope;
namespace st = core::store;

namespace {
const std::string kImport = SHARDSCOPE_TEST_DATA_DIR "/import/";

profiler::TraceImportRequest kinetoRequest(const QTemporaryDir& dir, std::vector<std::string> inputs) {
  profiler::TraceImportRequest r;
  r.format = profiler::TraceFormat::Kineto;
  r.inputs = std::move(inputs);
  r.store = dir.filePath("i.sqlite").toStdString();
  return r;
}

// A small Kineto trace of one rank: per step a ProfilerStep (or, without
// them, a "## forward ##" annotation), an embedding forward, a GEMM and an
// NCCL broadcast; options leave parts out or change the job it claims.
struct TraceSpec {
  int rank = 0;      // -1: no distributedInfo.rank
  int world = 2;     // -1: no world_size
  bool dist = true;  // write distributedInfo
  bool profiler_steps = true;
  bool forward_marks = true;  // "## forward ##" per step
  bool embedding = true;
  bool gpu = true;
  bool collectives = true;
  std::string pg_ranks = "[0, 1]";
  std::int64_t base_ns = 1733000000000000000;
};

std::string kinetoTrace(const TraceSpec& t) {
  using J = nlohmann::json;
  J events = J::array();
  int corr = 100;
  auto cpu = [&](const char* cat, const std::string& name, double ts, double dur) {
    events.push_back({{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", dur}});
  };
  auto kernel = [&](const std::string& name, double launch, double ts, double dur, J args) {
    cpu("cuda_runtime", "cudaLaunchKernel", launch, 2);
    events.back()["args"] = {{"correlation", ++corr}};
    args["correlation"] = corr;
    args["stream"] = 7;
    args["device"] = std::max(0, t.rank);
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", name},
                      {"pid", 0},
                      {"tid", 7},
                      {"ts", ts},
                      {"dur", dur},
                      {"args", args}});
  };
  for (int i = 0; i < 3; ++i) {
    const double t0 = 1000.0 + 1000.0 * i;
    if (t.profiler_steps) cpu("user_annotation", "ProfilerStep#" + std::to_string(i + 4), t0, 1000);
    if (t.forward_marks) cpu("user_annotation", "## forward ##", t0 + 1, 500);
    if (!t.gpu) continue;
    if (t.embedding) kernel("split_embedding_codegen_forward_unweighted_kernel", t0 + 2, t0 + 10, 100, J::object());
    kernel("ampere_sgemm_128x64_tn", t0 + 3, t0 + 200, 100, J::object());
    if (t.collectives)
      kernel("ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", t0 + 4, t0 + 400, 50 + 10 * t.rank,
             {{"Collective name", "broadcast"},
              {"In msg nelems", 1 << 20},
              {"Out msg nelems", 1 << 20},
              {"Group size", 2},
              {"dtype", "Float"},
              {"Process Group Name", "0"},
              {"Process Group Ranks", t.pg_ranks},
              {"Seq", i}});
  }
  J doc = {{"schemaVersion", 1}};
  if (t.dist) {
    J dist = {{"backend", "nccl"}, {"pg_config", {{{"pg_name", "0"}, {"ranks", J::parse(t.pg_ranks)}}}}};
    if (t.rank >= 0) dist["rank"] = t.rank;
    if (t.world > 0) dist["world_size"] = t.world;
    doc["distributedInfo"] = dist;
  }
  doc["traceEvents"] = events;
  doc["baseTimeNanoseconds"] = t.base_ns;
  return doc.dump();
}

std::string writeTrace(const QTemporaryDir& dir, const std::string& name, const TraceSpec& t) {
  const std::string p = dir.filePath(QString::fromStdString(name)).toStdString();
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p) << kinetoTrace(t);
  return p;
}

bool anyContains(const std::vector<std::string>& lines, const std::string& what) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

profiler::RunAnalysis analysed(const profiler::TraceImportRequest& r, const profiler::TraceImportOutcome& out) {
  auto store = st::openStore(r.store);
  if (!store) qFatal("%s", store.error().message.c_str());
  auto a = profiler::analyzeRun(*store, out.run);
  if (!a) qFatal("%s", a.error().message.c_str());
  return std::move(a).value();
}
}  // namespace

class TestWorkflowImport : public QObject {
  Q_OBJECT

 private slots:
  void formatsNameTheirRunKinds() {
    QCOMPARE(profiler::toString(profiler::TraceFormat::Nsys), std::string_view("nsys"));
    QCOMPARE(profiler::importRunKind(profiler::TraceFormat::Kineto), std::string_view("import-kineto"));
    QCOMPARE(profiler::importRunKind(profiler::TraceFormat::Nsys), std::string_view("import-nsys"));
    QCOMPARE(profiler::toString(profiler::TraceFormat::Nccl), std::string_view("nccl"));
    QCOMPARE(profiler::importRunKind(profiler::TraceFormat::Nccl), std::string_view("import-nccl"));
  }

  // The NCCL plugin's traces through the same call the desktop makes.
  void ncclTracesImportThroughTheWorkflow() {
    QTemporaryDir dir;
    profiler::TraceImportRequest r;
    r.format = profiler::TraceFormat::Nccl;
    r.inputs = {kImport + "nccl"};  // a folder: its *.jsonl
    r.store = dir.filePath("nccl.sqlite").toStdString();
    auto out = profiler::importTraces(r, nullptr, nullptr);
    QVERIFY2(out, out ? "" : out.error().message.c_str());
    QVERIFY(static_cast<std::int64_t>(out->run) > 0);
    QCOMPARE(out->ranks.size(), std::size_t{1});
    QCOMPARE(out->events, std::uint64_t{9});  // its calls
    auto store = st::openStore(r.store);
    QVERIFY(store);
    QCOMPARE(store->run(out->run)->kind_text, std::string("import-nccl"));
    r.rules = kImport + "rules.json";  // nothing to classify: refused before anything is read
    auto refused = profiler::importTraces(r, nullptr, nullptr);
    QVERIFY(!refused);
    QVERIFY(refused.error().kind == core::ErrorKind::Usage);
  }

  void aFolderMeansItsTraceFilesInNameOrder() {
    auto files = profiler::expandTraceInputs({kImport}, profiler::TraceFormat::Kineto);
    QVERIFY(files.ok());
    QVERIFY(std::is_sorted(files->begin(), files->end()));
    QVERIFY(std::find(files->begin(), files->end(), kImport + "rank0.json") != files->end());
    QVERIFY(std::find(files->begin(), files->end(), kImport + "rank1.json.gz") != files->end());
    for (const auto& f : *files) QVERIFY2(f.ends_with(".json") || f.ends_with(".json.gz"), f.c_str());
    auto none = profiler::expandTraceInputs({kImport}, profiler::TraceFormat::Nsys);
    QVERIFY(!none);
    QVERIFY(none.error().kind == core::ErrorKind::InvalidInput);
    QVERIFY2(
        none.error().message.find("no *.sqlite or *.db files in the folder or its subfolders") != std::string::npos,
        none.error().message.c_str());
  }

  void filesBecomeOneRunWithItsSummary() {
    QTemporaryDir dir;
    const auto r = kinetoRequest(dir, {kImport + "rank0.json", kImport + "rank1.json.gz"});
    std::uint64_t progress_calls = 0;
    auto out = profiler::importTraces(
        r, [&](std::uint64_t, std::uint64_t, std::string_view) { ++progress_calls; }, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(progress_calls, std::uint64_t{0});  // small inputs show no progress
    QCOMPARE(out->ranks.size(), std::size_t{2});
    std::uint64_t events = 0, spans = 0;
    for (const auto& rank : out->ranks) events += rank.events;
    for (const auto& [kind, n] : out->spans_by_kind) spans += n;
    QCOMPARE(out->events, events);
    QVERIFY(spans > 0);
    QVERIFY(out->plan_summary.empty());
    const auto runs = test::storedRuns(r.store);
    QCOMPARE(runs.size(), std::size_t{1});
    QVERIFY(runs.front().isComplete());
    QVERIFY(runs.front().id == out->run);
    QVERIFY(runs.front().kind == st::RunKind::ImportKineto);
    QCOMPARE(runs.front().label, std::string("kineto rank0.json (+1)"));
    QVERIFY(runs.front().config_json.find("\"mode\":\"import-kineto\"") != std::string::npos);
  }

  void theRunAndItsSummaryNameTheRanksGpus() {
    QTemporaryDir dir;
    const auto r = kinetoRequest(dir, {kImport + "rank0.json", kImport + "rank1.json.gz"});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    const auto summary = profiler::importSummaryJson(*out, r);
    for (const auto& rank : summary["ranks"]) QCOMPARE(rank.value("gpu", ""), std::string("NVIDIA H100 80GB HBM3"));
    const auto runs = test::storedRuns(r.store);
    QCOMPARE(runs.size(), std::size_t{1});
    const auto config = nlohmann::json::parse(runs.front().config_json);
    QCOMPARE(config["files"].size(), std::size_t{2});  // the workflow's own fields are kept
    const core::DeviceInfo device = profiler::runDevice(profiler::storedRunConfig(runs.front().config_json));
    QVERIFY(device.kind == core::DeviceClass::Gpu);
    QCOMPARE(device.name, std::string("NVIDIA H100 80GB HBM3"));
    QCOMPARE(device.count, 2u);
  }

  void largeInputsReportProgress() {
    QTemporaryDir dir;
    auto r = kinetoRequest(dir, {kImport + "rank0.json"});
    r.progress_min_bytes = 1;
    std::uint64_t last_done = 0, total = 0;
    auto out = profiler::importTraces(
        r,
        [&](std::uint64_t d, std::uint64_t t, std::string_view what) {
          last_done = d;
          total = t;
          QCOMPARE(what, std::string_view("rank0.json"));
        },
        nullptr);
    QVERIFY(out.ok());
    QVERIFY(total > 0);
    QVERIFY(last_done <= total);
  }

  void anIncompleteTrainerPlanIsAUsageErrorAndBeginsNoRun() {
    QTemporaryDir dir;
    auto r = kinetoRequest(dir, {kImport + "rank0.json"});
    r.trainer.plan = SHARDSCOPE_TEST_DATA_DIR "/plans/strided_8x4.json";
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(!out);
    QVERIFY(out.error().kind == core::ErrorKind::Usage);
    QVERIFY(!std::filesystem::exists(r.store));
  }

  void aMissingInputIsInvalidAndBeginsNoRun() {
    QTemporaryDir dir;
    const auto r = kinetoRequest(dir, {kImport + "rank0.json", dir.filePath("missing.json").toStdString()});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(!out);
    QVERIFY(out.error().kind == core::ErrorKind::InvalidInput);
    QVERIFY2(out.error().message.find("missing.json: cannot read the file") != std::string::npos,
             out.error().message.c_str());
    QVERIFY(!std::filesystem::exists(r.store));
  }

  void aTruncatedFileMarksTheRunFailed() {
    QTemporaryDir dir;
    const auto r = kinetoRequest(dir, {kImport + "truncated.json"});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(!out);
    QVERIFY(out.error().kind == core::ErrorKind::InvalidInput);
    QVERIFY2(out.error().message.ends_with("\nrun 1 marked failed"), out.error().message.c_str());
    const auto runs = test::storedRuns(r.store);
    QCOMPARE(runs.size(), std::size_t{1});
    QVERIFY(runs.front().status == st::RunStatus::Failed);
  }

  void aCancelMarksTheRunFailedAsCancelled() {
    QTemporaryDir dir;
    const auto r = kinetoRequest(dir, {kImport + "rank0.json"});
    const std::atomic<bool> cancel{true};
    auto out = profiler::importTraces(r, {}, &cancel);
    QVERIFY(!out);
    QVERIFY(out.error().kind == core::ErrorKind::Cancelled);
    QVERIFY2(out.error().message.starts_with("import cancelled: "), out.error().message.c_str());
    const auto runs = test::storedRuns(r.store);
    QCOMPARE(runs.size(), std::size_t{1});
    QVERIFY(runs.front().status == st::RunStatus::Failed);
    QCOMPARE(runs.front().error, std::string("cancelled"));
  }

  void aStoreThatCannotBeWrittenIsAnIoError() {
    QTemporaryDir dir;
    auto r = kinetoRequest(dir, {kImport + "rank0.json"});
    r.store = dir.filePath("no/such/folder/i.sqlite").toStdString();
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(!out);
    QVERIFY(out.error().kind == core::ErrorKind::Io);
  }
  void foldersAreSearchedDownToTheirMaxDepth() {
    QTemporaryDir dir;
    writeTrace(dir, "job/node0/rank0.json", {});
    TraceSpec one;
    one.rank = 1;
    writeTrace(dir, "job/node1/gpu/rank1.json", one);
    const std::string job = dir.filePath("job").toStdString();
    auto all = profiler::expandTraceInputs({job}, profiler::TraceFormat::Kineto);
    QVERIFY(all.ok());
    QCOMPARE(all->size(), std::size_t{2});
    auto shallow = profiler::expandTraceInputs({job}, profiler::TraceFormat::Kineto, 1);
    QVERIFY(shallow.ok());
    QCOMPARE(shallow->size(), std::size_t{1});
    QVERIFY(shallow->front().ends_with("node0/rank0.json"));
    QVERIFY(!profiler::expandTraceInputs({job}, profiler::TraceFormat::Kineto, 0));
    auto out = profiler::importTraces(kinetoRequest(dir, {job}), {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks.size(), std::size_t{2});
  }

  void anEmptyFileSaysSo() {
    QTemporaryDir dir;
    const std::string empty = dir.filePath("rank0.json").toStdString();
    { std::ofstream touch(empty); }
    auto out = profiler::importTraces(kinetoRequest(dir, {empty}), {}, nullptr);
    QVERIFY(!out);
    QCOMPARE(out.error().message, empty + ": empty file");
  }

  void distributedInfoAfterTheEventsGivesNoMessage() {
    QTemporaryDir dir;
    const auto r = kinetoRequest(dir, {kImport + "rank0.json", kImport + "rank1.json.gz"});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(out.ok());
    for (const auto& w : out->warnings) QVERIFY2(w.find("distributedInfo") == std::string::npos, w.c_str());
    QCOMPARE(out->ranks[1].rank, 1);
  }

  void aRankForFilesThatSayNone() {
    QTemporaryDir dir;
    TraceSpec none;
    none.rank = -1;
    none.world = -1;
    const std::string a = writeTrace(dir, "trace_rank3.json", none), b = writeTrace(dir, "trace_rank1.json", none);
    auto one = kinetoRequest(dir, {a});
    one.rank = 1;
    auto out = profiler::importTraces(one, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks.at(0).rank, 1);
    QVERIFY(anyContains(out->warnings, "rank 1 from --rank"));

    QTemporaryDir dir2;
    auto two = kinetoRequest(dir2, {a, b});
    two.rank = 1;
    auto usage = profiler::importTraces(two, {}, nullptr);
    QVERIFY(!usage);
    QVERIFY(usage.error().kind == core::ErrorKind::Usage);

    auto named = kinetoRequest(dir2, {dir.path().toStdString()});
    named.rank_pattern = "rank(\\d+)";
    out = profiler::importTraces(named, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks.at(0).rank, 1);  // trace_rank1.json comes first by name
    QCOMPARE(out->ranks.at(1).rank, 3);

    named.rank_pattern = "rank\\d+";  // no capture group
    usage = profiler::importTraces(named, {}, nullptr);
    QVERIFY(!usage);
    QVERIFY(usage.error().kind == core::ErrorKind::Usage);
  }

  void filesOfOneRankAreRefusedNamingBoth() {
    QTemporaryDir dir;
    TraceSpec none;
    none.rank = -1;
    const std::string a = writeTrace(dir, "a/rank2.json", none), b = writeTrace(dir, "b/rank2.json", none);
    auto r = kinetoRequest(dir, {a, b});
    r.rank_pattern = "rank(\\d+)";
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(!out);
    QVERIFY2(out.error().message.find(a) != std::string::npos && out.error().message.find(b) != std::string::npos,
             out.error().message.c_str());
    // Ranks the files themselves give collide too.
    const std::string c = writeTrace(dir, "c.json", {}), d = writeTrace(dir, "d.json", {});
    out = profiler::importTraces(kinetoRequest(dir, {c, d}), {}, nullptr);
    QVERIFY(!out);
    QVERIFY2(out.error().message.find("d.json: rank 0 was already imported from " + c) != std::string::npos,
             out.error().message.c_str());
  }

  void tracesOfDifferentJobsAreRefusedUnlessForced_data() {
    QTest::addColumn<int>("world");
    QTest::addColumn<QString>("pg_ranks");
    QTest::addColumn<qint64>("days");
    QTest::addColumn<QString>("reason");
    QTest::newRow("world sizes") << 4 << "[0, 1]" << qint64{0} << "distributedInfo.world_size: 4, but";
    QTest::newRow("process groups") << 2 << "[0, 2]" << qint64{0} << "process group \"0\" has ranks 0,2, but";
    QTest::newRow("days apart") << 2 << "[0, 1]" << qint64{3} << "baseTimeNanoseconds is 3.0 days away from";
  }
  void tracesOfDifferentJobsAreRefusedUnlessForced() {
    QFETCH(int, world);
    QFETCH(QString, pg_ranks);
    QFETCH(qint64, days);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    TraceSpec other;
    other.rank = 1;
    other.world = world;
    other.pg_ranks = pg_ranks.toStdString();
    other.base_ns += days * 86400 * 1'000'000'000LL;
    const std::string a = writeTrace(dir, "a.json", {}), b = writeTrace(dir, "b.json", other);
    auto r = kinetoRequest(dir, {a, b});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(!out);
    QVERIFY2(out.error().message.find("b.json: " + reason.toStdString()) != std::string::npos,
             out.error().message.c_str());
    QVERIFY2(out.error().message.find("a.json") != std::string::npos, out.error().message.c_str());
    QVERIFY2(out.error().message.find("--force") != std::string::npos, out.error().message.c_str());
    r.force = true;
    r.store = dir.filePath("forced.sqlite").toStdString();
    out = profiler::importTraces(r, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QVERIFY(anyContains(out->warnings, reason.toStdString()));
    QVERIFY(anyContains(out->warnings, "imported anyway: --force"));
  }

  void withoutProfilerStepsTheIterationAnnotationMakesTheSteps() {
    QTemporaryDir dir;
    TraceSpec t;
    t.profiler_steps = false;
    const auto r = kinetoRequest(dir, {writeTrace(dir, "rank0.json", t)});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks[0].steps, std::int64_t{3});
    QCOMPARE(out->ranks[0].step_source, std::string("annotation \"## forward ##\""));
    QVERIFY(anyContains(out->warnings, "no ProfilerStep events: one step per \"## forward ##\" annotation (3 steps)"));
    const auto a = analysed(r, *out);
    QCOMPARE(a.steps, std::int64_t{3});
    // From one annotation to the next; the last step ends with the rank's last event (its annotation, 3501 us).
    QVERIFY(std::abs(a.ranks[0].step_ms - (1.0 + 1.0 + 0.5) / 3) < 1e-9);
    QVERIFY(anyContains(a.warnings, "no ProfilerStep in the trace: one step per iteration annotation"));
  }

  void withoutAnyMarkTheWholeTraceIsOneStep() {
    QTemporaryDir dir;
    TraceSpec t;
    t.profiler_steps = false;
    t.forward_marks = false;
    const auto r = kinetoRequest(dir, {writeTrace(dir, "rank0.json", t)});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks[0].step_source, std::string("whole trace"));
    QVERIFY(anyContains(out->warnings, "the whole trace is one step"));
    const auto a = analysed(r, *out);
    QCOMPARE(a.steps, std::int64_t{1});
    QVERIFY(std::abs(a.ranks[0].step_ms - (3450.0 - 1002.0) / 1e3) < 1e-9);  // first launch to the last kernel's end
    QVERIFY(anyContains(a.warnings, "the whole trace is one step"));
  }

  void whatARunLacksIsSaidInTheSummaryAndTheReport() {
    QTemporaryDir dir;
    TraceSpec t;
    t.embedding = false;
    t.collectives = false;
    const auto r = kinetoRequest(dir, {writeTrace(dir, "rank0.json", t)});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QVERIFY(anyContains(out->warnings, "no embedding kernels (emb_fwd / emb_bwd) in rank(s) 0"));
    QVERIFY(anyContains(out->warnings, "no collective kernels in rank(s) 0"));
    const auto a = analysed(r, *out);
    QVERIFY(a.overall.max_over_mean < 0);
    QVERIFY(anyContains(a.warnings, "no embedding kernels"));
    const std::string text = profiler::formatReport(a);
    QVERIFY2(text.find("Imbalance of embedding compute (max / mean): n/a") != std::string::npos, text.c_str());
    QVERIFY2(text.find("Collective bandwidth: none (the run has no collectives") != std::string::npos, text.c_str());
    const auto j = profiler::reportJson(a);
    QVERIFY(j["imbalance"]["overall"]["max_over_mean"].is_null());
    QVERIFY(j["collective_bandwidth_note"].is_string());

    QTemporaryDir dir2;
    TraceSpec cpu_only;
    cpu_only.gpu = false;
    const auto r2 = kinetoRequest(dir2, {writeTrace(dir2, "rank0.json", cpu_only)});
    out = profiler::importTraces(r2, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QVERIFY(anyContains(out->warnings, "no GPU events (kernels, memcpy, memset) in rank(s) 0"));
    QVERIFY(anyContains(analysed(r2, *out).warnings, "have no GPU events"));
  }

  void broadcastIsItsOwnCollective() {
    QTemporaryDir dir;
    TraceSpec one;
    one.rank = 1;
    const auto r = kinetoRequest(dir, {writeTrace(dir, "rank0.json", {}), writeTrace(dir, "rank1.json", one)});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->spans_by_kind.at("broadcast"), std::uint64_t{6});
    QCOMPARE(out->spans_by_kind.count("dense_allreduce"), std::size_t{0});
    {
      // Stored with the rank list as group, the process group and Seq in their own columns.
      auto store = st::openStore(r.store);
      QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
      const auto strings = store->strings().value();
      const auto rows = store->collectives(out->run).value();
      QCOMPARE(rows.size(), std::size_t{6});
      for (const auto& c : rows) {
        QCOMPARE(std::string(strings.at(c.op)), std::string("broadcast"));
        QCOMPARE(std::string(strings.at(c.group)), std::string("0,1"));
        QCOMPARE(std::string(strings.at(c.process_group)), std::string("0"));
        QCOMPARE(c.seq, c.step - 4);  // Seq i in ProfilerStep#(i + 4)
        QVERIFY(c.algorithm == st::kNoString);
      }
    }
    const auto a = analysed(r, *out);
    QCOMPARE(a.bandwidth.size(), std::size_t{1});
    QCOMPARE(a.bandwidth[0].op, std::string("broadcast"));
    QCOMPARE(a.bandwidth[0].busbw_gbps, a.bandwidth[0].algbw_gbps);  // bus factor 1, not all-reduce's 2(n-1)/n
    // Paired by process group and Seq: rank 1 takes 10 us longer in each call.
    QVERIFY(std::abs(a.ranks[1].wait_ms - 0.010) < 1e-9);
    QVERIFY(std::abs(a.ranks[0].wait_ms) < 1e-12);
  }

  void theSummaryTableIsAligned() {
    QTemporaryDir dir;
    const auto r = kinetoRequest(dir, {kImport + "rank0.json", kImport + "rank1.json.gz"});
    auto out = profiler::importTraces(r, {}, nullptr);
    QVERIFY(out.ok());
    std::istringstream text(profiler::importSummaryText(*out, r));
    std::vector<std::string> rows;
    for (std::string line; std::getline(text, line);)
      if (line.starts_with("rank") || line.starts_with("0 ") || line.starts_with("1 ")) rows.push_back(line);
    QCOMPARE(rows.size(), std::size_t{3});
    // Every row's file starts where the header's "file" does; offsets end where their header ends.
    for (std::size_t i = 1; i < rows.size(); ++i) {
      QCOMPARE(rows[i].find(kImport), rows[0].find("file"));
      QCOMPARE(rows[i].find(" ms") + 3, rows[0].find("clock offset") + std::string("clock offset").size());
    }
    QCOMPARE(profiler::importSummaryJson(*out, r)["ranks"].size(), std::size_t{2});
  }
};

QTEST_GUILESS_MAIN(TestWorkflowImport)
#include "test_workflow_import.moc"
