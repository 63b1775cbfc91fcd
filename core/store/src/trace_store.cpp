#include "shardscope/core/store/trace_store.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include "schema.h"
#include "span_summaries.h"
#include "sqlite_db.h"

namespace shardscope::core::store {

using detail::Database;
using detail::Statement;

namespace {

// Schema 1 has no config_json column; read it as ''.
std::string runColumns(int schemaVersion) {
  return std::string(
             "SELECT id, kind, status, label, model_json, cluster_json, plan_json, created_at, "
             "coalesce(finished_at, ''), coalesce(error, ''), ") +
         (schemaVersion >= 2 ? "config_json" : "''") + " FROM runs";
}

RunRecord readRun(const Statement& s) {
  RunRecord r;
  r.id = RunId{s.int64(0)};
  r.kind_text = s.text(1);
  r.kind = runKindFromText(r.kind_text);
  r.status = runStatusFromText(s.text(2)).value_or(RunStatus::Running);
  r.label = s.text(3);
  r.model_json = s.text(4);
  r.cluster_json = s.text(5);
  r.plan_json = s.text(6);
  r.created_at = s.text(7);
  r.finished_at = s.text(8);
  r.error = s.text(9);
  r.config_json = s.text(10);
  return r;
}

// Steps `stmt` to the end, appending readRow(stmt) for each row.
template <class T, class ReadRow>
Status collectRows(const Database& db, Statement& stmt, std::vector<T>& out, ReadRow readRow, std::string_view what) {
  int rc = 0;
  while ((rc = stmt.step()) == SQLITE_ROW) {
    out.push_back(readRow(stmt));
  }
  if (rc != SQLITE_DONE) {
    return db.error(what, rc);
  }
  return Ok{};
}

template <class T, class ReadRow>
Result<std::vector<T>> queryRows(const Database& db, std::string_view sql, RunId run, ReadRow readRow,
                                 std::string_view what) {
  auto stmt = db.prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(run));
  std::vector<T> out;
  if (auto s = collectRows(db, *stmt, out, readRow, what); !s) {
    return s.error();
  }
  return out;
}

std::int64_t saturatingSub(std::int64_t a, std::int64_t b) {
  if (b > 0 && a < std::numeric_limits<std::int64_t>::min() + b) {
    return std::numeric_limits<std::int64_t>::min();
  }
  return a - b;
}

}  // namespace

std::string_view StringTable::at(StringId id) const {
  const auto it = strings_.find(static_cast<std::int64_t>(id));
  return it == strings_.end() ? std::string_view{} : std::string_view{it->second};
}

TraceStore::TraceStore(std::unique_ptr<Database> db, int schemaVersion)
    : db_(std::move(db)), schemaVersion_(schemaVersion) {}
TraceStore::TraceStore(TraceStore&&) noexcept = default;
TraceStore& TraceStore::operator=(TraceStore&&) noexcept = default;
TraceStore::~TraceStore() = default;

const std::filesystem::path& TraceStore::path() const { return db_->path(); }
int TraceStore::schemaVersion() const { return schemaVersion_; }

Result<TraceStore> openStore(const std::filesystem::path& path, OpenMode mode) {
  auto opened = detail::openValidated(path, mode);
  if (!opened) {
    return opened.error();
  }
  return TraceStore(std::move(opened->db), opened->schema_version);
}

Result<std::vector<RunRecord>> TraceStore::listRuns() const {
  auto stmt = db_->prepare(runColumns(schemaVersion_) + " ORDER BY id");
  if (!stmt) {
    return stmt.error();
  }
  std::vector<RunRecord> out;
  if (auto s = collectRows(*db_, *stmt, out, readRun, "listing runs"); !s) {
    return s.error();
  }
  return out;
}

Result<RunRecord> TraceStore::run(RunId id) const {
  auto rows = queryRows<RunRecord>(*db_, runColumns(schemaVersion_) + " WHERE id = ?1", id, readRun, "reading a run");
  if (!rows) {
    return rows.error();
  }
  if (rows->empty()) {
    return Error{detail::storeName(path()) + " has no run " + std::to_string(static_cast<std::int64_t>(id))};
  }
  return std::move(rows->front());
}

Status TraceStore::requireRun(RunId id) const {
  auto r = run(id);
  if (!r) {
    return r.error();
  }
  return Ok{};
}

Result<std::vector<RankInfo>> TraceStore::ranks(RunId run) const {
  return queryRows<RankInfo>(
      *db_, "SELECT rank, host, device, sharding_group, replica_group FROM ranks WHERE run = ?1 ORDER BY rank", run,
      [](const Statement& s) {
        return RankInfo{s.int32(0), s.text(1), s.int32(2), s.int32(3), s.int32(4)};
      },
      "reading ranks");
}

Result<std::vector<SpanExtent>> TraceStore::spanExtents(RunId run) const {
  return queryRows<SpanExtent>(
      *db_,
      "SELECT rank, span_count, min_start_ns, max_end_ns, max_dur_ns FROM span_extent "
      "WHERE run = ?1 ORDER BY rank",
      run,
      [](const Statement& s) {
        return SpanExtent{s.int32(0), s.int64(1), s.int64(2), s.int64(3), s.int64(4)};
      },
      "reading span extents");
}

Result<std::int64_t> TraceStore::spanCount(RunId run) const {
  auto extents = spanExtents(run);
  if (!extents) {
    return extents.error();
  }
  std::int64_t n = 0;
  for (const auto& e : *extents) {
    n += e.span_count;
  }
  return n;
}

Result<std::vector<Span>> TraceStore::spansInWindow(RunId run, std::span<const int> ranks, std::int64_t t0Ns,
                                                    std::int64_t t1Ns) const {
  if (t1Ns <= t0Ns) {
    return std::vector<Span>{};
  }
  std::vector<RankWindow> windows;
  if (ranks.empty()) {
    auto extents = spanExtents(run);
    if (!extents) {
      return extents.error();
    }
    for (const SpanExtent& e : *extents) {
      windows.push_back({e.rank, t0Ns, t1Ns});
    }
  }
  for (const int rank : ranks) {
    windows.push_back({rank, t0Ns, t1Ns});
  }
  return spansInRankWindows(run, windows);
}

Result<std::vector<Span>> TraceStore::spansInRankWindows(RunId run, std::span<const RankWindow> windows) const {
  std::vector<Span> out;
  // Per rank, the widest block bounds how far before t0 an overlapping
  // block can start, so the block scan is a short range on the primary key.
  std::vector<std::pair<int, std::int64_t>> maxBlock;
  {
    auto rows = queryRows<std::pair<int, std::int64_t>>(
        *db_, "SELECT rank, max_block_ns FROM span_extent WHERE run = ?1 ORDER BY rank", run,
        [](const Statement& s) {
          return std::pair{s.int32(0), s.int64(1)};
        },
        "reading span extents");
    if (!rows) {
      return rows.error();
    }
    maxBlock = std::move(*rows);
  }
  auto blocks = db_->prepare(
      "SELECT first_id, last_id FROM span_blocks WHERE run = ?1 AND rank = ?2 "
      "AND min_start_ns >= ?3 AND min_start_ns < ?4 AND max_end_ns >= ?5 "
      "ORDER BY min_start_ns, first_id");
  auto spans = db_->prepare(
      "SELECT rank, stream, kind, name, start_ns, end_ns, step, correlation, bytes, table_id "
      "FROM spans WHERE id BETWEEN ?1 AND ?2 AND start_ns < ?3 AND (end_ns > ?4 OR start_ns >= ?4)");
  if (!blocks) {
    return blocks.error();
  }
  if (!spans) {
    return spans.error();
  }
  const auto readSpan = [](const Statement& r) {
    return Span{r.int32(0), r.int32(1), StringId{r.int64(2)}, StringId{r.int64(3)}, r.int64(4),
                r.int64(5), r.int64(6), r.int64(7),           r.int64(8),           StringId{r.int64(9)}};
  };
  const auto byStart = [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; };
  std::vector<std::pair<std::int64_t, std::int64_t>> idRanges;
  for (const RankWindow& w : windows) {
    const auto it = std::lower_bound(maxBlock.begin(), maxBlock.end(), std::pair{w.rank, std::int64_t{0}},
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (w.t1_ns <= w.t0_ns || it == maxBlock.end() || it->first != w.rank) {
      continue;  // an empty window, or no spans on this rank (yet)
    }
    blocks->reset();
    blocks->bind(1, static_cast<std::int64_t>(run));
    blocks->bind(2, w.rank);
    blocks->bind(3, saturatingSub(w.t0_ns, it->second));
    blocks->bind(4, w.t1_ns);
    blocks->bind(5, w.t0_ns);
    idRanges.clear();
    auto s = collectRows(
        *db_, *blocks, idRanges,
        [](const Statement& r) {
          return std::pair{r.int64(0), r.int64(1)};
        },
        "reading span blocks");
    if (!s) {
      return s.error();
    }
    const std::size_t rankBegin = out.size();
    for (const auto& [first, last] : idRanges) {
      spans->reset();
      spans->bind(1, first);
      spans->bind(2, last);
      spans->bind(3, w.t1_ns);
      spans->bind(4, w.t0_ns);
      if (auto r = collectRows(*db_, *spans, out, readSpan, "reading spans"); !r) {
        return r.error();
      }
    }
    // Blocks of different batches may overlap in time.
    const auto rankSpans = out.begin() + static_cast<std::ptrdiff_t>(rankBegin);
    if (!std::is_sorted(rankSpans, out.end(), byStart)) {
      std::stable_sort(rankSpans, out.end(), byStart);
    }
  }
  return out;
}

Result<std::optional<SpanSummaryInfo>> TraceStore::spanSummaryInfo(RunId run) const {
  if (schemaVersion_ < 5) {
    return std::optional<SpanSummaryInfo>{};
  }
  auto stmt = db_->prepare(
      "SELECT format, tag, levels, step_class, span_count, bytes, created_at FROM span_summary_runs WHERE run = ?1");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(run));
  const int rc = stmt->step();
  if (rc == SQLITE_DONE) {
    return std::optional<SpanSummaryInfo>{};
  }
  if (rc != SQLITE_ROW) {
    return db_->error("reading span summaries", rc);
  }
  const Statement& r = *stmt;
  SpanSummaryInfo info{r.int32(0), r.text(1), {}, r.int32(3), r.int64(4), r.int64(5), r.text(6)};
  std::istringstream levels(r.text(2));
  for (int l = 0; levels >> l;) {
    info.levels.push_back(l);
  }
  return std::optional<SpanSummaryInfo>{std::move(info)};
}

Result<std::optional<SpanSummaryInfo>> TraceStore::currentSpanSummaries(RunId run, std::string_view tag) const {
  auto info = spanSummaryInfo(run);
  if (!info || !*info) {
    return info;
  }
  if ((*info)->format != kSpanSummaryFormat || (*info)->tag != tag) {
    return std::optional<SpanSummaryInfo>{};
  }
  auto count = spanCount(run);
  if (!count) {
    return count.error();
  }
  if (*count != (*info)->span_count) {
    return std::optional<SpanSummaryInfo>{};
  }
  return info;
}

Result<std::vector<StepSummary>> TraceStore::stepSummaries(RunId run) const {
  return queryRows<StepSummary>(
      *db_,
      "SELECT step, rank, emb_fwd_ns, emb_bwd_ns, dense_ns, comm_ns, wait_ns, total_ns "
      "FROM step_summaries WHERE run = ?1 ORDER BY step, rank",
      run,
      [](const Statement& s) {
        return StepSummary{s.int64(0), s.int32(1), s.int64(2), s.int64(3),
                           s.int64(4), s.int64(5), s.int64(6), s.int64(7)};
      },
      "reading step summaries");
}

Result<std::vector<TableStat>> TraceStore::tableStats(RunId run) const {
  return queryRows<TableStat>(
      *db_,
      "SELECT rank, table_id, lookups, unique_rows, time_ns FROM table_stats "
      "WHERE run = ?1 ORDER BY rank, table_id",
      run,
      [](const Statement& s) {
        return TableStat{s.int32(0), StringId{s.int64(1)}, s.int64(2), s.int64(3), s.int64(4)};
      },
      "reading table stats");
}

Result<std::vector<std::pair<std::string, std::string>>> TraceStore::tableAccess(RunId run) const {
  if (schemaVersion() < 3) return std::vector<std::pair<std::string, std::string>>{};
  return queryRows<std::pair<std::string, std::string>>(
      *db_, "SELECT name, access_json FROM table_access WHERE run = ?1 ORDER BY name", run,
      [](const Statement& s) {
        return std::pair<std::string, std::string>{s.text(0), s.text(1)};
      },
      "reading table access");
}

Result<std::vector<Collective>> TraceStore::collectives(RunId run) const {
  // A store before schema 4 has no process group or sequence number: read as none and -1.
  const std::string callColumns = schemaVersion_ >= 4 ? "process_group, seq" : "NULL, -1";
  return queryRows<Collective>(
      *db_,
      "SELECT rank, step, op, group_id, algorithm, bytes, peers, start_ns, end_ns, " + callColumns +
          " FROM collectives WHERE run = ?1 ORDER BY rank, start_ns, id",
      run,
      [](const Statement& s) {
        return Collective{s.int32(0),           s.int64(1),           StringId{s.int64(2)}, StringId{s.int64(3)},
                          StringId{s.int64(4)}, s.int64(5),           s.int32(6),           s.int64(7),
                          s.int64(8),           StringId{s.int64(9)}, s.int64(10)};
      },
      "reading collectives");
}

Result<StringTable> TraceStore::strings() const {
  auto stmt = db_->prepare("SELECT id, value FROM strings");
  if (!stmt) {
    return stmt.error();
  }
  std::unordered_map<std::int64_t, std::string> map;
  int rc = 0;
  while ((rc = stmt->step()) == SQLITE_ROW) {
    map.emplace(stmt->int64(0), stmt->text(1));
  }
  if (rc != SQLITE_DONE) {
    return db_->error("reading strings", rc);
  }
  return StringTable(std::move(map));
}

Result<BookmarkId> TraceStore::addBookmark(RunId run, std::int64_t tsNs, std::string_view label) {
  if (auto s = requireRun(run); !s) {
    return s.error();
  }
  auto stmt = db_->prepare(
      "INSERT INTO bookmarks(run, ts_ns, label, created_at) "
      "VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(run));
  stmt->bind(2, tsNs);
  stmt->bind(3, label);
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return db_->error("adding a bookmark", rc);
  }
  return BookmarkId{sqlite3_last_insert_rowid(db_->handle())};
}

Result<std::vector<Bookmark>> TraceStore::bookmarks(RunId run) const {
  return queryRows<Bookmark>(
      *db_, "SELECT id, run, ts_ns, label, created_at FROM bookmarks WHERE run = ?1 ORDER BY ts_ns, id", run,
      [](const Statement& s) {
        return Bookmark{BookmarkId{s.int64(0)}, RunId{s.int64(1)}, s.int64(2), s.text(3), s.text(4)};
      },
      "reading bookmarks");
}

Result<NoteId> TraceStore::addNote(RunId run, std::string_view text) {
  if (auto s = requireRun(run); !s) {
    return s.error();
  }
  auto stmt =
      db_->prepare("INSERT INTO notes(run, text, created_at) VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(run));
  stmt->bind(2, text);
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return db_->error("adding a note", rc);
  }
  return NoteId{sqlite3_last_insert_rowid(db_->handle())};
}

Result<std::vector<Note>> TraceStore::notes(RunId run) const {
  return queryRows<Note>(
      *db_, "SELECT id, run, text, created_at FROM notes WHERE run = ?1 ORDER BY id", run,
      [](const Statement& s) {
        return Note{NoteId{s.int64(0)}, RunId{s.int64(1)}, s.text(2), s.text(3)};
      },
      "reading notes");
}

Result<RunStatus> TraceStore::failStaleRun(RunId run, std::string_view reason) {
  if (auto s = requireRun(run); !s) {
    return s.error();
  }
  auto stmt = db_->prepare(
      "UPDATE runs SET status = 'failed', error = ?2, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
      "WHERE id = ?1 AND status = 'running'");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(run));
  stmt->bind(2, reason);
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return db_->error("marking a run failed", rc);
  }
  auto r = this->run(run);
  if (!r) {
    return r.error();
  }
  return r->status;
}

Status TraceStore::renameRun(RunId run, std::string_view label) {
  if (auto s = requireRun(run); !s) {
    return s.error();
  }
  auto stmt = db_->prepare("UPDATE runs SET label = ?2 WHERE id = ?1");
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<std::int64_t>(run));
  stmt->bind(2, label);
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return db_->error("renaming a run", rc);
  }
  return Ok{};
}

Status TraceStore::deleteRun(RunId run) {
  auto record = this->run(run);
  if (!record) {
    return record.error();
  }
  if (record->status == RunStatus::Running) {
    return Error{detail::storeName(path()) + ": run " + std::to_string(static_cast<std::int64_t>(run)) +
                     " is still being written; cancel it, or mark it failed if its writer is gone, then delete it",
                 ErrorKind::InvalidInput, path().string()};
  }
  static constexpr const char* kTables[] = {"spans",          "span_blocks", "span_extent", "collectives",
                                            "step_summaries", "table_stats", "ranks",       "bookmarks",
                                            "notes",          "table_access"};
  if (auto s = db_->exec("BEGIN IMMEDIATE"); !s) {
    return s.error();
  }
  const auto rollback = [this](Error e) {
    (void)db_->exec("ROLLBACK");
    return e;
  };
  if (schemaVersion_ >= 5) {
    if (auto s = detail::deleteSpanSummaries(*db_, run); !s) {
      return rollback(s.error());
    }
  }
  for (const char* table : kTables) {
    auto stmt = db_->prepare(std::string("DELETE FROM ") + table + " WHERE run = ?1");
    if (!stmt) {
      return rollback(stmt.error());
    }
    stmt->bind(1, static_cast<std::int64_t>(run));
    if (const int rc = stmt->step(); rc != SQLITE_DONE) {
      return rollback(db_->error(std::string("deleting a run's ") + table, rc));
    }
  }
  auto stmt = db_->prepare("DELETE FROM runs WHERE id = ?1");
  if (!stmt) {
    return rollback(stmt.error());
  }
  stmt->bind(1, static_cast<std::int64_t>(run));
  if (const int rc = stmt->step(); rc != SQLITE_DONE) {
    return rollback(db_->error("deleting a run", rc));
  }
  stmt = Statement();  // finalized before the commit
  if (auto s = db_->exec("COMMIT"); !s) {
    return rollback(s.error());
  }
  return Ok{};
}

namespace detail {

// Spans by start range: the blocks whose starts meet the range, then in
// each a binary search on id (a block's spans are in start order: the
// writer sorts each batch by rank and start) and a scan to the range's end.
Result<SpanStartReader> SpanStartReader::prepare(const Database& db, RunId run) {
  auto extent = db.prepare("SELECT rank, max_block_ns FROM span_extent WHERE run = ?1 ORDER BY rank");
  auto blocks = db.prepare(
      "SELECT first_id, last_id FROM span_blocks WHERE run = ?1 AND rank = ?2 AND min_start_ns >= ?3 "
      "AND min_start_ns < ?4 AND max_start_ns >= ?5 ORDER BY min_start_ns, first_id");
  auto startOf = db.prepare("SELECT start_ns FROM spans WHERE id = ?1");
  auto scan = db.prepare(
      "SELECT rank, stream, kind, name, start_ns, end_ns, step, correlation, bytes, table_id "
      "FROM spans WHERE id BETWEEN ?1 AND ?2");
  for (auto* st : {&extent, &blocks, &startOf, &scan}) {
    if (!*st) return st->error();
  }
  SpanStartReader r(db, run, std::move(*blocks), std::move(*startOf), std::move(*scan));
  extent->bind(1, static_cast<std::int64_t>(run));
  int rc = 0;
  while ((rc = extent->step()) == SQLITE_ROW) {
    r.maxBlock_.emplace_back(extent->int32(0), extent->int64(1));
  }
  if (rc != SQLITE_DONE) return db.error("reading span extents", rc);
  return r;
}

Status SpanStartReader::read(int rank, std::int64_t a, std::int64_t b, std::vector<Span>& out) {
  const auto it = std::lower_bound(maxBlock_.begin(), maxBlock_.end(), std::pair{rank, std::int64_t{0}},
                                   [](const auto& x, const auto& y) { return x.first < y.first; });
  if (it == maxBlock_.end() || it->first != rank || b <= a) return Ok{};
  blocks_.reset();
  blocks_.bind(1, static_cast<std::int64_t>(run_));
  blocks_.bind(2, rank);
  blocks_.bind(3, saturatingSub(a, it->second));
  blocks_.bind(4, b);
  blocks_.bind(5, a);
  ids_.clear();
  int rc = 0;
  while ((rc = blocks_.step()) == SQLITE_ROW) {
    ids_.emplace_back(blocks_.int64(0), blocks_.int64(1));
  }
  if (rc != SQLITE_DONE) return db_->error("reading span blocks", rc);
  const std::size_t begin = out.size();
  for (const auto& [first, last] : ids_) {
    auto from = firstStartingAt(first, last, a);
    if (!from) return from.error();
    if (auto s = scan(*from, last, b, out); !s) return s;
  }
  const auto byStart = [](const Span& x, const Span& y) { return x.start_ns < y.start_ns; };
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(begin), out.end(), byStart);
  return Ok{};
}

Result<std::int64_t> SpanStartReader::firstStartingAt(std::int64_t first, std::int64_t last, std::int64_t a) {
  std::int64_t lo = first;
  std::int64_t hi = last + 1;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    startOf_.reset();
    startOf_.bind(1, mid);
    const int rc = startOf_.step();
    if (rc != SQLITE_ROW) return db_->error("reading a span", rc);
    if (startOf_.int64(0) < a) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

Status SpanStartReader::scan(std::int64_t from, std::int64_t last, std::int64_t b, std::vector<Span>& out) {
  if (from > last) return Ok{};
  scan_.reset();
  scan_.bind(1, from);
  scan_.bind(2, last);
  int rc = 0;
  while ((rc = scan_.step()) == SQLITE_ROW) {
    const Statement& r = scan_;
    if (r.int64(4) >= b) return Ok{};
    out.push_back(Span{r.int32(0), r.int32(1), StringId{r.int64(2)}, StringId{r.int64(3)}, r.int64(4), r.int64(5),
                       r.int64(6), r.int64(7), r.int64(8), StringId{r.int64(9)}});
  }
  if (rc != SQLITE_DONE) return db_->error("reading spans", rc);
  return Ok{};
}

SpanStartReader::SpanStartReader(const Database& db, RunId run, Statement blocks, Statement startOf, Statement scan)
    : db_(&db), run_(run), blocks_(std::move(blocks)), startOf_(std::move(startOf)), scan_(std::move(scan)) {}

}  // namespace detail

}  // namespace shardscope::core::store
