// What the NCCL plugin tests share: event descriptors as NCCL fills them,
// a deterministic clock, and a trace file read back as JSON lines.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/profiler/nccl_plugin/nccl_profiler_abi.h"

namespace nccl_test {

namespace nc = shardscope::profiler::nccl;
namespace et = nc::event_type;

// A CPU clock that ticks 1 us per reading (any thread).
inline std::atomic<std::int64_t> g_ticks{1'700'000'000'000'000'000};
inline std::int64_t tick() { return g_ticks.fetch_add(1000) + 1000; }

inline nc::EventDescrV5 blank(int type) {
  nc::EventDescrV5 d;
  std::memset(&d, 0, sizeof d);
  d.type = static_cast<std::uint64_t>(type);
  return d;
}
inline nc::EventDescrV5 group() { return blank(et::kGroup); }
inline nc::EventDescrV5 coll(void* group, const char* func, std::uint64_t seq, std::size_t count, const char* dtype,
                             const char* algo = "RING", const char* proto = "SIMPLE", int channels = 2, int root = 0) {
  nc::EventDescrV5 d = blank(et::kColl);
  d.coll.seq = seq;
  d.coll.func = func;
  d.coll.count = count;
  d.coll.root = root;
  d.coll.datatype = dtype;
  d.coll.channels = static_cast<std::uint8_t>(channels);
  d.coll.warps = 16;
  d.coll.algo = algo;
  d.coll.proto = proto;
  d.coll.parent_group = group;
  return d;
}
inline nc::EventDescrV5 p2p(void* group, const char* func, int peer, std::size_t count, const char* dtype,
                            int channels = 1) {
  nc::EventDescrV5 d = blank(et::kP2p);
  d.p2p.func = func;
  d.p2p.datatype = dtype;
  d.p2p.count = count;
  d.p2p.peer = peer;
  d.p2p.channels = static_cast<std::uint8_t>(channels);
  d.p2p.parent_group = group;
  return d;
}
inline nc::EventDescrV5 kernelCh(void* task, int channel, std::uint64_t ptimer) {
  nc::EventDescrV5 d = blank(et::kKernelCh);
  d.parent = task;
  d.kernel_ch.channel = static_cast<std::uint8_t>(channel);
  d.kernel_ch.ptimer = ptimer;
  return d;
}
inline nc::EventDescrV5 proxyOp(void* task, int peer, bool send, pid_t pid = ::getpid()) {
  nc::EventDescrV5 d = blank(et::kProxyOp);
  d.parent = task;
  d.proxy_op.pid = pid;
  d.proxy_op.peer = peer;
  d.proxy_op.steps = 2;
  d.proxy_op.is_send = send ? 1 : 0;
  return d;
}
inline nc::EventDescrV5 proxyStep(void* op, int step) {
  nc::EventDescrV5 d = blank(et::kProxyStep);
  d.parent = op;
  d.proxy_step.step = step;
  return d;
}

// A trace file's lines, parsed; `ok` false when a line is not JSON.
struct Trace {
  bool ok = true;
  std::string bad_line;
  std::vector<nlohmann::json> lines;
  std::vector<nlohmann::json> of(const std::string& type) const {
    std::vector<nlohmann::json> out;
    for (const auto& l : lines)
      if (l.value("type", std::string()) == type) out.push_back(l);
    return out;
  }
};
inline Trace readTrace(const std::string& path) {
  Trace t;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      t.ok = false;
      t.bad_line = line;
      return t;
    }
    t.lines.push_back(std::move(j));
  }
  t.ok = !t.lines.empty();
  return t;
}

}  // namespace nccl_test
