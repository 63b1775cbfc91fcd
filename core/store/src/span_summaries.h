// The encoding of span summary chunks (docs/formats/store.md, "Span
// summaries"): LEB128 varints, zigzag for signed deltas, unsigned wrapping
// arithmetic so that every int64 value round-trips; and the per-rank encoder
// that turns a rank's spans into chunks. Used by span_summaries.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/span_summaries.h"
#include "sqlite_db.h"

namespace shardscope::core::store::detail {

// Deletes every summary row of a run (inside the caller's transaction).
[[nodiscard]] Status deleteSpanSummaries(const Database& db, RunId run);

// Spans of one rank of one run by start range, from the spans table
// (trace_store.cpp): what resolves the summary buckets across a window's ends.
class SpanStartReader {
 public:
  [[nodiscard]] static Result<SpanStartReader> prepare(const Database& db, RunId run);
  // Appends the spans of `rank` with a <= start < b, by start.
  [[nodiscard]] Status read(int rank, std::int64_t a, std::int64_t b, std::vector<Span>& out);

 private:
  SpanStartReader(const Database& db, RunId run, Statement blocks, Statement startOf, Statement scan);
  // The first id in [first, last + 1) whose span starts at or after `a`.
  [[nodiscard]] Result<std::int64_t> firstStartingAt(std::int64_t first, std::int64_t last, std::int64_t a);
  [[nodiscard]] Status scan(std::int64_t from, std::int64_t last, std::int64_t b, std::vector<Span>& out);

  const Database* db_;
  RunId run_;
  Statement blocks_;
  Statement startOf_;
  Statement scan_;
  std::vector<std::pair<int, std::int64_t>> maxBlock_;  // (rank, widest block)
  std::vector<std::pair<std::int64_t, std::int64_t>> ids_;
};

}  // namespace shardscope::core::store::detail

namespace shardscope::core::store::detail::summary {

// span_summary_lists.kind / span_summary_chunks.kind.
enum class ListKind : int { Buckets = 0, Spans = 1, Steps = 2 };

// A chunk covers a power-of-two width of start time, chosen per list so that
// its row holds about kChunkBytes/2 .. kChunkBytes: two to four rows share an
// 8 KiB page, and a window decodes little beyond its ends.
inline constexpr std::int64_t kChunkBytes = 3800;
inline constexpr std::int64_t kMaxChunkNs = std::int64_t{1} << 60;
// Steps per chunk a step list aims at (its chunk_ns follows the steps' spacing).
inline constexpr std::int64_t kStepsPerChunk = 192;

// floor(a / b) for b > 0.
[[nodiscard]] constexpr std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// a * b and a - b modulo 2^64: deltas of any two int64 values round-trip.
[[nodiscard]] constexpr std::uint64_t wrapMul(std::int64_t a, std::int64_t b) {
  return static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
}
[[nodiscard]] constexpr std::uint64_t wrapSub(std::int64_t a, std::int64_t b) {
  return static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b);
}
[[nodiscard]] constexpr std::int64_t wrapAdd(std::int64_t a, std::uint64_t d) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + d);
}

class Encoder {
 public:
  void put(std::uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<char>(v));
  }
  // Zigzag: small negative and positive values take few bytes.
  void putSigned(std::uint64_t wrapped) {
    const auto v = static_cast<std::int64_t>(wrapped);
    put((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  [[nodiscard]] const std::string& bytes() const { return bytes_; }
  [[nodiscard]] bool empty() const { return bytes_.empty(); }
  void clear() { bytes_.clear(); }

 private:
  std::string bytes_;
};

// Reads what an Encoder wrote; a read past the end (a damaged chunk) fails
// and stays failed.
class Decoder {
 public:
  explicit Decoder(std::string_view bytes)
      : p_(reinterpret_cast<const unsigned char*>(bytes.data())), end_(p_ + bytes.size()) {}

  // Inlined everywhere: a far window decodes millions of these.
  [[gnu::always_inline]] std::uint64_t get() {
    if (p_ != end_ && *p_ < 0x80) [[likely]] {
      return *p_++;
    }
    return getLong();
  }
  std::uint64_t getSigned() {
    const std::uint64_t z = get();
    return (z >> 1) ^ (~(z & 1) + 1);
  }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] bool atEnd() const { return p_ == end_; }
  [[nodiscard]] std::uint64_t left() const { return static_cast<std::uint64_t>(end_ - p_); }
  // The next n bytes (n <= left()).
  std::string_view take(std::uint64_t n) {
    const std::string_view out(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return out;
  }

 private:
  std::uint64_t getLong() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) {
        ok_ = false;
        return 0;
      }
      const unsigned char b = *p_++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        return v;
      }
    }
    ok_ = false;
    return 0;
  }

  const unsigned char* p_;
  const unsigned char* end_;
  bool ok_ = true;
};

// A bucket being filled: per class, spans and busy ns.
struct BucketAccumulator {
  std::int64_t index = 0;
  std::int64_t min_start_ns = 0;
  std::int64_t max_end_ns = 0;
  std::int64_t last_ns = 0;  // the last nanosecond a span covers (an instant: its start)
  std::int64_t spans = 0;
  std::uint32_t mask = 0;  // classes present
  std::int64_t count[kSpanSummaryClasses] = {};
  std::int64_t busy[kSpanSummaryClasses] = {};

  void start(std::int64_t bucketIndex, const Span& s) {
    index = bucketIndex;
    min_start_ns = s.start_ns;
    max_end_ns = s.end_ns;
    last_ns = s.start_ns;
    spans = 0;
    mask = 0;
  }
  void add(const Span& s, int cls, std::int64_t dur) {
    const auto c = static_cast<std::size_t>(cls);
    if ((mask & (1u << c)) == 0) {
      mask |= 1u << c;
      count[c] = 0;
      busy[c] = 0;
    }
    count[c] += 1;
    busy[c] += dur;
    ++spans;
    max_end_ns = std::max(max_end_ns, s.end_ns);
    last_ns = std::max(last_ns, s.end_ns > s.start_ns ? s.end_ns - 1 : s.start_ns);
  }
};

// A bucket's header: its class mask, and flags.
inline constexpr std::uint64_t kClassMask = (std::uint64_t{1} << kSpanSummaryClasses) - 1;
inline constexpr std::uint64_t kLastIsEnd = std::uint64_t{1} << kSpanSummaryClasses;  // last_ns == max_end_ns
inline constexpr std::uint64_t kOneSpan = std::uint64_t{2} << kSpanSummaryClasses;

// One bucket: its index after the previous one's (the first: after the
// chunk's first index - 1), its earliest start after the bucket's start, the
// header (class mask, flags), then for a bucket of one span its duration;
// else the latest end after the earliest start and (count, busy) per class
// present. A multi-span bucket's last covered nanosecond is its latest end
// - 1 unless kLastIsEnd (an instant ends last).
inline void encodeBucket(Encoder& e, std::int64_t previousIndex, std::int64_t width, const BucketAccumulator& b) {
  e.put(wrapSub(b.index, previousIndex) - 1);
  e.put(wrapSub(b.min_start_ns, static_cast<std::int64_t>(wrapMul(b.index, width))));
  if (b.spans == 1) {
    e.put(b.mask | kOneSpan);
    e.put(wrapSub(b.max_end_ns, b.min_start_ns));
    return;
  }
  e.put(b.mask | (b.last_ns == b.max_end_ns ? kLastIsEnd : 0));
  e.put(wrapSub(b.max_end_ns, b.min_start_ns));
  for (std::uint32_t m = b.mask, c = 0; m != 0; m >>= 1, ++c) {
    if ((m & 1u) != 0) {
      e.put(static_cast<std::uint64_t>(b.count[c]));
      e.put(static_cast<std::uint64_t>(b.busy[c]));
    }
  }
}

// Decodes the next bucket into `b`, appending its classes to `weights`.
// False at a damaged chunk.
template <class Weights>
bool decodeBucket(Decoder& d, std::int64_t previousIndex, std::int64_t width, SummaryBucket& b, Weights& weights) {
  b.index = wrapAdd(previousIndex, d.get() + 1);
  b.min_start_ns = wrapAdd(static_cast<std::int64_t>(wrapMul(b.index, width)), d.get());
  const std::uint64_t header = d.get();
  const std::uint64_t mask = header & kClassMask;
  if ((header & kOneSpan) != 0) {
    const std::uint64_t dur = d.get();
    b.max_end_ns = wrapAdd(b.min_start_ns, dur);
    b.last_ns = dur == 0 ? b.min_start_ns : b.max_end_ns - 1;
    b.count = 1;
    b.busy_ns = static_cast<std::int64_t>(dur);
    weights.push_back(SummaryClassWeight{std::countr_zero(mask), 1, b.busy_ns});
    return d.ok() && mask != 0 && (mask & (mask - 1)) == 0 && header < (kOneSpan << 1);
  }
  b.max_end_ns = wrapAdd(b.min_start_ns, d.get());
  b.last_ns = (header & kLastIsEnd) != 0 ? b.max_end_ns : b.max_end_ns - 1;
  b.count = 0;
  b.busy_ns = 0;
  for (std::uint64_t m = mask, c = 0; m != 0; m >>= 1, ++c) {
    if ((m & 1u) != 0) {
      const auto count = static_cast<std::int64_t>(d.get());
      const auto busy = static_cast<std::int64_t>(d.get());
      weights.push_back(SummaryClassWeight{static_cast<int>(c), count, busy});
      b.count += count;
      b.busy_ns += busy;
    }
  }
  return d.ok() && mask != 0 && header < kOneSpan;
}

// The running values a whole-span record is encoded against.
struct SpanCursor {
  std::int64_t start_ns = 0;
  std::int64_t step = 0;
  std::int64_t correlation = 0;
};

// One span of a whole-spans or steps chunk: start after the previous one's
// (the first: after the chunk's start), duration, class, kind, name, table,
// then step and correlation as signed deltas and bytes, signed.
inline void encodeSpan(Encoder& e, SpanCursor& at, const Span& s, int cls) {
  e.put(wrapSub(s.start_ns, at.start_ns));
  e.put(wrapSub(s.end_ns, s.start_ns));
  e.put(static_cast<std::uint64_t>(cls));
  e.put(static_cast<std::uint64_t>(s.kind));
  e.put(static_cast<std::uint64_t>(s.name));
  e.put(static_cast<std::uint64_t>(s.table));
  e.putSigned(wrapSub(s.step, at.step));
  e.putSigned(wrapSub(s.correlation, at.correlation));
  e.putSigned(static_cast<std::uint64_t>(s.bytes));
  at = {s.start_ns, s.step, s.correlation};
}

inline bool decodeSpan(Decoder& d, SpanCursor& at, SummarySpan& out) {
  Span& s = out.span;
  s.start_ns = wrapAdd(at.start_ns, d.get());
  s.end_ns = wrapAdd(s.start_ns, d.get());
  const std::uint64_t cls = d.get();
  s.kind = StringId{static_cast<std::int64_t>(d.get())};
  s.name = StringId{static_cast<std::int64_t>(d.get())};
  s.table = StringId{static_cast<std::int64_t>(d.get())};
  s.step = wrapAdd(at.step, d.getSigned());
  s.correlation = wrapAdd(at.correlation, d.getSigned());
  s.bytes = static_cast<std::int64_t>(d.getSigned());
  if (cls >= static_cast<std::uint64_t>(kSpanSummaryClasses)) {
    return false;
  }
  out.cls = static_cast<int>(cls);
  at = {s.start_ns, s.step, s.correlation};
  return d.ok();
}

// A chunk row's id: its list's key in the high 32 bits, its chunk's number
// from the list's first chunk in the low 32.
inline constexpr int kChunkIdBits = 32;
inline constexpr std::int64_t kMaxRelativeChunk = (std::int64_t{1} << kChunkIdBits) - 1;

// A list row of span_summary_lists.
struct ListRow {
  ListKind kind = ListKind::Buckets;
  int level = 0;
  std::int64_t key = 0;
  std::int64_t chunk_ns = 1;
  std::int64_t first_chunk = 0;
  std::int64_t lookback_ns = 0;
  std::int64_t items = 0;
  std::int64_t bytes = 0;
};

// Where a RankEncoder's rows go (span_summary_chunks, span_summary_lists).
class SummarySink {
 public:
  virtual ~SummarySink() = default;
  [[nodiscard]] virtual Status chunk(std::int64_t id, std::int64_t items, const std::string& data) = 0;
  [[nodiscard]] virtual Status list(int rank, const ListRow& list) = 0;
};

// The narrowest chunk for a rank spanning `extent` ns: its chunks numbered
// in 31 bits; a power of two.
inline std::int64_t chunkFloorNs(std::uint64_t extent) {
  return static_cast<std::int64_t>(std::bit_ceil(std::max<std::uint64_t>(extent >> 31, 1)));
}

// The chunk width (a power of two) that holds about kChunkBytes/2 ..
// kChunkBytes of a list with `perNs` items per ns of `bytes` bytes each.
inline std::int64_t chunkNsFor(double perNs, double bytes) {
  const double ideal =
      perNs > 0 ? static_cast<double>(kChunkBytes) / (perNs * bytes) : static_cast<double>(kMaxChunkNs);
  if (ideal >= static_cast<double>(kMaxChunkNs)) {
    return kMaxChunkNs;
  }
  return std::max<std::int64_t>(kSummaryBaseNs,
                                static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(ideal))));
}

// The coarsest level that keeps a span of `dur` whole (dur >= summaryWholeNs(0)):
// the largest L with kSummaryBaseNs * 2^L / 2 <= dur.
inline int levelOfDuration(std::uint64_t dur) {
  return std::min(static_cast<int>(std::bit_width(dur >> 9)) - 1, kSummaryMaxLevel);
}

// The levels built for a run, finest first.
class Levels {
 public:
  explicit Levels(std::vector<int> levels) : levels_(std::move(levels)) {
    for (int l = 0, i = -1; l <= kSummaryMaxLevel; ++l) {
      while (i + 1 < count() && levels_[static_cast<std::size_t>(i) + 1] <= l) {
        ++i;
      }
      coarsestUpTo_[static_cast<std::size_t>(l)] = i;
    }
  }
  [[nodiscard]] int count() const { return static_cast<int>(levels_.size()); }
  [[nodiscard]] int at(int i) const { return levels_[static_cast<std::size_t>(i)]; }
  // The chunk widths of level i's buckets and whole spans (default: the widest).
  void setChunkNs(int i, std::int64_t buckets, std::int64_t spans) {
    chunkNs_.resize(levels_.size(), {kMaxChunkNs, kMaxChunkNs});
    chunkNs_[static_cast<std::size_t>(i)] = {std::max(buckets, summaryLevelWidth(at(i))), spans};
  }
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> chunkNs(int i) const {
    return static_cast<std::size_t>(i) < chunkNs_.size() ? chunkNs_[static_cast<std::size_t>(i)]
                                                         : std::pair{kMaxChunkNs, kMaxChunkNs};
  }
  [[nodiscard]] const std::vector<int>& all() const { return levels_; }
  // The index of the coarsest built level that keeps a span of `dur` whole, or -1.
  [[nodiscard]] int wholeIndex(std::uint64_t dur) const {
    if (levels_.empty() || dur < static_cast<std::uint64_t>(summaryWholeNs(levels_.front()))) {
      return -1;
    }
    return coarsestUpTo_[static_cast<std::size_t>(levelOfDuration(dur))];
  }

 private:
  std::vector<int> levels_;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunkNs_;
  std::array<int, kSummaryMaxLevel + 1> coarsestUpTo_{};
};

// One stream's part of a chunk being filled.
struct Section {
  int stream = 0;
  std::int64_t items = 0;
  std::int64_t previousIndex = 0;  // buckets: the index of the last one written
  SpanCursor cursor;               // spans
  Encoder encoder;
};

// One list of a rank being written: the open chunk, a section per stream.
// Chunks come in order; a later one writes the open one first.
class ListWriter {
 public:
  ListWriter(ListKind kind, int level, std::int64_t key, std::int64_t chunkNs, std::int64_t firstChunk,
             std::int64_t width)
      : row_{kind, level, key, chunkNs, firstChunk, 0, 0, 0}, width_(width) {}

  // The section of `stream` in chunk `chunk`, or null with `status` set.
  Section* section(SummarySink& sink, std::int64_t chunk, int stream, Status& status) {
    if (open_ && chunk != chunk_) {
      status = flush(sink);
      if (!status) {
        return nullptr;
      }
    }
    if (!open_) {
      if (chunk < row_.first_chunk || chunk - row_.first_chunk > kMaxRelativeChunk) {
        status = Error{"span summaries: chunk " + std::to_string(chunk) + " is outside its list", ErrorKind::Internal};
        return nullptr;
      }
      open_ = true;
      chunk_ = chunk;
    }
    Section* s = nullptr;
    for (Section& x : sections_) {
      if (x.stream == stream) {
        s = &x;
      }
    }
    if (s == nullptr) {
      s = &sections_.emplace_back();
      s->stream = stream;
    }
    if (s->items == 0) {  // first in this chunk
      s->previousIndex = static_cast<std::int64_t>(wrapMul(chunk, row_.chunk_ns / width_)) - 1;
      s->cursor = {static_cast<std::int64_t>(wrapMul(chunk, row_.chunk_ns)), 0, 0};
    }
    return s;
  }

  // Writes the open chunk: per stream with items, (zigzag stream, items, bytes, encoded).
  Status flush(SummarySink& sink) {
    if (!open_) {
      return Ok{};
    }
    Encoder row;
    std::int64_t items = 0;
    std::string data;
    for (Section& s : sections_) {
      if (s.items == 0) {
        continue;
      }
      row.clear();
      row.putSigned(static_cast<std::uint64_t>(static_cast<std::int64_t>(s.stream)));
      row.put(static_cast<std::uint64_t>(s.items));
      row.put(s.encoder.bytes().size());
      data += row.bytes();
      data += s.encoder.bytes();
      items += s.items;
      s.items = 0;
      s.encoder.clear();
    }
    open_ = false;
    row_.items += items;
    row_.bytes += static_cast<std::int64_t>(data.size());
    return sink.chunk((row_.key << kChunkIdBits) | (chunk_ - row_.first_chunk), items, data);
  }

  [[nodiscard]] bool open() const { return open_; }
  [[nodiscard]] std::int64_t chunk() const { return chunk_; }
  [[nodiscard]] ListRow& row() { return row_; }
  [[nodiscard]] const ListRow& row() const { return row_; }

 private:
  ListRow row_;
  std::int64_t width_;
  bool open_ = false;
  std::int64_t chunk_ = 0;
  std::vector<Section> sections_;
};

// Encodes the summaries of one rank, fed its spans in start order, into
// chunk and list rows for `sink`. Lists get keys from `nextKey` on.
class RankEncoder {
 public:
  struct Rank {
    int rank = 0;
    std::int64_t min_start_ns = 0;
    std::int64_t chunk_ns = 1;  // chunkFloorNs of the rank
  };

  RankEncoder(SummarySink& sink, Rank rank, Levels levels, int stepClass, std::int64_t& nextKey)
      : sink_(sink), rank_(rank), levels_(std::move(levels)), stepClass_(stepClass) {
    for (int li = 0; li < levels_.count(); ++li) {
      const int level = levels_.at(li);
      const auto [bucketNs, spanNs] = levels_.chunkNs(li);
      const std::int64_t b = std::max(bucketNs, rank.chunk_ns);
      const std::int64_t s = std::max(spanNs, rank.chunk_ns);
      buckets_.emplace_back(ListKind::Buckets, level, nextKey++, b, floorDiv(rank.min_start_ns, b),
                            summaryLevelWidth(level));
      spans_.emplace_back(ListKind::Spans, level, nextKey++, s, floorDiv(rank.min_start_ns, s), 1);
    }
    stepKey_ = nextKey++;
  }

  Status add(const Span& s, int cls) {
    if (cls == stepClass_) {
      steps_.push_back({s, cls});
      return Ok{};
    }
    const std::uint64_t dur = wrapSub(s.end_ns, s.start_ns);
    Stream& stream = streamOf(s.stream);
    int firstBucketed = 0;
    if (const int li = levels_.wholeIndex(dur); li >= 0) {
      if (auto st = addWhole(li, s, cls, dur); !st) {
        return st;
      }
      firstBucketed = li + 1;
    }
    for (int li = firstBucketed; li < levels_.count(); ++li) {
      if (auto st = addToBucket(stream, li, s, cls, static_cast<std::int64_t>(dur)); !st) {
        return st;
      }
    }
    return Ok{};
  }

  // Writes what is still open, the steps and the rank's list rows.
  Status finish() {
    for (int li = 0; li < levels_.count(); ++li) {
      if (auto st = closeBucketsBefore(li, std::numeric_limits<std::int64_t>::max()); !st) {
        return st;
      }
      for (ListWriter* w : {&buckets_[static_cast<std::size_t>(li)], &spans_[static_cast<std::size_t>(li)]}) {
        if (auto st = w->flush(sink_); !st) {
          return st;
        }
      }
    }
    if (auto st = writeSteps(); !st) {
      return st;
    }
    for (std::size_t li = 0; li < buckets_.size(); ++li) {
      buckets_[li].row().lookback_ns = 2 * summaryLevelWidth(levels_.at(static_cast<int>(li)));
      for (ListWriter* w : {&buckets_[li], &spans_[li]}) {
        if (w->row().items > 0) {
          if (auto st = sink_.list(rank_.rank, w->row()); !st) {
            return st;
          }
          bytes_ += w->row().bytes;
        }
      }
    }
    return Ok{};
  }

  [[nodiscard]] std::int64_t bytes() const { return bytes_; }

 private:
  struct Stream {
    int stream = 0;
    std::vector<BucketAccumulator> buckets;  // per level, open when spans > 0
  };

  Stream& streamOf(int stream) {
    if (last_ < streams_.size() && streams_[last_].stream == stream) {
      return streams_[last_];
    }
    for (last_ = 0; last_ < streams_.size(); ++last_) {
      if (streams_[last_].stream == stream) {
        return streams_[last_];
      }
    }
    streams_.push_back(Stream{stream, std::vector<BucketAccumulator>(static_cast<std::size_t>(levels_.count()))});
    return streams_.back();
  }

  std::int64_t bucketChunk(int li, std::int64_t index) const {
    const ListWriter& w = buckets_[static_cast<std::size_t>(li)];
    return floorDiv(index, w.row().chunk_ns / summaryLevelWidth(levels_.at(li)));
  }

  Status addToBucket(Stream& stream, int li, const Span& s, int cls, std::int64_t dur) {
    BucketAccumulator& b = stream.buckets[static_cast<std::size_t>(li)];
    const std::int64_t index = floorDiv(s.start_ns, summaryLevelWidth(levels_.at(li)));
    if (b.spans == 0 || b.index != index) {
      if (b.spans > 0) {
        if (auto st = closeBucket(stream.stream, li, b); !st) {
          return st;
        }
      }
      b.start(index, s);
    }
    b.add(s, cls, dur);
    return Ok{};
  }

  // Encodes a finished bucket. Before its list moves to a later chunk, every
  // other stream's open bucket of an earlier chunk is written: spans come in
  // start order, so those are finished too.
  Status closeBucket(int stream, int li, BucketAccumulator& b) {
    const std::int64_t chunk = bucketChunk(li, b.index);
    ListWriter& w = buckets_[static_cast<std::size_t>(li)];
    if (w.open() && chunk > w.chunk()) {
      b.spans = -b.spans;  // not among the others
      Status st = closeBucketsBefore(li, chunk);
      b.spans = -b.spans;
      if (!st) {
        return st;
      }
    }
    Status st = Ok{};
    Section* sec = w.section(sink_, chunk, stream, st);
    if (sec == nullptr) {
      return st;
    }
    encodeBucket(sec->encoder, sec->previousIndex, summaryLevelWidth(levels_.at(li)), b);
    sec->previousIndex = b.index;
    ++sec->items;
    b.spans = 0;
    return Ok{};
  }

  // Writes the open buckets of level li in chunks before `chunk`, by chunk.
  Status closeBucketsBefore(int li, std::int64_t chunk) {
    std::vector<std::pair<std::int64_t, std::size_t>> due;  // (index, stream)
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      const BucketAccumulator& b = streams_[i].buckets[static_cast<std::size_t>(li)];
      if (b.spans > 0 && bucketChunk(li, b.index) < chunk) {
        due.emplace_back(b.index, i);
      }
    }
    std::sort(due.begin(), due.end());
    for (const auto& [index, i] : due) {
      Stream& s = streams_[i];
      if (auto st = closeBucket(s.stream, li, s.buckets[static_cast<std::size_t>(li)]); !st) {
        return st;
      }
    }
    return Ok{};
  }

  Status addWhole(int li, const Span& s, int cls, std::uint64_t dur) {
    ListWriter& w = spans_[static_cast<std::size_t>(li)];
    Status st = Ok{};
    Section* sec = w.section(sink_, floorDiv(s.start_ns, w.row().chunk_ns), s.stream, st);
    if (sec == nullptr) {
      return st;
    }
    encodeSpan(sec->encoder, sec->cursor, s, cls);
    ++sec->items;
    w.row().lookback_ns =
        std::max(w.row().lookback_ns,
                 static_cast<std::int64_t>(std::min<std::uint64_t>(dur, std::numeric_limits<std::int64_t>::max())));
    return Ok{};
  }

  // Steps are few: kept until the end, then chunked by their spacing.
  Status writeSteps() {
    if (steps_.empty()) {
      return Ok{};
    }
    const std::uint64_t extent = wrapSub(steps_.back().span.start_ns, steps_.front().span.start_ns);
    const std::uint64_t wanted = std::max<std::uint64_t>(extent / steps_.size() * kStepsPerChunk, extent >> 31);
    const auto ns = static_cast<std::int64_t>(std::clamp<std::uint64_t>(
        std::bit_ceil(std::max<std::uint64_t>(std::min<std::uint64_t>(wanted, kMaxChunkNs), 1)), kSummaryBaseNs,
        kMaxChunkNs));
    ListWriter w(ListKind::Steps, 0, stepKey_, ns, floorDiv(steps_.front().span.start_ns, ns), 1);
    for (const SummarySpan& step : steps_) {
      const Span& s = step.span;
      Status st = Ok{};
      Section* sec = w.section(sink_, floorDiv(s.start_ns, ns), s.stream, st);
      if (sec == nullptr) {
        return st;
      }
      encodeSpan(sec->encoder, sec->cursor, s, step.cls);
      ++sec->items;
      w.row().lookback_ns = std::max(w.row().lookback_ns, static_cast<std::int64_t>(wrapSub(s.end_ns, s.start_ns)));
    }
    if (auto st = w.flush(sink_); !st) {
      return st;
    }
    bytes_ += w.row().bytes;
    return sink_.list(rank_.rank, w.row());
  }

  SummarySink& sink_;
  Rank rank_;
  Levels levels_;
  int stepClass_;
  std::vector<ListWriter> buckets_;  // per level
  std::vector<ListWriter> spans_;    // per level
  std::int64_t stepKey_ = 0;
  std::vector<Stream> streams_;
  std::size_t last_ = 0;
  std::vector<SummarySpan> steps_;
  std::int64_t bytes_ = 0;
};

}  // namespace shardscope::core::store::detail::summary
