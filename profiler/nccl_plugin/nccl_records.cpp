// NCCL tasks -> call records -> lines of a shardscope.nccl-trace/1 file
// (nccl_records.h, docs/formats/nccl-trace.md).
#include "shardscope/profiler/nccl_plugin/nccl_records.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "shardscope/profiler/nccl_plugin/nccl_profiler_abi.h"

namespace shardscope::profiler::nccl {

namespace {

namespace et = event_type;
constexpr int kUsable = et::kGroup | et::kColl | et::kP2p | et::kProxyOp | et::kProxyStep | et::kKernelCh;

struct MaskName {
  std::string_view name;
  int bits;
};
constexpr MaskName kMaskNames[] = {
    {"group", et::kGroup},
    {"coll", et::kColl},
    {"p2p", et::kP2p},
    {"proxy_op", et::kProxyOp},
    {"proxy_step", et::kProxyStep},
    {"kernel_ch", et::kKernelCh},
    {"proxy", et::kProxyOp},
    {"kernel", et::kKernelCh},
    {"collectives", et::kColl},
    {"default", et::kGroup | et::kColl | et::kP2p},
    {"all", kUsable},
};

int normalise(int m) {
  m &= kUsable;
  if ((m & et::kProxyStep) != 0) m |= et::kProxyOp;
  if ((m & (et::kKernelCh | et::kProxyOp)) != 0 && (m & (et::kColl | et::kP2p)) == 0) m |= et::kColl | et::kP2p;
  if ((m & (et::kColl | et::kP2p)) != 0) m |= et::kGroup;
  return m;
}

std::uint64_t mulSat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}
std::uint64_t addSat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

template <class T>
void appendNumber(std::string& out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// ,"key":
void key(std::string& out, std::string_view k) {
  out += ",\"";
  out += k;
  out += "\":";
}
template <class T>
void field(std::string& out, std::string_view k, T v) {
  key(out, k);
  appendNumber(out, v);
}
void fieldText(std::string& out, std::string_view k, std::string_view v) {
  key(out, k);
  appendJsonString(out, v);
}

bool isSend(std::string_view func) { return func == "Send"; }

void foldTimes(CallRecord& r, const TaskView& t, bool first) {
  r.start_ns = first ? t.cpu_start : std::min(r.start_ns, t.cpu_start);
  r.end_ns = first ? t.cpu_end : std::max(r.end_ns, t.cpu_end);
  if (t.gpu_start > 0 && t.gpu_end >= t.gpu_start) {
    r.gpu_start_ns = r.gpu_start_ns == 0 ? t.gpu_start : std::min(r.gpu_start_ns, t.gpu_start);
    r.gpu_end_ns = std::max(r.gpu_end_ns, t.gpu_end);
  }
  r.kernel_channels += t.kernel_channels;
  if (t.proxy_ops > 0) {
    r.proxy_start_ns = r.proxy_ops == 0 ? t.proxy_start : std::min(r.proxy_start_ns, t.proxy_start);
    r.proxy_end_ns = std::max(r.proxy_end_ns, t.proxy_end);
    r.proxy_ops += t.proxy_ops;
    r.proxy_steps += t.proxy_steps;
    r.net_bytes = addSat(r.net_bytes, t.net_bytes);
  }
  if (!t.settled) r.incomplete = true;
}

CallRecord collRecord(const CommView& comm, const TaskView& t) {
  CallRecord r;
  r.op = collectiveOp(t.func);
  r.func = std::string(t.func);
  r.seq = t.seq;
  r.count = t.count;
  r.datatype = std::string(t.datatype);
  r.type_bytes = ncclTypeBytes(t.datatype);
  // NCCL's count is per rank for all_gather (sent) and reduce_scatter
  // (received) and per peer for all_to_all: bytes follow the store's
  // convention (the whole buffer; an all-to-all's bytes sent + received).
  std::uint64_t bytes = mulSat(t.count, static_cast<std::uint64_t>(r.type_bytes));
  const auto n = static_cast<std::uint64_t>(std::max(1, comm.nranks));
  if (r.op == "all_gather" || r.op == "reduce_scatter") bytes = mulSat(bytes, n);
  if (r.op == "all_to_all") bytes = mulSat(bytes, 2 * n);
  r.bytes = bytes;
  if (r.op == "broadcast" || r.op == "reduce") r.root = t.root;
  r.algo = std::string(t.algo);
  r.proto = std::string(t.proto);
  r.channels = t.channels;
  r.warps = t.warps;
  foldTimes(r, t, true);
  return r;
}

CallRecord p2pRecord(const CommView& comm, std::span<const TaskView> tasks, std::uint64_t seq) {
  CallRecord r;
  r.op = std::string(p2pGroupOp(comm, tasks));
  r.seq = seq;
  bool first = true;
  std::string_view func = tasks.front().func, dtype = tasks.front().datatype;
  for (const TaskView& t : tasks) {
    const std::uint64_t b = mulSat(t.count, static_cast<std::uint64_t>(ncclTypeBytes(t.datatype)));
    if (isSend(t.func)) {
      ++r.sends;
      r.send_bytes = addSat(r.send_bytes, b);
    } else {
      ++r.recvs;
      r.recv_bytes = addSat(r.recv_bytes, b);
    }
    r.count = addSat(r.count, t.count);
    r.channels = std::max(r.channels, t.channels);
    if (t.peer != comm.rank && t.peer >= 0) r.peers.push_back(t.peer);
    if (t.func != func) func = "SendRecv";
    if (t.datatype != dtype) dtype = {};
    foldTimes(r, t, first);
    first = false;
  }
  std::sort(r.peers.begin(), r.peers.end());
  r.peers.erase(std::unique(r.peers.begin(), r.peers.end()), r.peers.end());
  r.func = std::string(func);
  r.datatype = dtype.empty() ? std::string("mixed") : std::string(dtype);
  r.type_bytes = ncclTypeBytes(dtype);
  r.bytes = addSat(r.send_bytes, r.recv_bytes);  // sent + received, as for every all-to-all
  return r;
}

}  // namespace

int defaultEventMask() { return et::kGroup | et::kColl | et::kP2p; }

std::optional<int> parseEventMask(std::string_view text, std::string* why) {
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  const auto fail = [&](std::string msg) -> std::optional<int> {
    if (why != nullptr) *why = std::move(msg);
    return std::nullopt;
  };
  if (text.empty()) return fail("empty (expected a number or names such as coll,p2p,kernel)");
  int raw = 0;
  if (text.front() >= '0' && text.front() <= '9') {
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const std::string_view digits = hex ? text.substr(2) : text;
    unsigned long v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v, hex ? 16 : 10);
    if (r.ec != std::errc() || r.ptr != digits.data() + digits.size() || v > 0xFFFFu)
      return fail(std::string("'").append(text) + "' is not an event mask (expected a number below 0x10000)");
    raw = static_cast<int>(v);
  } else {
    std::size_t at = 0;
    while (at <= text.size()) {
      const std::size_t end = std::min(text.find_first_of(",+| ", at), text.size());
      const std::string_view name = trim(text.substr(at, end - at));
      at = end + 1;
      if (name.empty()) continue;
      const auto it =
          std::find_if(std::begin(kMaskNames), std::end(kMaskNames), [&](const MaskName& m) { return m.name == name; });
      if (it == std::end(kMaskNames))
        return fail(std::string("unknown event '").append(name) +
                    "' (expected coll, p2p, kernel, proxy, proxy_step, default or all)");
      raw |= it->bits;
    }
  }
  const int mask = normalise(raw);
  if ((mask & (et::kColl | et::kP2p)) == 0)
    return fail(std::string("'").append(text) + "' records no calls (expected coll and/or p2p events)");
  if (why != nullptr) {
    why->clear();
    if ((raw & ~kUsable) != 0)
      *why = std::string("event bits the plugin does not use were ignored: ").append(std::to_string(raw & ~kUsable));
  }
  return mask;
}

std::string maskNames(int mask) {
  std::string out;
  for (std::size_t i = 0; i < 6; ++i) {
    if ((mask & kMaskNames[i].bits) == 0) continue;
    if (!out.empty()) out += ',';
    out += kMaskNames[i].name;
  }
  return out;
}

int ncclTypeBytes(std::string_view d) {
  if (d == "ncclInt8" || d == "ncclUint8" || d == "ncclFloat8e4m3" || d == "ncclFloat8e5m2") return 1;
  if (d == "ncclFloat16" || d == "ncclBfloat16") return 2;
  if (d == "ncclInt32" || d == "ncclUint32" || d == "ncclFloat32") return 4;
  if (d == "ncclInt64" || d == "ncclUint64" || d == "ncclFloat64") return 8;
  return 0;
}

std::string collectiveOp(std::string_view f) {
  if (f == "AllReduce") return "all_reduce";
  if (f == "AllGather") return "all_gather";
  if (f == "ReduceScatter") return "reduce_scatter";
  if (f == "Broadcast") return "broadcast";
  if (f == "Reduce") return "reduce";
  if (f == "AlltoAll" || f == "AllToAll") return "all_to_all";
  if (f == "Send" || f == "Recv" || f == "SendRecv" || f == "Gather" || f == "Scatter") return "send_recv";
  std::string out;
  for (char c : f) {
    if (c >= 'A' && c <= 'Z') {
      if (!out.empty()) out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    }
  }
  return out.empty() ? std::string("unknown") : out;
}

std::string_view p2pGroupOp(const CommView& comm, std::span<const TaskView> tasks) {
  if (comm.nranks < 2) return "send_recv";
  std::vector<char> seen(static_cast<std::size_t>(comm.nranks), 0);
  bool any_send = false, any_recv = false;
  for (const TaskView& t : tasks) {
    if (t.peer < 0 || t.peer >= comm.nranks || t.peer == comm.rank) continue;
    seen[static_cast<std::size_t>(t.peer)] = 1;
    (isSend(t.func) ? any_send : any_recv) = true;
  }
  for (int r = 0; r < comm.nranks; ++r)
    if (r != comm.rank && seen[static_cast<std::size_t>(r)] == 0) return "send_recv";
  return any_send && any_recv ? "all_to_all" : "send_recv";
}

std::vector<CallRecord> translateGroup(const CommView& comm, std::span<const TaskView> tasks, std::uint64_t p2p_seq,
                                       std::int64_t step, bool partial) {
  std::vector<CallRecord> out;
  std::vector<TaskView> p2p;
  for (const TaskView& t : tasks) {
    if (t.p2p)
      p2p.push_back(t);
    else
      out.push_back(collRecord(comm, t));
  }
  if (!p2p.empty()) out.push_back(p2pRecord(comm, p2p, p2p_seq));
  std::stable_sort(out.begin(), out.end(),
                   [](const CallRecord& a, const CallRecord& b) { return a.start_ns < b.start_ns; });
  for (CallRecord& r : out) {
    r.step = step;
    r.partial = partial;
  }
  return out;
}

std::string hashText(std::uint64_t hash) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) s += kHex[(hash >> shift) & 0xF];
  return s;
}

void appendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // A well-formed UTF-8 sequence passes as it is; anything else becomes U+FFFD.
      const int len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
      bool ok = len > 0 && i + static_cast<std::size_t>(len) <= s.size();
      for (int k = 1; ok && k < len; ++k)
        ok = (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0xC0) == 0x80;
      if (ok && len >= 3) {  // no overlong forms, surrogates or code points past U+10FFFF
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0) && !(c == 0xF0 && c1 < 0x90) &&
             !(c == 0xF4 && c1 >= 0x90);
      }
      if (ok) {
        out.append(s.data() + i, static_cast<std::size_t>(len));
        i += static_cast<std::size_t>(len);
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
    }
  }
  out += '"';
}

void appendHeader(std::string& out, const TraceHeader& h) {
  out += "{\"schema\":";
  appendJsonString(out, kTraceSchema);
  fieldText(out, "host", h.host);
  field(out, "pid", h.pid);
  field(out, "rank", h.rank);
  field(out, "nranks", h.nranks);
  fieldText(out, "rank_source", h.rank_source);
  fieldText(out, "comm", h.comm.name);
  fieldText(out, "comm_hash", hashText(h.comm.hash));
  fieldText(out, "events", maskNames(h.mask));
  field(out, "mask", h.mask);
  fieldText(out, "interface", h.interface);
  fieldText(out, "clock", "CLOCK_REALTIME");
  field(out, "time_ns", h.time_ns);
  out += "}\n";
}

void appendComm(std::string& out, const CommView& comm, std::int64_t time_ns) {
  out += "{\"type\":\"comm\"";
  fieldText(out, "comm", comm.name);
  fieldText(out, "comm_hash", hashText(comm.hash));
  field(out, "rank", comm.rank);
  field(out, "nranks", comm.nranks);
  field(out, "nodes", comm.nodes);
  field(out, "time_ns", time_ns);
  out += "}\n";
}

void appendCall(std::string& out, const CommView& comm, const CallRecord& c) {
  out += "{\"type\":\"call\"";
  fieldText(out, "comm", comm.name);
  fieldText(out, "comm_hash", hashText(comm.hash));
  field(out, "rank", comm.rank);
  field(out, "nranks", comm.nranks);
  fieldText(out, "op", c.op);
  fieldText(out, "func", c.func);
  field(out, "seq", c.seq);
  field(out, "count", c.count);
  fieldText(out, "datatype", c.datatype);
  field(out, "type_bytes", c.type_bytes);
  field(out, "bytes", c.bytes);
  if (c.root >= 0) field(out, "root", c.root);
  if (!c.algo.empty()) fieldText(out, "algo", c.algo);
  if (!c.proto.empty()) fieldText(out, "proto", c.proto);
  field(out, "channels", c.channels);
  if (c.warps > 0) field(out, "warps", c.warps);
  if (c.sends + c.recvs > 0) {
    key(out, "peers");
    out += '[';
    for (std::size_t i = 0; i < c.peers.size(); ++i) {
      if (i > 0) out += ',';
      appendNumber(out, c.peers[i]);
    }
    out += ']';
    field(out, "sends", c.sends);
    field(out, "recvs", c.recvs);
    field(out, "send_bytes", c.send_bytes);
    field(out, "recv_bytes", c.recv_bytes);
  }
  field(out, "start_ns", c.start_ns);
  field(out, "end_ns", c.end_ns);
  if (c.gpu_start_ns > 0) {
    field(out, "gpu_start_ns", c.gpu_start_ns);
    field(out, "gpu_end_ns", c.gpu_end_ns);
  }
  if (c.kernel_channels > 0) field(out, "kernel_channels", c.kernel_channels);
  if (c.proxy_ops > 0) {
    out += ",\"proxy\":{\"ops\":";
    appendNumber(out, c.proxy_ops);
    field(out, "steps", c.proxy_steps);
    field(out, "bytes", c.net_bytes);
    field(out, "start_ns", c.proxy_start_ns);
    field(out, "end_ns", c.proxy_end_ns);
    out += '}';
  }
  if (c.step >= 0) field(out, "step", c.step);
  if (c.partial) out += ",\"partial\":true";
  if (c.incomplete) out += ",\"incomplete\":true";
  out += "}\n";
}

void appendEnd(std::string& out, const TraceEnd& e) {
  out += "{\"type\":\"end\"";
  field(out, "calls", e.calls);
  field(out, "dropped", e.dropped);
  if (e.dropped > 0) {
    static constexpr std::string_view kTypes[] = {"group", "coll", "p2p", "proxy_op", "proxy_step", "kernel_ch"};
    out += ",\"dropped_by_type\":{";
    bool first = true;
    for (std::size_t i = 0; i < 6; ++i) {
      if (e.dropped_by_type[i] == 0) continue;
      if (!first) out += ',';
      first = false;
      appendJsonString(out, kTypes[i]);
      out += ':';
      appendNumber(out, e.dropped_by_type[i]);
    }
    out += '}';
  }
  field(out, "time_ns", e.time_ns);
  out += "}\n";
}

}  // namespace shardscope::profiler::nccl
