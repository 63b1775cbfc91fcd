#include "shardscope/core/store/run_writer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "schema.h"
#include "sqlite_db.h"

namespace shardscope::core::store {

using detail::Database;
using detail::Statement;

namespace {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

constexpr std::size_t kRowsPerInsert = 32;
constexpr std::size_t kSpanColumns = 11;
// Spans per span_blocks row: bounds how much a window query reads beyond
// the spans it returns (at most about two blocks per rank).
constexpr std::size_t kBlockSpans = 1024;

std::string spanInsertSql(std::size_t rows) {
  std::string sql =
      "INSERT INTO spans(run, rank, stream, start_ns, end_ns, kind, name, step, correlation, "
      "bytes, table_id) VALUES ";
  for (std::size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "" : ",";
    sql += "(?,?,?,?,?,?,?,?,?,?,?)";
  }
  return sql;
}

constexpr const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

}  // namespace

struct RunWriter::State {
  std::unique_ptr<Database> db;
  RunId run{};
  WriterOptions options;

  std::unordered_map<std::string, std::int64_t, StringHash, std::equal_to<>> strings;
  std::int64_t maxStringId = 0;  // ids above this were not handed out to us

  std::vector<Span> spans;
  std::vector<Span> sorted;  // scratch for sortByRankAndStart
  std::vector<Collective> collectives;
  std::vector<RankInfo> ranks;
  std::vector<StepSummary> steps;
  std::vector<TableStat> tables;
  struct Extent {
    std::int64_t span_count = 0;
    std::int64_t min_start_ns = 0;
    std::int64_t max_end_ns = 0;
    std::int64_t max_duration_ns = 0;
    std::int64_t max_block_ns = 0;
  };
  // Ranks 0..kDenseRanks-1 (all real ones) in a flat array: addSpan is hot.
  static constexpr int kDenseRanks = 1 << 16;
  std::vector<Extent> denseExtents;
  std::unordered_map<int, Extent> sparseExtents;
  Extent& extent(int rank) {
    if (rank >= 0 && rank < kDenseRanks) {
      if (static_cast<std::size_t>(rank) >= denseExtents.size()) {
        denseExtents.resize(static_cast<std::size_t>(rank) + 1);
      }
      return denseExtents[static_cast<std::size_t>(rank)];
    }
    return sparseExtents[rank];
  }

  Statement insertSpans, insertSpan, insertBlock, insertCollective, upsertRank, upsertStep, upsertTable, upsertExtent;
  Statement internInsert, internSelect;

  std::int64_t committedSpans = 0;
  std::optional<Error> broken;
  bool closed = false;

  [[nodiscard]] std::size_t buffered() const {
    return spans.size() + collectives.size() + ranks.size() + steps.size() + tables.size();
  }
  [[nodiscard]] Status usable() const {
    if (broken) {
      return *broken;
    }
    if (closed) {
      return Error{detail::storeName(db->path()) + ": run " + std::to_string(static_cast<std::int64_t>(run)) +
                   " is already finished"};
    }
    return Ok{};
  }
  [[nodiscard]] Status checkId(StringId id, std::string_view field) const {
    const auto v = static_cast<std::int64_t>(id);
    if (v < 0 || v > maxStringId) {
      return Error{std::string(field) + " " + std::to_string(v) + " is not a string id interned by this writer"};
    }
    return Ok{};
  }
  Status flush();
  Status flushRows();
  Status flushSpans();
  void bindSpan(Statement& st, int first, const Span& sp);
  void sortByRankAndStart();
  Status maybeFlush() { return buffered() >= options.rows_per_commit ? flush() : Status(Ok{}); }
  Status markRun(RunStatus status, std::string_view reason);
};

// Spans usually arrive in time order per rank, interleaved across ranks: a
// stable counting sort by rank leaves each rank's spans already in start
// order, and only out-of-order ranks pay for a comparison sort.
void RunWriter::State::sortByRankAndStart() {
  const auto byStart = [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.stream < b.stream;
  };
  int lo = spans.front().rank;
  int hi = lo;
  for (const Span& sp : spans) {
    lo = std::min(lo, sp.rank);
    hi = std::max(hi, sp.rank);
  }
  const auto range = static_cast<std::int64_t>(hi) - lo + 1;
  if (range > static_cast<std::int64_t>(spans.size()) + 65536) {  // sparse ranks
    std::sort(spans.begin(), spans.end(),
              [&byStart](const Span& a, const Span& b) { return a.rank != b.rank ? a.rank < b.rank : byStart(a, b); });
    return;
  }
  std::vector<std::size_t> offset(static_cast<std::size_t>(range) + 1, 0);
  for (const Span& sp : spans) {
    ++offset[static_cast<std::size_t>(sp.rank - lo) + 1];
  }
  for (std::size_t r = 1; r < offset.size(); ++r) {
    offset[r] += offset[r - 1];
  }
  sorted.resize(spans.size());
  std::vector<std::size_t> next(offset.begin(), offset.end() - 1);
  for (const Span& sp : spans) {
    sorted[next[static_cast<std::size_t>(sp.rank - lo)]++] = sp;
  }
  for (std::size_t r = 0; r + 1 < offset.size(); ++r) {
    const auto first = sorted.begin() + static_cast<std::ptrdiff_t>(offset[r]);
    const auto last = sorted.begin() + static_cast<std::ptrdiff_t>(offset[r + 1]);
    if (!std::is_sorted(first, last, byStart)) {
      std::sort(first, last, byStart);
    }
  }
  spans.swap(sorted);
}

void RunWriter::State::bindSpan(Statement& st, int first, const Span& sp) {
  st.bind(first + 0, static_cast<std::int64_t>(run));
  st.bind(first + 1, sp.rank);
  st.bind(first + 2, sp.stream);
  st.bind(first + 3, sp.start_ns);
  st.bind(first + 4, sp.end_ns);
  st.bind(first + 5, static_cast<std::int64_t>(sp.kind));
  st.bind(first + 6, static_cast<std::int64_t>(sp.name));
  st.bind(first + 7, sp.step);
  st.bind(first + 8, sp.correlation);
  st.bind(first + 9, sp.bytes);
  st.bindIdOrNull(first + 10, static_cast<std::int64_t>(sp.table));
}

Status RunWriter::State::flushSpans() {
  if (spans.empty()) {
    return Ok{};
  }
  // Sorted by (rank, start), each rank's spans of this batch get consecutive
  // ids, so a block of them is described by an id range.
  sortByRankAndStart();
  // Inside our write transaction SQLite hands out max(id)+1, +2, ... (it
  // would only pick random ids past 2^63-1, which the check below catches).
  auto maxId = db->queryInt("SELECT coalesce(max(id), 0) FROM spans");
  if (!maxId) {
    return maxId.error();
  }
  const std::int64_t firstId = *maxId + 1;
  const std::size_t n = spans.size();
  std::size_t i = 0;
  // Many rows per statement: the per-step overhead dominates on small rows.
  for (; i + kRowsPerInsert <= n; i += kRowsPerInsert) {
    for (std::size_t r = 0; r < kRowsPerInsert; ++r) {
      bindSpan(insertSpans, static_cast<int>(r * kSpanColumns) + 1, spans[i + r]);
    }
    const int rc = insertSpans.step();
    insertSpans.reset();
    if (rc != SQLITE_DONE) {
      return db->error("inserting spans", rc);
    }
  }
  for (; i < n; ++i) {
    bindSpan(insertSpan, 1, spans[i]);
    const int rc = insertSpan.step();
    insertSpan.reset();
    if (rc != SQLITE_DONE) {
      return db->error("inserting spans", rc);
    }
  }
  if (sqlite3_last_insert_rowid(db->handle()) != firstId + static_cast<std::int64_t>(n) - 1) {
    return Error{detail::storeName(db->path()) + ": span ids are not consecutive; the store is full"};
  }
  // One block per at most kBlockSpans spans of one rank.
  const auto runId = static_cast<std::int64_t>(run);
  for (std::size_t b = 0; b < n;) {
    std::size_t e = b + 1;
    std::int64_t maxEnd = spans[b].end_ns;
    while (e < n && e - b < kBlockSpans && spans[e].rank == spans[b].rank) {
      maxEnd = std::max(maxEnd, spans[e].end_ns);
      ++e;
    }
    Extent& extent = this->extent(spans[b].rank);
    extent.max_block_ns = std::max(extent.max_block_ns, maxEnd - spans[b].start_ns);
    Statement& st = insertBlock;
    st.bind(1, runId);
    st.bind(2, spans[b].rank);
    st.bind(3, spans[b].start_ns);
    st.bind(4, spans[e - 1].start_ns);
    st.bind(5, maxEnd);
    st.bind(6, firstId + static_cast<std::int64_t>(b));
    st.bind(7, firstId + static_cast<std::int64_t>(e) - 1);
    const int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) {
      return db->error("inserting span blocks", rc);
    }
    b = e;
  }
  return Ok{};
}

Status RunWriter::State::flushRows() {
  if (auto s = flushSpans(); !s) {
    return s;
  }
  const auto runId = static_cast<std::int64_t>(run);
  for (const Collective& c : collectives) {
    Statement& st = insertCollective;
    st.bind(1, runId);
    st.bind(2, c.rank);
    st.bind(3, c.step);
    st.bind(4, static_cast<std::int64_t>(c.op));
    st.bindIdOrNull(5, static_cast<std::int64_t>(c.group));
    st.bindIdOrNull(6, static_cast<std::int64_t>(c.algorithm));
    st.bind(7, c.bytes);
    st.bind(8, c.peers);
    st.bind(9, c.start_ns);
    st.bind(10, c.end_ns);
    st.bindIdOrNull(11, static_cast<std::int64_t>(c.process_group));
    st.bind(12, c.seq);
    const int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) {
      return db->error("inserting collectives", rc);
    }
  }
  for (const RankInfo& r : ranks) {
    Statement& st = upsertRank;
    st.bind(1, runId);
    st.bind(2, r.rank);
    st.bind(3, r.host);
    st.bind(4, r.device);
    st.bind(5, r.sharding_group);
    st.bind(6, r.replica_group);
    const int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) {
      return db->error("inserting ranks", rc);
    }
  }
  for (const StepSummary& s : steps) {
    Statement& st = upsertStep;
    st.bind(1, runId);
    st.bind(2, s.step);
    st.bind(3, s.rank);
    st.bind(4, s.emb_fwd_ns);
    st.bind(5, s.emb_bwd_ns);
    st.bind(6, s.dense_ns);
    st.bind(7, s.comm_ns);
    st.bind(8, s.wait_ns);
    st.bind(9, s.total_ns);
    const int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) {
      return db->error("inserting step summaries", rc);
    }
  }
  for (const TableStat& t : tables) {
    Statement& st = upsertTable;
    st.bind(1, runId);
    st.bind(2, t.rank);
    st.bind(3, static_cast<std::int64_t>(t.table));
    st.bind(4, t.lookups);
    st.bind(5, t.unique_rows);
    st.bind(6, t.time_ns);
    const int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) {
      return db->error("inserting table stats", rc);
    }
  }
  // Extents go in the same transaction as the spans they describe, so a
  // reader's window bound always covers every committed span. The batch is
  // sorted by rank, so each touched rank is one run of equal ranks.
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (i > 0 && spans[i].rank == spans[i - 1].rank) {
      continue;
    }
    const int rank = spans[i].rank;
    const Extent& e = extent(rank);
    Statement& st = upsertExtent;
    st.bind(1, runId);
    st.bind(2, rank);
    st.bind(3, e.span_count);
    st.bind(4, e.min_start_ns);
    st.bind(5, e.max_end_ns);
    st.bind(6, e.max_duration_ns);
    st.bind(7, e.max_block_ns);
    const int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) {
      return db->error("updating span extents", rc);
    }
  }
  return Ok{};
}

Status RunWriter::State::flush() {
  if (buffered() == 0) {
    return Ok{};
  }
  if (auto s = db->exec("BEGIN IMMEDIATE"); !s) {
    broken = s.error();
    return s;
  }
  if (auto s = flushRows(); !s) {
    (void)db->exec("ROLLBACK");
    broken = s.error();
    return s;
  }
  if (auto s = db->exec("COMMIT"); !s) {
    (void)db->exec("ROLLBACK");
    broken = s.error();
    return s;
  }
  committedSpans += static_cast<std::int64_t>(spans.size());
  spans.clear();
  collectives.clear();
  ranks.clear();
  steps.clear();
  tables.clear();
  return Ok{};
}

Status RunWriter::State::markRun(RunStatus status, std::string_view reason) {
  auto stmt = db->prepare(std::string("UPDATE runs SET status = ?1, finished_at = ") + kNow +
                          ", error = ?2 WHERE id = ?3 AND status = 'running'");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, toText(status));
  if (reason.empty()) {
    stmt->bindNull(2);
  } else {
    stmt->bind(2, reason);
  }
  stmt->bind(3, static_cast<std::int64_t>(run));
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return db->error("marking the run " + std::string(toText(status)), rc);
  }
  closed = true;
  if (sqlite3_changes(db->handle()) != 1) {
    // Another process (e.g. `profile` after a launcher died) already closed it.
    return Error{"run " + std::to_string(static_cast<std::int64_t>(run)) +
                 " was already marked finished or failed by another process; it was not marked " +
                 std::string(toText(status))};
  }
  return Ok{};
}

RunWriter::RunWriter(std::unique_ptr<State> state) : s_(std::move(state)) {}
RunWriter::RunWriter(RunWriter&&) noexcept = default;
RunWriter& RunWriter::operator=(RunWriter&& other) noexcept {
  if (this != &other) {
    RunWriter dropped(std::move(*this));  // abandons our run, if any
    s_ = std::move(other.s_);
  }
  return *this;
}

RunWriter::~RunWriter() {
  if (s_ && !s_->closed && !s_->broken) {
    (void)s_->flush();
    (void)s_->markRun(RunStatus::Failed, "abandoned: the writer was closed without finish()");
  } else if (s_ && !s_->closed) {
    (void)s_->markRun(RunStatus::Failed, s_->broken->message);
  }
}

Result<RunWriter> RunWriter::begin(const std::filesystem::path& path, const RunHeader& header, WriterOptions options) {
  auto opened = detail::openValidated(path, OpenMode::Create);
  if (!opened) {
    return opened.error();
  }
  auto state = std::make_unique<State>();
  state->db = std::move(opened->db);
  state->options = options;
  if (state->options.rows_per_commit == 0) {
    state->options.rows_per_commit = 1;
  }
  Database& db = *state->db;
  sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms);

  struct Prep {
    Statement* target;
    std::string sql;
  };
  const Prep preps[] = {
      {&state->insertSpans, spanInsertSql(kRowsPerInsert)},
      {&state->insertSpan, spanInsertSql(1)},
      {&state->insertBlock,
       "INSERT INTO span_blocks(run, rank, min_start_ns, max_start_ns, max_end_ns, first_id, last_id) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
      {&state->insertCollective,
       "INSERT INTO collectives(run, rank, step, op, group_id, algorithm, bytes, peers, start_ns, "
       "end_ns, process_group, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"},
      {&state->upsertRank,
       "INSERT OR REPLACE INTO ranks(run, rank, host, device, sharding_group, replica_group) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
      {&state->upsertStep,
       "INSERT OR REPLACE INTO step_summaries(run, step, rank, emb_fwd_ns, emb_bwd_ns, dense_ns, "
       "comm_ns, wait_ns, total_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"},
      {&state->upsertTable,
       "INSERT OR REPLACE INTO table_stats(run, rank, table_id, lookups, unique_rows, time_ns) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
      {&state->upsertExtent,
       "INSERT OR REPLACE INTO span_extent(run, rank, span_count, min_start_ns, max_end_ns, "
       "max_dur_ns, max_block_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
      {&state->internInsert, "INSERT INTO strings(value) VALUES (?1) ON CONFLICT(value) DO NOTHING"},
      {&state->internSelect, "SELECT id FROM strings WHERE value = ?1"},
  };
  for (const Prep& p : preps) {
    auto stmt = db.prepare(p.sql);
    if (!stmt) {
      return stmt.error();
    }
    *p.target = std::move(*stmt);
  }

  auto insertRun = db.prepare(std::string("INSERT INTO runs(kind, status, label, model_json, "
                                          "cluster_json, plan_json, config_json, created_at) VALUES "
                                          "(?1, 'running', ?2, ?3, ?4, ?5, ?6, ") +
                              kNow + ")");
  if (!insertRun) {
    return insertRun.error();
  }
  insertRun->bind(1, toText(header.kind));
  insertRun->bind(2, header.label);
  insertRun->bind(3, header.model_json);
  insertRun->bind(4, header.cluster_json);
  insertRun->bind(5, header.plan_json);
  insertRun->bind(6, header.config_json);
  if (const int rc = insertRun->step(); rc != SQLITE_DONE) {
    return db.error("creating a run", rc);
  }
  state->run = RunId{sqlite3_last_insert_rowid(db.handle())};
  return RunWriter(std::move(state));
}

RunId RunWriter::run() const { return s_->run; }
std::int64_t RunWriter::committedSpans() const { return s_->committedSpans; }

Result<StringId> RunWriter::intern(std::string_view text) {
  if (auto s = s_->usable(); !s) {
    return s.error();
  }
  if (const auto it = s_->strings.find(text); it != s_->strings.end()) {
    return StringId{it->second};
  }
  // Autocommit: strings are shared by all runs, so one interned by a run
  // that later fails is harmless.
  Statement& ins = s_->internInsert;
  ins.bind(1, text);
  int rc = ins.step();
  ins.reset();
  if (rc != SQLITE_DONE) {
    return s_->db->error("interning a string", rc);
  }
  Statement& sel = s_->internSelect;
  sel.bind(1, text);
  rc = sel.step();
  const std::int64_t id = rc == SQLITE_ROW ? sel.int64(0) : 0;
  sel.reset();
  if (id == 0) {
    return s_->db->error("interning a string", rc == SQLITE_ROW ? SQLITE_CORRUPT : rc);
  }
  s_->strings.emplace(std::string(text), id);
  s_->maxStringId = std::max(s_->maxStringId, id);
  return StringId{id};
}

Status RunWriter::addRank(const RankInfo& rank) {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  s_->ranks.push_back(rank);
  return s_->maybeFlush();
}

Status RunWriter::addSpan(const Span& span) {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  if (span.end_ns < span.start_ns) {
    return Error{"span on rank " + std::to_string(span.rank) + " ends (" + std::to_string(span.end_ns) +
                 " ns) before it starts (" + std::to_string(span.start_ns) + " ns)"};
  }
  if (auto s = s_->checkId(span.kind, "span kind"); !s) {
    return s;
  }
  if (auto s = s_->checkId(span.name, "span name"); !s) {
    return s;
  }
  if (auto s = s_->checkId(span.table, "span table"); !s) {
    return s;
  }
  auto& e = s_->extent(span.rank);
  const std::int64_t duration = span.end_ns - span.start_ns;
  if (e.span_count == 0) {
    e = State::Extent{0, span.start_ns, span.end_ns, duration, 0};
  }
  e.min_start_ns = std::min(e.min_start_ns, span.start_ns);
  e.max_end_ns = std::max(e.max_end_ns, span.end_ns);
  e.max_duration_ns = std::max(e.max_duration_ns, duration);
  ++e.span_count;
  s_->spans.push_back(span);
  return s_->maybeFlush();
}

Status RunWriter::addSpans(std::span<const Span> spans) {
  for (const Span& sp : spans) {
    if (auto s = addSpan(sp); !s) {
      return s;
    }
  }
  return Ok{};
}

Status RunWriter::addCollective(const Collective& collective) {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  if (collective.end_ns < collective.start_ns) {
    return Error{"collective on rank " + std::to_string(collective.rank) + " ends before it starts"};
  }
  if (collective.seq < -1) {
    return Error{"collective on rank " + std::to_string(collective.rank) + " has sequence number " +
                 std::to_string(collective.seq) + " (-1 means unknown; no other negative number is one)"};
  }
  for (auto [id, field] : {std::pair{collective.op, "collective op"}, std::pair{collective.group, "collective group"},
                           std::pair{collective.algorithm, "collective algorithm"},
                           std::pair{collective.process_group, "collective process group"}}) {
    if (auto s = s_->checkId(id, field); !s) {
      return s;
    }
  }
  s_->collectives.push_back(collective);
  return s_->maybeFlush();
}

Status RunWriter::addStepSummary(const StepSummary& summary) {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  s_->steps.push_back(summary);
  return s_->maybeFlush();
}

Status RunWriter::addTableStat(const TableStat& stat) {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  if (auto s = s_->checkId(stat.table, "table stats table"); !s) {
    return s;
  }
  s_->tables.push_back(stat);
  return s_->maybeFlush();
}

Status RunWriter::setTableAccess(std::string_view table, std::string_view access_json) {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  auto stmt = s_->db->prepare("INSERT OR REPLACE INTO table_access(run, name, access_json) VALUES (?1, ?2, ?3)");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(s_->run));
  stmt->bind(2, table);
  stmt->bind(3, access_json);
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return s_->db->error("writing a table's access", rc);
  }
  return Ok{};
}

Status RunWriter::setConfig(std::string_view config_json) {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  auto stmt = s_->db->prepare("UPDATE runs SET config_json = ?2 WHERE id = ?1");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(s_->run));
  stmt->bind(2, config_json);
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return s_->db->error("writing the run's configuration", rc);
  }
  return Ok{};
}

Status RunWriter::commit() {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  return s_->flush();
}

Status RunWriter::finish() {
  if (auto s = s_->usable(); !s) {
    return s;
  }
  if (auto s = s_->flush(); !s) {
    return s;
  }
  return s_->markRun(RunStatus::Complete, {});
}

Status RunWriter::fail(std::string_view reason) {
  if (s_->closed) {
    return s_->usable();
  }
  // Keep what was measured so far; the status says it is not whole.
  const Status flushed = s_->broken ? Status(Ok{}) : s_->flush();
  if (auto s = s_->markRun(RunStatus::Failed, reason.empty() ? "failed" : reason); !s) {
    return s;
  }
  return flushed;
}

}  // namespace shardscope::core::store
