// NCCL's profiler plugin without NCCL: the event translation (masks, ops,
// bytes, all-to-all groups, JSON lines), the recorder driven as NCCL drives
// it (groups, collectives, send/recv, kernel channels, proxy ops and steps,
// from several threads, with a full pool, a small buffer, lingering calls),
// and the built module itself through dlopen and its exported tables.
#include <dlfcn.h>

#include <QTemporaryDir>
#include <QtTest>

#include <cstdarg>
#include <fstream>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "nccl_test_events.h"
#include "shardscope/profiler/nccl_plugin/nccl_recorder.h"
#include "shardscope/profiler/nccl_plugin/nccl_records.h"

using namespace nccl_test;
using nlohmann::json;

namespace {

nc::RecorderOptions options(const QTemporaryDir& dir, int mask = 0) {
  nc::RecorderOptions o;
  o.dir = dir.path().toStdString();
  o.mask = mask;
  o.host = "node a";  // the space becomes '_' in the file name
  o.pid = 4242;
  o.rank = 1;
  o.nranks = 2;
  o.rank_source = "RANK";
  o.clock = tick;
  return o;
}

nc::TaskView task(bool is_p2p, const char* func, int peer, std::uint64_t count, const char* dtype = "ncclFloat32") {
  nc::TaskView t;
  t.p2p = is_p2p;
  t.func = func;
  t.peer = peer;
  t.count = count;
  t.datatype = dtype;
  t.cpu_start = 100 + peer;
  t.cpu_end = 200 + peer;
  return t;
}

std::vector<std::string> g_log;
std::mutex g_log_m;
void logger(int level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lk(g_log_m);
  g_log.push_back(std::to_string(level) + " " + buf);
}

}  // namespace

class TestNcclPlugin : public QObject {
  Q_OBJECT

 private slots:
  void eventMasks() {
    std::string why;
    QCOMPARE(nc::parseEventMask("coll,p2p", &why).value_or(-1), et::kGroup | et::kColl | et::kP2p);
    QCOMPARE(nc::parseEventMask(" coll ", &why).value_or(-1), et::kGroup | et::kColl);
    QCOMPARE(nc::parseEventMask("kernel", &why).value_or(-1), et::kGroup | et::kColl | et::kP2p | et::kKernelCh);
    QCOMPARE(nc::parseEventMask("0x40", &why).value_or(-1), et::kGroup | et::kColl | et::kP2p | et::kKernelCh);
    QCOMPARE(nc::parseEventMask("p2p+proxy_step", &why).value_or(-1),
             et::kGroup | et::kP2p | et::kProxyOp | et::kProxyStep);
    // NCCL bits the plugin does not use are dropped, with a note.
    QCOMPARE(nc::parseEventMask("0x306", &why).value_or(-1), et::kGroup | et::kColl | et::kP2p);
    QVERIFY(why.find("ignored") != std::string::npos);
    QVERIFY(!nc::parseEventMask("coll,bogus", &why));
    QVERIFY(why.find("unknown event 'bogus'") != std::string::npos);
    QVERIFY(!nc::parseEventMask("group", &why));  // groups alone record no call
    QVERIFY(!nc::parseEventMask("0x1000000", &why));
    QVERIFY(!nc::parseEventMask("", &why));
    QCOMPARE(nc::maskNames(nc::defaultEventMask()), std::string("group,coll,p2p"));
  }

  void opsAndTypes() {
    QCOMPARE(nc::collectiveOp("AllReduce"), std::string("all_reduce"));
    QCOMPARE(nc::collectiveOp("ReduceScatter"), std::string("reduce_scatter"));
    QCOMPARE(nc::collectiveOp("AlltoAll"), std::string("all_to_all"));
    QCOMPARE(nc::collectiveOp("Gather"), std::string("send_recv"));
    QCOMPARE(nc::collectiveOp("FancyNewThing"), std::string("fancy_new_thing"));
    QCOMPARE(nc::ncclTypeBytes("ncclBfloat16"), 2);
    QCOMPARE(nc::ncclTypeBytes("ncclFloat8e4m3"), 1);
    QCOMPARE(nc::ncclTypeBytes("ncclUint64"), 8);
    QCOMPARE(nc::ncclTypeBytes("Unknown"), 0);
    QCOMPARE(nc::traceFileName("gpu-01.local", 77), std::string("shardscope-nccl-gpu-01.local-77.jsonl"));
    QCOMPARE(nc::traceFileName("a/b c", 1), std::string("shardscope-nccl-a_b_c-1.jsonl"));
  }

  // Sends and receives to every other rank read as one all-to-all; anything less as send_recv.
  void allToAllGroups() {
    const nc::CommView comm{"sharding", 0xabc, 1, 4, 1};
    std::vector<nc::TaskView> a2a;
    for (int peer = 0; peer < 4; ++peer) {
      a2a.push_back(task(true, "Send", peer, 10));
      a2a.push_back(task(true, "Recv", peer, 20));
    }
    auto calls = nc::translateGroup(comm, a2a, 7, 3, false);
    QCOMPARE(calls.size(), std::size_t{1});
    const nc::CallRecord& c = calls.front();
    QCOMPARE(c.op, std::string("all_to_all"));
    QCOMPARE(c.func, std::string("SendRecv"));
    QCOMPARE(c.seq, std::uint64_t{7});
    QCOMPARE(c.step, std::int64_t{3});
    QCOMPARE(c.peers, (std::vector<int>{0, 2, 3}));  // the rank itself is a copy, not a peer
    QCOMPARE(c.sends, 4);
    QCOMPARE(c.recvs, 4);
    QCOMPARE(c.send_bytes, std::uint64_t{4 * 10 * 4});
    QCOMPARE(c.recv_bytes, std::uint64_t{4 * 20 * 4});
    QCOMPARE(c.bytes, std::uint64_t{480});  // sent + received
    QCOMPARE(c.start_ns, std::int64_t{100});
    QCOMPARE(c.end_ns, std::int64_t{203});

    std::vector<nc::TaskView> missing_peer(a2a.begin(), a2a.end() - 2);  // nothing to or from rank 3
    QCOMPARE(nc::translateGroup(comm, missing_peer, 0, -1, false).front().op, std::string("send_recv"));
    std::vector<nc::TaskView> gather_root;  // receives from everyone, sends only to itself
    for (int peer = 0; peer < 4; ++peer) gather_root.push_back(task(true, "Recv", peer, 5));
    gather_root.push_back(task(true, "Send", 1, 5));
    QCOMPARE(nc::p2pGroupOp(comm, gather_root), std::string_view("send_recv"));
    const nc::CommView pair{"", 1, 0, 2, 1};
    const std::vector<nc::TaskView> exchange = {task(true, "Send", 1, 8), task(true, "Recv", 1, 8)};
    QCOMPARE(nc::p2pGroupOp(pair, exchange), std::string_view("all_to_all"));
    const std::vector<nc::TaskView> one_send = {task(true, "Send", 1, 8)};
    const auto sr = nc::translateGroup(pair, one_send, 4, -1, true);
    QCOMPARE(sr.front().op, std::string("send_recv"));
    QCOMPARE(sr.front().func, std::string("Send"));
    QVERIFY(sr.front().partial);
  }

  // Collective bytes follow the store's convention; a mixed group is one call per collective plus one for p2p.
  void collectiveBytes() {
    const nc::CommView comm{"world", 0x1, 0, 4, 1};
    nc::TaskView ag = task(false, "AllGather", -1, 10, "ncclFloat16");
    nc::TaskView rs = task(false, "ReduceScatter", -1, 10, "ncclFloat32");
    nc::TaskView bc = task(false, "Broadcast", -1, 3, "ncclInt64");
    bc.root = 2;
    bc.algo = "RING";
    bc.proto = "LL";
    bc.gpu_start = 5000;
    bc.gpu_end = 9000;
    bc.cpu_start = 50;
    nc::TaskView send = task(true, "Send", 1, 4);
    send.cpu_start = 60;
    const std::vector<nc::TaskView> tasks = {ag, rs, bc, send};
    const auto calls = nc::translateGroup(comm, tasks, 0, -1, false);
    QCOMPARE(calls.size(), std::size_t{4});
    std::map<std::string, nc::CallRecord> by_op;
    for (const auto& c : calls) by_op[c.op] = c;
    QCOMPARE(by_op["all_gather"].bytes, std::uint64_t{10 * 2 * 4});
    QCOMPARE(by_op["reduce_scatter"].bytes, std::uint64_t{10 * 4 * 4});
    QCOMPARE(by_op["broadcast"].bytes, std::uint64_t{24});
    QCOMPARE(by_op["broadcast"].root, 2);
    QCOMPARE(by_op["broadcast"].gpu_start_ns, std::uint64_t{5000});
    QCOMPARE(by_op["broadcast"].gpu_end_ns, std::uint64_t{9000});
    QCOMPARE(by_op["all_gather"].root, -1);
    QCOMPARE(by_op["send_recv"].bytes, std::uint64_t{16});
    QCOMPARE(calls.front().op, std::string("broadcast"));  // by start time
    QCOMPARE(calls[1].op, std::string("send_recv"));
  }

  void jsonLines() {
    std::string s;
    nc::appendJsonString(s, std::string_view("a\"b\\c\n\x01\xff\xc3\xa9", 10));
    const json parsed = json::parse(s);
    QCOMPARE(parsed.get<std::string>(), std::string("a\"b\\c\n\x01\xEF\xBF\xBD\xC3\xA9"));
    nc::CallRecord c;
    c.op = "all_to_all";
    c.func = "SendRecv";
    c.peers = {0, 2};
    c.sends = c.recvs = 2;
    c.start_ns = 10;
    c.end_ns = 20;
    c.step = 4;
    c.incomplete = true;
    std::string line;
    nc::appendCall(line, nc::CommView{"sh\"x", 0xfeed, 1, 3, 1}, c);
    QVERIFY(line.ends_with("}\n"));
    const json j = json::parse(line);
    QCOMPARE(j["comm"].get<std::string>(), std::string("sh\"x"));
    QCOMPARE(j["comm_hash"].get<std::string>(), std::string("0x000000000000feed"));
    QCOMPARE(j["peers"], json::parse("[0,2]"));
    QCOMPARE(j["step"].get<int>(), 4);
    QVERIFY(j["incomplete"].get<bool>());
    QVERIFY(!j.contains("gpu_start_ns"));
    QVERIFY(!j.contains("partial"));
  }

  // One process, two communicators: what each kind of call becomes in the file.
  void recorderWritesCalls() {
    QTemporaryDir dir;
    nc::Recorder rec(options(dir, et::kGroup | et::kColl | et::kP2p | et::kKernelCh));
    void* world = nullptr;
    void* shard = nullptr;
    int mask = 0;
    QCOMPARE(rec.init(&world, 0x1111, &mask, "world", 1, 2, 1), nc::kNcclSuccess);
    QCOMPARE(mask, et::kGroup | et::kColl | et::kP2p | et::kKernelCh);
    QCOMPARE(rec.init(&shard, 0x2222, &mask, "sharding", 1, 2, 1), nc::kNcclSuccess);
    rec.setStep(3);
    void* g = nullptr;
    void* ar = nullptr;
    QCOMPARE(rec.startEvent(world, &g, group()), nc::kNcclSuccess);
    rec.startEvent(world, &ar, coll(g, "AllReduce", 5, 1024, "ncclFloat32", "RING", "LL128", 2));
    QVERIFY(g != nullptr && ar != nullptr);
    rec.stopEvent(ar);
    rec.stopEvent(g);
    QCOMPARE(rec.stats().calls, std::uint64_t{0});  // waits for its two kernel channels
    for (int ch = 0; ch < 2; ++ch) {
      void* k = nullptr;
      rec.startEvent(world, &k, kernelCh(ar, ch, 5'000 + 100 * ch));
      nc::EventStateArgs a{};
      a.kernel_ch.ptimer = 9'000 + 100 * ch;
      rec.recordEventState(k, nc::event_state::kKernelChStop, &a);
      rec.stopEvent(k);
    }
    QCOMPARE(rec.stats().calls, std::uint64_t{1});
    rec.setStep(4);
    void* g2 = nullptr;
    rec.startEvent(shard, &g2, group());
    void* tasks[2] = {};
    rec.startEvent(shard, &tasks[0], p2p(g2, "Send", 0, 256, "ncclBfloat16"));
    rec.startEvent(shard, &tasks[1], p2p(g2, "Recv", 0, 256, "ncclBfloat16"));
    for (void* t : tasks) {
      void* k = nullptr;
      rec.startEvent(shard, &k, kernelCh(t, 0, 7'000));
      nc::EventStateArgs a{};
      a.kernel_ch.ptimer = 8'000;
      rec.recordEventState(k, nc::event_state::kKernelChStop, &a);
      rec.stopEvent(k);
      rec.stopEvent(t);
    }
    rec.stopEvent(g2);
    QCOMPARE(rec.finalize(shard), nc::kNcclSuccess);
    QCOMPARE(rec.finalize(world), nc::kNcclSuccess);
    QCOMPARE(rec.stats().live, std::uint64_t{0});
    QCOMPARE(rec.stats().comms, std::uint64_t{0});

    const std::string path = rec.path();
    QCOMPARE(std::filesystem::path(path).filename().string(), std::string("shardscope-nccl-node_a-4242.jsonl"));
    const Trace t = readTrace(path);
    QVERIFY2(t.ok, t.bad_line.c_str());
    const json& h = t.lines.front();
    QCOMPARE(h["schema"].get<std::string>(), std::string(nc::kTraceSchema));
    QCOMPARE(h["host"].get<std::string>(), std::string("node a"));
    QCOMPARE(h["pid"].get<int>(), 4242);
    QCOMPARE(h["rank"].get<int>(), 1);
    QCOMPARE(h["nranks"].get<int>(), 2);
    QCOMPARE(h["rank_source"].get<std::string>(), std::string("RANK"));
    QCOMPARE(h["comm"].get<std::string>(), std::string("world"));
    QCOMPARE(h["events"].get<std::string>(), std::string("group,coll,p2p,kernel_ch"));
    QCOMPARE(t.of("comm").size(), std::size_t{2});
    const auto calls = t.of("call");
    QCOMPARE(calls.size(), std::size_t{2});
    const json& a = calls[0];
    QCOMPARE(a["op"].get<std::string>(), std::string("all_reduce"));
    QCOMPARE(a["comm"].get<std::string>(), std::string("world"));
    QCOMPARE(a["comm_hash"].get<std::string>(), std::string("0x0000000000001111"));
    QCOMPARE(a["rank"].get<int>(), 1);
    QCOMPARE(a["seq"].get<int>(), 5);
    QCOMPARE(a["bytes"].get<int>(), 4096);
    QCOMPARE(a["algo"].get<std::string>(), std::string("RING"));
    QCOMPARE(a["proto"].get<std::string>(), std::string("LL128"));
    QCOMPARE(a["gpu_start_ns"].get<int>(), 5000);
    QCOMPARE(a["gpu_end_ns"].get<int>(), 9100);
    QCOMPARE(a["kernel_channels"].get<int>(), 2);
    QCOMPARE(a["step"].get<int>(), 3);
    QVERIFY(a["end_ns"].get<std::int64_t>() > a["start_ns"].get<std::int64_t>());
    QVERIFY(!a.contains("incomplete"));
    const json& x = calls[1];
    QCOMPARE(x["op"].get<std::string>(), std::string("all_to_all"));
    QCOMPARE(x["comm"].get<std::string>(), std::string("sharding"));
    QCOMPARE(x["bytes"].get<int>(), 2 * 256 * 2);
    QCOMPARE(x["peers"], json::parse("[0]"));
    QCOMPARE(x["seq"].get<int>(), 0);
    QCOMPARE(x["step"].get<int>(), 4);
    const json& end = t.lines.back();
    QCOMPARE(end["type"].get<std::string>(), std::string("end"));
    QCOMPARE(end["calls"].get<int>(), 2);
    QCOMPARE(end["dropped"].get<int>(), 0);
  }

  // NCCL's threads: one launching per communicator, one proxy thread reporting kernel channels for both.
  void recorderFromThreads() {
    QTemporaryDir dir;
    nc::RecorderOptions o = options(dir, et::kGroup | et::kColl | et::kP2p | et::kKernelCh);
    o.max_events = 4096;
    o.linger = 100000;  // every call waits for its kernel events, however late the proxy thread is
    o.buffer_bytes = 4096;
    nc::Recorder rec(o);
    void* comms[2] = {};
    int mask = 0;
    rec.init(&comms[0], 0xa, &mask, "sharding", 1, 2, 0);
    rec.init(&comms[1], 0xb, &mask, "replica", 1, 2, 0);
    constexpr int kCalls = 300;
    struct Launched {
      void* comm;
      void* task;
      int channels;
    };
    std::mutex qm;
    std::vector<Launched> queue;
    std::atomic<int> launchers{2};
    std::vector<std::thread> threads;
    // Each group: a collective on 2 channels, and a send and a receive to the other rank on 1 channel each.
    for (int c = 0; c < 2; ++c)
      threads.emplace_back([&, c] {
        for (int i = 0; i < kCalls; ++i) {
          void* g = nullptr;
          void* t[3] = {};
          rec.startEvent(comms[c], &g, group());
          rec.startEvent(comms[c], &t[0],
                         coll(g, c == 0 ? "AllReduce" : "AllGather", static_cast<std::uint64_t>(i), 64, "ncclFloat32",
                              "RING", "SIMPLE", 2));
          rec.startEvent(comms[c], &t[1], p2p(g, "Send", 1, 16, "ncclFloat32"));
          rec.startEvent(comms[c], &t[2], p2p(g, "Recv", 1, 16, "ncclFloat32"));
          for (void* x : t) rec.stopEvent(x);
          rec.stopEvent(g);
          std::lock_guard<std::mutex> lk(qm);
          queue.push_back({comms[c], t[0], 2});
          queue.push_back({comms[c], t[1], 1});
          queue.push_back({comms[c], t[2], 1});
        }
        --launchers;
      });
    threads.emplace_back([&] {  // the proxy thread: kernel channel events as the GPU reports them
      for (;;) {
        std::vector<Launched> batch;
        {
          std::lock_guard<std::mutex> lk(qm);
          batch.swap(queue);
        }
        if (batch.empty() && launchers.load() == 0) {
          std::lock_guard<std::mutex> lk(qm);
          if (queue.empty()) return;
          continue;
        }
        for (const Launched& l : batch)
          for (int ch = 0; ch < l.channels; ++ch) {
            void* k = nullptr;
            rec.startEvent(l.comm, &k, kernelCh(l.task, ch, 1000 + static_cast<std::uint64_t>(ch)));
            nc::EventStateArgs a{};
            a.kernel_ch.ptimer = 2000;
            rec.recordEventState(k, nc::event_state::kKernelChStop, &a);
            rec.stopEvent(k);
          }
        if (batch.empty()) std::this_thread::yield();
      }
    });
    for (auto& th : threads) th.join();
    rec.finalize(comms[0]);
    rec.finalize(comms[1]);
    QVERIFY(rec.stats().flushes > 2);  // the 4 KiB buffer filled many times
    QCOMPARE(rec.stats().live, std::uint64_t{0});
    const Trace t = readTrace(rec.path());
    QVERIFY2(t.ok, t.bad_line.c_str());
    std::map<std::string, std::set<int>> seqs;  // "comm op" -> seq numbers
    for (const json& c : t.of("call")) {
      QVERIFY(!c.contains("incomplete"));
      QCOMPARE(c["kernel_channels"].get<int>(), 2);
      QCOMPARE(c["gpu_end_ns"].get<int>(), 2000);
      seqs[c["comm"].get<std::string>() + " " + c["op"].get<std::string>()].insert(c["seq"].get<int>());
    }
    QCOMPARE(seqs.size(), std::size_t{4});
    for (const char* k : {"sharding all_reduce", "sharding all_to_all", "replica all_gather", "replica all_to_all"})
      QCOMPARE(seqs[k].size(), std::size_t{kCalls});
    QCOMPARE(t.lines.back()["calls"].get<int>(), 4 * kCalls);
  }

  // A pool of 8: the ninth event alive at once is dropped, and said so.
  void fullPoolDrops() {
    QTemporaryDir dir;
    nc::RecorderOptions o = options(dir);
    o.max_events = 8;
    nc::Recorder rec(o);
    void* comm = nullptr;
    int mask = 0;
    rec.init(&comm, 0x5, &mask, "world", 1, 4, 0);
    std::vector<void*> handles;
    void* groups[3] = {};
    for (int g = 0; g < 3; ++g) {
      rec.startEvent(comm, &groups[g], group());
      for (int i = 0; i < 2; ++i) {
        void* t = nullptr;
        rec.startEvent(comm, &t, coll(groups[g], "AllReduce", static_cast<std::uint64_t>(2 * g + i), 8, "ncclInt32"));
        handles.push_back(t);
      }
    }
    QVERIFY(handles.back() == nullptr);  // 3 groups + 6 tasks > 8
    QCOMPARE(rec.stats().dropped, std::uint64_t{1});
    for (void* t : handles) rec.stopEvent(t);  // a null handle, as NCCL would pass none: ignored
    for (void* g : groups) rec.stopEvent(g);
    rec.finalize(comm);
    const Trace t = readTrace(rec.path());
    QVERIFY(t.ok);
    const auto calls = t.of("call");
    QCOMPARE(calls.size(), std::size_t{5});
    QCOMPARE(calls.back()["seq"].get<int>(), 4);
    QVERIFY(calls.back()["partial"].get<bool>());
    QVERIFY(!calls.front().contains("partial"));
    const json& end = t.lines.back();
    QCOMPARE(end["dropped"].get<int>(), 1);
    QCOMPARE(end["dropped_by_type"], json::parse(R"({"coll":1})"));
  }

  // Proxy ops and steps (network transfers) fold into their call, with the transfer sizes of the step states.
  void proxyEventsAndStates() {
    QTemporaryDir dir;
    nc::Recorder rec(options(dir, *nc::parseEventMask("p2p,proxy_step", nullptr)));
    void* comm = nullptr;
    int mask = 0;
    rec.init(&comm, 0x9, &mask, "pair", 2, 2, 0);
    void* g = nullptr;
    void* send = nullptr;
    rec.startEvent(comm, &g, group());
    rec.startEvent(comm, &send, p2p(g, "Send", 1, 1000, "ncclUint8"));
    rec.stopEvent(send);
    rec.stopEvent(g);
    void* op = nullptr;
    rec.startEvent(comm, &op, proxyOp(send, 1, true));
    QVERIFY(op != nullptr);
    for (int s = 0; s < 2; ++s) {
      void* step = nullptr;
      rec.startEvent(comm, &step, proxyStep(op, s));
      nc::EventStateArgs a{};
      a.proxy_step.trans_size = 400 + 100 * static_cast<std::size_t>(s);
      rec.recordEventState(step, nc::event_state::kProxyStepSendGpuWait, &a);
      rec.recordEventState(step, nc::event_state::kProxyStepSendWait, &a);
      rec.stopEvent(step);
    }
    rec.stopEvent(op);
    void* foreign = nullptr;  // a PXN proxy op of another process: its parent is not ours to read
    rec.startEvent(comm, &foreign, proxyOp(send, 1, true, ::getpid() + 1));
    QVERIFY(foreign == nullptr);
    QCOMPARE(rec.stats().calls, std::uint64_t{0});  // more proxy ops could come: written at finalize
    rec.finalize(comm);
    const auto calls = readTrace(rec.path()).of("call");
    QCOMPARE(calls.size(), std::size_t{1});
    const json& c = calls.front();
    QCOMPARE(c["op"].get<std::string>(), std::string("send_recv"));  // a send alone is no all-to-all
    QCOMPARE(c["bytes"].get<int>(), 1000);
    QCOMPARE(c["proxy"]["ops"].get<int>(), 1);
    QCOMPARE(c["proxy"]["steps"].get<int>(), 2);
    QCOMPARE(c["proxy"]["bytes"].get<int>(), 900);
    QVERIFY(!c.contains("incomplete"));
  }

  // With kernel events on, calls whose kernel channels never come are written once `linger` later calls started.
  void lingeringCalls() {
    QTemporaryDir dir;
    nc::RecorderOptions o = options(dir, *nc::parseEventMask("coll,kernel", nullptr));
    o.linger = 2;
    nc::Recorder rec(o);
    void* comm = nullptr;
    int mask = 0;
    rec.init(&comm, 0x3, &mask, "world", 1, 2, 0);
    for (int i = 0; i < 5; ++i) {
      void* g = nullptr;
      void* t = nullptr;
      rec.startEvent(comm, &g, group());
      rec.startEvent(comm, &t, coll(g, "AllReduce", static_cast<std::uint64_t>(i), 4, "ncclFloat64"));
      rec.stopEvent(t);
      rec.stopEvent(g);
    }
    QCOMPARE(rec.stats().calls, std::uint64_t{3});  // the two newest still wait
    rec.finalize(comm);
    const auto calls = readTrace(rec.path()).of("call");
    QCOMPARE(calls.size(), std::size_t{5});
    for (const json& c : calls) QVERIFY(c["incomplete"].get<bool>());
  }

  // Handles that are not the recorder's, or whose parent was not recorded, are ignored.
  void strayHandles() {
    QTemporaryDir dir;
    nc::Recorder rec(options(dir, *nc::parseEventMask("coll,kernel", nullptr)));
    void* comm = nullptr;
    int mask = 0;
    rec.init(&comm, 0x3, &mask, "world", 1, 2, 0);
    void* k = reinterpret_cast<void*>(1);
    rec.startEvent(comm, &k, kernelCh(nullptr, 0, 1));
    QVERIFY(k == nullptr);
    int not_an_event = 0;
    rec.startEvent(comm, &k, kernelCh(&not_an_event, 0, 1));
    QVERIFY(k == nullptr);
    QCOMPARE(rec.stopEvent(&not_an_event), nc::kNcclSuccess);
    QCOMPARE(rec.recordEventState(&not_an_event, nc::event_state::kKernelChStop, nullptr), nc::kNcclSuccess);
    void* g = nullptr;
    int other_context = 0;
    rec.startEvent(&other_context, &g, group());  // not a communicator it knows
    QVERIFY(g == nullptr);
    rec.startEvent(comm, &g, blank(et::kProxyCtrl));  // not in the mask
    QVERIFY(g == nullptr);
    QCOMPARE(rec.stats().live, std::uint64_t{0});
    QCOMPARE(rec.finalize(&other_context), nc::kNcclSuccess);
  }

  void initFailsWhereNoFileCanBeMade() {
    QTemporaryDir dir;
    nc::RecorderOptions o = options(dir);
    std::ofstream(dir.path().toStdString() + "/a-file") << "not a folder";
    o.dir = dir.path().toStdString() + "/a-file/deeper";
    nc::Recorder rec(o);
    void* comm = reinterpret_cast<void*>(1);
    int mask = 0;
    QCOMPARE(rec.init(&comm, 0x1, &mask, "world", 1, 1, 0), nc::kNcclSystemError);
    QVERIFY(comm == nullptr);
    QVERIFY2(rec.lastError().find("a-file/deeper") != std::string::npos, rec.lastError().c_str());
    nc::RecorderOptions nested = options(dir);  // missing parents are made
    nested.dir = dir.path().toStdString() + "/x/y/z";
    nc::Recorder made(nested);
    QCOMPARE(made.init(&comm, 0x1, &mask, "world", 1, 1, 0), nc::kNcclSuccess);
    QVERIFY(made.path().starts_with(nested.dir + "/shardscope-nccl-"));
  }

  // The module as NCCL loads it: its tables by name, environment configuration, v5 and v4 descriptors.
  void pluginModule() {
    QTemporaryDir dir;
    qputenv("SHARDSCOPE_NCCL_TRACE_DIR", dir.path().toUtf8());
    qputenv("SHARDSCOPE_NCCL_PROFILE_MASK", "coll,p2p");
    qputenv("RANK", "3");
    qputenv("WORLD_SIZE", "4");
    void* lib = dlopen(SHARDSCOPE_NCCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    QVERIFY2(lib != nullptr, dlerror());
    auto* v5 = static_cast<nc::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
    auto* v4 = static_cast<nc::ProfilerV4*>(dlsym(lib, "ncclProfiler_v4"));
    auto* set_step = reinterpret_cast<void (*)(long long)>(dlsym(lib, "shardscope_nccl_profiler_set_step"));
    QVERIFY(v5 != nullptr && v4 != nullptr && set_step != nullptr);
    QCOMPARE(std::string(v5->name), std::string("shardscope"));
    set_step(12);
    void* ctx = nullptr;
    int mask = 0;
    QCOMPARE(v5->init(&ctx, 0x77, &mask, "replica", 1, 2, 1, logger), nc::kNcclSuccess);
    QCOMPARE(mask, et::kGroup | et::kColl | et::kP2p);
    void* g = nullptr;
    void* t = nullptr;
    nc::EventDescrV5 gd = group();
    v5->start_event(ctx, &g, &gd);
    nc::EventDescrV5 cd = coll(g, "AllReduce", 9, 100, "ncclFloat16", "TREE", "LL");
    v5->start_event(ctx, &t, &cd);
    v5->stop_event(t);
    v5->stop_event(g);
    QCOMPARE(v5->finalize(ctx), nc::kNcclSuccess);
    // An older NCCL's v4 descriptors: one-byte type, the task's parent is the group.
    void* ctx4 = nullptr;
    QCOMPARE(v4->init(&ctx4, &mask, "world", 0x88, 1, 4, 3, logger), nc::kNcclSuccess);
    nc::EventDescrV4 g4;
    std::memset(&g4, 0, sizeof g4);
    g4.type = et::kGroup;
    void* gh = nullptr;
    v4->start_event(ctx4, &gh, &g4);
    nc::EventDescrV4 r4;
    std::memset(&r4, 0, sizeof r4);
    r4.type = et::kColl;
    r4.parent = gh;
    r4.coll = {3, "ReduceScatter", nullptr, nullptr, 6, 0, "ncclFloat32", 4, 8, "RING", "SIMPLE"};
    void* rh = nullptr;
    v4->start_event(ctx4, &rh, &r4);
    QVERIFY(gh != nullptr && rh != nullptr);
    v4->stop_event(rh);
    v4->stop_event(gh);
    QCOMPARE(v4->finalize(ctx4), nc::kNcclSuccess);

    std::string path;
    for (const auto& e : std::filesystem::directory_iterator(dir.path().toStdString()))
      if (e.path().filename().string().ends_with("-" + std::to_string(::getpid()) + ".jsonl")) path = e.path().string();
    QVERIFY2(!path.empty(), "no shardscope-nccl-<host>-<pid>.jsonl in the trace folder");
    const Trace tr = readTrace(path);
    QVERIFY2(tr.ok, tr.bad_line.c_str());
    QCOMPARE(tr.lines.front()["rank"].get<int>(), 3);
    QCOMPARE(tr.lines.front()["nranks"].get<int>(), 4);
    QCOMPARE(tr.lines.front()["rank_source"].get<std::string>(), std::string("RANK"));
    QCOMPARE(tr.lines.front()["interface"].get<std::string>(), std::string("v5"));
    const auto calls = tr.of("call");
    QCOMPARE(calls.size(), std::size_t{2});
    QCOMPARE(calls[0]["op"].get<std::string>(), std::string("all_reduce"));
    QCOMPARE(calls[0]["bytes"].get<int>(), 200);
    QCOMPARE(calls[0]["algo"].get<std::string>(), std::string("TREE"));
    QCOMPARE(calls[0]["step"].get<int>(), 12);
    QCOMPARE(calls[1]["op"].get<std::string>(), std::string("reduce_scatter"));
    QCOMPARE(calls[1]["bytes"].get<int>(), 6 * 4 * 4);
    QCOMPARE(calls[1]["seq"].get<int>(), 3);
    QCOMPARE(calls[1]["comm"].get<std::string>(), std::string("world"));
    QCOMPARE(tr.of("end").size(), std::size_t{2});  // each time the last communicator was finalized
    bool said = false;
    for (const auto& l : g_log) said = said || l.find("comm \"replica\" rank 1/2") != std::string::npos;
    QVERIFY(said);
  }
};

QTEST_GUILESS_MAIN(TestNcclPlugin)
#include "test_nccl_plugin.moc"
