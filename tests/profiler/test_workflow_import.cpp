// Trace imports without the CLI: files and folders into one run with its
// summary, checks that leave no run behind, and failures and cancels that
// mark the begun run failed.
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "shardscope/core/store/trace_store.h"
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
}  // namespace

class TestWorkflowImport : public QObject {
  Q_OBJECT

 private slots:
  void formatsNameTheirRunKinds() {
    QCOMPARE(profiler::toString(profiler::TraceFormat::Nsys), std::string_view("nsys"));
    QCOMPARE(profiler::importRunKind(profiler::TraceFormat::Kineto), std::string_view("import-kineto"));
    QCOMPARE(profiler::importRunKind(profiler::TraceFormat::Nsys), std::string_view("import-nsys"));
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
    QVERIFY2(none.error().message.ends_with("no *.sqlite or *.db files in the folder"), none.error().message.c_str());
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
};

QTEST_GUILESS_MAIN(TestWorkflowImport)
#include "test_workflow_import.moc"
