#include "cupti_spans.h"

#include "shardscope/profiler/cuda/cupti_tracer.h"

namespace shardscope::profiler::cuda {

namespace {

struct DecodedId {
  int rank = -1;
  std::int64_t step = -1;
  std::uint32_t phase = 0;
};

// The inverse of externalId(): (rank + 1) << 40 | (step + 1) << 8 | phase.
DecodedId decode(std::uint64_t id) {
  DecodedId d;
  d.rank = static_cast<int>(id >> 40) - 1;
  d.step = static_cast<std::int64_t>((id >> 8) & 0xFFFFFFFFULL) - 1;
  d.phase = static_cast<std::uint32_t>(id & 0xFF);
  return d;
}

}  // namespace

CuptiSession::CuptiSession() = default;

CuptiSession::~CuptiSession() {
  if (tracer_ && tracer_->running()) (void)tracer_->stop();
}

core::Status CuptiSession::start() {
  if (tracer_) return core::Ok{};
  auto tracer = CuptiTracer::start();
  if (!tracer) return tracer.error();
  tracer_ = std::move(*tracer);
  return core::Ok{};
}

PhaseHooks CuptiSession::hooks() {
  PhaseHooks h;
  h.ctx = this;
  h.push = [](void* ctx, std::uint64_t id) {
    auto* s = static_cast<CuptiSession*>(ctx);
    if (s->tracer_) s->tracer_->pushPhase(id);
  };
  h.pop = [](void* ctx) {
    auto* s = static_cast<CuptiSession*>(ctx);
    if (s->tracer_) s->tracer_->popPhase();
  };
  return h;
}

core::Status CuptiSession::finish(TraceRecorder& rec, const std::vector<int>& rank_of_device, GpuTracing& figures) {
  figures.cupti = tracer_ != nullptr;
  if (!tracer_) return core::Ok{};
  if (auto st = tracer_->stop(); !st) return st;
  auto trace = tracer_->take();
  if (!trace) return trace.error();
  const CuptiTracerStats stats = tracer_->stats();
  figures.records = stats.collector.records;
  figures.dropped_records = stats.collector.dropped;
  figures.buffers = stats.buffers_allocated;
  figures.buffer_bytes = stats.collector.buffer_bytes;
  for (const std::string& n : stats.notes) figures.note += (figures.note.empty() ? "" : "; ") + n;

  const auto rankOf = [&rank_of_device](const GpuActivity& a) {
    if (a.external_id != 0) return decode(a.external_id).rank;
    return a.device < rank_of_device.size() ? rank_of_device[a.device] : -1;
  };
  std::vector<int> ranks;
  for (int r : rank_of_device)
    if (r >= 0) ranks.push_back(r);
  for (const int rank : ranks) {
    SpanOptions o;
    o.rank = rank;
    o.clock = stats.clock;
    // GPU records keep their own kinds (kernel, memcpy, memset, NCCL's op) and take the phase's step:
    // the phase itself is the engine's span on streams 0 and 1 around them, so that no phase time
    // counts twice (analysis sums emb_fwd / emb_bwd spans by kind).
    o.phase = [](std::uint64_t id) -> std::optional<PhaseInfo> {
      const DecodedId d = decode(id);
      if (d.phase == 0 || d.phase >= kPhaseCount) return std::nullopt;
      return PhaseInfo{std::string_view(), d.step};
    };
    o.select = [&rankOf, rank](const GpuActivity& a) { return rankOf(a) == rank; };
    const GpuSpans spans = gpuSpans(*trace, o, rec);
    for (const TraceRecorder::SpanRec& s : spans.spans) rec.span(s);
    refineCollectives(rec, rank, spans.spans);
  }
  tracer_.reset();
  return core::Ok{};
}

}  // namespace shardscope::profiler::cuda
