// Kineto importer and the store sink on fixtures that follow the PyTorch
// profiler's JSON (tests/data/import/make_fixtures.py): events per kind,
// steps via correlation, NCCL collectives, step summaries, clock offsets,
// the analysis of the imported run, and every malformed input as an error.
// The JSON scanner is checked against nlohmann::json::accept and with values
// cut by chunk boundaries (KinetoOptions::chunk_bytes).
#include <QTemporaryDir>
#include <QtTest>

#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/import/store_import_sink.h"

using namespace shardscope;
namespace st = core::store;
using profiler::TraceEventKind;

namespace {

const std::string kData = std::string(SHARDSCOPE_TEST_DATA_DIR) + "/import/";

struct Recorded {
  TraceEventKind kind;
  std::string name, collective, dtype, group;
  std::int64_t start, end, stream, correlation, step, in_nelems;
  int device, group_size;
  std::string process_group;
  std::int64_t seq;
};

class RecordingSink : public profiler::TraceEventSink {
 public:
  core::Status beginRank(const profiler::ImportRankInfo& r) override {
    begins.push_back(r);
    return core::Ok{};
  }
  core::Status event(const profiler::TraceEvent& e) override {
    events.push_back({e.kind, std::string(e.name), std::string(e.collective), std::string(e.dtype),
                      std::string(e.group_ranks), e.start_ns, e.end_ns, e.stream, e.correlation, e.step, e.in_nelems,
                      e.device, e.group_size, std::string(e.process_group), e.seq});
    return core::Ok{};
  }
  core::Status updateRank(const profiler::ImportRankInfo& r) override {
    updates.push_back(r);
    return core::Ok{};
  }
  core::Status endRank() override {
    ++ends;
    return core::Ok{};
  }
  std::vector<profiler::ImportRankInfo> begins, updates;
  std::vector<Recorded> events;
  int ends = 0;
};

std::size_t countKind(const std::vector<Recorded>& ev, TraceEventKind k) {
  std::size_t n = 0;
  for (const auto& e : ev) n += e.kind == k ? 1 : 0;
  return n;
}

// Imports files into a fresh store; returns the sink's error or finish().
struct Imported {
  std::unique_ptr<profiler::StoreImportSink> sink;
  core::Status status = core::Ok{};
};

Imported importFiles(const std::string& store, const std::vector<std::string>& files,
                     profiler::KernelClassifier cls = {}) {
  Imported out;
  profiler::StoreImportOptions o;
  o.label = "test";
  auto s = profiler::StoreImportSink::create(store, o, std::move(cls));
  if (!s) {
    out.status = s.error();
    return out;
  }
  out.sink = std::move(s).value();
  for (const auto& f : files) {
    auto r = profiler::importKineto(f, *out.sink);
    if (!r) {
      (void)out.sink->fail(r.error().message);
      out.status = r.error();
      return out;
    }
  }
  out.status = out.sink->finish();
  return out;
}

// A printed form of an import: the outcome, the counts and every event.
std::string describe(const core::Result<profiler::KinetoStats>& r, const RecordingSink& sink) {
  std::string s;
  const auto add = [&s](auto... parts) {
    for (const std::string& p : {std::string(parts)...}) s += p;
  };
  const auto num = [](std::int64_t v) { return std::to_string(v); };
  if (!r.ok()) {
    add("error: ", r.error().message);
  } else {
    add("ok ", num(static_cast<std::int64_t>(r->events)), " ", num(static_cast<std::int64_t>(r->missing_time)), " ",
        num(r->rank_after_events), " ", num(static_cast<std::int64_t>(r->bytes_json)));
    for (const auto* m : {&r->by_cat, &r->unknown_cats, &r->other_phases})
      for (const auto& [k, v] : *m) add(" ", k, "=", num(static_cast<std::int64_t>(v)));
  }
  for (const auto& b : sink.begins) add("\nbegin ", num(b.rank), " ", b.backend);
  for (const auto& e : sink.events) {
    add("\n", num(static_cast<int>(e.kind)));
    for (std::int64_t v : {e.start, e.end, e.stream, e.correlation, e.step, e.in_nelems, std::int64_t{e.device},
                           std::int64_t{e.group_size}})
      add(" ", num(v));
    add("|", e.name, "|", e.collective, "|", e.dtype, "|", e.group);
  }
  for (const auto& u : sink.updates) add("\nupdate ", num(u.base_time_ns));
  return s;
}

std::string importPrinted(const std::string& path, std::size_t chunk, RecordingSink* out = nullptr) {
  RecordingSink sink;
  profiler::KinetoOptions o;
  o.chunk_bytes = chunk;
  auto r = profiler::importKineto(path, sink, o);
  std::string s = describe(r, sink);
  if (out != nullptr) *out = std::move(sink);
  return s;
}

// Writes `text` to a file in `dir`; returns its path.
std::string writeText(const QTemporaryDir& dir, const std::string& name, const std::string& text) {
  const std::string p = dir.filePath(QString::fromStdString(name)).toStdString();
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// A small trace with most of what the scanner meets: a byte order mark,
// escapes, non-ASCII names, numbers of every shape, nested args, skipped
// values of every kind, and distributedInfo after traceEvents (two passes).
const std::string kTricky =
    "\xEF\xBB\xBF{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"x\": [true, false, null, -0, 1E+2, "
    "0.5e-3, {}, []]}],\r\n\t\"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 1, \"tid\": \"thread 9\", "
    "\"ts\": 1733000000123456.789, \"dur\": 2000.0005},\n"
    "  {\"ph\": \"X\", \"cat\": \"Kernel\", \"n\\u0061me\": \"k\\\"1\\\\\\/\\n\\u00e9\\ud83d\\ude00\xC3\xA9\", \"ts\": "
    "1.5e3, "
    "\"dur\": 7, \"args\": {\"device\": 2, \"stream\": 7, \"correlation\": 42, \"grid\": [[1, 2], {\"a\": \"\\t\"}], "
    "\"Collective name\": \"allreduce\", \"In msg nelems\": 10, \"Out msg nelems\": 10.9, \"dtype\": \"Float\", "
    "\"Group size\": 4, \"Process Group Ranks\": [0, 2, \"x\", [9], 4]}},\n"
    "  {\"ph\": \"f\", \"id\": 1}, 17, \"text\", {\"ph\": \"X\", \"cat\": \"python_function\", \"ts\": 1, \"dur\": "
    "1},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": -0.0005, \"dur\": 0, "
    "\"args\": {\"correlation\": 42}}\n"
    "], \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 1, \"world_size\": 2}, "
    "\"baseTimeNanoseconds\": \"1733000000000000000\"}";

}  // namespace

class TestKinetoImport : public QObject {
  Q_OBJECT

 private slots:
  void parsesPlainJsonEvents() {
    RecordingSink sink;
    auto r = profiler::importKineto(kData + "rank0.json", sink);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(sink.begins.size(), std::size_t{1});
    QCOMPARE(sink.begins[0].rank, 0);
    QCOMPARE(sink.begins[0].world_size, 2);
    QCOMPARE(sink.begins[0].backend, std::string("nccl"));
    QCOMPARE(sink.updates.size(), std::size_t{1});
    QCOMPARE(sink.updates[0].base_time_ns, std::int64_t{1733000000000000000});  // written after traceEvents
    QCOMPARE(sink.ends, 1);
    QVERIFY(!r->rank_after_events);
    QVERIFY(sink.begins[0].rank_final);
    // Per step: 7 kernels, 1 memcpy, 8 launches, 1 cpu op, 1 annotation, 1 profiler step.
    QCOMPARE(countKind(sink.events, TraceEventKind::Kernel), std::size_t{14});
    QCOMPARE(countKind(sink.events, TraceEventKind::Memcpy), std::size_t{2});
    QCOMPARE(countKind(sink.events, TraceEventKind::Runtime), std::size_t{16});
    QCOMPARE(countKind(sink.events, TraceEventKind::CpuOp), std::size_t{2});
    QCOMPARE(countKind(sink.events, TraceEventKind::Annotation), std::size_t{2});
    QCOMPARE(countKind(sink.events, TraceEventKind::ProfilerStep), std::size_t{2});
    QCOMPARE(r->events, std::uint64_t{38});
    QCOMPARE(r->unknown_cats.at("python_function"), std::uint64_t{1});
    QCOMPARE(r->other_phases.at("M"), std::uint64_t{1});
    QCOMPARE(r->other_phases.at("s"), std::uint64_t{1});
    bool saw_nccl = false;
    for (const auto& e : sink.events) {
      if (e.kind == TraceEventKind::ProfilerStep) QVERIFY(e.step == 5 || e.step == 6);
      if (e.collective == "allreduce") {
        saw_nccl = true;
        QCOMPARE(e.in_nelems, std::int64_t{1000000});
        QCOMPARE(e.dtype, std::string("Float"));
        QCOMPARE(e.group_size, 2);
        QCOMPARE(e.group, std::string("[0, 1]"));
        QCOMPARE(e.stream, std::int64_t{7});
        QCOMPARE(e.device, 0);
        QVERIFY(e.correlation > 0);
        QCOMPARE(e.end - e.start, std::int64_t{400'000});  // us -> ns
      }
    }
    QVERIFY(saw_nccl);
  }

  void distributedInfoAfterTheEventsIsReadInOnePass() {
    RecordingSink sink;
    profiler::KinetoOptions o;
    std::vector<std::uint64_t> reads;  // bytes done at each progress call: a second pass starts again at 0
    o.progress = [&](std::uint64_t done, std::uint64_t) {
      reads.push_back(done);
      return true;
    };
    auto r = profiler::importKineto(kData + "rank1.json.gz", sink, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(r->rank_after_events);
    QVERIFY(!r->rank_from_fallback);
    QCOMPARE(reads.size(), std::size_t{1});
    QCOMPARE(sink.begins.size(), std::size_t{1});
    QVERIFY(!sink.begins[0].rank_final);  // provisional until the file says its rank
    QCOMPARE(sink.updates.size(), std::size_t{1});
    QVERIFY(sink.updates[0].rank_final);
    QCOMPARE(sink.updates[0].rank, 1);
    QCOMPARE(sink.updates[0].world_size, 2);
    QCOMPARE(countKind(sink.events, TraceEventKind::Kernel), std::size_t{14});
    QCOMPARE(countKind(sink.events, TraceEventKind::ProfilerStep), std::size_t{2});
    // Fractional microseconds are exact: 6000123.5 us.
    for (const auto& e : sink.events)
      if (e.kind == TraceEventKind::ProfilerStep && e.step == 5) QCOMPARE(e.start, std::int64_t{6'000'123'500});
  }

  void processGroupsAndSequenceNumbersAreRead() {
    QTemporaryDir dir;
    const std::string p = writeText(dir, "pg.json", R"({"distributedInfo": {"rank": 0, "world_size": 2,
      "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1]}, {"pg_name": "3", "ranks": "[1]"}, 7]},
      "traceEvents": [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Broadcast", "ts": 1, "dur": 1,
        "args": {"Process Group Name": "3", "Seq": 12, "Collective name": "broadcast"}},
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 2, "dur": 1, "args": {"Seq": "5"}},
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 3, "dur": 1}]})");
    RecordingSink sink;
    auto r = profiler::importKineto(p, sink);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    const std::vector<std::pair<std::string, std::string>> groups = {{"0", "[0, 1]"}, {"3", "[1]"}};
    QVERIFY(sink.begins.at(0).process_groups == groups);
    QCOMPARE(sink.events.size(), std::size_t{3});
    QCOMPARE(sink.events[0].process_group, std::string("3"));
    QCOMPARE(sink.events[0].seq, std::int64_t{12});
    QCOMPARE(sink.events[1].seq, std::int64_t{5});
    QCOMPARE(sink.events[2].seq, std::int64_t{-1});
  }

  void aLateRankWrittenBeforeItWasKnownMustMatch() {
    // Events past the sink's buffer are written under the rank given for the
    // file; distributedInfo after them must then say the same rank.
    QTemporaryDir dir;
    const std::string store = dir.filePath("s.sqlite").toStdString();
    profiler::StoreImportOptions o;
    o.max_buffered_events = 5;
    auto s = profiler::StoreImportSink::create(store, o);
    QVERIFY(s.ok());
    profiler::KinetoOptions k;
    k.fallback_rank = 0;  // rank1.json.gz says rank 1 after its events
    auto r = profiler::importKineto(kData + "rank1.json.gz", **s, k);
    QVERIFY(!r.ok());
    QVERIFY2(
        r.error().message.find("distributedInfo.rank is 1, but it follows more than 5 events, written as rank 0") !=
            std::string::npos,
        r.error().message.c_str());
    k.fallback_rank = 1;
    auto s2 = profiler::StoreImportSink::create(store, o);
    QVERIFY(s2.ok());
    r = profiler::importKineto(kData + "rank1.json.gz", **s2, k);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE((*s2)->ranks().at(0).rank, 1);
  }

  void ranksHoursApartAreFlaggedAsOtherJobs() {
    QTemporaryDir dir;
    auto trace = [](int rank, const char* step_ts) {
      return std::string(R"({"distributedInfo": {"rank": )") + (rank ? "1" : "0") +
             R"(, "world_size": 2}, "baseTimeNanoseconds": 1, "traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": )" +
             step_ts + R"(, "dur": 100}]})";
    };
    const std::string a = writeText(dir, "a.json", trace(0, "1000")),
                      near = writeText(dir, "near.json", trace(1, "2500000")),  // 2.5 s later: one job
        far = writeText(dir, "far.json", trace(1, "7200001000"));               // 2 h later
    const std::string store = dir.filePath("s.sqlite").toStdString();
    auto same = importFiles(store, {a, near});
    QVERIFY(same.status.ok());
    for (const auto& w : same.sink->warnings()) QVERIFY2(w.find("one job") == std::string::npos, w.c_str());
    auto other = importFiles(store, {a, far});
    QVERIFY(other.status.ok());
    bool flagged = false;
    for (const auto& w : other.sink->warnings())
      flagged = flagged || w.find(
                               "its clock is -120 min away from the first rank's on ProfilerStep#3 start: are "
                               "these traces of one job?") != std::string::npos;
    QVERIFY(flagged);
  }

  void importsTwoRanksIntoAStore() {
    QTemporaryDir dir;
    const std::string store = dir.filePath("s.sqlite").toStdString();
    auto imp = importFiles(store, {kData + "rank0.json", kData + "rank1.json.gz"});
    QVERIFY2(imp.status.ok(), imp.status.ok() ? "" : imp.status.error().message.c_str());
    if (imp.sink == nullptr) QFAIL("no sink");
    const auto& ranks = imp.sink->ranks();
    QCOMPARE(ranks.size(), std::size_t{2});
    QCOMPARE(ranks[0].clock_offset_ns, std::int64_t{0});
    QCOMPARE(ranks[1].clock_offset_ns, std::int64_t{1'000'000'000 - 6'000'123'500});
    QCOMPARE(ranks[1].clock_reference, std::string("ProfilerStep#5 start"));
    QCOMPARE(ranks[0].spans_by_kind.at("emb_fwd"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("emb_bwd"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("a2a_ids"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("a2a_pooled"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("a2a_grads"), std::uint64_t{2});
    QCOMPARE(ranks[1].spans_by_kind.at("a2a_pooled"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("dense_allreduce"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("dense"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("memcpy"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("step"), std::uint64_t{2});
    QCOMPARE(ranks[0].spans_by_kind.at("cuda_runtime"), std::uint64_t{16});
    QCOMPARE(ranks[0].collectives, std::int64_t{8});

    auto ts = st::openStore(store, st::OpenMode::ReadOnly);
    QVERIFY2(ts.ok(), ts.ok() ? "" : ts.error().message.c_str());
    const st::RunId run = imp.sink->run();
    auto rec = ts->run(run);
    QVERIFY(rec.ok());
    QVERIFY(rec->kind == st::RunKind::ImportKineto);
    QVERIFY(rec->isComplete());
    auto strings = ts->strings();
    QVERIFY(strings.ok());

    // Collectives: op, bytes (all-to-all: (in + out) nelems x dtype size; all-reduce: the buffer,
    // in nelems x dtype size), group, peers, steps via correlation.
    auto colls = ts->collectives(run);
    QVERIFY(colls.ok());
    QCOMPARE(colls->size(), std::size_t{16});
    std::map<std::pair<std::string, std::int64_t>, int> per;
    for (const auto& c : *colls) {
      const std::string op(strings->at(c.op));
      QCOMPARE(std::string(strings->at(c.group)), std::string("0,1"));  // the rank list alone
      QCOMPARE(std::string(strings->at(c.process_group)), std::string("0"));
      QCOMPARE(c.seq, std::int64_t{-1});  // the fixtures give no Seq
      QVERIFY(c.algorithm == st::kNoString);
      QCOMPARE(c.peers, 1);
      if (op == "all_reduce")
        QCOMPARE(c.bytes, std::int64_t{4'000'000});
      else if (op == "all_to_all")
        QVERIFY(c.bytes == 16384 || c.bytes == 32768);
      else
        QFAIL(("unexpected op " + op).c_str());
      QVERIFY(c.step == 5 || c.step == 6);  // the allreduce runs after the CPU window: its launch decides
      ++per[{op, c.step}];
    }
    QCOMPARE(per[std::make_pair(std::string("all_reduce"), std::int64_t{5})], 2);
    QCOMPARE(per[std::make_pair(std::string("all_reduce"), std::int64_t{6})], 2);

    // Step summaries per (step, rank).
    auto sums = ts->stepSummaries(run);
    QVERIFY(sums.ok());
    QCOMPARE(sums->size(), std::size_t{4});
    for (const auto& s : *sums) {
      QCOMPARE(s.total_ns, std::int64_t{10'000'000});
      QCOMPARE(s.dense_ns, std::int64_t{500'000});
      if (s.rank == 0) {
        QCOMPARE(s.emb_fwd_ns, std::int64_t{1'000'000});
        QCOMPARE(s.emb_bwd_ns, std::int64_t{1'500'000});
        QCOMPARE(s.comm_ns, std::int64_t{1'200'000});
      } else {
        QCOMPARE(s.emb_fwd_ns, std::int64_t{3'000'000});
        QCOMPARE(s.emb_bwd_ns, std::int64_t{2'500'000});
        QCOMPARE(s.comm_ns, std::int64_t{1'150'000});
      }
    }
    // Aligned clocks: both ranks' ProfilerStep#5 start at the same time.
    auto spans =
        ts->spansInWindow(run, {}, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
    QVERIFY(spans.ok());
    std::map<int, std::int64_t> step5;
    for (const auto& s : *spans) {
      if (strings->at(s.kind) == "step" && s.step == 5) step5[s.rank] = s.start_ns;
      if (strings->at(s.kind) == "cpu_op") QVERIFY(s.stream >= 100000);
      if (strings->at(s.kind) == "emb_fwd") {
        QCOMPARE(s.stream, 7);
        QVERIFY(strings->at(s.name).find("split_embedding_codegen_forward") != std::string_view::npos);
        QVERIFY(s.correlation != 0);
      }
    }
    QCOMPARE(step5.size(), std::size_t{2});
    QCOMPARE(step5[0], step5[1]);

    // The analysis reads it like an engine run.
    auto a = profiler::analyzeRun(*ts, run);
    QVERIFY2(a.ok(), a.ok() ? "" : a.error().message.c_str());
    QCOMPARE(a->steps, std::int64_t{2});
    QCOMPARE(a->ranks.size(), std::size_t{2});
    QVERIFY(std::abs(a->ranks[0].compute_ms - 2.5) < 1e-9);
    QVERIFY(std::abs(a->ranks[1].compute_ms - 5.5) < 1e-9);
    QVERIFY(std::abs(a->overall.max_over_mean - 5.5 / 4.0) < 1e-9);
    QCOMPARE(a->overall.slowest_rank, 1);
    bool ids_wait = false;
    for (const auto& c : a->ranks[0].comm)
      if (c.kind == "a2a_ids") {
        ids_wait = true;
        QVERIFY(std::abs(c.ms - 0.2) < 1e-9);
        QVERIFY(std::abs(c.wait_ms - 0.05) < 1e-9);  // 200 us vs the peer's 150 us
      }
    QVERIFY(ids_wait);
    const std::string text = profiler::formatReport(*a);
    QVERIFY(text.find("a2a_pooled") != std::string::npos);
  }

  void customRulesPrependToDefaults() {
    auto cls = profiler::KernelClassifier::fromFile(kData + "rules.json");
    QVERIFY2(cls.ok(), cls.ok() ? "" : cls.error().message.c_str());
    QTemporaryDir dir;
    auto imp = importFiles(dir.filePath("s.sqlite").toStdString(), {kData + "rank0.json"}, std::move(cls).value());
    QVERIFY(imp.status.ok());
    if (imp.sink == nullptr) QFAIL("no sink");
    QCOMPARE(imp.sink->ranks()[0].spans_by_kind.at("emb_fwd"), std::uint64_t{4});  // the sgemm now counts
    QCOMPARE(imp.sink->ranks()[0].spans_by_kind.count("dense"), std::size_t{0});
  }

  void malformedInputsAreErrors_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expected");
    QTest::newRow("truncated") << "truncated.json"
                               << "truncated.json: byte ";
    QTest::newRow("truncated gzip") << "truncated.json.gz"
                                    << "truncated.json.gz: byte ";
    QTest::newRow("wrong json") << "wrong.json"
                                << "wrong.json: byte ";
    QTest::newRow("no traceEvents") << "no_events.json"
                                    << "traceEvents: missing";
    QTest::newRow("traceEvents object") << "events_object.json"
                                        << "traceEvents: expected an array";
    QTest::newRow("top-level array") << "top_array.json"
                                     << "expected a JSON object at the top level";
    QTest::newRow("no rank") << "no_rank.json"
                             << "distributedInfo.rank: missing";
    QTest::newRow("missing file") << "does_not_exist.json"
                                  << "does_not_exist.json: cannot read";
  }
  void malformedInputsAreErrors() {
    QFETCH(QString, file);
    QFETCH(QString, expected);
    RecordingSink sink;
    auto r = profiler::importKineto(kData + file.toStdString(), sink);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find(expected.toStdString()) != std::string::npos, r.error().message.c_str());
    QVERIFY2(r.error().message.find(file.toStdString()) != std::string::npos, r.error().message.c_str());
  }

  void outOfRangeRanksDoNotWrap() {
    // 2^32 would be rank 0 after a plain cast to int.
    QTemporaryDir dir;
    const std::string p = writeText(dir, "huge.json", R"({"distributedInfo": {"rank": 4294967296, "world_size": 2},
      "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": 8589934592}}]})");
    RecordingSink sink;
    auto r = profiler::importKineto(p, sink);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("distributedInfo.rank: missing") != std::string::npos, r.error().message.c_str());
    QVERIFY(sink.begins.empty() || sink.begins.at(0).rank != 0);
  }

  void fallbackRankWhenFileHasNone() {
    RecordingSink sink;
    profiler::KinetoOptions o;
    o.fallback_rank = 3;
    auto r = profiler::importKineto(kData + "no_rank.json", sink, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(r->rank_from_fallback);
    QCOMPARE(sink.begins.at(0).rank, 3);
  }

  void duplicateRanksAndMixedWorldSizesFail() {
    QTemporaryDir dir;
    const std::string store = dir.filePath("s.sqlite").toStdString();
    auto dup = importFiles(store, {kData + "rank0.json", kData + "rank0.json"});
    QVERIFY(!dup.status.ok());
    QVERIFY2(dup.status.error().message.find("rank 0 was already imported") != std::string::npos,
             dup.status.error().message.c_str());
    auto mixed = importFiles(store, {kData + "rank0.json", kData + "mixed_world.json"});
    QVERIFY(!mixed.status.ok());
    QVERIFY2(mixed.status.error().message.find("mixed_world.json: distributedInfo.world_size: 4") != std::string::npos,
             mixed.status.error().message.c_str());
    auto ts = st::openStore(store, st::OpenMode::ReadOnly);
    QVERIFY(ts.ok());
    auto runs = ts->listRuns();
    QVERIFY(runs.ok());
    QCOMPARE(runs->size(), std::size_t{2});
    for (const auto& run : *runs) QVERIFY(run.status == st::RunStatus::Failed);
  }

  void cancelViaProgress() {
    RecordingSink sink;
    profiler::KinetoOptions o;
    o.progress = [](std::uint64_t, std::uint64_t) { return false; };
    auto r = profiler::importKineto(kData + "rank0.json", sink, o);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("cancelled") != std::string::npos, r.error().message.c_str());
  }

  void streamedPastTheCapGivesTheSameSummaries() {
    QTemporaryDir dir;
    const std::string store = dir.filePath("s.sqlite").toStdString();
    profiler::StoreImportOptions o;
    o.max_buffered_events = 20;  // rank0's ProfilerSteps and launches come first in the file
    auto s = profiler::StoreImportSink::create(store, o);
    QVERIFY(s.ok());
    auto& sink = **s;
    auto r = profiler::importKineto(kData + "rank0.json", sink);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(sink.finish().ok());
    QVERIFY(sink.ranks()[0].streamed);
    auto ts = st::openStore(store, st::OpenMode::ReadOnly);
    QVERIFY(ts.ok());
    auto sums = ts->stepSummaries(sink.run());
    QVERIFY(sums.ok());
    QCOMPARE(sums->size(), std::size_t{2});
    std::int64_t fwd = 0;
    for (const auto& x : *sums) fwd += x.emb_fwd_ns;
    QCOMPARE(fwd, std::int64_t{2'000'000});
  }

  void outOfRangeTimesAreSkipped() {
    QTemporaryDir dir;
    const std::string p = dir.filePath("huge.json").toStdString();
    std::ofstream(p) << R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "ts": 1e300, "dur": 1},
      {"ph": "X", "cat": "kernel", "name": "k", "ts": -9223372036854775808, "dur": 1},
      {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 99999999999999999999999},
      {"ph": "X", "cat": "kernel", "name": "k", "ts": 5.0005, "dur": 1.25},
      {"ph": "X", "cat": "kernel", "name": "k", "ts": 7}]})";
    RecordingSink sink;
    auto r = profiler::importKineto(p, sink);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->missing_time, std::uint64_t{4});
    QCOMPARE(sink.events.size(), std::size_t{1});
    QCOMPARE(sink.events[0].start, std::int64_t{5001});  // 5.0005 us rounds half up
    QCOMPARE(sink.events[0].end, std::int64_t{5001 + 1250});
  }

  void trickyTraceIsReadExactly() {
    QTemporaryDir dir;
    RecordingSink sink;
    const std::string out = importPrinted(writeText(dir, "tricky.json", kTricky), 0, &sink);
    QVERIFY2(out.starts_with("ok "), out.c_str());
    QCOMPARE(sink.begins.size(), std::size_t{1});
    QCOMPARE(sink.begins[0].rank, -1);  // distributedInfo follows the events: no rank yet
    QCOMPARE(sink.updates.at(0).rank, 1);
    QCOMPARE(sink.updates.at(0).backend, std::string("nccl"));
    QCOMPARE(sink.updates.at(0).base_time_ns, std::int64_t{1733000000000000000});
    QCOMPARE(sink.events.size(), std::size_t{3});
    const Recorded& step = sink.events[0];
    QCOMPARE(step.kind, TraceEventKind::ProfilerStep);
    QCOMPARE(step.step, std::int64_t{3});
    QCOMPARE(step.start, std::int64_t{1733000000123456789});  // exact: the text, not a double
    QCOMPARE(step.end - step.start, std::int64_t{2000001});   // the 4th decimal rounds half up
    QCOMPARE(step.stream, std::int64_t{9});                   // "thread 9"
    const Recorded& k = sink.events[1];
    // Escapes decoded (a surrogate pair too); the key "n\u0061me" is "name".
    QCOMPARE(k.name, std::string("k\"1\\/\n\xC3\xA9\xF0\x9F\x98\x80\xC3\xA9"));
    QCOMPARE(k.start, std::int64_t{1500000});
    QCOMPARE(k.end, std::int64_t{1507000});
    QCOMPARE(k.device, 2);
    QCOMPARE(k.stream, std::int64_t{7});
    QCOMPARE(k.correlation, std::int64_t{42});
    QCOMPARE(k.collective, std::string("allreduce"));
    QCOMPARE(k.in_nelems, std::int64_t{10});
    QCOMPARE(k.group, std::string("[0, 2, 4]"));
    QCOMPARE(k.group_size, 4);
    QCOMPARE(sink.events[2].start, std::int64_t{-1});
  }

  void everyChunkSizeGivesTheSameResult() {
    QTemporaryDir dir;
    const std::vector<std::string> files = {kData + "rank0.json", kData + "rank1.json.gz",
                                            writeText(dir, "tricky.json", kTricky)};
    for (const auto& f : files) {
      const std::string whole = importPrinted(f, 0);
      QVERIFY2(whole.starts_with("ok "), whole.c_str());
      for (std::size_t chunk : {1, 2, 3, 4, 5, 7, 11, 16, 17, 64, 4093})
        QVERIFY2(importPrinted(f, chunk) == whole, (f + ", chunk " + std::to_string(chunk)).c_str());
    }
  }

  void everyTruncationIsAnErrorAtItsEnd() {
    QTemporaryDir dir;
    for (std::size_t len = 1; len < kTricky.size(); ++len) {  // len 0: an empty file (wholeDocumentIsChecked)
      const std::string p = writeText(dir, "cut.json", kTricky.substr(0, len));
      for (std::size_t chunk : {std::size_t{0}, std::size_t{3}}) {
        const std::string out = importPrinted(p, chunk);
        const std::string at = ": byte " + std::to_string(len) + ": syntax error at line ";
        QVERIFY2(out.starts_with("error: ") && out.find(at) != std::string::npos &&
                     out.find("unexpected end of input") != std::string::npos,
                 (std::to_string(len) + ": " + out).c_str());
      }
    }
  }

  void invalidJsonIsRejected_data() {
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QString>("expected");
    QTest::newRow("trailing comma in array") << QByteArray(R"({"ph": "X"},)") << "expected a value, found ']'";
    QTest::newRow("trailing comma in object") << QByteArray(R"({"ph": "X",})") << "expected a string key, found '}'";
    QTest::newRow("missing colon") << QByteArray(R"({"ph" "X"})") << "expected ':' after an object key";
    QTest::newRow("single quotes") << QByteArray(R"({'ph': 'X'})") << "expected a string key, found '''";
    QTest::newRow("unquoted key") << QByteArray(R"({ph: "X"})") << "expected a string key, found 'p'";
    QTest::newRow("leading zero") << QByteArray(R"({"ts": 01})") << "found '1'";
    QTest::newRow("no fraction digits") << QByteArray(R"({"ts": 1.})")
                                        << "expected a digit (invalid number), found '}'";
    QTest::newRow("no integer part") << QByteArray(R"({"ts": .5})") << "expected a value, found '.'";
    QTest::newRow("lone minus") << QByteArray(R"({"ts": -})") << "expected a digit (invalid number), found '}'";
    QTest::newRow("empty exponent") << QByteArray(R"({"ts": 1e+})") << "expected a digit (invalid number), found '}'";
    QTest::newRow("plus sign") << QByteArray(R"({"ts": +1})") << "expected a value, found '+'";
    QTest::newRow("NaN") << QByteArray(R"({"ts": NaN})") << "expected a value, found 'N'";
    QTest::newRow("misspelt literal") << QByteArray(R"({"x": tru})") << "expected the literal true, found '}'";
    QTest::newRow("raw tab in string") << QByteArray("{\"name\": \"a\tb\"}") << "control character U+0009";
    QTest::newRow("raw newline in a skipped string") << QByteArray("{\"x\": \"a\nb\"}") << "control character U+000A";
    QTest::newRow("bad escape") << QByteArray(R"({"name": "\x41"})") << "expected an escape";
    QTest::newRow("short unicode escape") << QByteArray(R"({"name": "\u12G4"})") << "4 hex digits after '\\u'";
    QTest::newRow("lone high surrogate") << QByteArray(R"({"name": "\ud800"})") << "low surrogate";
    QTest::newRow("high surrogate then letter") << QByteArray(R"({"x": "\ud800\u0041"})") << "low surrogate";
    QTest::newRow("lone low surrogate") << QByteArray(R"({"name": "\udc00"})") << "lone low surrogate";
    QTest::newRow("overlong UTF-8") << QByteArray("{\"name\": \"\xC0\x80\"}") << "ill-formed UTF-8";
    QTest::newRow("UTF-8 surrogate") << QByteArray("{\"x\": \"\xED\xA0\x80\"}") << "ill-formed UTF-8";
    QTest::newRow("UTF-8 past U+10FFFF") << QByteArray("{\"x\": \"\xF4\x90\x80\x80\"}") << "ill-formed UTF-8";
    QTest::newRow("lone continuation byte") << QByteArray("{\"x\": \"\x80\"}") << "ill-formed UTF-8";
    QTest::newRow("cut UTF-8 sequence") << QByteArray("{\"x\": \"\xE2\x82\"}") << "ill-formed UTF-8";
    QTest::newRow("comment") << QByteArray(R"({"ph": "X"} // c)") << "expected ',' or ']' after a trace event";
    QTest::newRow("nesting bomb") << QByteArray("{\"args\": {\"x\": " + QByteArray(2000, '[') + QByteArray(2000, ']') +
                                                "}}")
                                  << "nested more than 1024 deep";
  }
  void invalidJsonIsRejected() {
    QFETCH(QByteArray, event);
    QFETCH(QString, expected);
    const std::string text = R"({"distributedInfo": {"rank": 0}, "traceEvents": [{"ph": "X", "cat": "kernel"}, )" +
                             event.toStdString() + "]}";
    QTemporaryDir dir;
    const std::string p = writeText(dir, "bad.json", text);
    const std::string whole = importPrinted(p, 0);
    QVERIFY2(whole.starts_with("error: ") && whole.find(expected.toStdString()) != std::string::npos, whole.c_str());
    QVERIFY2(whole.find("bad.json: byte ") != std::string::npos, whole.c_str());
    QCOMPARE(importPrinted(p, 1), whole);
    if (!expected.contains("nested"))  // nlohmann has no depth limit
      QVERIFY(!nlohmann::json::accept(text));
  }

  void wholeDocumentIsChecked_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    const QByteArray ok = R"({"distributedInfo": {"rank": 0}, "traceEvents": []})";
    QTest::newRow("empty file") << QByteArray() << "doc.json: empty file (expected a Kineto JSON trace)";
    QTest::newRow("only whitespace") << QByteArray(" \n\t ") << "line 2, column 3: unexpected end of input";
    QTest::newRow("top-level string") << QByteArray(R"("x")")
                                      << "expected a JSON object at the top level (a Kineto trace), found a string";
    QTest::newRow("trailing garbage") << ok + " x"
                                      << "expected the end of the input after the top-level object, found 'x'";
    QTest::newRow("two documents") << ok + ok << "expected the end of the input";
    QTest::newRow("traceEvents twice")
        << QByteArray(R"({"distributedInfo": {"rank": 0}, "traceEvents": [], "traceEvents": []})")
        << "traceEvents appears twice";
    QTest::newRow("traceEvents a number")
        << QByteArray(R"({"traceEvents": 5})") << "traceEvents: expected an array of trace events, found a number";
    QTest::newRow("partial byte order mark") << QByteArray("\xEF\xBB") + ok << "expected byte 0xBF";
    // Found by tests/fuzz/fuzz_kineto_import: valid JSON that is not a Kineto
    // trace is not a syntax error; a NUL byte is not the end of the input.
    QTest::newRow("top-level number (fuzz)")
        << QByteArray("0") << "expected a JSON object at the top level (a Kineto trace), found a number";
    QTest::newRow("NUL after the object (fuzz)")
        << QByteArray(
               "{\"`on\":3.2850}\0\0\0\x16"
               "8504",
               22)
        << "byte 14: syntax error at line 1, column 15: expected the end of the input after the top-level object, "
           "found byte 0x00";
    QTest::newRow("a comma after the last pg_config entry")
        << QByteArray(R"({"distributedInfo": {"rank": 0, "pg_config": [{"pg_name": "0", "ranks": [0]},]}, )"
                      R"("traceEvents": []})")
        << "expected a value, found ']'";
    QTest::newRow("garbage after distributedInfo that follows the events")
        << QByteArray(R"({"traceEvents": [], "distributedInfo": {"rank": 0}} x)") << "expected the end of the input";
  }
  void wholeDocumentIsChecked() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const std::string p = writeText(dir, "doc.json", text.toStdString());
    const std::string whole = importPrinted(p, 0);
    QVERIFY2(whole.starts_with("error: ") && whole.find(expected.toStdString()) != std::string::npos, whole.c_str());
    QCOMPARE(importPrinted(p, 2), whole);
  }

  void nestingLimitCountsFromTheTop() {
    // Containers may nest 1024 deep, counted from the top-level object,
    // whether distributedInfo comes before the events or after them.
    QTemporaryDir dir;
    for (const bool dist_first : {true, false}) {
      for (const int arrays : {1020, 1021}) {  // inside the top object, traceEvents, an event, its args
        const std::string x =
            std::string(static_cast<std::size_t>(arrays), '[') + std::string(static_cast<std::size_t>(arrays), ']');
        const std::string events = R"("traceEvents": [{"ph": "X", "args": {"x": )" + x + "}}]";
        const std::string dist = R"("distributedInfo": {"rank": 0})";
        const std::string text = "{" + (dist_first ? dist + ", " + events : events + ", " + dist) + "}";
        const std::string out = importPrinted(writeText(dir, "deep.json", text), 0);
        if (arrays == 1020)
          QVERIFY2(out.starts_with("ok "), out.c_str());
        else
          QVERIFY2(out.find("nested more than 1024 deep") != std::string::npos, out.c_str());
      }
    }
  }

  void syntaxErrorsNameByteLineAndColumn() {
    QTemporaryDir dir;
    const std::string p = writeText(dir, "e.json", "{\"traceEvents\": [\n  {\"ph\": \"X\",, \"ts\": 1}\n]}\n");
    RecordingSink sink;
    auto r = profiler::importKineto(p, sink);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, p + ": byte 31: syntax error at line 2, column 14: expected a string key, found ','");
  }

  void gzipCutAfterCompleteJsonIsAnError() {
    QTemporaryDir dir;
    const std::string text = R"({"distributedInfo": {"rank": 0}, "traceEvents": []})";
    const std::string p = dir.filePath("cut.json.gz").toStdString();
    gzFile f = gzopen(p.c_str(), "wb");
    QVERIFY(f != nullptr);
    QCOMPARE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(f);
    std::filesystem::resize_file(p, std::filesystem::file_size(p) - 4);  // part of the trailer
    RecordingSink sink;
    auto r = profiler::importKineto(p, sink);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("truncated or corrupt gzip stream") != std::string::npos,
             r.error().message.c_str());
    QCOMPARE(sink.ends, 0);
  }

  void anEmptyGzipSaysEmptyFileLikeAnEmptyPlainFile() {
    QTemporaryDir dir;
    const std::string p = dir.filePath("empty.json.gz").toStdString();
    gzFile f = gzopen(p.c_str(), "wb");
    QVERIFY(f != nullptr);
    gzclose(f);  // a valid gzip stream of nothing
    RecordingSink sink;
    auto r = profiler::importKineto(p, sink);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message, p + ": empty file (expected a Kineto JSON trace)");
  }

  void aSinkFailureKeepsItsKind() {
    // The store fails while events are read (a full disk): an I/O error, exit 3, not an invalid trace.
    class FullSink : public RecordingSink {
     public:
      core::Status event(const profiler::TraceEvent&) override {
        return core::Error{"runs.sqlite: database or disk is full", core::ErrorKind::Io, "runs.sqlite"};
      }
    } sink;
    auto r = profiler::importKineto(kData + "rank0.json", sink);
    QVERIFY(!r.ok());
    QVERIFY(r.error().kind == core::ErrorKind::Io);
    QCOMPARE(r.error().message, std::string("runs.sqlite: database or disk is full"));
    QCOMPARE(sink.ends, 0);
  }

  void dtypeSizes() {
    QCOMPARE(profiler::dtypeBytes("Float"), 4);
    QCOMPARE(profiler::dtypeBytes("BFloat16"), 2);
    QCOMPARE(profiler::dtypeBytes("Long"), 8);
    QCOMPARE(profiler::dtypeBytes("c10::Half"), 2);
    QCOMPARE(profiler::dtypeBytes("Mystery"), 0);
  }
};

QTEST_GUILESS_MAIN(TestKinetoImport)
#include "test_kineto_import.moc"
