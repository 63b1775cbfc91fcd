// The Nsight Systems importer: events of every table reach the sink in start
// order with names from StringIds, correlations and profiler steps; rank hints
// and older schemas are understood; absent tables are fine; files that are not
// SQLite, not nsys exports, corrupt or truncated give errors naming the file;
// unusable rows are skipped and counted; cancel and sink errors stop it.
#include <QtTest>

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "shardscope/profiler/import/nsys_import.h"

using namespace shardscope;
using profiler::TraceEventKind;

namespace {

struct Recorded {
  TraceEventKind kind;
  std::string name;
  std::int64_t start, end;
  int device;
  std::int64_t stream, correlation, step;
  std::string collective;
};

class RecordingSink : public profiler::TraceEventSink {
 public:
  core::Status beginRank(const profiler::ImportRankInfo& rank) override {
    info = rank;
    ++begins;
    return core::Ok{};
  }
  core::Status event(const profiler::TraceEvent& e) override {
    events.push_back({e.kind, std::string(e.name), e.start_ns, e.end_ns, e.device, e.stream, e.correlation, e.step,
                      std::string(e.collective)});
    if (cancel_after >= 0 && static_cast<int>(events.size()) == cancel_after && cancel != nullptr) cancel->store(true);
    if (fail_after >= 0 && static_cast<int>(events.size()) == fail_after) return core::Error{"sink full"};
    return core::Ok{};
  }
  core::Status endRank() override {
    ++ends;
    return core::Ok{};
  }

  profiler::ImportRankInfo info;
  std::vector<Recorded> events;
  int begins = 0, ends = 0;
  int cancel_after = -1, fail_after = -1;
  std::atomic<bool>* cancel = nullptr;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Runs the fixture script (unless `base` is false) and then `extra_sql` into a new database file.
bool makeDb(const std::string& path, const std::string& extra_sql, bool base = true) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return false;
  }
  std::string sql = base ? readFile(SHARDSCOPE_TEST_DATA_DIR "/import/nsys_small.sql") : std::string();
  sql += extra_sql;
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) qWarning("fixture SQL failed: %s", err != nullptr ? err : "?");
  sqlite3_free(err);
  sqlite3_close(db);
  return rc == SQLITE_OK;
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

class TestNsysImport : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::string path(const char* name) const { return (dir_.path() + "/" + name).toStdString(); }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void fullExportArrivesInStartOrder() {
    const std::string file = path("full.sqlite");
    QVERIFY(makeDb(file, ""));
    RecordingSink sink;
    profiler::NsysImportReport report;
    profiler::NsysOptions opt;
    opt.report = &report;
    auto st = profiler::importNsys(file, sink, opt);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
    QCOMPARE(sink.begins, 1);
    QCOMPARE(sink.ends, 1);
    struct Want {
      TraceEventKind kind;
      const char* name_part;
      std::int64_t start;
    };
    const std::vector<Want> want{
        {TraceEventKind::ProfilerStep, "ProfilerStep#0", 1000},
        {TraceEventKind::Runtime, "cudaLaunchKernel_v7000", 1100},
        {TraceEventKind::Runtime, "cudaMemcpyAsync_v3020", 1160},
        {TraceEventKind::Kernel, "split_embedding_codegen_forward_unweighted_kernel<float", 1200},
        {TraceEventKind::Memcpy, "Memcpy HtoD", 1900},
        {TraceEventKind::Runtime, "cudaLaunchKernel_v7000", 2100},
        {TraceEventKind::Annotation, "## PooledEmbeddingsAwaitable wait() ##", 2150},
        {TraceEventKind::Kernel, "ncclDevKernel_SendRecv(", 2200},
        {TraceEventKind::Runtime, "cudaLaunchKernel_v7000", 3100},
        {TraceEventKind::Kernel, "split_embedding_backward_codegen_rowwise_adagrad", 3200},
        {TraceEventKind::Memset, "Memset", 4100},
        {TraceEventKind::ProfilerStep, "ProfilerStep#1", 5000},
        {TraceEventKind::Runtime, "cudaLaunchKernel_v7000", 5100},
        {TraceEventKind::Kernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(", 5200},
        {TraceEventKind::Runtime, "cudaLaunchKernel_v7000", 6100},
        {TraceEventKind::Kernel, "ampere_sgemm_128x64_nn", 6200},
    };
    QCOMPARE(sink.events.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const Recorded& got = sink.events[i];
      QVERIFY2(got.kind == want[i].kind, got.name.c_str());
      QVERIFY2(contains(got.name, want[i].name_part), got.name.c_str());
      QCOMPARE(got.start, want[i].start);
    }
    QCOMPARE(report.kernels, std::uint64_t{5});
    QCOMPARE(report.runtime_calls, std::uint64_t{6});
    QCOMPARE(report.memcpys, std::uint64_t{1});
    QCOMPARE(report.memsets, std::uint64_t{1});
    QCOMPARE(report.nvtx_ranges, std::uint64_t{1});
    QCOMPARE(report.profiler_steps, std::uint64_t{2});
    QCOMPARE(report.skipped(), std::uint64_t{0});
    QVERIFY(report.absent_tables.empty());
    QVERIFY(report.warnings.empty());
  }

  void kernelsCarryDeviceStreamAndLaunchCorrelation() {
    const std::string file = path("corr.sqlite");
    QVERIFY(makeDb(file, ""));
    RecordingSink sink;
    QVERIFY(profiler::importNsys(file, sink).ok());
    int kernels = 0;
    for (const Recorded& k : sink.events) {
      if (k.kind != TraceEventKind::Kernel) continue;
      ++kernels;
      QCOMPARE(k.device, 0);
      QVERIFY(k.stream == 7 || k.stream == 13);
      QVERIFY(k.end > k.start);
      // Every kernel has its launch: a runtime call with the same correlation that starts earlier.
      bool launched = false;
      for (const Recorded& r : sink.events) {
        launched =
            launched || (r.kind == TraceEventKind::Runtime && r.correlation == k.correlation && r.start < k.start);
      }
      QVERIFY2(launched, k.name.c_str());
    }
    QCOMPARE(kernels, 5);
    for (const Recorded& r : sink.events) {
      if (r.kind == TraceEventKind::Runtime || r.kind == TraceEventKind::Annotation) {
        QCOMPARE(r.stream, std::int64_t{1234});  // thread id from globalTid
        QCOMPARE(r.device, -1);
      }
    }
  }

  void ncclKernelsNameTheirCollective() {
    const std::string file = path("nccl.sqlite");
    QVERIFY(makeDb(file, ""));
    RecordingSink sink;
    QVERIFY(profiler::importNsys(file, sink).ok());
    std::vector<std::string> collectives;
    for (const Recorded& r : sink.events) {
      if (r.kind == TraceEventKind::Kernel) collectives.push_back(r.collective);
    }
    const std::vector<std::string> want{"", "send_recv", "", "all_reduce", ""};
    QVERIFY(collectives == want);

    QCOMPARE(profiler::nsysCollectiveFromKernelName("ncclKernel_AllGather_RING_LL_Sum_int8_t"),
             std::string_view("all_gather"));
    QCOMPARE(profiler::nsysCollectiveFromKernelName("void ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE(int)"),
             std::string_view("reduce_scatter"));
    QCOMPARE(profiler::nsysCollectiveFromKernelName("ncclDevKernel_Generic"), std::string_view());
    QCOMPARE(profiler::nsysCollectiveFromKernelName("ampere_sgemm_128x64_nn"), std::string_view());
  }

  void nvtxProfilerStepRangesBecomeSteps() {
    const std::string file = path("steps.sqlite");
    // Not steps: a suffix that is not a number.
    QVERIFY(makeDb(file,
                   "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES "
                   "(9500, 9600, 59, 'ProfilerStep#2b', 20703085778), (9700, 9800, 59, 'ProfilerStep#', 1);"));
    RecordingSink sink;
    QVERIFY(profiler::importNsys(file, sink).ok());
    std::vector<std::int64_t> steps;
    int annotations = 0;
    for (const Recorded& r : sink.events) {
      if (r.kind == TraceEventKind::ProfilerStep) steps.push_back(r.step);
      if (r.kind == TraceEventKind::Annotation) {
        ++annotations;
        QCOMPARE(r.step, std::int64_t{-1});
      }
    }
    QVERIFY(steps == (std::vector<std::int64_t>{0, 1}));
    QCOMPARE(annotations, 3);
  }

  void rankComesFromOptionsHintsOrDefaultsToZero() {
    const std::string plain = path("plain.sqlite");
    QVERIFY(makeDb(plain, ""));
    RecordingSink sink;
    QVERIFY(profiler::importNsys(plain, sink).ok());
    QCOMPARE(sink.info.rank, 0);
    QCOMPARE(sink.info.world_size, -1);
    QCOMPARE(sink.info.device, 0);
    QCOMPARE(sink.info.source, plain);
    QCOMPARE(sink.info.base_time_ns, std::int64_t{1733190000000000000});

    const std::string named = path("trainer_rank5.sqlite");
    QVERIFY(makeDb(named, ""));
    QVERIFY(profiler::importNsys(named, sink).ok());
    QCOMPARE(sink.info.rank, 5);

    const std::string hinted = path("hinted_rank5.sqlite");  // the NVTX hint wins over the file name
    QVERIFY(makeDb(hinted,
                   "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES "
                   "(10, NULL, 34, 'rank=3 world_size=8', 1);"));
    profiler::NsysImportReport report;
    profiler::NsysOptions opt;
    opt.report = &report;
    QVERIFY(profiler::importNsys(hinted, sink, opt).ok());
    QCOMPARE(sink.info.rank, 3);
    QCOMPARE(sink.info.world_size, 8);
    QCOMPARE(report.rank, 3);

    opt.rank = 6;  // the caller wins over every hint
    opt.world_size = 16;
    QVERIFY(profiler::importNsys(hinted, sink, opt).ok());
    QCOMPARE(sink.info.rank, 6);
    QCOMPARE(sink.info.world_size, 16);
  }

  void onlySomeTablesPresentIsFine() {
    const std::string file = path("partial.sqlite");
    QVERIFY(
        makeDb(file,
               "DROP TABLE NVTX_EVENTS; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY; DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;"
               "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME; DROP TABLE TARGET_INFO_SESSION_START_TIME;"));
    RecordingSink sink;
    profiler::NsysImportReport report;
    profiler::NsysOptions opt;
    opt.report = &report;
    auto st = profiler::importNsys(file, sink, opt);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
    QCOMPARE(sink.events.size(), std::size_t{5});
    QCOMPARE(report.kernels, std::uint64_t{5});
    QCOMPARE(report.events(), std::uint64_t{5});
    QCOMPARE(report.absent_tables.size(), std::size_t{4});
    QCOMPARE(sink.info.base_time_ns, std::int64_t{0});
    bool runtime_warned = false;
    for (const auto& w : report.warnings) runtime_warned = runtime_warned || contains(w, "CUPTI_ACTIVITY_KIND_RUNTIME");
    QVERIFY(runtime_warned);
  }

  void olderSchemaWithShortNameAndTextIdOnly() {
    const std::string file = path("older.sqlite");
    QVERIFY(makeDb(file,
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName;"
                   "UPDATE NVTX_EVENTS SET textId = 13 WHERE text = 'ProfilerStep#0';"
                   "INSERT INTO StringIds VALUES (13, 'ProfilerStep#0');"
                   "UPDATE NVTX_EVENTS SET textId = 14 WHERE text LIKE '## Pooled%';"
                   "INSERT INTO StringIds VALUES (14, '## PooledEmbeddingsAwaitable wait() ##');"
                   "ALTER TABLE NVTX_EVENTS DROP COLUMN text;"));
    RecordingSink sink;
    auto st = profiler::importNsys(file, sink);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
    QCOMPARE(sink.events.size(), std::size_t{16});
    QCOMPARE(sink.events[0].name, std::string("ProfilerStep#0"));
    QVERIFY(sink.events[0].kind == TraceEventKind::ProfilerStep);
    QCOMPARE(sink.events[3].name, std::string("split_embedding_codegen_forward_unweighted_kernel"));
    QCOMPARE(sink.events[6].name, std::string("## PooledEmbeddingsAwaitable wait() ##"));
    QCOMPARE(sink.events[7].collective, std::string("send_recv"));
  }

  void noStringIdsIsNotAnNsysExport() {
    const std::string file = path("nostrings.sqlite");
    QVERIFY(makeDb(file, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER);", false));
    RecordingSink sink;
    auto st = profiler::importNsys(file, sink);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, file + ": not an Nsight Systems export: no StringIds table"),
             st.error().message.c_str());
    QCOMPARE(sink.begins, 0);
  }

  void notSqliteAndMissingFilesAreErrors() {
    const std::string text = path("trace.json");
    {
      std::ofstream out(text);
      out << R"({"traceEvents": []})";
    }
    RecordingSink sink;
    auto st = profiler::importNsys(text, sink);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, text + ": not an SQLite database"), st.error().message.c_str());

    const std::string empty = path("empty.sqlite");
    { std::ofstream out(empty); }
    st = profiler::importNsys(empty, sink);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, "empty.sqlite: empty file"), st.error().message.c_str());

    st = profiler::importNsys(path("missing.sqlite"), sink);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, "missing.sqlite: cannot open"), st.error().message.c_str());
    QCOMPARE(sink.begins, 0);
  }

  void corruptAndTruncatedFilesAreErrors() {
    // Enough rows that the activity tables span many pages.
    std::string big =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
        "returnValue) "
        "SELECT 10000 + i * 10, 10005 + i * 10, 1, 1, 100 + i, 9, 0 FROM n;";
    const std::string good = path("good.sqlite");
    QVERIFY(makeDb(good, big));
    const std::string bytes = readFile(good);
    QVERIFY(bytes.size() > 100000);

    const std::string truncated = path("truncated.sqlite");
    {
      std::ofstream out(truncated, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
    }
    RecordingSink sink;
    auto st = profiler::importNsys(truncated, sink);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, truncated + ": "), st.error().message.c_str());
    qInfo("%s", st.error().message.c_str());
    QCOMPARE(sink.ends, 0);

    const std::string corrupt = path("corrupt.sqlite");
    {
      std::string garbled = bytes;
      for (std::size_t i = 4096; i < garbled.size(); i += 7) garbled[i] = static_cast<char>(0xA5 ^ (i & 0xff));
      std::ofstream out(corrupt, std::ios::binary);
      out.write(garbled.data(), static_cast<std::streamsize>(garbled.size()));
    }
    RecordingSink sink2;
    st = profiler::importNsys(corrupt, sink2);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, corrupt + ": "), st.error().message.c_str());
    qInfo("%s", st.error().message.c_str());
    QCOMPARE(sink2.ends, 0);
  }

  void unusableRowsAreSkippedAndCounted() {
    const std::string file = path("dirty.sqlite");
    QVERIFY(makeDb(file,
                   "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                   "demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                   "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES "
                   "(7100, 7200, 0, 1, 7, 90, NULL, NULL, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 90),"  // no name
                   "(7300, 7400, 0, 1, 7, 91, 999, NULL, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 91),"   // id not in StringIds
                   "(7500, 7450, 0, 1, 7, 92, 12, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 92),"      // end < start
                   "('soon', 7700, 0, 1, 7, 93, 12, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 93),"  // start not an integer
                   "(7800, 7900, 0, 1, 7, 94, NULL, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 94);"  // shortName only: kept
                   "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES (7600, 7650, 59, "
                   "NULL, 1, NULL);"));
    RecordingSink sink;
    profiler::NsysImportReport report;
    profiler::NsysOptions opt;
    opt.report = &report;
    auto st = profiler::importNsys(file, sink, opt);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
    QCOMPARE(sink.events.size(), std::size_t{17});
    QCOMPARE(report.kernels, std::uint64_t{6});
    QCOMPARE(report.skipped_null_name, std::uint64_t{2});
    QCOMPARE(report.skipped_unknown_string, std::uint64_t{1});
    QCOMPARE(report.skipped_end_before_start, std::uint64_t{1});
    QCOMPARE(report.skipped_bad_type, std::uint64_t{1});
    QCOMPARE(report.warnings.size(), std::size_t{4});
    for (const auto& w : report.warnings) QVERIFY2(contains(w, file + ": skipped "), w.c_str());
    for (std::size_t i = 1; i < sink.events.size(); ++i) QVERIFY(sink.events[i - 1].start <= sink.events[i].start);
  }

  void cancelStopsTheImport() {
    const std::string file = path("cancel.sqlite");
    QVERIFY(makeDb(file,
                   "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) "
                   "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                   "returnValue) "
                   "SELECT 10000 + i * 10, 10005 + i * 10, 1, 1, 100 + i, 9, 0 FROM n;"));
    std::atomic<bool> cancel{false};
    RecordingSink sink;
    sink.cancel = &cancel;
    sink.cancel_after = 20;
    profiler::NsysOptions opt;
    opt.cancel = &cancel;
    auto st = profiler::importNsys(file, sink, opt);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, file + ": import cancelled"), st.error().message.c_str());
    QVERIFY(sink.events.size() < 5016);
    QCOMPARE(sink.ends, 0);
  }

  void sinkErrorStopsTheImport() {
    const std::string file = path("sinkfail.sqlite");
    QVERIFY(makeDb(file, ""));
    RecordingSink sink;
    sink.fail_after = 3;
    auto st = profiler::importNsys(file, sink);
    QVERIFY(!st.ok());
    QCOMPARE(st.error().message, std::string("sink full"));
    QCOMPARE(sink.events.size(), std::size_t{3});
    QCOMPARE(sink.ends, 0);
  }

  void progressCountsRows() {
    const std::string file = path("progress.sqlite");
    QVERIFY(makeDb(file, ""));
    RecordingSink sink;
    std::uint64_t last_done = 0, last_total = 0;
    int calls = 0;
    profiler::NsysOptions opt;
    opt.progress = [&](std::uint64_t done, std::uint64_t total) {
      last_done = done;
      last_total = total;
      ++calls;
    };
    QVERIFY(profiler::importNsys(file, sink, opt).ok());
    QVERIFY(calls >= 1);
    QCOMPARE(last_total, std::uint64_t{16});  // the NVTX mark (no end) is not counted
    QCOMPARE(last_done, last_total);
  }

  void memcpyNamesFollowCopyKind() {
    QCOMPARE(profiler::nsysMemcpyName(1), std::string_view("Memcpy HtoD"));
    QCOMPARE(profiler::nsysMemcpyName(2), std::string_view("Memcpy DtoH"));
    QCOMPARE(profiler::nsysMemcpyName(8), std::string_view("Memcpy DtoD"));
    QCOMPARE(profiler::nsysMemcpyName(10), std::string_view("Memcpy PtoP"));
    QCOMPARE(profiler::nsysMemcpyName(77), std::string_view("Memcpy"));
    QCOMPARE(profiler::nsysMemcpyName(-1), std::string_view("Memcpy"));
  }
};

QTEST_GUILESS_MAIN(TestNsysImport)
#include "test_nsys_import.moc"
