// The live CUPTI tracer: CUPTI's activity callbacks, a pool of activity
// buffers, external correlation, NVTX injection and the clock mapping.
#include "shardscope/profiler/cuda/cupti_tracer.h"

#include <dlfcn.h>

#pragma GCC diagnostic push  // as in cupti_records.h: CUPTI's nested anonymous types
#pragma GCC diagnostic ignored "-Wpedantic"
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wnested-anon-types"
#endif
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <utility>

namespace shardscope::profiler::cuda {

namespace {

constexpr std::align_val_t kBufferAlign{8};  // CUPTI's activity records are 8-byte aligned
constexpr std::size_t kMinBufferBytes = std::size_t{64} << 10;
constexpr const char* kNvtxInjectionVar = "NVTX_INJECTION64_PATH";

std::string resultText(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) return {};
  return text;
}

core::Error failed(std::string_view call, CUptiResult r) { return cuptiError(call, r, resultText(r)); }

// Activity buffers: allocated zeroed, zeroed again when CUPTI hands them
// back, and reused (CUPTI is told that buffers come zeroed, so it does not
// clear them on the launching thread). Process-wide, like CUPTI's callbacks.
class BufferPool {
 public:
  void configure(std::size_t bytes, std::size_t max_alive) {
    std::lock_guard lock(mu_);
    releaseFree();
    bytes_ = bytes;
    max_alive_ = max_alive;
    allocated_ = requested_ = refused_ = 0;
  }
  // Null (CUPTI drops records) when max_alive buffers are out already.
  std::uint8_t* get(std::size_t& size) {
    std::lock_guard lock(mu_);
    size = 0;
    if (bytes_ == 0 || alive_ >= max_alive_) {
      ++refused_;
      return nullptr;
    }
    std::uint8_t* b = nullptr;
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else {
      b = static_cast<std::uint8_t*>(::operator new(bytes_, kBufferAlign, std::nothrow));
      if (b == nullptr) {
        ++refused_;
        return nullptr;
      }
      std::memset(b, 0, bytes_);
      ++allocated_;
    }
    ++alive_;
    ++requested_;
    size = bytes_;
    return b;
  }
  void give(std::uint8_t* b, std::size_t size) {
    if (b == nullptr) return;
    std::lock_guard lock(mu_);
    if (alive_ > 0) --alive_;
    if (size != bytes_ || bytes_ == 0) {  // from an earlier configuration
      ::operator delete(b, kBufferAlign);
      return;
    }
    std::memset(b, 0, size);
    free_.push_back(b);
  }
  // Frees the idle buffers (those CUPTI still holds are freed when it returns them).
  void releaseIdle() {
    std::lock_guard lock(mu_);
    releaseFree();
  }
  void counts(CuptiTracerStats& s) const {
    std::lock_guard lock(mu_);
    s.buffers_allocated = allocated_;
    s.buffers_requested = requested_;
    s.buffers_refused = refused_;
  }

 private:
  void releaseFree() {
    for (std::uint8_t* b : free_) ::operator delete(b, kBufferAlign);
    free_.clear();
  }
  mutable std::mutex mu_;
  std::vector<std::uint8_t*> free_;
  std::size_t bytes_ = 0, max_alive_ = 0, alive_ = 0;
  std::uint64_t allocated_ = 0, requested_ = 0, refused_ = 0;
};

BufferPool& pool() {
  // Leaked on purpose: CUPTI may hand buffers back while the process exits,
  // after function-local statics are destroyed.
  static BufferPool* p = new BufferPool;
  return *p;
}

// The tracer whose collector takes completed buffers (null: none); g_mu
// guards it and its collector, so a stopping tracer never loses a buffer
// that is being read.
std::mutex g_mu;
CuptiTracer::Impl* g_active = nullptr;
std::atomic<bool> g_claimed{false};  // one tracer per process

// CUpti_SubscriberHandle's callback: nothing is enabled on it; the
// subscription only claims CUPTI, so that a second tool is told and refused.
void CUPTIAPI noCallbacks(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// The steady clock's offset from CUPTI's, from the narrowest of a few brackets.
struct ClockSample {
  ClockMapping::Sample sample;
  std::int64_t uncertainty_ns = 0;
};
ClockSample sampleClock() {
  ClockSample best;
  std::int64_t best_width = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 9; ++i) {
    std::uint64_t c = 0;
    const std::int64_t t0 = traceNowNs();
    if (cuptiGetTimestamp(&c) != CUPTI_SUCCESS) continue;
    const std::int64_t t1 = traceNowNs();
    if (t1 - t0 >= best_width) continue;
    best_width = t1 - t0;
    const auto cupti = static_cast<std::int64_t>(c);
    best.sample = {cupti, t0 + (t1 - t0) / 2 - cupti};
    best.uncertainty_ns = (t1 - t0 + 1) / 2;
  }
  return best;
}

std::string apiCallbackName(GpuActivity::Kind api, std::uint32_t cbid) {
  const char* name = nullptr;
  const CUpti_CallbackDomain domain =
      api == GpuActivity::Kind::Driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) return {};
  return name;
}

// The file libcupti was loaded from (for NVTX_INJECTION64_PATH).
std::string cuptiLibraryPath() {
  Dl_info info{};
  // dladdr takes the function's address as data; POSIX guarantees the conversion.
  if (dladdr(reinterpret_cast<const void*>(&cuptiGetVersion), &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

// Whether the CUDA driver library is there at all (CUPTI's errors without it
// are unspecific: CUPTI_ERROR_UNKNOWN from its first call).
bool driverPresent() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) h = dlopen("libcuda.so.1", RTLD_LAZY);
  if (h == nullptr) return false;
  dlclose(h);
  return true;
}

}  // namespace

struct CuptiTracer::Impl {
  CuptiTracerOptions options;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled;
  std::atomic<bool> running{false};  // read by the threads that push phases

  // Guarded by g_mu.
  ActivityCollector collector{apiCallbackName};
  std::uint64_t buffer_errors = 0;

  std::atomic<std::uint64_t> phase_errors{0};
  ClockMapping clock;
  std::int64_t clock_uncertainty_ns = 0;
  std::string nvtx_injection;
  std::uint32_t cupti_version = 0;
  std::vector<std::string> notes;

  // A completed buffer's records (g_mu held).
  void collect(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t valid) {
    CUpti_Activity* record = nullptr;
    for (;;) {
      const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the end of the buffer
      if (r != CUPTI_SUCCESS) {
        ++buffer_errors;
        break;
      }
      collector.add(record);
    }
    collector.bufferDone(valid);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped > 0)
      collector.addDropped(dropped);
  }

  // Disables the record kinds this tracer enabled.
  void disableKinds() {
    for (auto it = enabled.rbegin(); it != enabled.rend(); ++it) (void)cuptiActivityDisable(*it);
    enabled.clear();
  }
  // Undoes what start() did so far (also the end of stop()); `flush` takes
  // back the buffers CUPTI holds (their records are not collected).
  void release(bool flush) {
    disableKinds();
    if (flush) (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (subscriber != nullptr) (void)cuptiUnsubscribe(subscriber);
    subscriber = nullptr;
    pool().releaseIdle();
    g_claimed.store(false);
  }

  [[nodiscard]] core::Status enableKinds();
  [[nodiscard]] core::Status subscribe();
  void injectNvtx();
};

namespace {

void CUPTIAPI bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *max_records = 0;  // as many as fit
  *buffer = pool().get(*size);
}

void CUPTIAPI bufferCompleted(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                              std::size_t valid) {
  {
    std::lock_guard lock(g_mu);
    if (g_active != nullptr && buffer != nullptr) g_active->collect(context, stream, buffer, valid);
  }
  pool().give(buffer, size);
}

}  // namespace

core::Status CuptiTracer::Impl::subscribe() {
  char old_name[256] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "ShardScope";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name);
  const CUptiResult r = cuptiSubscribe_v2(&subscriber, noCallbacks, nullptr, &params);
  if (r == CUPTI_SUCCESS) return core::Ok{};
  subscriber = nullptr;
  core::Error e = failed("cuptiSubscribe_v2", r);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && old_name[0] != '\0')
    e.message += " (CUPTI's current subscriber: \"" + std::string(old_name) + "\")";
  return e;
}

core::Status CuptiTracer::Impl::enableKinds() {
  struct Want {
    CUpti_ActivityKind kind;
    const char* name;
    bool wanted, required;
  };
  const Want wants[] = {
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", true, true},
      {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", true, true},
      {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", true, true},
      {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", true, true},
      {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", true, true},  // external ids come with API records
      {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", true, true},    // NCCL launches through the driver API
      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", options.synchronization, false},
      {CUPTI_ACTIVITY_KIND_MARKER, "MARKER", options.nvtx, false},
      {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD", options.overhead, false},
  };
  for (const Want& w : wants) {
    if (!w.wanted) continue;
    const CUptiResult r = cuptiActivityEnable(w.kind);
    if (r == CUPTI_SUCCESS) {
      enabled.push_back(w.kind);
      continue;
    }
    const std::string call = std::string("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_") + w.name + ")";
    if (w.required) return failed(call, r);
    notes.push_back(failed(call, r).message);
  }
  return core::Ok{};
}

void CuptiTracer::Impl::injectNvtx() {
  if (const char* set = std::getenv(kNvtxInjectionVar); set != nullptr && set[0] != '\0') {
    nvtx_injection = set;
    return;
  }
  const std::string path = cuptiLibraryPath();
  if (path.empty()) {
    notes.push_back("NVTX ranges are not recorded: the path of libcupti is unknown (set NVTX_INJECTION64_PATH)");
    return;
  }
  // Read by each NVTX copy at its first call; later calls of this process see it.
  if (setenv(kNvtxInjectionVar, path.c_str(), 0) != 0) {
    notes.push_back("NVTX ranges are not recorded: setting NVTX_INJECTION64_PATH failed");
    return;
  }
  nvtx_injection = path;
}

core::Result<std::unique_ptr<CuptiTracer>> CuptiTracer::start(const CuptiTracerOptions& options) {
  if (options.buffer_bytes < kMinBufferBytes || options.buffer_bytes % 8 != 0)
    return core::Error{"CUPTI tracer: buffer_bytes must be a multiple of 8 and at least 64 KiB, not " +
                           std::to_string(options.buffer_bytes),
                       core::ErrorKind::Usage};
  if (options.max_buffers == 0)
    return core::Error{"CUPTI tracer: max_buffers must be at least 1", core::ErrorKind::Usage};
  if (g_claimed.exchange(true))
    return core::Error{"CUPTI tracer: one already runs in this process (CUPTI has one set of activity callbacks)",
                       core::ErrorKind::Internal};

  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const auto fail = [&impl](core::Error e) -> core::Error {
    {
      std::lock_guard lock(g_mu);
      if (g_active == impl.get()) g_active = nullptr;
    }
    impl->release(true);
    e.message = "CUPTI tracing could not start: " + e.message;
    if (!driverPresent()) e.message += " (no NVIDIA driver, libcuda.so.1, on this machine)";
    return e;
  };

  if (const CUptiResult r = cuptiGetVersion(&impl->cupti_version); r != CUPTI_SUCCESS)
    return fail(failed("cuptiGetVersion", r));
  if (impl->cupti_version / 10000 != CUPTI_API_VERSION / 10000)
    return fail(core::Error{"the loaded libcupti has API version " + std::to_string(impl->cupti_version) +
                                ", this build reads the records of CUPTI " + std::to_string(CUPTI_API_VERSION / 10000) +
                                " (CUPTI_API_VERSION " + std::to_string(CUPTI_API_VERSION) +
                                "): use the CUDA toolkit it was built with",
                            core::ErrorKind::Io});
  if (auto st = impl->subscribe(); !st) return fail(st.error());

  pool().configure(options.buffer_bytes, options.max_buffers);
  std::uint8_t zeroed = 1;
  std::size_t zeroed_size = sizeof(zeroed);
  if (const CUptiResult r =
          cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size, &zeroed);
      r != CUPTI_SUCCESS)
    impl->notes.push_back(failed("cuptiActivitySetAttribute(ZEROED_OUT_ACTIVITY_BUFFER)", r).message);
  if (const CUptiResult r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted); r != CUPTI_SUCCESS)
    return fail(failed("cuptiActivityRegisterCallbacks", r));
  {
    std::lock_guard lock(g_mu);
    g_active = impl.get();
  }
  if (auto st = impl->enableKinds(); !st) return fail(st.error());
  if (options.nvtx) impl->injectNvtx();
  if (options.flush_period_ms > 0) {
    if (const CUptiResult r = cuptiActivityFlushPeriod(options.flush_period_ms); r != CUPTI_SUCCESS)
      impl->notes.push_back(failed("cuptiActivityFlushPeriod", r).message);
  }
  const ClockSample c = sampleClock();
  impl->clock = ClockMapping{c.sample, {}, false};
  impl->clock_uncertainty_ns = c.uncertainty_ns;
  impl->running = true;
  return std::unique_ptr<CuptiTracer>(new CuptiTracer(std::move(impl)));
}

CuptiTracer::CuptiTracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CuptiTracer::~CuptiTracer() {
  if (impl_ && impl_->running) (void)stop();
}

bool CuptiTracer::running() const { return impl_->running; }

void CuptiTracer::pushPhase(std::uint64_t external_id) {
  if (!impl_->running) return;
  if (cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, external_id) != CUPTI_SUCCESS)
    impl_->phase_errors.fetch_add(1, std::memory_order_relaxed);
}

void CuptiTracer::popPhase() {
  if (!impl_->running) return;
  std::uint64_t last = 0;
  if (cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) != CUPTI_SUCCESS)
    impl_->phase_errors.fetch_add(1, std::memory_order_relaxed);
}

core::Status CuptiTracer::flush() {
  if (!impl_->running) return core::Ok{};  // stop() flushed
  // Not under g_mu: the flush delivers buffers through bufferCompleted, which takes it.
  if (const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    return failed("cuptiActivityFlushAll", r);
  return core::Ok{};
}

core::Result<ActivityTrace> CuptiTracer::take() {
  if (auto st = flush(); !st) return st.error();
  std::lock_guard lock(g_mu);
  return impl_->collector.finish();
}

CuptiTracerStats CuptiTracer::stats() const {
  CuptiTracerStats s;
  pool().counts(s);
  {
    std::lock_guard lock(g_mu);
    s.collector = impl_->collector.stats();
    s.buffer_errors = impl_->buffer_errors;
  }
  s.phase_errors = impl_->phase_errors.load(std::memory_order_relaxed);
  s.clock = impl_->clock;
  s.clock_uncertainty_ns = impl_->clock_uncertainty_ns;
  s.nvtx_injection = impl_->nvtx_injection;
  s.cupti_version = impl_->cupti_version;
  s.notes = impl_->notes;
  return s;
}

core::Status CuptiTracer::stop() {
  if (!impl_->running) return core::Ok{};
  impl_->running = false;
  impl_->disableKinds();
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const ClockSample c = sampleClock();
  impl_->clock.stop = c.sample;
  impl_->clock.has_stop = true;
  impl_->clock_uncertainty_ns = std::max(impl_->clock_uncertainty_ns, c.uncertainty_ns);
  {
    std::lock_guard lock(g_mu);
    if (g_active == impl_.get()) g_active = nullptr;
  }
  impl_->release(false);
  if (flushed != CUPTI_SUCCESS) return failed("cuptiActivityFlushAll", flushed);
  return core::Ok{};
}

void nvtxPush(const char* message) { nvtxRangePushA(message); }
void nvtxPop() { nvtxRangePop(); }

}  // namespace shardscope::profiler::cuda
