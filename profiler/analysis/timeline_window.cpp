// The timeline's window query: the store's spans of a window split into rows,
// items and sub-pixel density blocks (timeline_window.h).
#include "shardscope/profiler/analysis/timeline_window.h"

#include <algorithm>
#include <array>
#include <span>
#include <cctype>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace shardscope::profiler {

namespace {

namespace st = core::store;

// Exact products of a duration (< 2^63) and a pixel count (< 2^31).
__extension__ typedef unsigned __int128 Wide;

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

SpanClass kernelClassByName(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (contains(lower, "nccl")) {
    if (contains(lower, "alltoall") || contains(lower, "sendrecv") || contains(lower, "send") ||
        contains(lower, "recv")) {
      return SpanClass::AllToAll;
    }
    if (contains(lower, "reduce") || contains(lower, "allgather") || contains(lower, "broadcast")) {
      return SpanClass::AllReduce;
    }
    return SpanClass::Other;
  }
  if (contains(lower, "memcpy") || contains(lower, "memset")) {
    return SpanClass::Memcpy;
  }
  return SpanClass::Other;
}

// Classes by string id, so each kind (and each kernel name) is looked at once per window.
class ClassCache {
 public:
  explicit ClassCache(const st::StringTable& strings) : strings_(strings) {}

  SpanClass of(const st::Span& span) {
    const auto kindIt = byKind_.find(static_cast<std::int64_t>(span.kind));
    if (kindIt != byKind_.end()) {
      return kindIt->second;
    }
    const std::string_view kind = strings_.at(span.kind);
    if (kind != "kernel") {
      return byKind_.emplace(static_cast<std::int64_t>(span.kind), spanClassOf(kind)).first->second;
    }
    const auto nameIt = byKernelName_.find(static_cast<std::int64_t>(span.name));
    if (nameIt != byKernelName_.end()) {
      return nameIt->second;
    }
    const SpanClass cls = spanClassOf(kind, strings_.at(span.name));
    byKernelName_.emplace(static_cast<std::int64_t>(span.name), cls);
    return cls;
  }

 private:
  const st::StringTable& strings_;
  std::unordered_map<std::int64_t, SpanClass> byKind_;
  std::unordered_map<std::int64_t, SpanClass> byKernelName_;
};

// A span of the window with what the row split needs.
struct Placed {
  int rank = 0;
  bool stepRow = false;
  int stream = 0;
  SpanClass cls = SpanClass::Other;
  const st::Span* span = nullptr;
};

// Rows by rank, the step row first within a rank, then by stream.
auto rowKey(const Placed& p) { return std::tuple{p.rank, !p.stepRow, p.stream}; }

// A total order on items, so the output does not depend on the store's row order.
auto itemKey(const TimelineItem& i) {
  return std::tuple{
      i.start_ns,    i.end_ns, static_cast<std::int64_t>(i.kind), static_cast<std::int64_t>(i.name), i.step, i.bytes,
      i.correlation, i.cls};
}

// Merges sub-pixel spans (columns already computed) into blocks, one per
// maximal run of consecutive occupied columns.
struct SubPixel {
  int first = 0;
  int last = 0;
  SpanClass cls = SpanClass::Other;
  const st::Span* span = nullptr;
};

std::vector<DensityBlock> mergeSubPixel(std::vector<SubPixel> spans) {
  std::sort(spans.begin(), spans.end(), [](const SubPixel& a, const SubPixel& b) { return a.first < b.first; });
  std::vector<DensityBlock> blocks;
  // Per class: (busy ns, spans). The most busy class wins, then the one with
  // more spans (a block of instants), then the class listed first.
  std::array<std::pair<std::int64_t, std::int64_t>, kSpanClassCount> weight{};
  const auto close = [&] {
    const auto top = std::max_element(weight.begin(), weight.end());
    blocks.back().dominant = static_cast<SpanClass>(top - weight.begin());
    weight.fill({0, 0});
  };
  for (const SubPixel& s : spans) {
    const std::int64_t dur = s.span->end_ns - s.span->start_ns;
    if (blocks.empty() || s.first > blocks.back().last_pixel + 1) {
      if (!blocks.empty()) {
        close();
      }
      blocks.push_back(DensityBlock{s.first, s.last, s.span->start_ns, s.span->end_ns, 0, 0, SpanClass::Other});
    }
    DensityBlock& b = blocks.back();
    b.last_pixel = std::max(b.last_pixel, s.last);
    b.start_ns = std::min(b.start_ns, s.span->start_ns);
    b.end_ns = std::max(b.end_ns, s.span->end_ns);
    b.count += 1;
    b.busy_ns += dur;
    auto& w = weight[static_cast<std::size_t>(s.cls)];
    w.first += dur;
    w.second += 1;
  }
  if (!blocks.empty()) {
    close();
  }
  return blocks;
}

// One row from its spans (one row key, in the store's start order).
TimelineRow buildRow(std::span<const Placed> spans, const TimelineRequest& req) {
  TimelineRow row;
  row.rank = spans.front().rank;
  row.stream = spans.front().stepRow ? kStepRowStream : spans.front().stream;
  const auto width = static_cast<Wide>(static_cast<std::uint64_t>(req.t1_ns) - static_cast<std::uint64_t>(req.t0_ns));
  std::vector<SubPixel> subPixel;
  for (const Placed& p : spans) {
    const st::Span& s = *p.span;
    const auto dur = static_cast<std::uint64_t>(s.end_ns - s.start_ns);
    if (static_cast<Wide>(dur) * static_cast<Wide>(req.pixels) >= width) {
      row.items.push_back(TimelineItem{s.start_ns, s.end_ns, p.cls, s.kind, s.name, s.step, s.bytes, s.correlation});
      continue;
    }
    const int first = pixelColumn(s.start_ns, req.t0_ns, req.t1_ns, req.pixels);
    // [start, end) covers the column of its last nanosecond; an instant, its own column.
    const int last = s.end_ns > s.start_ns ? pixelColumn(s.end_ns - 1, req.t0_ns, req.t1_ns, req.pixels) : first;
    subPixel.push_back(SubPixel{first, last, p.cls, &s});
  }
  std::sort(row.items.begin(), row.items.end(),
            [](const TimelineItem& a, const TimelineItem& b) { return itemKey(a) < itemKey(b); });
  row.blocks = mergeSubPixel(std::move(subPixel));
  return row;
}

}  // namespace

std::string_view toString(SpanClass cls) {
  switch (cls) {
    case SpanClass::EmbeddingForward:
      return "embedding forward";
    case SpanClass::EmbeddingBackward:
      return "embedding backward";
    case SpanClass::AllToAll:
      return "all-to-all";
    case SpanClass::ReplicaSync:
      return "replica sync";
    case SpanClass::AllReduce:
      return "all-reduce";
    case SpanClass::Dense:
      return "dense";
    case SpanClass::Memcpy:
      return "memcpy";
    case SpanClass::Input:
      return "input";
    case SpanClass::Step:
      return "step";
    case SpanClass::Other:
      return "other";
  }
  return "other";
}

SpanClass spanClassOf(std::string_view kind, std::string_view name) {
  struct Entry {
    std::string_view kind;
    SpanClass cls;
  };
  // Engine kinds (engine_trace.h span_kind), the importer's collective and
  // memory kinds (docs/formats/import-trace.md), and collective op names.
  static constexpr std::array<Entry, 22> kByKind{{
      {"emb_fwd", SpanClass::EmbeddingForward},
      {"emb_bwd", SpanClass::EmbeddingBackward},
      {"a2a_ids", SpanClass::AllToAll},
      {"a2a_pooled", SpanClass::AllToAll},
      {"a2a_grads", SpanClass::AllToAll},
      {"all_to_all", SpanClass::AllToAll},
      {"send_recv", SpanClass::AllToAll},
      {"replica_sync", SpanClass::ReplicaSync},
      {"dense_allreduce", SpanClass::AllReduce},
      {"dp_allreduce", SpanClass::AllReduce},
      {"all_reduce", SpanClass::AllReduce},
      {"reduce_scatter", SpanClass::AllReduce},
      {"all_gather", SpanClass::AllReduce},
      {"broadcast", SpanClass::AllReduce},
      {"reduce", SpanClass::AllReduce},
      {"dense", SpanClass::Dense},
      {"memcpy", SpanClass::Memcpy},
      {"memset", SpanClass::Memcpy},
      {"memory", SpanClass::Memcpy},
      {"input", SpanClass::Input},
      {"step", SpanClass::Step},
      {"kernel", SpanClass::Other},
  }};
  for (const Entry& e : kByKind) {
    if (e.kind == kind) {
      return kind == "kernel" ? kernelClassByName(name) : e.cls;
    }
  }
  return SpanClass::Other;
}

int pixelColumn(std::int64_t t, std::int64_t t0_ns, std::int64_t t1_ns, int pixels) {
  if (t <= t0_ns || pixels <= 0 || t1_ns <= t0_ns) {
    return 0;
  }
  if (t >= t1_ns) {
    return pixels - 1;
  }
  // Unsigned differences: t1 - t0 can exceed INT64_MAX for extreme windows.
  const auto offset = static_cast<Wide>(static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(t0_ns));
  const auto width = static_cast<Wide>(static_cast<std::uint64_t>(t1_ns) - static_cast<std::uint64_t>(t0_ns));
  return static_cast<int>(offset * static_cast<Wide>(pixels) / width);
}

core::Result<TimelineWindow> timelineWindow(const st::TraceStore& store, const st::StringTable& strings,
                                            const TimelineRequest& request) {
  if (request.pixels <= 0) {
    return core::Error{
        "timeline window: the view's width must be at least one pixel, got " + std::to_string(request.pixels),
        core::ErrorKind::Usage};
  }
  if (request.t1_ns <= request.t0_ns) {
    return core::Error{"timeline window: the end (" + std::to_string(request.t1_ns) + " ns) must be after the start (" +
                           std::to_string(request.t0_ns) + " ns)",
                       core::ErrorKind::Usage};
  }
  if (auto run = store.run(request.run); !run) {
    return run.error();
  }
  // A rank asked for twice would get its spans twice.
  std::vector<int> ranks = request.ranks;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  // spansInWindow also returns the spans that start before t0 and end after
  // it: it looks back from t0 by the widest span block of each rank (the
  // writer keeps max_block_ns per rank in span_extent, and a block's extent
  // bounds every span in it), then filters spans by overlap, not by start.
  auto spans = store.spansInWindow(request.run, ranks, request.t0_ns, request.t1_ns);
  if (!spans) {
    return spans.error();
  }
  ClassCache classes(strings);
  std::vector<Placed> placed;
  placed.reserve(spans->size());
  for (const st::Span& s : *spans) {
    const SpanClass cls = classes.of(s);
    placed.push_back(Placed{s.rank, cls == SpanClass::Step, s.stream, cls, &s});
  }
  // Stable: within a row, spans keep the store's (start) order; items are re-sorted by a total key anyway.
  std::stable_sort(placed.begin(), placed.end(),
                   [](const Placed& a, const Placed& b) { return rowKey(a) < rowKey(b); });
  TimelineWindow window;
  window.t0_ns = request.t0_ns;
  window.t1_ns = request.t1_ns;
  window.pixels = request.pixels;
  window.span_count = static_cast<std::int64_t>(placed.size());
  for (std::size_t begin = 0; begin < placed.size();) {
    std::size_t end = begin + 1;
    while (end < placed.size() && rowKey(placed[end]) == rowKey(placed[begin])) {
      ++end;
    }
    window.rows.push_back(buildRow(std::span<const Placed>(placed).subspan(begin, end - begin), request));
    begin = end;
  }
  return window;
}

core::Result<TimelineWindow> timelineWindow(const st::TraceStore& store, const TimelineRequest& request) {
  auto strings = store.strings();
  if (!strings) {
    return strings.error();
  }
  return timelineWindow(store, *strings, request);
}

}  // namespace shardscope::profiler
