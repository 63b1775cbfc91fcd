// The engine's tracer: rows recorded as PODs with recorder-local string
// indices, a checked little-endian byte form for shipping a rank's rows to
// rank 0, and one flush into a trace-store run that interns each string once.
#include "shardscope/profiler/trace/trace_recorder.h"

#include <algorithm>
#include <optional>
#include <sstream>

namespace shardscope::profiler {

std::string joinRanks(const std::vector<std::uint32_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ranks[i]);
  }
  return out;
}

namespace {

// Byte form (docs/formats/engine-trace.md#byte-form): magic, version, then
// strings, spans, collectives, step summaries, table totals, ranks; every
// integer little-endian, counts before their rows, nothing after the ranks.
constexpr std::uint8_t kMagic[4] = {'S', 'S', 'T', 'R'};
constexpr std::uint32_t kVersion = 2;  // 2: spans carry a correlation id
constexpr std::size_t kSpanBytes = 5 * 4 + 5 * 8;
constexpr std::size_t kCollectiveBytes = 4 + 8 + 4 + 4 + 8 + 4 + 8 + 8 + 4 + 4 + 8;
constexpr std::size_t kStepBytes = 8 + 4 + 6 * 8;
constexpr std::size_t kTableBytes = 4 + 4 + 3 * 8;
constexpr std::size_t kRankMinBytes = 4 + 4 + 3 * 4;
constexpr std::size_t kFlushChunk = 8192;

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(static_cast<std::byte>(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void i32(int v) { u32(static_cast<std::uint32_t>(v)); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    for (char c : s) u8(static_cast<std::uint8_t>(c));
  }

 private:
  std::vector<std::byte>& out_;
};

// Reads with bounds checks; the first failure sticks and names the offset.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}

  [[nodiscard]] bool failed() const { return !error_.empty(); }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::size_t offset() const { return pos_; }
  [[nodiscard]] std::size_t left() const { return in_.size() - pos_; }

  void fail(const std::string& what) {
    if (!failed()) {
      std::ostringstream m;
      m << "engine trace bytes: offset " << pos_ << ": " << what;
      error_ = m.str();
    }
  }
  bool need(std::size_t n, const char* what) {
    if (failed()) return false;
    if (left() < n) {
      std::ostringstream m;
      m << "expected " << what << " (" << n << " bytes), only " << left() << " left (truncated)";
      fail(m.str());
      return false;
    }
    return true;
  }
  std::uint8_t u8(const char* what) {
    if (!need(1, what)) return 0;
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  std::uint32_t u32(const char* what) {
    if (!need(4, what)) return 0;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(in_[pos_++]) << (8 * i);
    return v;
  }
  std::uint64_t u64(const char* what) {
    if (!need(8, what)) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(in_[pos_++]) << (8 * i);
    return v;
  }
  int i32(const char* what) { return static_cast<int>(u32(what)); }
  std::int64_t i64(const char* what) { return static_cast<std::int64_t>(u64(what)); }
  std::string str(const char* what) {
    const std::uint32_t n = u32(what);
    if (!need(n, what)) return {};
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A row count whose rows (at least row_bytes each) must fit in what is left,
  // so garbage never makes us reserve gigabytes.
  std::uint64_t count(std::size_t row_bytes, const char* what) {
    const std::uint64_t n = u64(what);
    if (failed()) return 0;
    if (row_bytes > 0 && n > left() / row_bytes) {
      std::ostringstream m;
      m << what << " " << n << " needs at least " << n << " x " << row_bytes << " bytes, only " << left() << " left";
      pos_ -= 8;
      fail(m.str());
      return 0;
    }
    return n;
  }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace

TraceRecorder::TraceRecorder(bool spans_enabled) : spans_enabled_(spans_enabled) { index_.emplace(std::string(), 0); }

std::uint32_t TraceRecorder::name(std::string_view text) {
  std::string key(text);
  const auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(strings_.size());
  strings_.push_back(key);
  index_.emplace(std::move(key), id);
  return id;
}

void TraceRecorder::tableStat(int rank, std::uint32_t table, std::int64_t lookups, std::int64_t unique_rows,
                              std::int64_t time_ns) {
  // Recent rows are the likely match (a caller adds one rank's tables together).
  for (auto it = tables_.rbegin(); it != tables_.rend(); ++it) {
    if (it->rank == rank && it->table == table) {
      it->lookups += lookups;
      it->unique_rows += unique_rows;
      it->time_ns += time_ns;
      return;
    }
  }
  tables_.push_back(TableTotals{rank, table, lookups, unique_rows, time_ns});
}

void TraceRecorder::shift(std::int64_t offset_ns) {
  for (SpanRec& s : spans_) {
    s.start_ns += offset_ns;
    s.end_ns += offset_ns;
  }
  for (CollectiveRec& c : collectives_) {
    c.start_ns += offset_ns;
    c.end_ns += offset_ns;
  }
}

std::vector<std::byte> TraceRecorder::serialize() const {
  std::vector<std::byte> out;
  std::size_t size = 4 + 4 + 1 + 4 + 8 * 4 + 4 + spans_.size() * kSpanBytes + collectives_.size() * kCollectiveBytes +
                     steps_.size() * kStepBytes + tables_.size() * kTableBytes;
  for (const std::string& s : strings_) size += 4 + s.size();
  for (const auto& r : ranks_) size += kRankMinBytes + r.host.size();
  out.reserve(size);
  ByteWriter w(out);
  for (std::uint8_t b : kMagic) w.u8(b);
  w.u32(kVersion);
  w.u8(spans_enabled_ ? 1 : 0);
  w.u32(static_cast<std::uint32_t>(strings_.size()));
  for (const std::string& s : strings_) w.str(s);
  w.u64(spans_.size());
  for (const SpanRec& s : spans_) {
    w.i32(s.rank);
    w.i32(s.stream);
    w.u32(s.kind);
    w.u32(s.name);
    w.u32(s.table);
    w.i64(s.start_ns);
    w.i64(s.end_ns);
    w.i64(s.step);
    w.i64(s.bytes);
    w.i64(s.correlation);
  }
  w.u64(collectives_.size());
  for (const CollectiveRec& c : collectives_) {
    w.i32(c.rank);
    w.i64(c.step);
    w.u32(c.op);
    w.u32(c.group);
    w.i64(c.bytes);
    w.i32(c.peers);
    w.i64(c.start_ns);
    w.i64(c.end_ns);
    w.u32(c.process_group);
    w.u32(c.algorithm);
    w.i64(c.seq);
  }
  w.u64(steps_.size());
  for (const core::store::StepSummary& s : steps_) {
    w.i64(s.step);
    w.i32(s.rank);
    w.i64(s.emb_fwd_ns);
    w.i64(s.emb_bwd_ns);
    w.i64(s.dense_ns);
    w.i64(s.comm_ns);
    w.i64(s.wait_ns);
    w.i64(s.total_ns);
  }
  w.u64(tables_.size());
  for (const TableTotals& t : tables_) {
    w.i32(t.rank);
    w.u32(t.table);
    w.i64(t.lookups);
    w.i64(t.unique_rows);
    w.i64(t.time_ns);
  }
  w.u32(static_cast<std::uint32_t>(ranks_.size()));
  for (const core::store::RankInfo& r : ranks_) {
    w.i32(r.rank);
    w.str(r.host);
    w.i32(r.device);
    w.i32(r.sharding_group);
    w.i32(r.replica_group);
  }
  return out;
}

namespace {

// The magic, the format version and the spans-enabled flag; nullopt (and
// r.failed()) when they are not those of this build's format.
std::optional<bool> readHeader(ByteReader& r) {
  for (std::uint8_t b : kMagic) {
    if (r.u8("the magic \"SSTR\"") != b && !r.failed())
      r.fail("expected the magic \"SSTR\", this is not an engine trace");
  }
  const std::uint32_t version = r.u32("the format version");
  if (!r.failed() && version != kVersion) {
    std::ostringstream m;
    m << "format version " << version << " is not supported (expected " << kVersion << ")";
    r.fail(m.str());
  }
  const std::uint8_t enabled = r.u8("the spans-enabled flag");
  if (!r.failed() && enabled > 1) r.fail("expected a spans-enabled flag of 0 or 1");
  if (r.failed()) return std::nullopt;
  return enabled == 1;
}

}  // namespace

core::Result<TraceRecorder> TraceRecorder::deserialize(std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  const auto bad = [&r](const std::string& what) -> core::Result<TraceRecorder> {
    r.fail(what);
    return core::Error{r.error()};
  };
  const std::optional<bool> enabled = readHeader(r);
  if (!enabled) return core::Error{r.error()};
  TraceRecorder rec(*enabled);

  const std::uint32_t string_count = r.u32("the string count");
  if (!r.failed() && (string_count == 0 || string_count > r.left() / 4))
    return bad("string count " + std::to_string(string_count) + " is impossible for the bytes left");
  for (std::uint32_t i = 0; i < string_count && !r.failed(); ++i) {
    std::string s = r.str("a string");
    if (r.failed()) break;
    if (i == 0) {
      if (!s.empty()) return bad("string 0 must be empty");
      continue;
    }
    if (rec.index_.count(s) != 0) return bad("string " + std::to_string(i) + " repeats an earlier one");
    rec.index_.emplace(s, i);
    rec.strings_.push_back(std::move(s));
  }
  const auto check_string = [&](std::uint32_t id, const char* field, std::uint64_t row) {
    if (r.failed() || id < string_count) return true;
    std::ostringstream m;
    m << field << " of row " << row << " is string " << id << ", there are only " << string_count;
    r.fail(m.str());
    return false;
  };
  const auto check_interval = [&](std::int64_t start, std::int64_t end, const char* what, std::uint64_t row) {
    if (r.failed() || end >= start) return true;
    std::ostringstream m;
    m << what << " " << row << " ends (" << end << ") before it starts (" << start << ")";
    r.fail(m.str());
    return false;
  };

  const std::uint64_t span_count = r.count(kSpanBytes, "span count");
  rec.spans_.reserve(span_count);
  for (std::uint64_t i = 0; i < span_count && !r.failed(); ++i) {
    SpanRec s;
    s.rank = r.i32("a span's rank");
    s.stream = r.i32("a span's stream");
    s.kind = r.u32("a span's kind");
    s.name = r.u32("a span's name");
    s.table = r.u32("a span's table");
    s.start_ns = r.i64("a span's start");
    s.end_ns = r.i64("a span's end");
    s.step = r.i64("a span's step");
    s.bytes = r.i64("a span's bytes");
    s.correlation = r.i64("a span's correlation");
    if (!check_string(s.kind, "kind", i) || !check_string(s.name, "name", i) || !check_string(s.table, "table", i) ||
        !check_interval(s.start_ns, s.end_ns, "span", i))
      break;
    rec.spans_.push_back(s);
  }
  const std::uint64_t collective_count = r.count(kCollectiveBytes, "collective count");
  rec.collectives_.reserve(collective_count);
  for (std::uint64_t i = 0; i < collective_count && !r.failed(); ++i) {
    CollectiveRec c;
    c.rank = r.i32("a collective's rank");
    c.step = r.i64("a collective's step");
    c.op = r.u32("a collective's op");
    c.group = r.u32("a collective's group");
    c.bytes = r.i64("a collective's bytes");
    c.peers = r.i32("a collective's peers");
    c.start_ns = r.i64("a collective's start");
    c.end_ns = r.i64("a collective's end");
    c.process_group = r.u32("a collective's process group");
    c.algorithm = r.u32("a collective's algorithm");
    c.seq = r.i64("a collective's sequence number");
    if (!check_string(c.op, "op", i) || !check_string(c.group, "group", i) ||
        !check_string(c.process_group, "process group", i) || !check_string(c.algorithm, "algorithm", i) ||
        !check_interval(c.start_ns, c.end_ns, "collective", i))
      break;
    rec.collectives_.push_back(c);
  }
  const std::uint64_t step_count = r.count(kStepBytes, "step summary count");
  rec.steps_.reserve(step_count);
  for (std::uint64_t i = 0; i < step_count && !r.failed(); ++i) {
    core::store::StepSummary s;
    s.step = r.i64("a step summary's step");
    s.rank = r.i32("a step summary's rank");
    s.emb_fwd_ns = r.i64("a step summary's emb_fwd_ns");
    s.emb_bwd_ns = r.i64("a step summary's emb_bwd_ns");
    s.dense_ns = r.i64("a step summary's dense_ns");
    s.comm_ns = r.i64("a step summary's comm_ns");
    s.wait_ns = r.i64("a step summary's wait_ns");
    s.total_ns = r.i64("a step summary's total_ns");
    if (!r.failed()) rec.steps_.push_back(s);
  }
  const std::uint64_t table_count = r.count(kTableBytes, "table total count");
  for (std::uint64_t i = 0; i < table_count && !r.failed(); ++i) {
    const int rank = r.i32("a table total's rank");
    const std::uint32_t table = r.u32("a table total's table");
    const std::int64_t lookups = r.i64("a table total's lookups");
    const std::int64_t unique_rows = r.i64("a table total's unique rows");
    const std::int64_t time_ns = r.i64("a table total's time");
    if (!check_string(table, "table", i)) break;
    if (!r.failed()) rec.tableStat(rank, table, lookups, unique_rows, time_ns);
  }
  const std::uint32_t rank_count = r.u32("the rank count");
  if (!r.failed() && rank_count > r.left() / kRankMinBytes)
    return bad("rank count " + std::to_string(rank_count) + " is impossible for the bytes left");
  for (std::uint32_t i = 0; i < rank_count && !r.failed(); ++i) {
    core::store::RankInfo info;
    info.rank = r.i32("a rank's number");
    info.host = r.str("a rank's host");
    info.device = r.i32("a rank's device");
    info.sharding_group = r.i32("a rank's sharding group");
    info.replica_group = r.i32("a rank's replica group");
    if (!r.failed()) rec.ranks_.push_back(std::move(info));
  }
  if (r.failed()) return core::Error{r.error()};
  if (r.left() != 0) return bad(std::to_string(r.left()) + " unexpected bytes after the ranks");
  return rec;
}

void TraceRecorder::merge(const TraceRecorder& other) {
  std::vector<std::uint32_t> map(other.strings_.size());
  for (std::size_t i = 0; i < other.strings_.size(); ++i) map[i] = name(other.strings_[i]);
  spans_.reserve(spans_.size() + other.spans_.size());
  for (SpanRec s : other.spans_) {
    s.kind = map[s.kind];
    s.name = map[s.name];
    s.table = map[s.table];
    spans_.push_back(s);
  }
  for (CollectiveRec c : other.collectives_) {
    c.op = map[c.op];
    c.group = map[c.group];
    c.process_group = map[c.process_group];
    c.algorithm = map[c.algorithm];
    collectives_.push_back(c);
  }
  steps_.insert(steps_.end(), other.steps_.begin(), other.steps_.end());
  for (const TableTotals& t : other.tables_) tableStat(t.rank, map[t.table], t.lookups, t.unique_rows, t.time_ns);
  ranks_.insert(ranks_.end(), other.ranks_.begin(), other.ranks_.end());
}

core::Status TraceRecorder::flush(core::store::RunWriter& writer) const {
  using core::store::StringId;
  std::vector<StringId> ids(strings_.size(), core::store::kNoString);
  for (std::size_t i = 1; i < strings_.size(); ++i) {
    auto id = writer.intern(strings_[i]);
    if (!id) return core::Error{id.error()};
    ids[i] = *id;
  }
  for (const core::store::RankInfo& r : ranks_) {
    if (auto st = writer.addRank(r); !st) return st;
  }
  std::vector<core::store::Span> chunk;
  chunk.reserve(std::min(kFlushChunk, spans_.size()));
  for (std::size_t begin = 0; begin < spans_.size(); begin += kFlushChunk) {
    chunk.clear();
    const std::size_t end = std::min(spans_.size(), begin + kFlushChunk);
    for (std::size_t i = begin; i < end; ++i) {
      const SpanRec& s = spans_[i];
      core::store::Span row;
      row.rank = s.rank;
      row.stream = s.stream;
      row.kind = ids[s.kind];
      row.name = ids[s.name];
      row.start_ns = s.start_ns;
      row.end_ns = s.end_ns;
      row.step = s.step;
      row.bytes = s.bytes;
      row.correlation = s.correlation;
      row.table = ids[s.table];
      chunk.push_back(row);
    }
    if (auto st = writer.addSpans(chunk); !st) return st;
  }
  for (const CollectiveRec& c : collectives_) {
    core::store::Collective row;
    row.rank = c.rank;
    row.step = c.step;
    row.op = ids[c.op];
    row.group = ids[c.group];
    row.bytes = c.bytes;
    row.peers = c.peers;
    row.start_ns = c.start_ns;
    row.end_ns = c.end_ns;
    if (c.process_group != 0) row.process_group = ids[c.process_group];
    if (c.algorithm != 0) row.algorithm = ids[c.algorithm];
    row.seq = c.seq;
    if (auto st = writer.addCollective(row); !st) return st;
  }
  for (const core::store::StepSummary& s : steps_) {
    if (auto st = writer.addStepSummary(s); !st) return st;
  }
  for (const TableTotals& t : tables_) {
    core::store::TableStat row;
    row.rank = t.rank;
    row.table = ids[t.table];
    row.lookups = t.lookups;
    row.unique_rows = t.unique_rows;
    row.time_ns = t.time_ns;
    if (auto st = writer.addTableStat(row); !st) return st;
  }
  return core::Ok{};
}

}  // namespace shardscope::profiler
