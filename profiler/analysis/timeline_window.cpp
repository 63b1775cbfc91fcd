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

void sortItems(std::vector<TimelineItem>& items) {
  const auto byKey = [](const TimelineItem& a, const TimelineItem& b) { return itemKey(a) < itemKey(b); };
  if (!std::is_sorted(items.begin(), items.end(), byKey)) std::sort(items.begin(), items.end(), byKey);
}

// Per class: (busy ns, spans). The most busy class wins, then the one with
// more spans (a block of instants), then the class listed first.
using ClassWeights = std::array<std::pair<std::int64_t, std::int64_t>, kSpanClassCount>;

// Sub-pixel spans, or a run of summary buckets, over columns [first, last]
// of a row: one span's class, or (cls < 0) the weights multi[multi].
struct Piece {
  int first = 0;
  int last = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t count = 0;
  std::int64_t busy_ns = 0;
  int cls = 0;
  std::size_t multi = 0;
};

// Merges pieces into blocks, one per maximal run of consecutive occupied columns.
std::vector<DensityBlock> mergePieces(const std::vector<Piece>& pieces, const std::vector<ClassWeights>& multi,
                                      int pixels) {
  // Marks the columns the pieces cover (a difference array), makes a block of
  // each run of covered columns, then adds each piece to the block of its
  // first column: no sort, whatever order the pieces come in.
  std::vector<int> at(static_cast<std::size_t>(pixels) + 1, 0);
  for (const Piece& p : pieces) {
    ++at[static_cast<std::size_t>(p.first)];
    --at[static_cast<std::size_t>(p.last) + 1];
  }
  std::vector<DensityBlock> blocks;
  for (int c = 0, covering = 0; c < pixels; ++c) {
    covering += at[static_cast<std::size_t>(c)];
    if (covering == 0) continue;
    if (blocks.empty() || blocks.back().last_pixel != c - 1) {
      blocks.push_back(DensityBlock{c, c, INT64_MAX, INT64_MIN, 0, 0, SpanClass::Other});
    }
    blocks.back().last_pixel = c;
    at[static_cast<std::size_t>(c)] = static_cast<int>(blocks.size()) - 1;  // read above, now the block
  }
  std::vector<ClassWeights> weights(blocks.size(), ClassWeights{});
  for (const Piece& p : pieces) {
    const auto k = static_cast<std::size_t>(at[static_cast<std::size_t>(p.first)]);
    DensityBlock& b = blocks[k];
    b.start_ns = std::min(b.start_ns, p.start_ns);
    b.end_ns = std::max(b.end_ns, p.end_ns);
    b.count += p.count;
    b.busy_ns += p.busy_ns;
    ClassWeights& w = weights[k];
    if (p.cls >= 0) {
      w[static_cast<std::size_t>(p.cls)].first += p.busy_ns;
      w[static_cast<std::size_t>(p.cls)].second += p.count;
    } else {
      for (std::size_t c = 0; c < kSpanClassCount; ++c) {
        w[c].first += multi[p.multi][c].first;
        w[c].second += multi[p.multi][c].second;
      }
    }
  }
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    blocks[k].dominant =
        static_cast<SpanClass>(std::max_element(weights[k].begin(), weights[k].end()) - weights[k].begin());
  }
  return blocks;
}

// The first nanosecond of each pixel column of a window, relative to its
// start: exact columns (as pixelColumn) from a floating-point guess and a
// comparison or two, not a 128-bit division per span. Shared by the ranks'
// windows, which differ only by their offsets.
class ColumnScale {
 public:
  ColumnScale(std::uint64_t width, int pixels)
      : width_(width), pixels_(pixels), perNs_(static_cast<double>(pixels) / static_cast<double>(width)) {
    starts_.reserve(static_cast<std::size_t>(pixels) + 1);
    for (int c = 0; c <= pixels; ++c) {
      // ceil(c * width / pixels): the first offset whose column is c.
      const Wide num = static_cast<Wide>(c) * static_cast<Wide>(width) + static_cast<Wide>(pixels - 1);
      starts_.push_back(static_cast<std::uint64_t>(num / static_cast<Wide>(pixels)));
    }
  }

  [[nodiscard]] int of(std::uint64_t offset) const {
    if (offset >= width_) {
      return pixels_ - 1;
    }
    int c = std::clamp(static_cast<int>(static_cast<double>(offset) * perNs_), 0, pixels_ - 1);
    while (starts_[static_cast<std::size_t>(c) + 1] <= offset) {
      ++c;
    }
    while (starts_[static_cast<std::size_t>(c)] > offset) {
      --c;
    }
    return c;
  }
  [[nodiscard]] std::uint64_t width() const { return width_; }
  [[nodiscard]] int pixels() const { return pixels_; }

 private:
  std::uint64_t width_;
  int pixels_;
  double perNs_;
  std::vector<std::uint64_t> starts_;
};

// One rank's window, for pixel columns.
struct Columns {
  std::int64_t t0_ns = 0;
  const ColumnScale* scale = nullptr;

  [[nodiscard]] int of(std::int64_t t) const {
    return t <= t0_ns ? 0 : scale->of(static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(t0_ns));
  }
  [[nodiscard]] bool wide(const st::Span& s) const {
    const auto dur = static_cast<std::uint64_t>(s.end_ns) - static_cast<std::uint64_t>(s.start_ns);
    return static_cast<Wide>(dur) * static_cast<Wide>(scale->pixels()) >= static_cast<Wide>(scale->width());
  }
  // A sub-pixel span: [start, end) covers the column of its last nanosecond; an instant, its own column.
  [[nodiscard]] Piece piece(const st::Span& s, SpanClass cls) const {
    const int first = of(s.start_ns);
    const int last = s.end_ns > s.start_ns ? of(s.end_ns - 1) : first;
    return Piece{first, last, s.start_ns, s.end_ns, 1, s.end_ns - s.start_ns, static_cast<int>(cls), 0};
  }
};

TimelineItem itemOf(const st::Span& s, SpanClass cls) {
  return TimelineItem{s.start_ns, s.end_ns, cls, s.kind, s.name, s.step, s.bytes, s.correlation};
}

// One row from its spans (one row key, in the store's start order).
TimelineRow buildRow(std::span<const Placed> spans, const Columns& columns) {
  TimelineRow row;
  row.rank = spans.front().rank;
  row.stream = spans.front().stepRow ? kStepRowStream : spans.front().stream;
  std::vector<Piece> pieces;
  for (const Placed& p : spans) {
    if (columns.wide(*p.span)) {
      row.items.push_back(itemOf(*p.span, p.cls));
    } else {
      pieces.push_back(columns.piece(*p.span, p.cls));
    }
  }
  sortItems(row.items);
  row.blocks = mergePieces(pieces, {}, columns.scale->pixels());
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
  // Engine kinds (trace_recorder.h span_kind), the importer's collective and
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

namespace {

// Windows holding fewer spans than this (estimated) are read from the spans
// even when summaries exist: that is as fast (docs/timeline.md).
constexpr std::int64_t kSummaryMinWindowSpans = 16'384;

core::Error usage(std::string message) {
  return core::Error{"timeline window: " + std::move(message), core::ErrorKind::Usage};
}

// Each requested rank's window, by rank (every rank of the run when none
// are named); a rank named twice is asked once.
core::Result<std::vector<st::RankWindow>> rankWindows(const TimelineRequest& r,
                                                      const std::vector<st::SpanExtent>& extents) {
  if (!r.offsets_ns.empty() && r.offsets_ns.size() != r.ranks.size()) {
    return usage("offsets_ns has " + std::to_string(r.offsets_ns.size()) + " entries for " +
                 std::to_string(r.ranks.size()) + " ranks; give one per rank, or none");
  }
  std::vector<st::RankWindow> windows;
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const std::int64_t off = r.offsets_ns.empty() ? 0 : r.offsets_ns[i];
    st::RankWindow w{r.ranks[i], 0, 0};
    if (__builtin_add_overflow(r.t0_ns, off, &w.t0_ns) || __builtin_add_overflow(r.t1_ns, off, &w.t1_ns)) {
      return usage("rank " + std::to_string(r.ranks[i]) + "'s offset " + std::to_string(off) +
                   " ns moves its window past the range of time");
    }
    windows.push_back(w);
  }
  if (r.ranks.empty()) {
    for (const st::SpanExtent& e : extents) windows.push_back({e.rank, r.t0_ns, r.t1_ns});
  }
  std::stable_sort(windows.begin(), windows.end(),
                   [](const st::RankWindow& a, const st::RankWindow& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < windows.size(); ++i) {
    if (windows[i].rank == windows[i - 1].rank && windows[i] != windows[i - 1]) {
      return usage("rank " + std::to_string(windows[i].rank) + " is given twice with different offsets");
    }
  }
  windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
  return windows;
}

// Spans in the windows if each rank's spans were spread evenly over its extent.
std::int64_t estimateSpans(const std::vector<st::RankWindow>& windows, const std::vector<st::SpanExtent>& extents) {
  Wide total = 0;
  for (const st::RankWindow& w : windows) {
    const auto e = std::find_if(extents.begin(), extents.end(), [&](const auto& x) { return x.rank == w.rank; });
    if (e == extents.end() || e->span_count <= 0) continue;
    const std::int64_t lo = std::max(w.t0_ns, e->min_start_ns);
    const std::int64_t hi = std::min(w.t1_ns, e->max_end_ns);
    if (hi <= lo) continue;
    const auto extent = static_cast<std::uint64_t>(e->max_end_ns) - static_cast<std::uint64_t>(e->min_start_ns);
    const auto overlap = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    total += static_cast<Wide>(e->span_count) * overlap / std::max<std::uint64_t>(extent, 1);
  }
  return static_cast<std::int64_t>(std::min<Wide>(total, Wide{INT64_MAX}));
}

std::uint64_t windowWidth(const TimelineRequest& r) {
  return static_cast<std::uint64_t>(r.t1_ns) - static_cast<std::uint64_t>(r.t0_ns);
}

// The coarsest level that keeps every span a pixel wide whole (its whole
// threshold, half its bucket width, is at most a pixel), or -1.
int summaryLevelFor(const st::SpanSummaryInfo& info, const TimelineRequest& r) {
  const std::uint64_t pixelNs = windowWidth(r) / static_cast<std::uint64_t>(r.pixels);
  int level = -1;
  for (const int l : info.levels) {
    if (static_cast<std::uint64_t>(st::summaryWholeNs(l)) <= pixelNs) level = std::max(level, l);
  }
  return level;
}

// The window from the spans themselves.
core::Result<TimelineWindow> rawWindow(const st::TraceStore& store, const st::StringTable& strings,
                                       const TimelineRequest& request, const std::vector<st::RankWindow>& windows) {
  // spansInRankWindows also returns the spans that start before t0 and end
  // after it: it looks back from t0 by the widest span block of each rank
  // (the writer keeps max_block_ns per rank in span_extent, and a block's
  // extent bounds every span in it), then filters spans by overlap, not by start.
  auto spans = store.spansInRankWindows(request.run, windows);
  if (!spans) {
    return spans.error();
  }
  SpanClassCache classes(strings);
  std::vector<Placed> placed;
  placed.reserve(spans->size());
  for (const st::Span& s : *spans) {
    const SpanClass cls = classes.of(s);
    placed.push_back(Placed{s.rank, cls == SpanClass::Step, s.stream, cls, &s});
  }
  // Stable: within a row, spans keep the store's (start) order; items are re-sorted by a total key anyway.
  std::stable_sort(placed.begin(), placed.end(),
                   [](const Placed& a, const Placed& b) { return rowKey(a) < rowKey(b); });
  TimelineWindow window{request.t0_ns, request.t1_ns, request.pixels, {}, static_cast<std::int64_t>(placed.size())};
  const ColumnScale scale(windowWidth(request), request.pixels);
  for (std::size_t begin = 0; begin < placed.size();) {
    std::size_t end = begin + 1;
    while (end < placed.size() && rowKey(placed[end]) == rowKey(placed[begin])) {
      ++end;
    }
    const auto w = std::lower_bound(windows.begin(), windows.end(), placed[begin].rank,
                                    [](const st::RankWindow& x, int rank) { return x.rank < rank; });
    const Columns columns{w->t0_ns, &scale};
    window.rows.push_back(buildRow(std::span<const Placed>(placed).subspan(begin, end - begin), columns));
    begin = end;
  }
  return window;
}

// A row being filled from summaries.
struct RowParts {
  bool stepRow = false;
  int stream = 0;
  std::vector<TimelineItem> items;
  std::vector<Piece> pieces;
};

// The rows of the requested ranks from a summary window: buckets as they
// are decoded, then the whole spans, steps and edge spans of each rank.
class SummaryRows final : public st::SummaryVisitor {
 public:
  SummaryRows(const TimelineRequest& request, const std::vector<st::RankWindow>& windows,
              const st::StringTable& strings)
      : windows_(windows), scale_(windowWidth(request), request.pixels), classes_(strings), rows_(windows.size()) {}

  // Buckets of a row come in time order (those near the window's ends after
  // the rest): each extends the row's last run of buckets while their
  // columns touch.
  void buckets(std::size_t w, int /*level*/, int stream, std::span<const st::SummaryBucket> buckets,
               std::span<const st::SummaryClassWeight> classes) override {
    RowParts& row = rowOf(w, false, stream);
    const Columns columns = columnsOf(w);
    for (const st::SummaryBucket& b : buckets) {
      const int first = columns.of(b.min_start_ns);
      const int last = columns.of(b.last_ns);
      const Piece* run = row.pieces.empty() || row.pieces.back().cls >= 0 ? nullptr : &row.pieces.back();
      if (run == nullptr || first < run->first || first > run->last + 1) {
        row.pieces.push_back(Piece{first, last, b.min_start_ns, b.max_end_ns, 0, 0, -1, multi_.size()});
        multi_.emplace_back();
      }
      Piece& p = row.pieces.back();
      p.last = std::max(p.last, last);
      p.start_ns = std::min(p.start_ns, b.min_start_ns);
      p.end_ns = std::max(p.end_ns, b.max_end_ns);
      p.count += b.count;
      p.busy_ns += b.busy_ns;
      ClassWeights& weights = multi_[p.multi];
      for (const st::SummaryClassWeight& c : classes.subspan(b.first_class, b.class_count)) {
        auto& weight = weights[static_cast<std::size_t>(classOf(c.cls))];
        weight.first += c.busy_ns;
        weight.second += c.count;
      }
    }
  }

  void spans(std::size_t w, std::span<const st::SummarySpan> spans) override {
    RowParts& row = rowOf(w, false, spans.front().span.stream);
    for (const st::SummarySpan& s : spans) place(w, row, s.span, classOf(s.cls));
  }

  void steps(std::size_t w, std::span<const st::SummarySpan> steps) override {
    RowParts& row = rowOf(w, true, kStepRowStream);
    for (const st::SummarySpan& s : steps) place(w, row, s.span, SpanClass::Step);
  }

  void edgeSpans(std::size_t w, std::span<const st::Span> spans) override {
    for (const st::Span& s : spans) {
      const SpanClass cls = classes_.of(s);
      if (cls != SpanClass::Step) place(w, rowOf(w, false, s.stream), s, cls);  // steps came whole
    }
  }

  std::vector<TimelineRow> finish(std::int64_t& spanCount) {
    std::vector<TimelineRow> out;
    for (std::size_t w = 0; w < rows_.size(); ++w) {
      std::sort(rows_[w].begin(), rows_[w].end(), [](const RowParts& a, const RowParts& b) {
        return std::pair{!a.stepRow, a.stream} < std::pair{!b.stepRow, b.stream};
      });
      for (RowParts& parts : rows_[w]) {
        if (parts.items.empty() && parts.pieces.empty()) continue;
        TimelineRow row{windows_[w].rank, parts.stepRow ? kStepRowStream : parts.stream, std::move(parts.items), {}};
        sortItems(row.items);
        row.blocks = mergePieces(parts.pieces, multi_, scale_.pixels());
        spanCount += static_cast<std::int64_t>(row.items.size());
        for (const DensityBlock& b : row.blocks) spanCount += b.count;
        out.push_back(std::move(row));
      }
    }
    return out;
  }

 private:
  [[nodiscard]] Columns columnsOf(std::size_t w) const { return {windows_[w].t0_ns, &scale_}; }
  static SpanClass classOf(int cls) {
    return cls >= 0 && cls < static_cast<int>(kSpanClassCount) ? static_cast<SpanClass>(cls) : SpanClass::Other;
  }
  // An item, or a sub-pixel piece; spans in start order whose columns touch
  // the row's last piece join it (fewer pieces to merge).
  void place(std::size_t w, RowParts& row, const st::Span& s, SpanClass cls) {
    const Columns columns = columnsOf(w);
    if (columns.wide(s)) {
      row.items.push_back(itemOf(s, cls));
      return;
    }
    const Piece p = columns.piece(s, cls);
    if (row.pieces.empty() || p.first < row.pieces.back().first || p.first > row.pieces.back().last + 1) {
      row.pieces.push_back(p);
      return;
    }
    Piece& run = row.pieces.back();
    if (run.cls >= 0 && run.cls != p.cls) {  // a second class: keep them apart in weights
      ClassWeights& weights = multi_.emplace_back();
      weights[static_cast<std::size_t>(run.cls)] = {run.busy_ns, run.count};
      run.cls = -1;
      run.multi = multi_.size() - 1;
    }
    if (run.cls < 0) {
      auto& weight = multi_[run.multi][static_cast<std::size_t>(p.cls)];
      weight.first += p.busy_ns;
      weight.second += p.count;
    }
    run.last = std::max(run.last, p.last);
    run.start_ns = std::min(run.start_ns, p.start_ns);
    run.end_ns = std::max(run.end_ns, p.end_ns);
    run.count += p.count;
    run.busy_ns += p.busy_ns;
  }
  RowParts& rowOf(std::size_t w, bool stepRow, int stream) {
    std::vector<RowParts>& rows = rows_[w];
    for (RowParts& r : rows) {
      if (r.stepRow == stepRow && r.stream == stream) return r;
    }
    rows.push_back(RowParts{stepRow, stream, {}, {}});
    return rows.back();
  }

  const std::vector<st::RankWindow>& windows_;
  ColumnScale scale_;
  SpanClassCache classes_;
  std::vector<std::vector<RowParts>> rows_;  // per window
  std::vector<ClassWeights> multi_;
};

core::Result<TimelineWindow> summaryWindow(const st::TraceStore& store, const st::StringTable& strings,
                                           const TimelineRequest& request, const std::vector<st::RankWindow>& windows,
                                           int level) {
  SummaryRows rows(request, windows, strings);
  const st::SummaryWindowRequest query{request.run, std::string(kTimelineSummaryTag), level, windows};
  if (auto s = store.summaryWindow(query, rows); !s) {
    return s.error();
  }
  TimelineWindow window{request.t0_ns, request.t1_ns, request.pixels, {}, 0, level, st::summaryLevelWidth(level)};
  window.rows = rows.finish(window.span_count);
  return window;
}

}  // namespace

core::Result<TimelineWindow> timelineWindow(const st::TraceStore& store, const st::StringTable& strings,
                                            const TimelineRequest& request) {
  if (request.pixels <= 0) {
    return usage("the view's width must be at least one pixel, got " + std::to_string(request.pixels));
  }
  if (request.t1_ns <= request.t0_ns) {
    return usage("the end (" + std::to_string(request.t1_ns) + " ns) must be after the start (" +
                 std::to_string(request.t0_ns) + " ns)");
  }
  if (auto run = store.run(request.run); !run) {
    return run.error();
  }
  auto extents = store.spanExtents(request.run);
  if (!extents) {
    return extents.error();
  }
  auto windows = rankWindows(request, *extents);
  if (!windows) {
    return windows.error();
  }
  if (!request.exact &&
      estimateSpans(*windows, *extents) > std::max<std::int64_t>(kSummaryMinWindowSpans, 4LL * request.pixels)) {
    auto info = store.currentSpanSummaries(request.run, kTimelineSummaryTag);
    if (!info) {
      return info.error();
    }
    if (*info) {
      if (const int level = summaryLevelFor(**info, request); level >= 0) {
        return summaryWindow(store, strings, request, *windows, level);
      }
    }
  }
  return rawWindow(store, strings, request, *windows);
}

core::Result<TimelineWindow> timelineWindow(const st::TraceStore& store, const TimelineRequest& request) {
  auto strings = store.strings();
  if (!strings) {
    return strings.error();
  }
  return timelineWindow(store, *strings, request);
}

core::Status buildTimelineSummaries(st::TraceStore& store, st::RunId run, const std::atomic<bool>* cancel,
                                    std::function<void(int done, int total)> progress) {
  auto strings = store.strings();
  if (!strings) {
    return strings.error();
  }
  st::SpanSummaryOptions options;
  options.classify = [&strings](st::StringId kind, st::StringId name) {
    return static_cast<int>(spanClassOf(strings->at(kind), strings->at(name)));
  };
  options.tag = std::string(kTimelineSummaryTag);
  options.step_class = static_cast<int>(SpanClass::Step);
  options.cancel = cancel;
  options.progress = std::move(progress);
  return store.buildSpanSummaries(run, options);
}

core::Result<bool> hasTimelineSummaries(const st::TraceStore& store, st::RunId run) {
  auto info = store.currentSpanSummaries(run, kTimelineSummaryTag);
  if (!info) {
    return info.error();
  }
  return info->has_value();
}

core::Result<std::vector<st::Span>> timelineStepSpans(const st::TraceStore& store, st::RunId run) {
  auto steps = store.summarySteps(run, kTimelineSummaryTag);
  if (!steps) {
    return steps.error();
  }
  std::vector<st::Span> out;
  out.reserve(steps->size());
  for (const st::SummarySpan& s : *steps) out.push_back(s.span);
  return out;
}

core::Result<bool> buildTimelineSummariesIfLarge(const std::filesystem::path& path, st::RunId run,
                                                 const std::atomic<bool>* cancel,
                                                 std::function<void(int done, int total)> progress) {
  auto store = st::openStore(path, st::OpenMode::ReadWrite);
  if (!store) {
    return store.error();
  }
  auto count = store->spanCount(run);
  if (!count) {
    return count.error();
  }
  if (*count <= kTimelineSummaryMinSpans) {
    return false;
  }
  if (auto s = buildTimelineSummaries(*store, run, cancel, std::move(progress)); !s) {
    return s.error();
  }
  return true;
}

SpanClass SpanClassCache::of(const st::Span& span) {
  const auto kind = static_cast<std::int64_t>(span.kind);
  if (const auto it = by_kind_.find(kind); it != by_kind_.end()) return it->second;
  const std::string_view text = strings_.at(span.kind);
  if (text != "kernel") return by_kind_.emplace(kind, spanClassOf(text)).first->second;
  const auto name = static_cast<std::int64_t>(span.name);
  if (const auto it = by_kernel_name_.find(name); it != by_kernel_name_.end()) return it->second;
  return by_kernel_name_.emplace(name, spanClassOf(text, strings_.at(span.name))).first->second;
}

}  // namespace shardscope::profiler
