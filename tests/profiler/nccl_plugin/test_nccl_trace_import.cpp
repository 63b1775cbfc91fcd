// Import of the NCCL profiler plugin's traces: files the plugin's recorder
// writes for two ranks of one job (two communicators), hand-written files
// for what the recorder does not vary (GPU times, the engine's communicator
// names, unknown ops), and every kind of malformed input, each a clear error
// naming the file, the line and the field, with the store left as it was.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "nccl_test_events.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/run_analysis.h"
#include "shardscope/profiler/import/nccl_trace_import.h"
#include "shardscope/profiler/nccl_plugin/nccl_recorder.h"

using namespace shardscope;
using namespace nccl_test;
namespace st = core::store;
using nlohmann::json;

namespace {

constexpr std::uint64_t kWorld = 0x1000, kShard = 0x2000;

// Rank `rank` of a job of `world` ranks as the plugin writes it: three
// all-reduces on "world", two all-to-alls on "sharding" (lines: header, two
// comm lines, five calls, the end line).
std::string writeRank(const std::string& dir, int rank, int world = 2, std::uint64_t world_hash = kWorld,
                      std::int64_t step = -1) {
  nc::RecorderOptions o;
  o.dir = dir;
  o.host = "node0";
  o.pid = 1000 + rank;
  o.rank = rank;
  o.nranks = world;
  o.rank_source = "RANK";
  o.clock = tick;
  nc::Recorder rec(o);
  void* w = nullptr;
  void* s = nullptr;
  int mask = 0;
  rec.init(&w, world_hash, &mask, "world", 1, world, rank);
  rec.init(&s, kShard, &mask, "sharding", 1, world, rank);
  if (step >= 0) rec.setStep(step);
  for (int i = 0; i < 3; ++i) {
    void* g = nullptr;
    void* t = nullptr;
    rec.startEvent(w, &g, group());
    rec.startEvent(w, &t, coll(g, "AllReduce", static_cast<std::uint64_t>(i), 256, "ncclFloat32", "RING", "LL"));
    rec.stopEvent(t);
    rec.stopEvent(g);
  }
  for (int i = 0; i < 2; ++i) {
    void* g = nullptr;
    rec.startEvent(s, &g, group());
    std::vector<void*> tasks;
    for (int peer = 0; peer < world; ++peer)
      for (const char* f : {"Send", "Recv"}) {
        void* t = nullptr;
        rec.startEvent(s, &t, p2p(g, f, peer, 64, "ncclFloat32"));
        tasks.push_back(t);
      }
    for (void* t : tasks) rec.stopEvent(t);
    rec.stopEvent(g);
  }
  rec.finalize(s);
  rec.finalize(w);
  return rec.path();
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}
std::string writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
std::string joinLines(const std::vector<std::string>& ls) {
  std::string s;
  for (const auto& l : ls) s += l + "\n";
  return s;
}

// What a store holds: its runs with their status and row counts.
std::string storeState(const std::string& path) {
  auto s = st::openStore(path);
  if (!s) return "error: " + s.error().message;
  std::string out;
  const auto runs = s->listRuns();
  if (!runs) return "error: " + runs.error().message;
  for (const auto& r : *runs) {
    const auto rows = s->collectives(r.id);
    const auto spans = s->spanCount(r.id);
    out += std::to_string(static_cast<std::int64_t>(r.id)) + " " + r.kind_text + " " +
           std::string(st::toText(r.status)) + " " + std::to_string(rows ? rows->size() : 0) + " " +
           std::to_string(spans ? *spans : -1) + "\n";
  }
  return out;
}

core::Result<profiler::NcclImportOutcome> importFiles(const std::vector<std::string>& files, const std::string& store,
                                                      bool force = false) {
  profiler::NcclImportOptions o;
  o.force = force;
  return profiler::importNcclTraces(files, store, o);
}

bool hasWarning(const profiler::NcclImportOutcome& out, const std::string& part) {
  for (const auto& w : out.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

class TestNcclTraceImport : public QObject {
  Q_OBJECT

 private slots:
  void twoRanksTwoCommunicators() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    const std::string f0 = writeRank(d, 0), f1 = writeRank(d, 1);
    const std::string store = d + "/job.sqlite";
    auto out = importFiles({f0, f1}, store);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks.size(), std::size_t{2});
    QCOMPARE(out->calls, std::uint64_t{10});
    QCOMPARE(out->calls_by_op, (std::map<std::string, std::uint64_t>{{"all_reduce", 6}, {"all_to_all", 4}}));
    QVERIFY(hasWarning(*out, "CPU times only"));
    QVERIFY(!hasWarning(*out, "no end line"));

    auto s = st::openStore(store);
    QVERIFY(s.ok());
    const auto run = s->run(out->run).value();
    QVERIFY(run.kind == st::RunKind::ImportNccl);
    QVERIFY(run.isComplete());
    QVERIFY(run.label.starts_with("nccl shardscope-nccl-node0-1000.jsonl (+1)"));
    QVERIFY(run.config_json.find("import-nccl") != std::string::npos);
    const auto ranks = s->ranks(out->run).value();
    QCOMPARE(ranks.size(), std::size_t{2});
    QCOMPARE(ranks[1].host, std::string("node0"));
    QCOMPARE(ranks[1].sharding_group, 0);
    const auto strings = s->strings().value();
    std::map<std::string, std::set<std::int64_t>> seqs;
    const auto rows = s->collectives(out->run).value();
    for (const auto& c : rows) {
      const std::string op(strings.at(c.op));
      QCOMPARE(std::string(strings.at(c.group)), std::string("0,1"));
      QCOMPARE(c.peers, 1);
      QCOMPARE(c.step, std::int64_t{-1});
      seqs[op + "@" + std::string(strings.at(c.process_group))].insert(c.seq);
      if (op == "all_reduce") {
        QCOMPARE(std::string(strings.at(c.algorithm)), std::string("RING/LL"));
        QCOMPARE(c.bytes, std::int64_t{1024});
      } else {
        QCOMPARE(op, std::string("all_to_all"));
        QVERIFY(c.algorithm == st::kNoString);
        QCOMPARE(c.bytes, std::int64_t{2 * 2 * 64 * 4});  // sent + received, own copy included
      }
    }
    QCOMPARE(seqs["all_reduce@world"], (std::set<std::int64_t>{0, 1, 2}));
    QCOMPARE(seqs["all_to_all@sharding"], (std::set<std::int64_t>{0, 1}));
    QCOMPARE(out->ranks[0].spans_by_kind,
             (std::map<std::string, std::uint64_t>{{"a2a_pooled", 2}, {"dense_allreduce", 3}, {"step", 1}}));
    const auto sums = s->stepSummaries(out->run).value();
    QCOMPARE(sums.size(), std::size_t{2});
    QVERIFY(sums[0].comm_ns > 0 && sums[0].total_ns > 0);

    // `report` reads it like any import: both ranks, calls paired across ranks by communicator and seq.
    auto a = profiler::analyzeRun(*s, out->run);
    QVERIFY2(a.ok(), a.ok() ? "" : a.error().message.c_str());
    QCOMPARE(a->ranks.size(), std::size_t{2});
    bool waits_known = false;
    for (const auto& c : a->ranks[0].comm) waits_known = waits_known || (c.kind == "dense_allreduce" && c.wait_ms >= 0);
    QVERIFY(waits_known);
  }

  void stepsFromTheTrainersCounter() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    const std::string store = d + "/job.sqlite";
    auto out = importFiles({writeRank(d, 0, 2, kWorld, 5), writeRank(d, 1, 2, kWorld, 5)}, store);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks[0].step_source, std::string("trainer step counter"));
    auto s = st::openStore(store);
    const auto rows = s->collectives(out->run).value();
    for (const auto& c : rows) QCOMPARE(c.step, std::int64_t{5});
    const auto sums = s->stepSummaries(out->run).value();
    QCOMPARE(sums.size(), std::size_t{2});
    QCOMPARE(sums[0].step, std::int64_t{5});
    const auto strings = s->strings().value();
    const int r0[] = {0};
    bool named = false;
    const auto spans = s->spansInWindow(out->run, r0, 0, std::numeric_limits<std::int64_t>::max()).value();
    for (const auto& sp : spans) named = named || strings.at(sp.name) == "ProfilerStep#5";
    QVERIFY(named);
  }

  void folderOfFiles() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    std::filesystem::create_directories(d + "/traces/node1");
    writeRank(d + "/traces", 0);
    writeRank(d + "/traces/node1", 1);
    auto files = profiler::expandNcclTraceInputs({d + "/traces"});
    QVERIFY(files.ok());
    QCOMPARE(files->size(), std::size_t{2});
    QVERIFY(!profiler::expandNcclTraceInputs({d + "/traces"}, 0).value().empty());
    QCOMPARE(profiler::expandNcclTraceInputs({d + "/traces"}, 0)->size(), std::size_t{1});
    std::filesystem::create_directories(d + "/none");
    auto none = profiler::expandNcclTraceInputs({d + "/none"});
    QVERIFY(!none.ok() && none.error().message.find("no *.jsonl files") != std::string::npos);
    auto out = importFiles(*files, d + "/job.sqlite");
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QCOMPARE(out->ranks.size(), std::size_t{2});
  }

  // A hand-written trace: GPU times win over CPU times, the engine's communicator names choose span kinds.
  void handWrittenLines() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    const std::string f = writeText(
        d + "/r0.jsonl",
        R"({"schema":"shardscope.nccl-trace/1","host":"h","pid":1,"rank":0,"nranks":1,"future_key":[1,{"x":2}]}
{"type":"call","comm":"replica","comm_hash":"0xA","rank":0,"nranks":2,"op":"all_reduce","seq":0,"bytes":64,)"
        R"("start_ns":100,"end_ns":110,"gpu_start_ns":500,"gpu_end_ns":900,"proto":"LL"}
{"type":"call","comm":"sharding","comm_hash":"0xb","rank":0,"nranks":2,"op":"all_reduce","seq":0,"bytes":64,)"
        R"("start_ns":120,"end_ns":130}
{"type":"call","comm":"sharding","comm_hash":"0xb","rank":0,"nranks":2,"op":"barrier","seq":1,"bytes":0,)"
        R"("start_ns":140,"end_ns":150}
{"type":"call","comm":"","comm_hash":"0xc","rank":0,"nranks":3,"op":"send_recv","seq":0,"bytes":8,"peers":[2],)"
        R"("start_ns":160,"end_ns":170}
{"type":"end","calls":4,"dropped":2,"dropped_by_type":{"coll":2}})");
    const std::string store = d + "/s.sqlite";
    auto out = importFiles({f}, store);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QVERIFY(hasWarning(*out, "1 calls of op \"barrier\" skipped"));
    QVERIFY(hasWarning(*out, "dropped 2 events"));
    QVERIFY(hasWarning(*out, "rank(s) 1 of 2 not imported"));
    QVERIFY(hasWarning(*out, "one rank imported"));
    QCOMPARE(out->ranks[0].spans_by_kind,
             (std::map<std::string, std::uint64_t>{
                 {"dp_allreduce", 1}, {"replica_sync", 1}, {"send_recv", 1}, {"step", 1}}));
    QCOMPARE(out->ranks[0].gpu_events, std::uint64_t{1});
    auto s = st::openStore(store);
    const auto strings = s->strings().value();
    const auto rows = s->collectives(out->run).value();
    for (const auto& c : rows) {
      QVERIFY(c.group == st::kNoString);  // not every member imported
      const std::string pg(strings.at(c.process_group));
      if (pg == "replica") {
        QCOMPARE(c.start_ns, std::int64_t{500});
        QCOMPARE(c.end_ns, std::int64_t{900});
        QCOMPARE(std::string(strings.at(c.algorithm)), std::string("LL"));
      } else if (pg == "comm 0x000000000000000c") {
        QCOMPARE(c.peers, 1);
      } else {
        QCOMPARE(pg, std::string("sharding"));
        QCOMPARE(c.start_ns, std::int64_t{120});
      }
    }
  }

  void malformedLines_data() {
    QTest::addColumn<int>("line");             // 1-based line to change, 0: none
    QTest::addColumn<QString>("replacement");  // the line's new text ("-": removed; "": left as is)
    QTest::addColumn<QString>("key");          // with a value: that member of the line set to it (JSON)
    QTest::addColumn<QString>("expected");     // the error after "<file>: "
    QTest::newRow("truncated") << 8 << "CUT"
                               << ""
                               << "line 8: not valid JSON at column";
    QTest::newRow("wrong schema") << 1 << ""
                                  << "schema=\"shardscope.nccl-trace/2\""
                                  << "line 1: /schema: unsupported version \"shardscope.nccl-trace/2\"";
    QTest::newRow("not a plugin trace") << 1 << ""
                                        << "schema=\"chrome\""
                                        << "line 1: /schema: expected \"shardscope.nccl-trace/1\", found the string";
    QTest::newRow("no schema") << 1 << ""
                               << "schema=DELETE"
                               << "line 1: /schema: missing (expected";
    QTest::newRow("missing field") << 4 << ""
                                   << "bytes=DELETE"
                                   << "line 4: /bytes: missing (expected the call's bytes";
    QTest::newRow("wrong type") << 4 << ""
                                << "bytes=\"1024\""
                                << "line 4: /bytes: expected the call's bytes, a whole number 0..";
    QTest::newRow("fraction") << 4 << ""
                              << "seq=1.5"
                              << "line 4: /seq: expected the call's sequence number";
    QTest::newRow("duplicate key") << 4 << "DUP"
                                   << ""
                                   << "line 4: /seq: duplicate key \"seq\"";
    QTest::newRow("negative bytes")
        << 4 << ""
        << "bytes=-5"
        << "line 4: /bytes: expected the call's bytes, a whole number 0..4611686018427387904, found -5";
    QTest::newRow("end before start") << 4 << ""
                                      << "end_ns=1"
                                      << "line 4: /end_ns: the call ends (1) before it starts";
    QTest::newRow("gpu end alone") << 4 << ""
                                   << "gpu_end_ns=5"
                                   << "line 4: /gpu_start_ns: missing";
    QTest::newRow("rank beyond nranks") << 4 << ""
                                        << "rank=7"
                                        << "line 4: /rank: expected this process's rank";
    QTest::newRow("bad peer") << 7 << ""
                              << "peers=[1,9]"
                              << "line 7: /peers/1: expected a rank 0..1, found 9";
    QTest::newRow("bad hash") << 4 << ""
                              << "comm_hash=\"1234\""
                              << "line 4: /comm_hash: expected the communicator's hash";
    QTest::newRow("bad op") << 4 << ""
                            << "op=\"All Reduce\""
                            << "line 4: /op: expected a collective";
    QTest::newRow("unknown type") << 4 << ""
                                  << "type=\"span\""
                                  << "line 4: /type: expected \"call\", \"comm\" or \"end\"";
    QTest::newRow("rank changes")
        << 3 << ""
        << "rank=1"
        << "line 4: /rank: communicator 0x0000000000001000 is rank 1 of 2 here, but rank 0 of 2 on line 2";
    QTest::newRow("blank line") << 3 << ""
                                << ""
                                << "line 3: /: empty line";
    QTest::newRow("array") << 2 << "[1,2]"
                           << ""
                           << "line 2: /: expected a JSON object, found an array";
    QTest::newRow("bad end") << 9 << ""
                             << "dropped=true"
                             << "line 9: /dropped: expected the events the plugin dropped";
  }

  // Each malformed file: an error naming it, the line and the field; the store keeps what it had.
  void malformedLines() {
    QFETCH(int, line);
    QFETCH(QString, replacement);
    QFETCH(QString, key);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    std::filesystem::create_directories(d + "/good");
    const std::string store = d + "/job.sqlite";
    QVERIFY(importFiles({writeRank(d + "/good", 0), writeRank(d + "/good", 1)}, store).ok());
    const std::string before = storeState(store);
    std::vector<std::string> ls = lines(writeRank(d, 0));
    QCOMPARE(ls.size(), std::size_t{9});
    std::string& l = ls[static_cast<std::size_t>(line - 1)];
    bool last_without_newline = false;
    if (QTest::currentDataTag() == QString("blank line")) {
      ls.insert(ls.begin() + 2, "");
    } else if (replacement == "CUT") {
      l = l.substr(0, l.size() / 2);
      ls.resize(static_cast<std::size_t>(line));
      last_without_newline = true;
    } else if (replacement == "DUP") {
      l.insert(1, "\"seq\":1,");
    } else if (!replacement.isEmpty()) {
      l = replacement.toStdString();
    } else if (QTest::currentDataTag() == QString("rank changes")) {
      json j = json::parse(ls[1]);  // the world communicator, announced again as another rank
      j["rank"] = 1;
      ls.insert(ls.begin() + 3, j.dump());
    } else {
      const std::string k = key.section('=', 0, 0).toStdString(), v = key.section('=', 1).toStdString();
      json j = json::parse(l);
      if (v == "DELETE")
        j.erase(k);
      else
        j[k] = json::parse(v);
      l = j.dump();
    }
    std::string text = joinLines(ls);
    if (last_without_newline) text.pop_back();
    const std::string bad = writeText(d + "/bad.jsonl", text);
    auto out = importFiles({bad}, store);
    QVERIFY(!out.ok());
    const std::string want = bad + ": " + expected.toStdString();
    QVERIFY2(out.error().message.starts_with(want), (out.error().message + "\nexpected: " + want).c_str());
    QVERIFY(out.error().kind == core::ErrorKind::InvalidInput);
    QCOMPARE(out.error().file, bad);
    if (replacement == "CUT") QVERIFY(out.error().message.find("cut short") != std::string::npos);
    QCOMPARE(storeState(store), before);
  }

  void otherJobsAndCollidingRanks() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    std::filesystem::create_directories(d + "/other");
    std::filesystem::create_directories(d + "/big");
    const std::string store = d + "/job.sqlite";
    const std::string f0 = writeRank(d, 0), f1 = writeRank(d, 1);
    QVERIFY(importFiles({f0, f1}, store).ok());
    const std::string before = storeState(store);

    // Same size, but another job's "world" communicator.
    const std::string other = writeRank(d + "/other", 1, 2, 0x9999);
    auto refused = importFiles({f0, other}, store);
    QVERIFY(!refused.ok());
    const std::string& m = refused.error().message;
    QVERIFY2(m.starts_with(other + ": communicator \"world\" (0x0000000000009999) spans all 2 ranks, but " + f0),
             m.c_str());
    QVERIFY(m.ends_with("give --force"));
    QCOMPARE(storeState(store), before);
    auto forced = importFiles({f0, other}, store, true);
    QVERIFY2(forced.ok(), forced.ok() ? "" : forced.error().message.c_str());
    QVERIFY(hasWarning(*forced, "(imported anyway: --force)"));

    // Another job size.
    const std::string big = writeRank(d + "/big", 1, 4);
    const std::string before_big = storeState(store);
    auto sized = importFiles({f0, big}, store);
    QVERIFY(!sized.ok());
    QVERIFY2(sized.error().message.starts_with(big + ": line 1: /nranks: 4, but " + f0 + " says 2"),
             sized.error().message.c_str());
    QCOMPARE(storeState(store), before_big);

    // The same rank twice: refused even with --force, naming both files.
    const std::string twin = writeRank(d + "/other", 0);
    auto twice = importFiles({f0, twin}, store, true);
    QVERIFY(!twice.ok());
    QVERIFY2(twice.error().message ==
                 twin + ": rank 0 was already imported from " + f0 + " (duplicate rank: two files of the same rank?)",
             twice.error().message.c_str());
    QCOMPARE(storeState(store), before_big);
  }

  // A process may hold two communicators of all ranks under one name (one made after the other): still one job,
  // as long as the files share one of them.
  void twoWorldCommunicatorsInOneProcess() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    const std::string header = R"({"schema":"shardscope.nccl-trace/1","host":"h","pid":RANK,"rank":RANK,"nranks":2})";
    const std::string comm = R"({"type":"comm","comm":"world","comm_hash":"HASH","rank":RANK,"nranks":2})";
    const auto file = [&](int rank, std::vector<std::string> hashes) {
      auto fill = [&](std::string t, const std::string& hash) {
        for (auto at = t.find("RANK"); at != std::string::npos; at = t.find("RANK"))
          t.replace(at, 4, std::to_string(rank));
        if (auto at = t.find("HASH"); at != std::string::npos) t.replace(at, 4, hash);
        return t;
      };
      std::string text = fill(header, "") + "\n";
      for (const auto& h : hashes) text += fill(comm, h) + "\n";
      return writeText(d + "/r" + std::to_string(rank) + ".jsonl", text);
    };
    const std::string f0 = file(0, {"0x1", "0x2"}), f1 = file(1, {"0x2"});
    auto out = importFiles({f0, f1}, d + "/s.sqlite");
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
    QVERIFY(hasWarning(*out, "rank(s) 1 of 2 not imported"));  // 0x1's other member
    const std::string f2 = file(1, {"0x3"});
    auto other = importFiles({f0, f2}, d + "/s.sqlite");
    QVERIFY(!other.ok());
    QVERIFY2(other.error().message.starts_with(f2 + ": communicator \"world\" (0x0000000000000003) spans all 2 ranks"),
             other.error().message.c_str());
  }

  void emptyMissingAndCancelled() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    const std::string empty = writeText(d + "/empty.jsonl", "");
    auto e = importFiles({empty}, d + "/s.sqlite");
    QVERIFY(!e.ok());
    QCOMPARE(e.error().message, empty + ": empty file (expected a shardscope.nccl-trace/1 header line)");
    auto m = importFiles({d + "/nope.jsonl"}, d + "/s.sqlite");
    QVERIFY(!m.ok() && m.error().message.starts_with(d + "/nope.jsonl: cannot open"));
    QVERIFY(!std::filesystem::exists(d + "/s.sqlite"));  // nothing was begun
    std::atomic<bool> cancel{true};
    profiler::NcclImportOptions o;
    o.cancel = &cancel;
    auto c = profiler::importNcclTraces({writeRank(d, 0)}, d + "/s.sqlite", o);
    QVERIFY(!c.ok());
    QVERIFY(c.error().kind == core::ErrorKind::Cancelled);
  }

  void readerHandsOverEveryCall() {
    QTemporaryDir dir;
    const std::string f = writeRank(dir.path().toStdString(), 0);
    std::vector<std::int64_t> seen;
    auto sum = profiler::readNcclTrace(f, [&](const profiler::NcclTraceCall& c) {
      seen.push_back(c.line);
      return core::Status(core::Ok{});
    });
    QVERIFY(sum.ok());
    QCOMPARE(seen, (std::vector<std::int64_t>{4, 5, 6, 7, 8}));
    QCOMPARE(sum->header.rank_source, std::string("RANK"));
    QCOMPARE(sum->comms.size(), std::size_t{2});
    QCOMPARE(sum->comms[1].name, std::string("sharding"));
    QVERIFY(sum->has_end);
    auto stopped = profiler::readNcclTrace(
        f, [](const profiler::NcclTraceCall&) -> core::Status { return core::Error{"enough"}; });
    QVERIFY(!stopped.ok() && stopped.error().message == "enough");
  }
};

QTEST_GUILESS_MAIN(TestNcclTraceImport)
#include "test_nccl_trace_import.moc"
