// A stored run as Chrome trace JSON: every span and collective of the chosen
// ranks and window as an "X" event with its values, processes and threads
// named, timestamps in microseconds from the first event; the JSON parses.
// The export read back by the Kineto importer (one file per rank) gives the
// same spans and collectives, to the ns at epoch scale, for the whole run and
// for a window; the importer's checks of the rows an export describes name
// the JSON path of what is wrong, and leave PyTorch's own traces as they were.
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/import/store_import_sink.h"
#include "shardscope/profiler/trace/trace_recorder.h"
#include "shardscope/profiler/workflow/chrome_trace.h"
#include "shardscope/profiler/workflow/trace_import_job.h"

using namespace shardscope;
using profiler::TraceRecorder;
namespace st = core::store;

namespace {

// Two ranks, two steps: a forward span, an all-to-all span on the comm stream,
// a GPU kernel with a correlation id, and the all-to-all's collective row.
st::RunId writeRun(const std::string& path) {
  TraceRecorder rec;
  const std::uint32_t fwd = rec.name("emb_fwd"), a2a = rec.name("a2a_pooled"), op = rec.name("all_to_all"),
                      kernel = rec.name("kernel"), tbe = rec.name("tbeForward\"quoted\""), cat = rec.name("cat_0"),
                      group = rec.name("0,1"), sharding = rec.name("sharding");
  for (int r = 0; r < 2; ++r) {
    rec.rankInfo({r, "host-" + std::to_string(r), r, 0, 0});
    for (std::int64_t s = 0; s < 2; ++s) {
      const std::int64_t base = 1'000'000 + s * 10'000 + r * 7;
      rec.span({r, 0, fwd, cat, cat, base, base + 2'500, s, 640});
      TraceRecorder::SpanRec k{r, 2, kernel, tbe, 0, base + 100, base + 2'400, s, 0};
      k.correlation = 77 + s;
      rec.span(k);
      rec.span({r, 1, a2a, op, 0, base + 3'000, base + 5'001, s, 4096});
      TraceRecorder::CollectiveRec c{r, s, op, group, 4096, 1, base + 3'000, base + 5'001};
      c.process_group = sharding;
      c.seq = s;
      rec.collective(c);
    }
  }
  auto writer = st::RunWriter::begin(path, st::RunHeader{});
  if (!writer) qFatal("%s", writer.error().message.c_str());
  if (auto f = rec.flush(*writer); !f) qFatal("%s", f.error().message.c_str());
  if (auto f = writer->finish(); !f) qFatal("%s", f.error().message.c_str());
  return writer->run();
}

// ns since 1970 late in 2023: a double of microseconds cannot hold such a time to the ns.
constexpr std::int64_t kEpoch = 1'700'000'000'123'456'789;
constexpr std::int64_t kStepNs = 5'000'003;

// Three ranks of three steps shaped like an engine run at epoch-scale times: per step a step
// span (stream -1) holding nested input routing, lookups per table (bytes, table), all-to-alls
// on the comm stream, GPU kernels with CUPTI correlations on two streams, a backward, a replica
// sync and an instant; collectives with and without process group, algorithm and seq. A rank's
// step span outlasts the step of the ranks before it, so windows cut spans.
st::RunId writeEngineRun(const std::string& path) {
  TraceRecorder rec;
  namespace k = profiler::span_kind;
  const auto n = [&rec](std::string_view s) { return rec.name(s); };
  const std::uint32_t step = n(k::kStep), input = n(k::kInput), fwd = n(k::kEmbFwd), bwd = n(k::kEmbBwd),
                      ids = n(k::kA2aIds), pooled = n(k::kA2aPooled), grads = n(k::kA2aGrads), dense = n(k::kDense),
                      sync = n(k::kReplicaSync), kernel = n("kernel"), a2a = n("all_to_all"),
                      allreduce = n("all_reduce"), sharding = n("sharding"), ring = n("RING/LL");
  const std::uint32_t tables[] = {n("cat_0"), n("cat_1 \"wide\"")};
  for (int r = 0; r < 3; ++r) {
    rec.rankInfo({r, "node-" + std::to_string(r), r, 0, r});
    const std::uint32_t group = n("0,1,2"), replica = n(std::to_string(r));
    for (std::int64_t s = 0; s < 3; ++s) {
      const std::int64_t b = kEpoch + s * kStepNs + r * 1'017;
      rec.span({r, -1, step, n("step " + std::to_string(s)), 0, b, b + kStepNs - 3 + r * 1'000, s, 0});
      rec.span({r, 0, input, n("route ids"), 0, b + 11, b + 40'013, s, 0});
      rec.span({r, 0, input, n("ids ready"), 0, b + 40'013, b + 40'013, s, 0});  // an instant
      rec.span({r, 1, ids, a2a, 0, b + 50'001, b + 90'009, s, 3 * 1024 + r});
      for (std::int64_t t = 0; t < 2; ++t) {
        const std::int64_t at = b + 100'100 + t * 200'007;
        rec.span({r, 0, fwd, tables[t], tables[t], at, at + 199'999, s, 4096 * (t + 1)});
        TraceRecorder::SpanRec gpu{
            r, 2 + static_cast<int>(t), kernel, n("tbe_fwd\"k\" \xE2\x9C\x93"), 0, at + 7, at + 150'001, s, 0};
        gpu.correlation = 1'000'000 + s * 10 + t;
        rec.span(gpu);
        rec.span({r, 0, bwd, tables[t], tables[t], b + 2'000'000 + t * 300'001, b + 2'200'003 + t * 300'001, s, 8192});
      }
      rec.span({r, 1, pooled, a2a, 0, b + 600'000, b + 700'999, s, 65'536});
      rec.span({r, 3, dense, n("sm90_xmma_gemm"), 0, b + 700'000, b + 1'900'001, s, 0});
      rec.span({r, 1, grads, a2a, 0, b + 2'700'000, b + 2'800'001, s, 65'536});
      rec.span({r, 1, sync, allreduce, 0, b + 4'000'000, b + 4'900'000, s, 1 << 20});
      TraceRecorder::CollectiveRec c{r, s, a2a, group, 65'536, 2, b + 600'000, b + 700'999};
      c.process_group = sharding;
      c.algorithm = ring;
      c.seq = s;
      rec.collective(c);
      rec.collective({r, s, allreduce, replica, 1 << 20, 0, b + 4'000'000, b + 4'900'000});
    }
  }
  auto writer = st::RunWriter::begin(path, st::RunHeader{});
  if (!writer) qFatal("%s", writer.error().message.c_str());
  if (auto f = rec.flush(*writer); !f) qFatal("%s", f.error().message.c_str());
  if (auto f = writer->finish(); !f) qFatal("%s", f.error().message.c_str());
  return writer->run();
}

// Every span and collective of a run that overlaps [from, to) (an instant: at its time), as text,
// sorted: what a round trip must keep. Strings by their text ("" for none), so two stores compare.
QStringList rowsOf(const std::string& path, st::RunId run, std::int64_t from = std::numeric_limits<std::int64_t>::min(),
                   std::int64_t to = std::numeric_limits<std::int64_t>::max()) {
  auto store = st::openStore(path, st::OpenMode::ReadOnly);
  if (!store) qFatal("%s", store.error().message.c_str());
  auto strings = store->strings();
  auto spans = store->spansInWindow(run, {}, std::numeric_limits<std::int64_t>::min() / 2,
                                    std::numeric_limits<std::int64_t>::max() / 2);
  auto collectives = store->collectives(run);
  if (!strings || !spans || !collectives) qFatal("cannot read run");
  const auto text = [&](st::StringId id) { return QString::fromStdString(std::string(strings->at(id))); };
  const auto overlaps = [&](std::int64_t s, std::int64_t e) { return s < to && (e > from || (s == e && s >= from)); };
  QStringList rows;
  for (const st::Span& s : *spans)
    if (overlaps(s.start_ns, s.end_ns))
      rows << QStringLiteral("span r%1 s%2 %3 '%4' %5..%6 step %7 corr %8 bytes %9 table '%10'")
                  .arg(s.rank)
                  .arg(s.stream)
                  .arg(text(s.kind), text(s.name))
                  .arg(s.start_ns)
                  .arg(s.end_ns)
                  .arg(s.step)
                  .arg(s.correlation)
                  .arg(s.bytes)
                  .arg(text(s.table));
  for (const st::Collective& c : *collectives)
    if (overlaps(c.start_ns, c.end_ns))
      rows << QStringLiteral("coll r%1 %2 '%3' pg '%4' alg '%5' seq %6 %7..%8 step %9 bytes %10 peers %11")
                  .arg(c.rank)
                  .arg(text(c.op), text(c.group), text(c.process_group), text(c.algorithm))
                  .arg(c.seq)
                  .arg(c.start_ns)
                  .arg(c.end_ns)
                  .arg(c.step)
                  .arg(c.bytes)
                  .arg(c.peers);
  rows.sort();
  return rows;
}

// `import kineto <dir>` into a new store.
profiler::TraceImportOutcome importFolder(const std::string& dir, const std::string& store) {
  profiler::TraceImportRequest request;
  request.inputs = {dir};
  request.store = store;
  auto imported = profiler::importTraces(request, {}, nullptr);
  if (!imported) qFatal("%s", imported.error().message.c_str());
  return std::move(imported).value();
}

nlohmann::json exportJson(profiler::ChromeTraceRequest request, profiler::ChromeTraceOutcome* outcome = nullptr) {
  std::ostringstream out;
  auto written = profiler::writeChromeTrace(request, out);
  if (!written) qFatal("%s", written.error().message.c_str());
  if (outcome != nullptr) *outcome = *written;
  return nlohmann::json::parse(out.str());
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class NullSink : public profiler::TraceEventSink {
 public:
  core::Status beginRank(const profiler::ImportRankInfo&) override { return core::Ok{}; }
  core::Status event(const profiler::TraceEvent& e) override {
    stored += e.stored != nullptr ? 1 : 0;
    return core::Ok{};
  }
  core::Status endRank() override { return core::Ok{}; }
  int stored = 0;
};

// One rank's export with one event whose args are `args`; `other`: its otherData.
std::string eventFile(const QTemporaryDir& dir, const std::string& args,
                      const std::string& other = R"({"schema": "shardscope.chrome-trace/1", "origin_ns": 0})") {
  const std::string path = (dir.path() + "/rank0.json").toStdString();
  std::ofstream(path) << "{\"otherData\": " << other << ", "
                      << R"("distributedInfo": {"rank": 0}, "traceEvents": [{"ph": "X", "name": "a", "cat": "emb_fwd",)"
                      << R"( "pid": 0, "tid": 0, "ts": 1.000, "dur": 2.000, "args": )" << args << "}]}";
  return path;
}

}  // namespace

class TestChromeTrace : public QObject {
  Q_OBJECT

 private slots:
  void everySpanAndCollectiveIsAnEventWithItsValues() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString();
    const st::RunId run = writeRun(path);
    profiler::ChromeTraceOutcome outcome;
    const nlohmann::json j = exportJson({path, run, {}, {}, {}}, &outcome);
    QCOMPARE(outcome.spans, std::uint64_t{12});
    QCOMPARE(outcome.collectives, std::uint64_t{4});
    QCOMPARE(outcome.origin_ns, std::int64_t{1'000'000});
    QCOMPARE(j["otherData"]["origin_ns"].get<std::int64_t>(), std::int64_t{1'000'000});
    QCOMPARE(j["otherData"]["schema"].get<std::string>(), std::string(profiler::kChromeExportSchema));
    QVERIFY(!j.contains("distributedInfo"));  // two ranks: not one rank's trace
    int x = 0, named_threads = 0;
    bool saw_kernel = false, saw_collective = false;
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] == "M") {
        if (e["name"] == "thread_name") ++named_threads;
        if (e["name"] == "process_name" && e["pid"] == 1)
          QCOMPARE(e["args"]["name"].get<std::string>(), std::string("rank 1 (host-1)"));
        continue;
      }
      QCOMPARE(e["ph"].get<std::string>(), std::string("X"));
      ++x;
      if (e["cat"] == "kernel" && e["pid"] == 0 && e["args"]["step"] == 1) {
        saw_kernel = true;
        QCOMPARE(e["name"].get<std::string>(), std::string("tbeForward\"quoted\""));
        QCOMPARE(e["tid"].get<int>(), 2);
        QCOMPARE(e["args"]["correlation"].get<std::int64_t>(), std::int64_t{78});
        QCOMPARE(e["args"]["shardscope_kind"].get<std::string>(), std::string("kernel"));
        QCOMPARE(e["args"]["stream"].get<int>(), 2);
        QCOMPARE(e["ts"].get<double>(), 10.1);  // (1'010'100 - 1'000'000) ns
        QCOMPARE(e["dur"].get<double>(), 2.3);
      }
      if (e["cat"] == "collective" && e["pid"] == 1 && e["args"]["seq"] == 0) {
        saw_collective = true;
        QCOMPARE(e["name"].get<std::string>(), std::string("all_to_all"));
        QCOMPARE(e["args"]["shardscope_collective"].get<std::string>(), std::string("all_to_all"));
        QCOMPARE(e["args"]["process_group"].get<std::string>(), std::string("sharding"));
        QCOMPARE(e["args"]["bytes"].get<std::int64_t>(), std::int64_t{4096});
        QCOMPARE(e["dur"].get<double>(), 2.001);
      }
      if (e["cat"] == "emb_fwd") QCOMPARE(e["args"]["table"].get<std::string>(), std::string("cat_0"));
    }
    QCOMPARE(x, 16);
    QCOMPARE(named_threads, 2 * 4);  // compute, comm, GPU stream 0, collectives on each rank
    QVERIFY(saw_kernel);
    QVERIFY(saw_collective);
  }

  void ranksAndWindowSelect() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString();
    const st::RunId run = writeRun(path);
    profiler::ChromeTraceOutcome outcome;
    const nlohmann::json j = exportJson({path, run, {1}, 0.010, 0.020}, &outcome);  // ms from the run's start
    QCOMPARE(outcome.spans, std::uint64_t{3});                                      // rank 1's step-1 spans
    QCOMPARE(outcome.collectives, std::uint64_t{1});
    QCOMPARE(j["distributedInfo"]["rank"].get<int>(), 1);  // one rank: its trace
    // A window inside a long span still finds it (it starts before the window).
    const nlohmann::json inside = exportJson({path, run, {0}, 0.0005, 0.0006}, &outcome);
    QCOMPARE(outcome.spans, std::uint64_t{2});  // rank 0's step-0 forward and kernel span cover 500-600 ns
    // No run given: the newest.
    exportJson({path, st::RunId{}, {}, {}, {}}, &outcome);
    QCOMPARE(outcome.run, run);
    for (const auto& e : j["traceEvents"]) QCOMPARE(e["pid"].get<int>(), 1);
  }

  void aMissingRunIsAnError() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString();
    writeRun(path);
    std::ostringstream out;
    QVERIFY(!profiler::writeChromeTrace({path, st::RunId{99}, {}, {}, {}}, out).ok());
  }

  void perRankFilesImportBackIntoTheSameSpansAndCollectives() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString(), out = (dir.path() + "/export").toStdString();
    const st::RunId run = writeEngineRun(path);
    auto written = profiler::writeChromeTraceFiles({path, run, {}, {}, {}}, out);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
    QCOMPARE(written->files.size(), std::size_t{3});
    QCOMPARE(written->origin_ns, kEpoch);
    for (int r = 0; r < 3; ++r) {
      const auto j = nlohmann::json::parse(readText(out + "/rank" + std::to_string(r) + ".json"));
      QCOMPARE(j["distributedInfo"]["rank"].get<int>(), r);
      QCOMPARE(j["otherData"]["origin_ns"].get<std::int64_t>(), kEpoch);
    }
    const std::string again = (dir.path() + "/again.sqlite").toStdString();
    const profiler::TraceImportOutcome imported = importFolder(out, again);
    const QStringList expected = rowsOf(path, run);
    QCOMPARE(expected.size(), 3 * 3 * (14 + 2));
    QCOMPARE(rowsOf(again, imported.run), expected);
    QVERIFY2(imported.warnings.empty(), imported.warnings.empty() ? "" : imported.warnings.front().c_str());
    for (const profiler::ImportedRank& r : imported.ranks) {
      QCOMPARE(r.stored, r.events);
      QCOMPARE(r.steps, std::int64_t{3});
      QCOMPARE(r.clock_offset_ns, kEpoch);
    }
  }

  void aWindowImportsBackIntoTheSameSpansAndCollectives() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString(), out = (dir.path() + "/export").toStdString();
    const st::RunId run = writeEngineRun(path);
    auto written = profiler::writeChromeTraceFiles({path, run, {0, 2}, 5.0, 5.25}, out);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
    const std::int64_t from = kEpoch + 5'000'000, to = kEpoch + 5'250'000;
    QCOMPARE(written->origin_ns, from);
    // Rank 2's step-0 span began before the window: its ts is negative.
    QVERIFY(readText(out + "/rank2.json").find("\"ts\":-") != std::string::npos);
    QVERIFY(!std::filesystem::exists(out + "/rank1.json"));
    const std::string again = (dir.path() + "/again.sqlite").toStdString();
    const profiler::TraceImportOutcome imported = importFolder(out, again);
    QStringList expected = rowsOf(path, run, from, to);
    expected = expected.filter(QRegularExpression("^\\w+ r[02] "));
    QVERIFY(expected.size() > 10);
    QCOMPARE(rowsOf(again, imported.run), expected);
  }

  void timesAreWrittenAsExactMicrosecondText() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString();
    const st::RunId run = writeEngineRun(path);
    std::ostringstream out;
    QVERIFY(profiler::writeChromeTrace({path, run, {}, {}, {}}, out).ok());
    const std::string text = out.str();
    const std::regex time(R"re("(ts|dur)":(-?[0-9]+(\.[0-9]*)?))re");
    int times = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), time); it != std::sregex_iterator(); ++it, ++times)
      QVERIFY2(std::regex_match((*it)[2].str(), std::regex(R"(-?[0-9]+\.[0-9]{3})")), (*it)[0].str().c_str());
    QCOMPARE(times, 2 * 3 * 3 * (14 + 2));
    // Rank 2's step 1 began at kEpoch + 5'000'003 + 2'034 ns: 5002.037 us after the origin.
    QVERIFY(text.find(R"("name":"step 1","cat":"step","pid":2,"tid":1001,"ts":5002.037,"dur":5002.000)") !=
            std::string::npos);
  }

  void aFileOfOneRankImportsAsThatRank() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString(), file = (dir.path() + "/r1.json").toStdString();
    const st::RunId run = writeEngineRun(path);
    {
      std::ofstream out(file, std::ios::binary);
      QVERIFY(profiler::writeChromeTrace({path, run, {1}, {}, {}}, out).ok());
    }
    const std::string again = (dir.path() + "/again.sqlite").toStdString();
    const profiler::TraceImportOutcome imported = importFolder(file, again);
    QCOMPARE(rowsOf(again, imported.run), rowsOf(path, run).filter(QRegularExpression("^\\w+ r1 ")));
  }

  void aFileOfSeveralRanksIsRefusedByTheImporter() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString(),
                      file = (dir.path() + "/all.json").toStdString();
    const st::RunId run = writeRun(path);
    {
      std::ofstream out(file, std::ios::binary);
      QVERIFY(profiler::writeChromeTrace({path, run, {}, {}, {}}, out).ok());
    }
    NullSink sink;
    profiler::KinetoOptions o;
    o.fallback_rank = 0;
    auto r = profiler::importKineto(file, sink, o);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("/pid: rank 1 after rows of rank 0") != std::string::npos,
             r.error().message.c_str());
    QVERIFY(r.error().json_path.starts_with("/traceEvents/"));
  }

  void aFolderHoldingRankFilesIsRefused() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/run.sqlite").toStdString(), out = (dir.path() + "/export").toStdString();
    const st::RunId run = writeRun(path);
    QVERIFY(profiler::writeChromeTraceFiles({path, run, {}, {}, {}}, out).ok());
    auto again = profiler::writeChromeTraceFiles({path, run, {}, {}, {}}, out);
    QVERIFY(!again.ok());
    QVERIFY(again.error().kind == core::ErrorKind::Usage);
    QVERIFY2(again.error().message.find("already holds rank") != std::string::npos, again.error().message.c_str());
  }

  void malformedRowFieldsNameTheirJsonPath_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("other");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    QTest::newRow("kind of the wrong type") << R"({"shardscope_kind": 5})"
                                            << ""
                                            << "/traceEvents/0/args/shardscope_kind"
                                            << R"(expected a string (a span kind such as "emb_fwd"), found a number)";
    QTest::newRow("empty kind") << R"({"shardscope_kind": ""})"
                                << ""
                                << "/traceEvents/0/args/shardscope_kind"
                                << "expected a span kind such as \"emb_fwd\", found an empty string";
    QTest::newRow("step as text") << R"({"step": "1", "shardscope_kind": "emb_fwd"})"
                                  << ""
                                  << "/traceEvents/0/args/step"
                                  << "expected an integer, found a string";
    QTest::newRow("fractional bytes") << R"({"shardscope_kind": "emb_fwd", "bytes": 1.5})"
                                      << ""
                                      << "/traceEvents/0/args/bytes"
                                      << "expected an integer, found a number that is not a whole int64";
    QTest::newRow("stream beyond 32 bits") << R"({"shardscope_kind": "emb_fwd", "stream": 4294967296})"
                                           << ""
                                           << "/traceEvents/0/args/stream"
                                           << "expected a stream number of 32 bits, found 4294967296";
    QTest::newRow("span and collective") << R"({"shardscope_kind": "emb_fwd", "shardscope_collective": "x"})"
                                         << ""
                                         << "/traceEvents/0/args"
                                         << "both given";
    QTest::newRow("origin as text") << "{}"
                                    << R"({"schema": "shardscope.chrome-trace/1", "origin_ns": "7"})"
                                    << "/otherData/origin_ns"
                                    << "expected an integer (the store time of ts 0, in ns)";
    QTest::newRow("a newer export") << "{}"
                                    << R"({"schema": "shardscope.chrome-trace/2", "origin_ns": 7})"
                                    << "/otherData/schema"
                                    << "is not a format this build reads";
  }
  void malformedRowFieldsNameTheirJsonPath() {
    QFETCH(QString, args);
    QFETCH(QString, other);
    QFETCH(QString, path);
    QFETCH(QString, message);
    QTemporaryDir dir;
    NullSink sink;
    const std::string file =
        other.isEmpty() ? eventFile(dir, args.toStdString()) : eventFile(dir, args.toStdString(), other.toStdString());
    auto r = profiler::importKineto(file, sink);
    QVERIFY(!r.ok());
    QCOMPARE(QString::fromStdString(r.error().json_path), path);
    QVERIFY2(r.error().message.find(path.toStdString() + ": ") != std::string::npos, r.error().message.c_str());
    QVERIFY2(r.error().message.find(message.toStdString()) != std::string::npos, r.error().message.c_str());
    QCOMPARE(sink.stored, 0);
  }

  // The fields an export writes mean nothing in a file that is not one (no otherData.schema
  // before its events): a PyTorch memcpy's "bytes", even a "shardscope_kind", and another tool's
  // otherData leave the events classified as always.
  void rowFieldsOutsideAnExportAreIgnored() {
    QTemporaryDir dir;
    const std::string file = (dir.path() + "/rank0.json").toStdString(),
                      store = (dir.path() + "/s.sqlite").toStdString();
    std::ofstream(file) << R"({"otherData": {"version": "x", "origin_ns": 99}, "distributedInfo": {"rank": 0},
      "traceEvents": [{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 5.5,
      "dur": 1, "args": {"stream": 7, "bytes": 1024, "step": 3, "table": "t", "shardscope_kind": "emb_fwd"}}]})";
    NullSink sink;
    auto r = profiler::importKineto(file, sink);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->stored, std::uint64_t{0});
    QCOMPARE(sink.stored, 0);
    const profiler::TraceImportOutcome imported = importFolder(file, store);
    // Its step is the whole trace's (no ProfilerStep), not args.step.
    QCOMPARE(rowsOf(store, imported.run).filter("memcpy"),
             QStringList{"span r0 s7 memcpy 'Memcpy HtoD' 5500..6500 step 0 corr 0 bytes 0 table ''"});
  }
};

QTEST_GUILESS_MAIN(TestChromeTrace)
#include "test_chrome_trace.moc"
