// Span summaries (span_summaries.h): building them from a run's spans, one
// pass per rank in start order inside one transaction, and reading a window
// of one level back. The chunk encoding is in the private span_summaries.h.
#include "span_summaries.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sqlite_db.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::core::store {

using detail::Database;
using detail::Statement;
namespace sm = detail::summary;

namespace {

// Spans read per window while building: bounds the builder's memory.
constexpr std::int64_t kBuildReadSpans = 65536;
// A level is built when a window there decodes at most half of what it
// decodes at the last level built; a small level (a quarter of the finest
// or less, cheap to keep) when at most 2/3, so coarse levels come about
// every factor of two (docs/timeline.md).
constexpr std::pair<std::int64_t, std::int64_t> kLevelGain{1, 2};
constexpr std::pair<std::int64_t, std::int64_t> kSmallLevelGain{2, 3};
constexpr std::int64_t kSmallLevel = 4;
// The finest level's width is at most the densest rank's mean gap between
// span starts / kFinestPerGap: a window whose pixel is narrower than half
// that width holds fewer than pixels / (2 kFinestPerGap) spans per rank,
// which the raw window query reads fast enough (docs/timeline.md).
constexpr std::int64_t kFinestPerGap = 4;

std::string runText(RunId run) { return "run " + std::to_string(static_cast<std::int64_t>(run)); }

std::int64_t saturatingSub(std::int64_t a, std::int64_t b) {
  if (b > 0 && a < std::numeric_limits<std::int64_t>::min() + b) return std::numeric_limits<std::int64_t>::min();
  return a - b;
}

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  if (b > 0 && a > std::numeric_limits<std::int64_t>::max() - b) return std::numeric_limits<std::int64_t>::max();
  return a + b;
}

// Spans overlap [t0, t1) as TraceStore::spansInWindow defines it.
bool overlaps(const Span& s, std::int64_t t0, std::int64_t t1) {
  return s.start_ns < t1 && (s.end_ns > t0 || s.start_ns >= t0);
}

// The levels worth considering: the finest from the densest rank
// (kFinestPerGap), the coarsest the first whose one bucket covers the
// widest rank.
struct Candidates {
  int min = 0;
  int max = 0;
};

Candidates candidateLevels(const std::vector<SpanExtent>& extents) {
  std::uint64_t widest = 0;
  std::uint64_t densestGap = std::numeric_limits<std::uint64_t>::max();
  for (const SpanExtent& e : extents) {
    if (e.span_count <= 0) continue;
    const std::uint64_t extent = sm::wrapSub(e.max_end_ns, e.min_start_ns);
    widest = std::max(widest, extent);
    densestGap = std::min(densestGap, extent / static_cast<std::uint64_t>(e.span_count));
  }
  Candidates c;
  while (c.min < kSummaryMaxLevel &&
         static_cast<std::uint64_t>(summaryLevelWidth(c.min + 1)) * kFinestPerGap <= densestGap) {
    ++c.min;
  }
  c.max = c.min;
  while (c.max < kSummaryMaxLevel && static_cast<std::uint64_t>(summaryLevelWidth(c.max)) < widest) ++c.max;
  return c;
}

// Classes by (kind, name), each pair asked of the classifier once.
class ClassCache {
 public:
  explicit ClassCache(const std::function<int(StringId, StringId)>& classify) : classify_(classify) {}

  Result<int> of(StringId kind, StringId name) {
    const std::pair key{static_cast<std::int64_t>(kind), static_cast<std::int64_t>(name)};
    if (key == last_) return lastClass_;
    auto it = classes_.find(key);
    if (it == classes_.end()) {
      const int cls = classify_(kind, name);
      if (cls < 0 || cls >= kSpanSummaryClasses) {
        return Error{"span summaries: the classifier gave class " + std::to_string(cls) + " to kind " +
                         std::to_string(key.first) + ", name " + std::to_string(key.second) + "; expected 0.." +
                         std::to_string(kSpanSummaryClasses - 1),
                     ErrorKind::Internal};
      }
      it = classes_.emplace(key, cls).first;
    }
    last_ = key;
    lastClass_ = it->second;
    return lastClass_;
  }

 private:
  struct PairHash {
    std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& p) const {
      return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(p.first) * 1'000'003 +
                                        static_cast<std::uint64_t>(p.second));
    }
  };
  const std::function<int(StringId, StringId)>& classify_;
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, int, PairHash> classes_;
  std::pair<std::int64_t, std::int64_t> last_{-1, -1};
  int lastClass_ = 0;
};

// Inserts chunk rows and list rows of one run. Chunk rows are kept until
// kSinkBytes are held (or a rank ends) and inserted by id: a rank's list keys
// follow the store's, so its rows append to the table's B-tree.
class ChunkSink final : public sm::SummarySink {
 public:
  static Result<ChunkSink> prepare(const Database& db, RunId run) {
    auto chunk = db.prepare("INSERT INTO span_summary_chunks(id, items, data) VALUES (?1, ?2, ?3)");
    if (!chunk) return chunk.error();
    auto list = db.prepare(
        "INSERT INTO span_summary_lists(run, rank, kind, level, key, chunk_ns, first_chunk, lookback_ns, items, bytes) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (!list) return list.error();
    return ChunkSink(db, run, std::move(*chunk), std::move(*list));
  }

  Status chunk(std::int64_t id, std::int64_t items, const std::string& data) override {
    held_ += data.size();
    rows_.push_back({id, items, data});
    return held_ >= kSinkBytes ? write() : Status(Ok{});
  }

  Status list(int rank, const sm::ListRow& l) override {
    list_.bind(1, static_cast<std::int64_t>(run_));
    list_.bind(2, rank);
    list_.bind(3, static_cast<int>(l.kind));
    list_.bind(4, l.level);
    list_.bind(5, l.key);
    list_.bind(6, l.chunk_ns);
    list_.bind(7, l.first_chunk);
    list_.bind(8, l.lookback_ns);
    list_.bind(9, l.items);
    list_.bind(10, l.bytes);
    return step(list_, "writing span summary lists");
  }

  // Inserts the rows held, by id.
  Status write() {
    std::sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) { return a.id < b.id; });
    for (const Row& r : rows_) {
      chunk_.bind(1, r.id);
      chunk_.bind(2, r.items);
      sqlite3_bind_blob(chunk_.get(), 3, r.data.data(), static_cast<int>(r.data.size()), SQLITE_STATIC);
      if (auto s = step(chunk_, "writing span summary chunks"); !s) return s;
    }
    rows_.clear();
    held_ = 0;
    return Ok{};
  }

 private:
  static constexpr std::size_t kSinkBytes = std::size_t{64} << 20;
  struct Row {
    std::int64_t id = 0;
    std::int64_t items = 0;
    std::string data;
  };

  ChunkSink(const Database& db, RunId run, Statement chunk, Statement list)
      : db_(&db), run_(run), chunk_(std::move(chunk)), list_(std::move(list)) {}

  Status step(Statement& st, std::string_view what) {
    const int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) return db_->error(what, rc);
    return Ok{};
  }

  const Database* db_;
  RunId run_;
  Statement chunk_;
  Statement list_;
  std::vector<Row> rows_;
  std::size_t held_ = 0;
};

// Feeds one rank's spans to `summariser` in start order, a window of about
// kBuildReadSpans spans at a time.
Status summariseRank(const TraceStore& store, RunId run, const SpanExtent& extent, ClassCache& classes,
                     sm::RankEncoder& summariser, const std::atomic<bool>* cancel) {
  const std::uint64_t range = sm::wrapSub(extent.max_end_ns, extent.min_start_ns) + 1;
  const auto windows = static_cast<std::uint64_t>(extent.span_count / kBuildReadSpans + 1);
  const auto width = static_cast<std::int64_t>(std::max<std::uint64_t>(1, range / windows + 1));
  for (std::int64_t t0 = extent.min_start_ns;;) {
    if (cancel != nullptr && cancel->load()) {
      return Error{"building the span summaries of " + runText(run) + " was cancelled", ErrorKind::Cancelled};
    }
    const std::int64_t t1 = saturatingAdd(t0, width);
    const RankWindow window{extent.rank, t0, t1};
    auto spans = store.spansInRankWindows(run, {&window, 1});
    if (!spans) return spans.error();
    for (const Span& s : *spans) {
      if (s.start_ns < t0) {
        continue;  // reaches in from the previous window, which had it
      }
      auto cls = classes.of(s.kind, s.name);
      if (!cls) return cls.error();
      if (auto st = summariser.add(s, *cls); !st) return st;
    }
    if (t1 > extent.max_end_ns || t1 == std::numeric_limits<std::int64_t>::max()) return Ok{};
    t0 = t1;
  }
}

// Counts, per candidate level, what a window there decodes: the buckets and
// the spans kept whole. Spans come in start order; per stream and level the
// last bucket index tells a new bucket.
class LevelSampler {
 public:
  LevelSampler(Candidates candidates, int stepClass)
      : candidates_(candidates),
        stepClass_(stepClass),
        buckets_(static_cast<std::size_t>(candidates.max - candidates.min + 1), 0),
        wholes_(buckets_.size(), 0) {}

  // A new window of `ns` of one rank.
  void restart(std::uint64_t ns) {
    streams_.clear();
    sampledNs_ += static_cast<double>(ns);
  }

  void add(const Span& s, int cls) {
    if (cls == stepClass_) return;
    auto it = std::find_if(streams_.begin(), streams_.end(), [&](const auto& x) { return x.first == s.stream; });
    if (it == streams_.end()) {
      streams_.emplace_back(s.stream,
                            std::vector<std::int64_t>(buckets_.size(), std::numeric_limits<std::int64_t>::min()));
      it = streams_.end() - 1;
    }
    const std::uint64_t dur = sm::wrapSub(s.end_ns, s.start_ns);
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      const int level = candidates_.min + static_cast<int>(i);
      if (dur >= static_cast<std::uint64_t>(summaryWholeNs(level))) {
        ++wholes_[i];
        continue;
      }
      const std::int64_t index = sm::floorDiv(s.start_ns, summaryLevelWidth(level));
      if (it->second[i] != index) {
        it->second[i] = index;
        ++buckets_[i];
      }
    }
  }

  // The finest candidate, then each that decodes well under the last one
  // kept (kLevelGain): a level that saves little is not worth its rows. Each
  // list's chunk width from its density in the sample.
  [[nodiscard]] sm::Levels choose() const {
    std::vector<std::size_t> kept{0};
    for (std::size_t i = 1; i < buckets_.size(); ++i) {
      const auto gain = items(i) * kSmallLevel <= items(0) ? kSmallLevelGain : kLevelGain;
      if (items(i) * gain.second <= items(kept.back()) * gain.first) kept.push_back(i);
    }
    std::vector<int> levels;
    for (const std::size_t i : kept) levels.push_back(candidates_.min + static_cast<int>(i));
    sm::Levels out(std::move(levels));
    const double ns = std::max(sampledNs_, 1.0);
    for (std::size_t k = 0; k < kept.size(); ++k) {
      const std::int64_t tier = wholes_[kept[k]] - (k + 1 < kept.size() ? wholes_[kept[k + 1]] : 0);
      out.setChunkNs(static_cast<int>(k), sm::chunkNsFor(static_cast<double>(buckets_[kept[k]]) / ns, kBucketBytes),
                     sm::chunkNsFor(static_cast<double>(tier) / ns, kSpanBytes));
    }
    return out;
  }

 private:
  // Bytes of an encoded bucket and span, about (docs/formats/store.md).
  static constexpr double kBucketBytes = 14;
  static constexpr double kSpanBytes = 13.5;

  [[nodiscard]] std::int64_t items(std::size_t i) const { return buckets_[i] + wholes_[i]; }

  Candidates candidates_;
  int stepClass_;
  std::vector<std::int64_t> buckets_;  // per candidate level
  std::vector<std::int64_t> wholes_;
  double sampledNs_ = 0;
  std::vector<std::pair<int, std::vector<std::int64_t>>> streams_;  // (stream, last bucket per level)
};

// Chooses the levels to build from kSampleWindows windows spread over each
// rank, together 1/kSampleShare of its time (all of a small rank).
Result<sm::Levels> chooseLevels(const TraceStore& store, RunId run, const std::vector<SpanExtent>& extents,
                                ClassCache& classes, int stepClass) {
  constexpr std::uint64_t kSampleWindows = 8;
  constexpr std::uint64_t kSampleShare = 8;
  LevelSampler sampler(candidateLevels(extents), stepClass);
  for (const SpanExtent& e : extents) {
    const std::uint64_t range = sm::wrapSub(e.max_end_ns, e.min_start_ns) + 1;
    const bool whole = e.span_count <= kBuildReadSpans || range < kSampleWindows * kSampleShare;
    const std::uint64_t width = whole ? range : range / (kSampleWindows * kSampleShare);
    for (std::uint64_t k = 0; k < (whole ? 1 : kSampleWindows); ++k) {
      const std::int64_t t0 = sm::wrapAdd(e.min_start_ns, whole ? 0 : range / kSampleWindows * k);
      const RankWindow window{e.rank, t0,
                              saturatingAdd(t0, static_cast<std::int64_t>(std::min<std::uint64_t>(width, INT64_MAX)))};
      auto spans = store.spansInRankWindows(run, {&window, 1});
      if (!spans) return spans.error();
      sampler.restart(width);
      for (const Span& s : *spans) {
        if (s.start_ns < t0) continue;
        auto cls = classes.of(s.kind, s.name);
        if (!cls) return cls.error();
        sampler.add(s, *cls);
      }
    }
  }
  return sampler.choose();
}

}  // namespace

namespace detail {

Status deleteSpanSummaries(const Database& db, RunId run) {
  auto keys = db.prepare("SELECT key FROM span_summary_lists WHERE run = ?1");
  auto chunks = db.prepare("DELETE FROM span_summary_chunks WHERE id BETWEEN ?1 AND ?2");
  auto lists = db.prepare("DELETE FROM span_summary_lists WHERE run = ?1");
  auto runs = db.prepare("DELETE FROM span_summary_runs WHERE run = ?1");
  for (auto* st : {&keys, &chunks, &lists, &runs})
    if (!*st) return st->error();
  keys->bind(1, static_cast<std::int64_t>(run));
  int rc = 0;
  while ((rc = keys->step()) == SQLITE_ROW) {
    chunks->reset();
    chunks->bind(1, keys->int64(0) << sm::kChunkIdBits);
    chunks->bind(2, (keys->int64(0) << sm::kChunkIdBits) | sm::kMaxRelativeChunk);
    if (const int c = chunks->step(); c != SQLITE_DONE) return db.error("deleting span summary chunks", c);
  }
  if (rc != SQLITE_DONE) return db.error("reading span summary lists", rc);
  for (auto* st : {&lists, &runs}) {
    (*st)->bind(1, static_cast<std::int64_t>(run));
    if (const int c = (*st)->step(); c != SQLITE_DONE) return db.error("deleting span summaries", c);
  }
  return Ok{};
}

}  // namespace detail

Status TraceStore::buildSpanSummaries(RunId run, const SpanSummaryOptions& options) {
  const std::string what = detail::storeName(path()) + ": span summaries of " + runText(run);
  if (!options.classify || options.tag.empty() || options.step_class < -1 ||
      options.step_class >= kSpanSummaryClasses) {
    return Error{what + ": a classifier, a tag and a step class of -1.." + std::to_string(kSpanSummaryClasses - 1) +
                     " are needed",
                 ErrorKind::Usage};
  }
  if (schemaVersion_ < 5 || sqlite3_db_readonly(db_->handle(), "main") != 0) {
    return Error{what + ": the store is open read-only; building summaries needs OpenMode::ReadWrite", ErrorKind::Usage,
                 path().string()};
  }
  if (auto s = requireRun(run); !s) return s;
  if (auto s = db_->exec("BEGIN IMMEDIATE"); !s) return s;
  const auto rollback = [this](Error e) {
    (void)db_->exec("ROLLBACK");
    return e;
  };
  auto extents = spanExtents(run);  // in the transaction: what is summarised is what is counted
  if (!extents) return rollback(extents.error());
  if (auto s = detail::deleteSpanSummaries(*db_, run); !s) return rollback(s.error());
  auto nextKey = db_->queryInt("SELECT coalesce(max(key), 0) + 1 FROM span_summary_lists");
  if (!nextKey) return rollback(nextKey.error());
  ClassCache classes(options.classify);
  auto levels = chooseLevels(*this, run, *extents, classes, options.step_class);
  if (!levels) return rollback(levels.error());
  std::int64_t spans = 0;
  std::int64_t bytes = 0;
  {
    auto sink = ChunkSink::prepare(*db_, run);
    if (!sink) return rollback(sink.error());
    for (std::size_t i = 0; i < extents->size(); ++i) {
      const SpanExtent& e = (*extents)[i];
      const sm::RankEncoder::Rank rank{e.rank, e.min_start_ns,
                                       sm::chunkFloorNs(sm::wrapSub(e.max_end_ns, e.min_start_ns))};
      sm::RankEncoder summariser(*sink, rank, *levels, options.step_class, *nextKey);
      if (auto s = summariseRank(*this, run, e, classes, summariser, options.cancel); !s) return rollback(s.error());
      if (auto s = summariser.finish(); !s) return rollback(s.error());
      if (auto s = sink->write(); !s) return rollback(s.error());
      spans += e.span_count;
      bytes += summariser.bytes();
      if (options.progress) options.progress(static_cast<int>(i + 1), static_cast<int>(extents->size()));
    }
  }
  auto insert = db_->prepare(
      "INSERT INTO span_summary_runs(run, format, tag, levels, step_class, span_count, bytes, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  if (!insert) return rollback(insert.error());
  insert->bind(1, static_cast<std::int64_t>(run));
  insert->bind(2, kSpanSummaryFormat);
  insert->bind(3, options.tag);
  std::string levelText;
  for (const int l : levels->all()) {
    levelText += levelText.empty() ? "" : " ";
    levelText += std::to_string(l);
  }
  insert->bind(4, levelText);
  insert->bind(5, options.step_class);
  insert->bind(6, spans);
  insert->bind(7, bytes);
  if (const int rc = insert->step(); rc != SQLITE_DONE) return rollback(db_->error("writing span summaries", rc));
  *insert = Statement();
  if (auto s = db_->exec("COMMIT"); !s) return rollback(s.error());
  return Ok{};
}

namespace {

using sm::ListRow;

Error damaged(const Database& db, RunId run, int rank) {
  return Error{detail::storeName(db.path()) + " is corrupt: a span summary chunk of " + runText(run) + ", rank " +
               std::to_string(rank) + " does not decode (build the summaries again)"};
}

// Reads list rows and chunks of one run.
class ChunkReader {
 public:
  static Result<ChunkReader> prepare(const Database& db, RunId run) {
    auto lists = db.prepare(
        "SELECT kind, level, key, chunk_ns, first_chunk, lookback_ns, items, bytes FROM span_summary_lists "
        "WHERE run = ?1 AND rank = ?2");
    if (!lists) return lists.error();
    auto chunks = db.prepare("SELECT id, data FROM span_summary_chunks WHERE id BETWEEN ?1 AND ?2");
    if (!chunks) return chunks.error();
    return ChunkReader(db, run, std::move(*lists), std::move(*chunks));
  }

  Result<std::vector<ListRow>> lists(int rank) {
    lists_.reset();
    lists_.bind(1, static_cast<std::int64_t>(run_));
    lists_.bind(2, rank);
    std::vector<ListRow> out;
    int rc = 0;
    while ((rc = lists_.step()) == SQLITE_ROW) {
      const Statement& r = lists_;
      out.push_back({static_cast<sm::ListKind>(r.int32(0)), r.int32(1), r.int64(2), r.int64(3), r.int64(4), r.int64(5),
                     r.int64(6), r.int64(7)});
      if (out.back().chunk_ns <= 0) return damaged(*db_, run_, rank);
    }
    if (rc != SQLITE_DONE) return db_->error("reading span summary lists", rc);
    return out;
  }

  // fn(stream, chunk, bytes) per stream of each chunk c0..c1 of `list`, by
  // chunk; fn returns false for bytes that do not decode.
  template <class Fn>
  Status chunks(int rank, const ListRow& list, std::int64_t c0, std::int64_t c1, Fn fn) {
    const std::int64_t lo = std::max<std::int64_t>(saturatingSub(c0, list.first_chunk), 0);
    const std::int64_t hi = std::min(saturatingSub(c1, list.first_chunk), sm::kMaxRelativeChunk);
    if (lo > hi) return Ok{};
    chunks_.reset();
    chunks_.bind(1, (list.key << sm::kChunkIdBits) | lo);
    chunks_.bind(2, (list.key << sm::kChunkIdBits) | hi);
    int rc = 0;
    while ((rc = chunks_.step()) == SQLITE_ROW) {
      const std::int64_t chunk = list.first_chunk + (chunks_.int64(0) & sm::kMaxRelativeChunk);
      const auto* data = static_cast<const char*>(sqlite3_column_blob(chunks_.get(), 1));
      const auto size = static_cast<std::size_t>(sqlite3_column_bytes(chunks_.get(), 1));
      sm::Decoder d(std::string_view(data, size));
      while (!d.atEnd()) {
        const auto stream = static_cast<std::int64_t>(d.getSigned());
        (void)d.get();  // items
        const std::uint64_t bytes = d.get();
        if (!d.ok() || bytes > d.left()) return damaged(*db_, run_, rank);
        if (!fn(static_cast<int>(stream), chunk, d.take(bytes))) return damaged(*db_, run_, rank);
      }
    }
    if (rc != SQLITE_DONE) return db_->error("reading span summary chunks", rc);
    return Ok{};
  }

 private:
  ChunkReader(const Database& db, RunId run, Statement lists, Statement chunks)
      : db_(&db), run_(run), lists_(std::move(lists)), chunks_(std::move(chunks)) {}

  const Database* db_;
  RunId run_;
  Statement lists_;
  Statement chunks_;
};

const ListRow* findList(const std::vector<ListRow>& lists, sm::ListKind kind, int level) {
  for (const ListRow& l : lists)
    if (l.kind == kind && l.level == level) return &l;
  return nullptr;
}

// Decodes the whole spans of `list` in chunks c0..c1 that start before
// `stopNs` and that `keep` accepts, a chunk's stream at a time, into fn(batch).
template <class Keep, class Fn>
Status decodeSpans(ChunkReader& reader, const ListRow& list, int rank, std::int64_t c0, std::int64_t c1,
                   std::int64_t stopNs, std::vector<SummarySpan>& buffer, Keep keep, Fn fn) {
  return reader.chunks(rank, list, c0, c1, [&](int stream, std::int64_t chunk, std::string_view bytes) {
    sm::Decoder d(bytes);
    sm::SpanCursor at{static_cast<std::int64_t>(sm::wrapMul(chunk, list.chunk_ns)), 0, 0};
    SummarySpan s;
    s.span.rank = rank;
    s.span.stream = stream;
    buffer.clear();
    while (!d.atEnd()) {
      if (!sm::decodeSpan(d, at, s)) return false;
      if (s.span.start_ns >= stopNs) {
        break;  // the rest start later still
      }
      if (keep(s.span)) buffer.push_back(s);
    }
    if (!buffer.empty()) fn(std::span<const SummarySpan>(buffer));
    return true;
  });
}

// The whole spans of `list` that overlap `w`, into fn(batch).
template <class Fn>
Status readWholeSpans(ChunkReader& reader, const ListRow& list, const RankWindow& w, std::vector<SummarySpan>& buffer,
                      Fn fn) {
  const std::int64_t c0 = sm::floorDiv(saturatingSub(w.t0_ns, list.lookback_ns), list.chunk_ns);
  const std::int64_t c1 = sm::floorDiv(w.t1_ns - 1, list.chunk_ns);
  return decodeSpans(
      reader, list, w.rank, c0, c1, w.t1_ns, buffer, [&](const Span& s) { return overlaps(s, w.t0_ns, w.t1_ns); }, fn);
}

// (stream, bucket index) pairs, sorted, and the start ranges they cover.
using BucketSet = std::vector<std::pair<int, std::int64_t>>;

std::vector<std::pair<std::int64_t, std::int64_t>> rangesOf(const BucketSet& buckets, std::int64_t width) {
  std::vector<std::int64_t> indices;
  for (const auto& b : buckets) indices.push_back(b.second);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i + 1;
    while (j < indices.size() && indices[j] == indices[j - 1] + 1) ++j;
    out.emplace_back(static_cast<std::int64_t>(sm::wrapMul(indices[i], width)),
                     saturatingAdd(static_cast<std::int64_t>(sm::wrapMul(indices[j - 1], width)), width));
    i = j;
  }
  return out;
}

// One window at one level (TraceStore::summaryWindow). The buckets that
// straddle an end of the window are resolved from finer data: the whole
// spans of the finer levels and the finest level's buckets there, and only
// the finest level's straddling buckets from the spans table.
class WindowReader {
 public:
  WindowReader(const Database& db, RunId run, int level, int finest, ChunkReader reader, SummaryVisitor& visitor)
      : db_(db), run_(run), level_(level), finest_(finest), reader_(std::move(reader)), visitor_(visitor) {}

  Status rank(std::size_t index, const RankWindow& w) {
    if (w.t1_ns <= w.t0_ns) return Ok{};
    auto lists = reader_.lists(w.rank);
    if (!lists) return lists.error();
    BucketSet uncertain;
    if (const ListRow* l = findList(*lists, sm::ListKind::Buckets, level_)) {
      const std::int64_t width = summaryLevelWidth(level_);
      // From the bucket before t0's: its spans may reach into the window.
      auto s = scanBuckets(
          index, w, *l, sm::floorDiv(w.t0_ns, width) - 1, sm::floorDiv(w.t1_ns - 1, width),
          [](int, std::int64_t) { return true; }, uncertain);
      if (!s) return s;
    }
    for (const ListRow& l : *lists) {  // the spans whole at this level: those of every level from it up
      if (l.kind == sm::ListKind::Spans && l.level >= level_) {
        auto s = readWholeSpans(reader_, l, w, spans_,
                                [&](std::span<const SummarySpan> spans) { visitor_.spans(index, spans); });
        if (!s) return s;
      }
    }
    if (const ListRow* l = findList(*lists, sm::ListKind::Steps, 0)) {
      auto s = readWholeSpans(reader_, *l, w, spans_,
                              [&](std::span<const SummarySpan> steps) { visitor_.steps(index, steps); });
      if (!s) return s;
    }
    return edges(index, w, *lists, uncertain);
  }

 private:
  // The buckets of `list` with index b0..b1 that `keep` accepts: inside the
  // window to the visitor, across an end of it into `uncertain`.
  template <class Keep>
  Status scanBuckets(std::size_t index, const RankWindow& w, const ListRow& list, std::int64_t b0, std::int64_t b1,
                     Keep keep, BucketSet& uncertain) {
    const std::int64_t width = summaryLevelWidth(list.level);
    const std::int64_t perChunk = list.chunk_ns / width;
    if (perChunk <= 0 || list.chunk_ns % width != 0) return damaged(db_, run_, w.rank);
    return reader_.chunks(
        w.rank, list, sm::floorDiv(b0, perChunk), sm::floorDiv(b1, perChunk),
        [&](int stream, std::int64_t chunk, std::string_view bytes) {
          sm::Decoder d(bytes);
          std::int64_t previous = static_cast<std::int64_t>(sm::wrapMul(chunk, perChunk)) - 1;
          SummaryBucket b;
          batch_.clear();
          classes_.clear();
          while (!d.atEnd()) {
            b.first_class = static_cast<std::uint32_t>(classes_.size());
            if (!sm::decodeBucket(d, previous, width, b, classes_)) return false;
            previous = b.index;
            b.class_count = static_cast<std::uint32_t>(classes_.size()) - b.first_class;
            if (b.index > b1 || b.min_start_ns >= w.t1_ns) break;
            // Its spans start in [min_start, end) and end by max_end.
            const std::int64_t end = saturatingAdd(static_cast<std::int64_t>(sm::wrapMul(b.index, width)), width);
            const bool out = b.max_end_ns < w.t0_ns || (b.max_end_ns == w.t0_ns && end <= w.t0_ns);
            if (b.index < b0 || out || !keep(stream, b.index)) {
              classes_.resize(b.first_class);  // out: every span ends by t0 (an instant at t0 would be in)
            } else if (b.min_start_ns >= w.t0_ns && end <= w.t1_ns) {
              batch_.push_back(b);
            } else {
              classes_.resize(b.first_class);
              uncertain.emplace_back(stream, b.index);
            }
          }
          if (!batch_.empty()) visitor_.buckets(index, list.level, stream, batch_, classes_);
          return true;
        });
  }

  // Resolves the straddling buckets (sorted here) of this level.
  Status edges(std::size_t index, const RankWindow& w, const std::vector<ListRow>& lists, BucketSet& uncertain) {
    if (uncertain.empty()) return Ok{};
    std::sort(uncertain.begin(), uncertain.end());
    const std::int64_t width = summaryLevelWidth(level_);
    if (level_ == finest_) return rawEdges(index, w, uncertain, width);
    const auto straddles = [&](int stream, std::int64_t start) {
      return std::binary_search(uncertain.begin(), uncertain.end(), std::pair{stream, sm::floorDiv(start, width)});
    };
    const auto ranges = rangesOf(uncertain, width);
    for (const ListRow& l : lists) {  // the finer levels' whole spans there
      if (l.kind != sm::ListKind::Spans || l.level >= level_) continue;
      for (const auto& [a, b] : ranges) {
        const std::int64_t from = a;
        const auto keep = [&](const Span& s) {
          return s.start_ns >= from && straddles(s.stream, s.start_ns) && overlaps(s, w.t0_ns, w.t1_ns);
        };
        auto s = decodeSpans(reader_, l, w.rank, sm::floorDiv(a, l.chunk_ns), sm::floorDiv(b - 1, l.chunk_ns), b,
                             spans_, keep, [&](std::span<const SummarySpan> spans) { visitor_.spans(index, spans); });
        if (!s) return s;
      }
    }
    BucketSet finer;  // the finest level's buckets there, and those of them that straddle
    if (const ListRow* l = findList(lists, sm::ListKind::Buckets, finest_)) {
      const std::int64_t fine = summaryLevelWidth(finest_);
      for (const auto& [a, b] : ranges) {
        auto s = scanBuckets(
            index, w, *l, sm::floorDiv(a, fine), sm::floorDiv(b - 1, fine),
            [&](int stream, std::int64_t i) {
              return straddles(stream, static_cast<std::int64_t>(sm::wrapMul(i, fine)));
            },
            finer);
        if (!s) return s;
      }
      std::sort(finer.begin(), finer.end());
      return rawEdges(index, w, finer, fine);
    }
    return Ok{};
  }

  // The spans of `straddling` buckets (width `width`) that overlap the
  // window, from the spans table.
  Status rawEdges(std::size_t index, const RankWindow& w, const BucketSet& straddling, std::int64_t width) {
    if (straddling.empty()) return Ok{};
    if (!edgeReader_) {
      auto r = detail::SpanStartReader::prepare(db_, run_);
      if (!r) return r.error();
      edgeReader_.emplace(std::move(*r));
    }
    raw_.clear();
    for (const auto& [a, b] : rangesOf(straddling, width)) {
      if (auto s = edgeReader_->read(w.rank, a, b, raw_); !s) return s;
    }
    edge_.clear();
    for (const Span& s : raw_) {
      const bool inBucket = sm::wrapSub(s.end_ns, s.start_ns) < static_cast<std::uint64_t>(width / 2) &&
                            std::binary_search(straddling.begin(), straddling.end(),
                                               std::pair{s.stream, sm::floorDiv(s.start_ns, width)});
      if (inBucket && overlaps(s, w.t0_ns, w.t1_ns)) edge_.push_back(s);
    }
    if (!edge_.empty()) visitor_.edgeSpans(index, edge_);
    return Ok{};
  }

  const Database& db_;
  RunId run_;
  int level_;
  int finest_;
  ChunkReader reader_;
  SummaryVisitor& visitor_;
  std::optional<detail::SpanStartReader> edgeReader_;
  std::vector<SummaryBucket> batch_;
  std::vector<SummaryClassWeight> classes_;
  std::vector<SummarySpan> spans_;
  std::vector<Span> raw_;
  std::vector<Span> edge_;
};

// A read transaction for the life of the object, unless one is open.
class ReadTransaction {
 public:
  explicit ReadTransaction(const Database& db) : db_(db) {
    open_ = sqlite3_get_autocommit(db.handle()) != 0 &&
            sqlite3_exec(db.handle(), "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  ~ReadTransaction() {
    if (open_) sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr);
  }

 private:
  const Database& db_;
  bool open_ = false;
};

// The run's summaries when current, else an error.
Result<SpanSummaryInfo> requireCurrent(const TraceStore& store, RunId run, std::string_view tag) {
  auto info = store.currentSpanSummaries(run, tag);
  if (!info) return info.error();
  if (!*info) {
    return Error{detail::storeName(store.path()) + ": " + runText(run) + " has no span summaries tagged '" +
                 std::string(tag) + "' (format " + std::to_string(kSpanSummaryFormat) +
                 ") over its current spans; build them again"};
  }
  return std::move(**info);
}

}  // namespace

Status TraceStore::summaryWindow(const SummaryWindowRequest& request, SummaryVisitor& visitor) const {
  auto info = requireCurrent(*this, request.run, request.tag);
  if (!info) return info.error();
  if (std::find(info->levels.begin(), info->levels.end(), request.level) == info->levels.end()) {
    std::string built;
    for (const int l : info->levels) {
      built += " ";
      built += std::to_string(l);
    }
    return Error{"span summaries of " + runText(request.run) + ": level " + std::to_string(request.level) +
                     " was not built (levels" + built + ")",
                 ErrorKind::Usage};
  }
  std::vector<int> ranks;
  for (const RankWindow& w : request.windows) ranks.push_back(w.rank);
  std::sort(ranks.begin(), ranks.end());
  if (const auto twice = std::adjacent_find(ranks.begin(), ranks.end()); twice != ranks.end()) {
    return Error{
        "span summaries of " + runText(request.run) + ": rank " + std::to_string(*twice) + " is asked for twice",
        ErrorKind::Usage};
  }
  // One read transaction: a snapshot, and no lock taken per statement.
  const ReadTransaction transaction(*db_);
  auto reader = ChunkReader::prepare(*db_, request.run);
  if (!reader) return reader.error();
  WindowReader windows(*db_, request.run, request.level, info->levels.front(), std::move(*reader), visitor);
  for (std::size_t i = 0; i < request.windows.size(); ++i) {
    if (auto s = windows.rank(i, request.windows[i]); !s) return s;
  }
  return Ok{};
}

Result<std::vector<SummarySpan>> TraceStore::summarySteps(RunId run, std::string_view tag) const {
  if (auto info = requireCurrent(*this, run, tag); !info) return info.error();
  auto extents = spanExtents(run);
  if (!extents) return extents.error();
  auto reader = ChunkReader::prepare(*db_, run);
  if (!reader) return reader.error();
  std::vector<SummarySpan> out;
  std::vector<SummarySpan> buffer;
  for (const SpanExtent& e : *extents) {
    auto lists = reader->lists(e.rank);
    if (!lists) return lists.error();
    const ListRow* steps = findList(*lists, sm::ListKind::Steps, 0);
    if (steps == nullptr) continue;
    const std::size_t begin = out.size();
    const RankWindow all{e.rank, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
    auto s = readWholeSpans(*reader, *steps, all, buffer, [&out](std::span<const SummarySpan> some) {
      out.insert(out.end(), some.begin(), some.end());
    });
    if (!s) return s.error();
    std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(begin), out.end(),
                     [](const SummarySpan& a, const SummarySpan& b) { return a.span.start_ns < b.span.start_ns; });
  }
  return out;
}

}  // namespace shardscope::core::store
