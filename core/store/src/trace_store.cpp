#include "shardscope/core/store/trace_store.h"

#include <algorithm>
#include <limits>
#include <system_error>
#include <unordered_map>

#include "schema.h"
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
  std::vector<Span> out;
  if (t1Ns <= t0Ns) {
    return out;
  }
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
  std::vector<int> allRanks;
  for (const auto& [rank, ns] : maxBlock) {
    allRanks.push_back(rank);
  }
  if (ranks.empty()) {
    ranks = allRanks;
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
  for (const int rank : ranks) {
    const auto it = std::lower_bound(maxBlock.begin(), maxBlock.end(), std::pair{rank, std::int64_t{0}},
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (it == maxBlock.end() || it->first != rank) {
      continue;  // no spans on this rank (yet)
    }
    blocks->reset();
    blocks->bind(1, static_cast<std::int64_t>(run));
    blocks->bind(2, rank);
    blocks->bind(3, saturatingSub(t0Ns, it->second));
    blocks->bind(4, t1Ns);
    blocks->bind(5, t0Ns);
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
      spans->bind(3, t1Ns);
      spans->bind(4, t0Ns);
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

}  // namespace shardscope::core::store
