// A stored run as Chrome trace JSON: every span and collective of the chosen
// ranks and window as an "X" event with its values, processes and threads
// named, timestamps in microseconds from the first event; the JSON parses.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/profiler/trace/engine_trace.h"
#include "shardscope/profiler/workflow/chrome_trace.h"

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

nlohmann::json exportJson(profiler::ChromeTraceRequest request, profiler::ChromeTraceOutcome* outcome = nullptr) {
  std::ostringstream out;
  auto written = profiler::writeChromeTrace(request, out);
  if (!written) qFatal("%s", written.error().message.c_str());
  if (outcome != nullptr) *outcome = *written;
  return nlohmann::json::parse(out.str());
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
        QCOMPARE(e["ts"].get<double>(), 10.1);  // (1'010'100 - 1'000'000) ns
        QCOMPARE(e["dur"].get<double>(), 2.3);
      }
      if (e["cat"] == "collective" && e["pid"] == 1 && e["args"]["seq"] == 0) {
        saw_collective = true;
        QCOMPARE(e["name"].get<std::string>(), std::string("all_to_all"));
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
};

QTEST_GUILESS_MAIN(TestChromeTrace)
#include "test_chrome_trace.moc"
