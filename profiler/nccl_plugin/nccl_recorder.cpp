// The plugin's per-process state: event pool, communicators, trace file
// (nccl_recorder.h explains when a call is written).
#include "shardscope/profiler/nccl_plugin/nccl_recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

#include "shardscope/profiler/nccl_plugin/nccl_records.h"

namespace shardscope::profiler::nccl {

namespace {

namespace et = event_type;

enum class Kind : std::uint8_t { Free, Group, Coll, P2p, ProxyOp, ProxyStep, KernelCh };

// Index into dropped_by_type (TraceEnd) per kind.
int dropIndex(Kind k) {
  switch (k) {
    case Kind::Group:
      return 0;
    case Kind::Coll:
      return 1;
    case Kind::P2p:
      return 2;
    case Kind::ProxyOp:
      return 3;
    case Kind::ProxyStep:
      return 4;
    default:
      return 5;
  }
}

struct Comm;

// One pool object: NCCL's handle for an event of any kind.
struct Event {
  Kind kind = Kind::Free;
  bool stopped = false;
  bool done = false;  // tasks: everything expected of it was seen
  Comm* comm = nullptr;
  Event* parent = nullptr;
  Event* first = nullptr;  // children: a group's tasks, a task's kernel channels and proxy ops, a proxy op's steps
  Event* prev = nullptr;   // siblings in the parent's list, the communicator's top-level list, or the free list
  Event* next = nullptr;
  int open = 0;     // group: tasks not done; others: children started and not stopped
  int dropped = 0;  // group: tasks that found the pool full
  std::int64_t cpu_start = 0, cpu_end = 0;
  std::uint64_t gpu_start = 0, gpu_end = 0;
  int kernel_channels = 0;
  std::uint32_t proxy_ops = 0, proxy_steps = 0;
  std::int64_t proxy_start = 0, proxy_end = 0;
  std::uint64_t net_bytes = 0;  // proxy step: its transfer size; op and task: the sum
  std::int64_t step = -1;
  std::uint64_t seq = 0, count = 0, p2p_seq = 0;
  int root = -1, peer = -1, channels = 0, warps = 0;
  char func[16] = {}, datatype[16] = {}, algo[16] = {}, proto[8] = {};
};

struct Comm {
  std::uint64_t hash = 0;
  std::string name;
  int rank = 0, nranks = 1, nodes = 1;
  std::uint64_t a2a_calls = 0, send_recv_calls = 0;  // numbers of the calls made of send/recv tasks
  Event* head = nullptr;                             // top-level events (groups, tasks without one), oldest first
  Event* tail = nullptr;
  std::size_t live = 0;
  CommView view() const { return CommView{name, hash, rank, nranks, nodes}; }
};

template <std::size_t N>
void copyText(char (&dst)[N], const char* src) {
  std::size_t i = 0;
  if (src != nullptr)
    for (; i + 1 < N && src[i] != '\0'; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

std::int64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool isTask(const Event* e) { return e != nullptr && (e->kind == Kind::Coll || e->kind == Kind::P2p); }

}  // namespace

std::string traceFileName(const std::string& host, std::int64_t pid) {
  std::string h = host.empty() ? std::string("host") : host;
  for (char& c : h)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
          c == '_'))
      c = '_';
  return "shardscope-nccl-" + h + "-" + std::to_string(pid) + ".jsonl";
}

struct Recorder::Impl {
  RecorderOptions o;
  mutable std::mutex m;
  std::vector<Event> pool;
  Event* free_head = nullptr;  // FIFO: a freed handle is reused as late as possible
  Event* free_tail = nullptr;
  std::uint64_t live = 0;
  std::vector<std::unique_ptr<Comm>> comms;
  std::string buf;
  std::vector<TaskView> views;
  std::atomic<std::int64_t> step{-1};
  std::uint64_t calls = 0, dropped = 0;
  std::uint64_t dropped_by[6] = {};
  bool calls_since_end = false;  // lines written since the last end line
  bool shut = false;
  // The file: opened by the first init, written outside `m` under `file_m` (taken while `m` is held, so in order).
  std::mutex file_m;
  int fd = -1;
  std::string path, error;
  std::atomic<std::uint64_t> bytes_written{0}, flushes{0};
  bool warned_write = false;

  std::int64_t now() const { return o.clock != nullptr ? o.clock() : realtimeNs(); }

  void warn(const std::string& msg) {
    error = msg;
    if (o.log != nullptr) o.log(kLogWarn, kLogInit, __FILE__, __LINE__, "shardscope-nccl-profiler: %s", msg.c_str());
  }

  // --- pool
  Event* alloc(Kind k) {
    if (free_head == nullptr) reclaim();
    Event* e = free_head;
    if (e == nullptr) {
      ++dropped;
      ++dropped_by[dropIndex(k)];
      return nullptr;
    }
    free_head = e->next;
    if (free_head == nullptr) free_tail = nullptr;
    *e = Event{};
    e->kind = k;
    e->cpu_start = now();
    ++live;
    return e;
  }
  void release(Event* e) {
    e->kind = Kind::Free;
    e->next = nullptr;
    e->prev = free_tail;
    if (free_tail != nullptr)
      free_tail->next = e;
    else
      free_head = e;
    free_tail = e;
    --live;
  }
  // A handle NCCL gave back: one of ours, in use.
  Event* valid(void* handle) const {
    if (handle == nullptr || pool.empty()) return nullptr;
    const auto p = reinterpret_cast<std::uintptr_t>(handle);
    const auto b = reinterpret_cast<std::uintptr_t>(pool.data());
    if (p < b || p >= b + pool.size() * sizeof(Event) || (p - b) % sizeof(Event) != 0) return nullptr;
    Event* e = static_cast<Event*>(handle);
    return e->kind == Kind::Free ? nullptr : e;
  }
  Comm* commOf(void* context) const {
    for (const auto& c : comms)
      if (c.get() == context) return c.get();
    return nullptr;
  }

  // --- lists
  void linkChild(Event* parent, Event* e) {
    e->parent = parent;
    e->next = parent->first;
    if (parent->first != nullptr) parent->first->prev = e;
    parent->first = e;
  }
  void linkTop(Comm* c, Event* e) {
    e->comm = c;
    e->prev = c->tail;
    if (c->tail != nullptr)
      c->tail->next = e;
    else
      c->head = e;
    c->tail = e;
    ++c->live;
  }
  void unlink(Event* e) {
    if (e->parent != nullptr) {
      if (e->prev != nullptr)
        e->prev->next = e->next;
      else
        e->parent->first = e->next;
      if (e->next != nullptr) e->next->prev = e->prev;
    } else if (e->comm != nullptr) {
      Comm* c = e->comm;
      (e->prev != nullptr ? e->prev->next : c->head) = e->next;
      (e->next != nullptr ? e->next->prev : c->tail) = e->prev;
      --c->live;
    }
    e->prev = e->next = nullptr;
  }
  void freeTree(Event* e) {
    while (e->first != nullptr) freeTree(e->first);
    unlink(e);
    release(e);
  }

  // --- completion
  // Kernel events on: a task uses `channels` channels, each reports once.
  bool kernelShort(const Event& t) const {
    return (o.mask & et::kKernelCh) != 0 && t.kernel_channels < std::max(1, t.channels);
  }
  // Proxy ops: their number is not known up front, so a task may always get more.
  bool expectMore(const Event& t) const { return (o.mask & et::kProxyOp) != 0 || kernelShort(t); }
  TaskView view(const Event& t) const {
    TaskView v;
    v.p2p = t.kind == Kind::P2p;
    v.func = t.func;
    v.datatype = t.datatype;
    v.algo = t.algo;
    v.proto = t.proto;
    v.seq = t.seq;
    v.count = t.count;
    v.root = t.root;
    v.peer = t.peer;
    v.channels = t.channels;
    v.warps = t.warps;
    v.cpu_start = t.cpu_start;
    v.cpu_end = t.stopped ? t.cpu_end : t.cpu_start;
    v.gpu_start = t.gpu_start;
    v.gpu_end = t.gpu_end;
    v.kernel_channels = t.kernel_channels;
    v.proxy_ops = t.proxy_ops;
    v.proxy_steps = t.proxy_steps;
    v.proxy_start = t.proxy_start;
    v.proxy_end = t.proxy_end;
    v.net_bytes = t.net_bytes;
    v.settled = t.done || (t.stopped && t.open == 0 && !kernelShort(t));
    return v;
  }
  // The calls of a top-level event into the buffer.
  void write(const Event* top) {
    views.clear();
    if (top->kind == Kind::Group) {
      for (const Event* t = top->first; t != nullptr; t = t->next)
        if (isTask(t)) views.push_back(view(*t));
      std::reverse(views.begin(), views.end());  // children are linked newest first
    } else if (isTask(top)) {
      views.push_back(view(*top));
    }
    if (views.empty()) return;
    const CommView cv = top->comm->view();
    for (const CallRecord& r : translateGroup(cv, views, top->p2p_seq, top->step, top->dropped > 0)) {
      appendCall(buf, cv, r);
      ++calls;
    }
    calls_since_end = true;
  }
  void writeAndFree(Event* top) {
    write(top);
    freeTree(top);
  }
  // Numbers a call made of send/recv tasks among its communicator's calls of that op.
  std::uint64_t p2pSeq(Comm* c, std::span<const TaskView> p2p) const {
    return p2pGroupOp(c->view(), p2p) == "all_to_all" ? c->a2a_calls++ : c->send_recv_calls++;
  }
  // A task is done once stopped with nothing more expected; a group is
  // written when it and all its tasks are done and no child is still open
  // (a late kernel event of a done task holds it back until it stops).
  void taskProgress(Event* t) {
    if (!t->done) {
      if (!t->stopped || t->open > 0 || expectMore(*t)) return;
      t->done = true;
      if (t->parent != nullptr) --t->parent->open;
    }
    if (t->parent != nullptr)
      groupProgress(t->parent);
    else if (t->open == 0)
      writeAndFree(t);
  }
  void groupProgress(Event* g) {
    if (g->stopped && g->open == 0 && quiet(g)) writeAndFree(g);
  }
  // A top-level event whose started children have all stopped, so no handle NCCL holds points into it.
  static bool quiet(const Event* top) {
    if (!top->stopped) return false;
    if (top->kind != Kind::Group) return top->open == 0;
    for (const Event* t = top->first; t != nullptr; t = t->next)
      if (!t->stopped || t->open > 0) return false;
    return true;
  }
  // Writes a communicator's oldest calls that wait only for events that may never come.
  // Called as a new one starts, so that at most `keep` wait.
  void linger(Comm* c, std::size_t keep) {
    while (c->live >= std::max<std::size_t>(keep, 1) && c->head != nullptr && quiet(c->head)) writeAndFree(c->head);
  }
  void reclaim() {
    for (const auto& c : comms)
      if (c->head != nullptr && quiet(c->head)) writeAndFree(c->head);
  }

  // --- the file
  bool open(const std::string& host) {
    const std::string dir = o.dir.empty() ? std::string(".") : o.dir;
    // The folder and its parents (mkdir -p).
    for (std::size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
      const std::string part = dir.substr(0, at);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
        warn("cannot create the trace folder " + part + ": " + std::strerror(errno));
        return false;
      }
      if (at == std::string::npos) break;
    }
    const std::string base = traceFileName(host, o.pid);
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string name = base;
      if (attempt > 0)
        name.insert(name.size() - 6, std::string("-").append(std::to_string(attempt)));  // before ".jsonl"
      const std::string p = dir + "/" + name;
      const int f = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (f >= 0) {
        std::lock_guard<std::mutex> fl(file_m);  // flush() reads them under file_m alone
        fd = f;
        path = p;
        return true;
      }
      if (errno != EEXIST) {
        warn("cannot create " + p + ": " + std::strerror(errno));
        return false;
      }
    }
    warn("cannot create " + dir + "/" + base + ": 100 files of that name exist");
    return false;
  }
  // Hands the buffer to the file when it is full (or `force`), writing it
  // outside `m`; `lk` is released.
  void flush(std::unique_lock<std::mutex>& lk, bool force) {
    if (!force && buf.size() < o.buffer_bytes) return;
    std::string out;
    out.swap(buf);
    std::unique_lock<std::mutex> fl(file_m);
    lk.unlock();
    if (fd < 0 || out.empty()) return;
    const char* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (!warned_write) {
          warned_write = true;
          const std::string msg = "writing " + path + " failed: " + std::strerror(errno) + " (records lost)";
          if (o.log != nullptr)
            o.log(kLogWarn, kLogInit, __FILE__, __LINE__, "shardscope-nccl-profiler: %s", msg.c_str());
        }
        return;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
      bytes_written += static_cast<std::uint64_t>(n);
    }
    ++flushes;
  }
  void appendEndLine() {
    TraceEnd e;
    e.calls = calls;
    e.dropped = dropped;
    std::copy(std::begin(dropped_by), std::end(dropped_by), std::begin(e.dropped_by_type));
    e.time_ns = now();
    appendEnd(buf, e);
    calls_since_end = false;
  }
};

Recorder::Recorder(RecorderOptions options) : d_(std::make_unique<Impl>()) {
  Impl& d = *d_;
  d.o = std::move(options);
  if (d.o.mask == 0) d.o.mask = defaultEventMask();
  if (d.o.pid == 0) d.o.pid = ::getpid();
  if (d.o.host.empty()) {
    char h[256] = {};
    if (::gethostname(h, sizeof h - 1) == 0) d.o.host = h;
  }
  d.pool.resize(std::max<std::size_t>(d.o.max_events, 1));
  for (std::size_t i = 0; i < d.pool.size(); ++i) d.pool[i].next = i + 1 < d.pool.size() ? &d.pool[i + 1] : nullptr;
  d.free_head = d.pool.data();
  d.free_tail = &d.pool.back();
}

Recorder::~Recorder() { shutdown(); }

NcclResult Recorder::init(void** context, std::uint64_t comm_hash, int* activation_mask, const char* comm_name,
                          int nodes, int nranks, int rank) {
  Impl& d = *d_;
  std::unique_lock<std::mutex> lk(d.m);
  if (context != nullptr) *context = nullptr;
  if (activation_mask != nullptr) *activation_mask = d.o.mask;
  if (d.shut) return kNcclSystemError;
  const bool first = d.fd < 0;
  if (first && !d.open(d.o.host)) return kNcclSystemError;
  auto comm = std::make_unique<Comm>();
  comm->hash = comm_hash;
  comm->name = comm_name != nullptr ? comm_name : "";
  comm->rank = rank;
  comm->nranks = std::max(1, nranks);
  comm->nodes = std::max(1, nodes);
  if (first) {
    TraceHeader h;
    h.host = d.o.host;
    h.pid = d.o.pid;
    const bool given = d.o.rank >= 0 && d.o.nranks > 0 && d.o.rank < d.o.nranks;
    h.rank = given ? d.o.rank : rank;
    h.nranks = given ? d.o.nranks : comm->nranks;
    h.rank_source = given ? (d.o.rank_source.empty() ? std::string("given") : d.o.rank_source) : "communicator";
    h.comm = comm->view();
    h.mask = d.o.mask;
    h.interface = d.o.interface;
    h.time_ns = d.now();
    appendHeader(d.buf, h);
  }
  appendComm(d.buf, comm->view(), d.now());
  if (context != nullptr) *context = comm.get();
  d.comms.push_back(std::move(comm));
  d.flush(lk, true);  // the header and communicators are on disk from the start
  return kNcclSuccess;
}

NcclResult Recorder::startEvent(void* context, void** handle, const EventDescrV5& descr) {
  Impl& d = *d_;
  std::unique_lock<std::mutex> lk(d.m);
  if (handle != nullptr) *handle = nullptr;
  Comm* c = d.commOf(context);
  const auto type = static_cast<int>(descr.type);
  if (d.shut || handle == nullptr || (d.o.mask & type) == 0) return kNcclSuccess;
  // Groups and tasks belong to a communicator; kernel and proxy events to their parent.
  if (c == nullptr && (type == et::kGroup || type == et::kColl || type == et::kP2p)) return kNcclSuccess;
  Event* e = nullptr;
  if (type == et::kGroup) {
    d.linger(c, d.o.linger);
    e = d.alloc(Kind::Group);
    if (e == nullptr) return kNcclSuccess;
    e->step = d.step.load(std::memory_order_relaxed);
    d.linkTop(c, e);
  } else if (type == et::kColl || type == et::kP2p) {
    // Allocate first: making room may write (and free) quiet events, never an open group.
    const bool coll = type == et::kColl;
    e = d.alloc(coll ? Kind::Coll : Kind::P2p);
    Event* g = d.valid(coll ? descr.coll.parent_group : descr.p2p.parent_group);
    if (g != nullptr && (g->kind != Kind::Group || g->comm != c || g->stopped)) g = nullptr;
    if (e == nullptr) {
      if (g != nullptr) ++g->dropped;
      return kNcclSuccess;
    }
    if (coll) {
      const CollDescrV5& x = descr.coll;
      copyText(e->func, x.func);
      copyText(e->datatype, x.datatype);
      copyText(e->algo, x.algo);
      copyText(e->proto, x.proto);
      e->seq = x.seq;
      e->count = x.count;
      e->root = x.root;
      e->channels = x.channels;
      e->warps = x.warps;
    } else {
      const P2pDescrV5& x = descr.p2p;
      copyText(e->func, x.func);
      copyText(e->datatype, x.datatype);
      e->count = x.count;
      e->peer = x.peer;
      e->channels = x.channels;
    }
    if (g != nullptr) {
      e->comm = c;
      e->step = g->step;
      d.linkChild(g, e);
      ++g->open;
    } else {
      d.linger(c, d.o.linger);
      e->step = d.step.load(std::memory_order_relaxed);
      d.linkTop(c, e);
    }
  } else if (type == et::kKernelCh || type == et::kProxyOp || type == et::kProxyStep) {
    // Another process's proxy op (PXN) points at that process's memory: not ours to read.
    if (type == et::kProxyOp && descr.proxy_op.pid != static_cast<pid_t>(::getpid())) return kNcclSuccess;
    const Kind k = type == et::kKernelCh ? Kind::KernelCh : type == et::kProxyOp ? Kind::ProxyOp : Kind::ProxyStep;
    e = d.alloc(k);
    if (e == nullptr) return kNcclSuccess;
    Event* parent = d.valid(descr.parent);
    const bool fits = k == Kind::ProxyStep ? parent != nullptr && parent->kind == Kind::ProxyOp : isTask(parent);
    if (!fits) {  // its parent was not recorded (or is gone): nothing to attribute it to
      d.release(e);
      return kNcclSuccess;
    }
    if (k == Kind::KernelCh) e->gpu_start = descr.kernel_ch.ptimer;
    d.linkChild(parent, e);
    ++parent->open;
  }
  *handle = e;
  return kNcclSuccess;
}

NcclResult Recorder::stopEvent(void* handle) {
  Impl& d = *d_;
  std::unique_lock<std::mutex> lk(d.m);
  Event* e = d.valid(handle);
  if (d.shut || e == nullptr || e->stopped) return kNcclSuccess;
  e->stopped = true;
  e->cpu_end = d.now();
  switch (e->kind) {
    case Kind::Group: {
      d.views.clear();
      for (const Event* t = e->first; t != nullptr; t = t->next)
        if (t->kind == Kind::P2p) d.views.push_back(d.view(*t));
      if (!d.views.empty()) e->p2p_seq = d.p2pSeq(e->comm, d.views);
      d.groupProgress(e);
      break;
    }
    case Kind::Coll:
    case Kind::P2p:
      if (e->kind == Kind::P2p && e->parent == nullptr) {
        const TaskView v = d.view(*e);
        e->p2p_seq = d.p2pSeq(e->comm, std::span<const TaskView>(&v, 1));
      }
      d.taskProgress(e);
      break;
    case Kind::KernelCh: {
      Event* t = e->parent;
      ++t->kernel_channels;
      if (e->gpu_start > 0 && e->gpu_end >= e->gpu_start) {
        t->gpu_start = t->gpu_start == 0 ? e->gpu_start : std::min(t->gpu_start, e->gpu_start);
        t->gpu_end = std::max(t->gpu_end, e->gpu_end);
      }
      d.freeTree(e);
      --t->open;
      d.taskProgress(t);
      break;
    }
    case Kind::ProxyOp:
    case Kind::ProxyStep: {
      // A proxy op is finished when it and its steps are stopped; then it folds into its task.
      Event* x = e;
      if (x->kind == Kind::ProxyStep) {
        Event* op = x->parent;
        ++op->proxy_steps;
        op->net_bytes += x->net_bytes;
        d.freeTree(x);
        --op->open;
        x = op;
      }
      if (!x->stopped || x->open > 0) break;
      Event* t = x->parent;
      t->proxy_start = t->proxy_ops == 0 ? x->cpu_start : std::min(t->proxy_start, x->cpu_start);
      t->proxy_end = std::max(t->proxy_end, x->cpu_end);
      ++t->proxy_ops;
      t->proxy_steps += x->proxy_steps;
      t->net_bytes += x->net_bytes;
      d.freeTree(x);
      --t->open;
      d.taskProgress(t);
      break;
    }
    case Kind::Free:
      break;
  }
  d.flush(lk, false);
  return kNcclSuccess;
}

NcclResult Recorder::recordEventState(void* handle, int state, const EventStateArgs* args) {
  Impl& d = *d_;
  std::lock_guard<std::mutex> lk(d.m);
  Event* e = d.valid(handle);
  if (d.shut || e == nullptr || args == nullptr) return kNcclSuccess;
  if (e->kind == Kind::KernelCh && state == event_state::kKernelChStop) {
    e->gpu_end = args->kernel_ch.ptimer;
  } else if (e->kind == Kind::ProxyStep &&
             (state == event_state::kProxyStepSendGpuWait || state == event_state::kProxyStepSendWait ||
              state == event_state::kProxyStepRecvWait || state == event_state::kProxyStepRecvFlushWait ||
              state == event_state::kProxyStepRecvGpuWait || state == event_state::kProxyStepSendPeerWait)) {
    e->net_bytes = std::max<std::uint64_t>(e->net_bytes, args->proxy_step.trans_size);
  }
  return kNcclSuccess;
}

NcclResult Recorder::finalize(void* context) {
  Impl& d = *d_;
  std::unique_lock<std::mutex> lk(d.m);
  Comm* c = d.commOf(context);
  if (c == nullptr) return kNcclSuccess;
  // NCCL calls nothing more for this communicator: what it still holds is written as it is.
  while (c->head != nullptr) d.writeAndFree(c->head);
  std::erase_if(d.comms, [&](const std::unique_ptr<Comm>& x) { return x.get() == c; });
  if (d.comms.empty() && !d.shut) d.appendEndLine();
  d.flush(lk, true);
  return kNcclSuccess;
}

void Recorder::setStep(std::int64_t step) { d_->step.store(step < 0 ? -1 : step, std::memory_order_relaxed); }

void Recorder::shutdown() {
  Impl& d = *d_;
  std::unique_lock<std::mutex> lk(d.m);
  if (d.shut) return;
  for (const auto& c : d.comms)
    while (c->head != nullptr) d.writeAndFree(c->head);
  if (d.fd >= 0 && (d.calls_since_end || !d.comms.empty())) d.appendEndLine();
  d.shut = true;
  d.flush(lk, true);
  std::lock_guard<std::mutex> fl(d.file_m);
  if (d.fd >= 0) ::close(d.fd);
  d.fd = -1;
}

RecorderStats Recorder::stats() const {
  const Impl& d = *d_;
  std::lock_guard<std::mutex> lk(d.m);
  RecorderStats s;
  s.calls = d.calls;
  s.dropped = d.dropped;
  s.live = d.live;
  s.comms = d.comms.size();
  s.bytes_written = d.bytes_written.load();
  s.flushes = d.flushes.load();
  return s;
}

std::string Recorder::path() const {
  std::lock_guard<std::mutex> lk(d_->m);
  return d_->path;
}

std::string Recorder::lastError() const {
  std::lock_guard<std::mutex> lk(d_->m);
  return d_->error;
}

int Recorder::mask() const { return d_->o.mask; }

}  // namespace shardscope::profiler::nccl
