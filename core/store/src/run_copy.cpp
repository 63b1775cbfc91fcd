// Bringing one run of another store file into this store
// (TraceStore::importRunFrom) and writing a self-contained copy of a store
// (writeStoreSnapshot). docs/formats/store.md, "Copying runs between stores".
//
// The import attaches the source read-only to a connection of its own (one
// that reads URIs, which the store's connection may not) and copies with
// INSERT ... SELECT in one transaction. New ids: the run's, its spans' (the
// source ids plus one offset, so every block's id range and its start order
// stay whole), its collectives', bookmarks', notes' and summary lists' keys.
// String ids go through a temporary map onto this store's strings table.
// Summary chunks of whole spans and steps hold string ids in their encoding
// and are re-encoded with the new ids; bucket chunks hold none and are
// copied as they are.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "schema.h"
#include "shardscope/core/store/trace_store.h"
#include "span_summaries.h"
#include "sqlite_db.h"

namespace shardscope::core::store {

using detail::Database;
using detail::Statement;
namespace fs = std::filesystem;
namespace sm = detail::summary;

namespace {

std::string runText(RunId run) { return "run " + std::to_string(static_cast<std::int64_t>(run)); }

// The source's URI for ATTACH, of its absolute path.
std::string absoluteUri(const fs::path& path, const char* query) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return detail::fileUri(ec ? path : absolute, query);
}

bool isSidecarCode(int code) { return (code & 0xff) == SQLITE_CANTOPEN || (code & 0xff) == SQLITE_READONLY; }

std::uint64_t fileSizeOr0(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// The source's string ids -> this store's.
using StringMap = std::unordered_map<std::int64_t, std::int64_t>;

// One import, on a connection with the source attached as "src", inside the
// caller's transaction. Every step's error says what failed; the caller
// rolls back.
class RunCopier {
 public:
  RunCopier(Database& db, fs::path source, RunId sourceRun, int sourceVersion)
      : db_(db), source_(std::move(source)), from_(static_cast<std::int64_t>(sourceRun)), version_(sourceVersion) {}

  Result<RunId> copy() {
    if (auto s = copyRunRow(); !s) return s.error();
    for (Status (RunCopier::*step)() :
         {&RunCopier::mapStrings, &RunCopier::copySpans, &RunCopier::copyRows, &RunCopier::copySummaries}) {
      if (auto s = (this->*step)(); !s) return s.error();
    }
    return RunId{to_};
  }

 private:
  // Runs `sql` with ?1.. bound to `params` to its end.
  Status run(const std::string& sql, std::initializer_list<std::int64_t> params, std::string_view what) {
    auto stmt = prepare(sql, params);
    if (!stmt) return stmt.error();
    if (const int rc = stmt->step(); rc != SQLITE_DONE) return db_.error(what, rc);
    return Ok{};
  }

  // The first column of the first row of `sql` (0 when there is none).
  Result<std::int64_t> value(const std::string& sql, std::initializer_list<std::int64_t> params,
                             std::string_view what) {
    auto stmt = prepare(sql, params);
    if (!stmt) return stmt.error();
    const int rc = stmt->step();
    if (rc == SQLITE_ROW) return stmt->int64(0);
    if (rc == SQLITE_DONE) return std::int64_t{0};
    return db_.error(what, rc);
  }

  Result<Statement> prepare(const std::string& sql, std::initializer_list<std::int64_t> params) {
    auto stmt = db_.prepare(sql);
    if (!stmt) return stmt.error();
    int i = 1;
    for (const std::int64_t p : params) stmt->bind(i++, p);
    return stmt;
  }

  Error damaged(const std::string& what) const {
    return Error{detail::storeName(source_) + " is damaged: " + runText(RunId{from_}) + " " + what,
                 ErrorKind::InvalidInput, source_.string()};
  }

  // The runs row, unless the run is gone or running by now.
  Status copyRunRow() {
    const std::string config = version_ >= 2 ? "config_json" : "''";
    auto s =
        run("INSERT INTO main.runs(kind, status, label, model_json, cluster_json, plan_json, config_json, created_at, "
            "finished_at, error) SELECT kind, status, label, model_json, cluster_json, plan_json, " +
                config + ", created_at, finished_at, error FROM src.runs WHERE id = ?1 AND status <> 'running'",
            {from_}, "copying the run");
    if (!s) return s;
    if (sqlite3_changes(db_.handle()) != 1) {
      return Error{detail::storeName(source_) + ": " + runText(RunId{from_}) +
                       " is gone or still being written (status 'running'); nothing was imported",
                   ErrorKind::InvalidInput, source_.string()};
    }
    to_ = sqlite3_last_insert_rowid(db_.handle());
    return Ok{};
  }

  // Every string id the run uses, into temp.copy_strings(src, dst); the
  // strings this store lacks are interned.
  Status mapStrings() {
    auto s = run("CREATE TEMP TABLE copy_strings(src INTEGER PRIMARY KEY, dst INTEGER)", {}, "mapping strings");
    if (!s) return s;
    const std::string processGroup =
        version_ >= 4 ? " UNION SELECT process_group FROM src.collectives WHERE run = ?1" : "";
    s =
        run("INSERT OR IGNORE INTO temp.copy_strings(src) SELECT v FROM (SELECT op AS v FROM src.collectives "
            "WHERE run = ?1 UNION SELECT group_id FROM src.collectives WHERE run = ?1 UNION SELECT algorithm FROM "
            "src.collectives WHERE run = ?1" +
                processGroup + " UNION SELECT table_id FROM src.table_stats WHERE run = ?1) WHERE v IS NOT NULL",
            {from_}, "mapping strings");
    if (!s) return s;
    if (s = spanStrings(); !s) return s;
    s =
        run("INSERT INTO main.strings(value) SELECT s.value FROM temp.copy_strings m JOIN src.strings s "
            "ON s.id = m.src WHERE m.src <> 0 ORDER BY m.src ON CONFLICT(value) DO NOTHING",
            {}, "interning strings");
    if (!s) return s;
    s =
        run("UPDATE temp.copy_strings SET dst = CASE WHEN src = 0 THEN 0 ELSE (SELECT t.id FROM src.strings s "
            "JOIN main.strings t ON t.value = s.value WHERE s.id = copy_strings.src) END",
            {}, "mapping strings");
    if (!s) return s;
    auto missing = prepare("SELECT src FROM temp.copy_strings WHERE dst IS NULL LIMIT 1", {});
    if (!missing) return missing.error();
    if (const int rc = missing->step(); rc == SQLITE_ROW) {
      return damaged("uses string id " + std::to_string(missing->int64(0)) + ", which its strings table lacks");
    } else if (rc != SQLITE_DONE) {
      return db_.error("mapping strings", rc);
    }
    return Ok{};
  }

  // The span id range of the run, from its blocks: every span is in one.
  Status spanRange() {
    auto stmt = prepare("SELECT min(first_id), max(last_id) FROM src.span_blocks WHERE run = ?1", {from_});
    if (!stmt) return stmt.error();
    if (const int rc = stmt->step(); rc != SQLITE_ROW) return db_.error("reading span blocks", rc);
    if (!stmt->isNull(0)) {
      firstSpan_ = stmt->int64(0);
      lastSpan_ = stmt->int64(1);
    }
    return Ok{};
  }

  // The string ids of the run's spans, read in one pass.
  Status spanStrings() {
    if (auto s = spanRange(); !s) return s;
    auto stmt = prepare("SELECT kind, name, table_id FROM src.spans WHERE id BETWEEN ?2 AND ?3 AND run = ?1",
                        {from_, firstSpan_, lastSpan_});
    if (!stmt) return stmt.error();
    // Ids are small and dense (interned one by one): a bitmap up to kDense.
    constexpr std::int64_t kDense = std::int64_t{1} << 24;
    std::vector<bool> dense;
    std::unordered_set<std::int64_t> ids;
    int rc = 0;
    while ((rc = stmt->step()) == SQLITE_ROW) {
      for (int c = 0; c < 3; ++c) {
        if (stmt->isNull(c)) continue;
        const std::int64_t id = stmt->int64(c);
        if (id < 0 || id >= kDense) {
          ids.insert(id);
          continue;
        }
        if (static_cast<std::size_t>(id) >= dense.size()) dense.resize(static_cast<std::size_t>(id) * 2 + 64);
        dense[static_cast<std::size_t>(id)] = true;
      }
    }
    if (rc != SQLITE_DONE) return db_.error("reading spans", rc);
    auto insert = prepare("INSERT OR IGNORE INTO temp.copy_strings(src) VALUES (?1)", {});
    if (!insert) return insert.error();
    for (std::size_t id = 0; id < dense.size(); ++id) {
      if (dense[id]) ids.insert(static_cast<std::int64_t>(id));
    }
    for (const std::int64_t id : ids) {
      insert->reset();
      insert->bind(1, id);
      if (const int r = insert->step(); r != SQLITE_DONE) return db_.error("mapping strings", r);
    }
    return Ok{};
  }

  // Spans with ids shifted past this store's, their blocks and extents.
  Status copySpans() {
    auto maxId = value("SELECT coalesce(max(id), 0) FROM main.spans", {}, "reading span ids");
    if (!maxId) return maxId.error();
    const std::int64_t shift = *maxId + 1 - firstSpan_;
    auto s =
        run("INSERT INTO main.spans(id, run, rank, stream, start_ns, end_ns, kind, name, step, correlation, bytes, "
            "table_id) SELECT s.id + ?4, ?5, s.rank, s.stream, s.start_ns, s.end_ns, k.dst, n.dst, s.step, "
            "s.correlation, s.bytes, t.dst FROM src.spans s "  // CROSS JOIN: spans outermost, in id order
            "CROSS JOIN temp.copy_strings k ON k.src = s.kind CROSS JOIN temp.copy_strings n ON n.src = s.name "
            "LEFT JOIN temp.copy_strings t ON t.src = s.table_id "
            "WHERE s.id BETWEEN ?2 AND ?3 AND s.run = ?1 ORDER BY s.id",
            {from_, firstSpan_, lastSpan_, shift, to_}, "copying spans");
    if (!s) return s;
    const std::int64_t copied = sqlite3_changes64(db_.handle());
    auto counted = value("SELECT coalesce(sum(span_count), 0) FROM src.span_extent WHERE run = ?1", {from_},
                         "reading span extents");
    if (!counted) return counted.error();
    if (copied != *counted) {
      return damaged("has " + std::to_string(*counted) + " spans by its extents but " + std::to_string(copied) +
                     " in its blocks");
    }
    s =
        run("INSERT INTO main.span_blocks(run, rank, min_start_ns, max_start_ns, max_end_ns, first_id, last_id) "
            "SELECT ?2, rank, min_start_ns, max_start_ns, max_end_ns, first_id + ?3, last_id + ?3 "
            "FROM src.span_blocks WHERE run = ?1",
            {from_, to_, shift}, "copying span blocks");
    if (!s) return s;
    return run(
        "INSERT INTO main.span_extent(run, rank, span_count, min_start_ns, max_end_ns, max_dur_ns, max_block_ns) "
        "SELECT ?2, rank, span_count, min_start_ns, max_end_ns, max_dur_ns, max_block_ns "
        "FROM src.span_extent WHERE run = ?1",
        {from_, to_}, "copying span extents");
  }

  // Ranks, collectives, steps, table stats and access, bookmarks, notes.
  Status copyRows() {
    const auto mapped = [](const char* column) {
      return std::string("(SELECT dst FROM temp.copy_strings WHERE src = ") + column + ")";
    };
    const std::string call = version_ >= 4 ? mapped("process_group") + ", seq" : "NULL, -1";
    struct Copy {
      std::string sql;
      const char* what;
    };
    std::vector<Copy> copies = {
        {"INSERT INTO main.ranks(run, rank, host, device, sharding_group, replica_group) SELECT ?2, rank, host, "
         "device, sharding_group, replica_group FROM src.ranks WHERE run = ?1",
         "copying ranks"},
        {"INSERT INTO main.collectives(run, rank, step, op, group_id, algorithm, bytes, peers, start_ns, end_ns, "
         "process_group, seq) SELECT ?2, rank, step, " +
             mapped("op") + ", " + mapped("group_id") + ", " + mapped("algorithm") +
             ", bytes, peers, start_ns, end_ns, " + call + " FROM src.collectives WHERE run = ?1 ORDER BY id",
         "copying collectives"},
        {"INSERT INTO main.step_summaries(run, step, rank, emb_fwd_ns, emb_bwd_ns, dense_ns, comm_ns, wait_ns, "
         "total_ns) SELECT ?2, step, rank, emb_fwd_ns, emb_bwd_ns, dense_ns, comm_ns, wait_ns, total_ns "
         "FROM src.step_summaries WHERE run = ?1",
         "copying step summaries"},
        {"INSERT INTO main.table_stats(run, rank, table_id, lookups, unique_rows, time_ns) SELECT ?2, rank, " +
             mapped("table_id") + ", lookups, unique_rows, time_ns FROM src.table_stats WHERE run = ?1",
         "copying table stats"},
        {"INSERT INTO main.bookmarks(run, ts_ns, label, created_at) SELECT ?2, ts_ns, label, created_at "
         "FROM src.bookmarks WHERE run = ?1 ORDER BY id",
         "copying bookmarks"},
        {"INSERT INTO main.notes(run, text, created_at) SELECT ?2, text, created_at FROM src.notes "
         "WHERE run = ?1 ORDER BY id",
         "copying notes"},
    };
    if (version_ >= 3) {
      copies.push_back(
          {"INSERT INTO main.table_access(run, name, access_json) SELECT ?2, name, access_json "
           "FROM src.table_access WHERE run = ?1",
           "copying table access"});
    }
    for (const Copy& c : copies) {
      if (auto s = run(c.sql, {from_, to_}, c.what); !s) return s;
    }
    return Ok{};
  }

  // The span summaries of this build's format, under new list keys after
  // this store's (chunk ids key * 2^32 + n follow). Summaries of another
  // format read as absent here, so they are not copied.
  Status copySummaries() {
    if (version_ < 5) return Ok{};
    auto head = prepare(
        "SELECT format, tag, levels, step_class, span_count, created_at FROM src.span_summary_runs WHERE run = ?1",
        {from_});
    if (!head) return head.error();
    const int rc = head->step();
    if (rc == SQLITE_DONE) return Ok{};
    if (rc != SQLITE_ROW) return db_.error("reading span summaries", rc);
    if (head->int32(0) != kSpanSummaryFormat) return Ok{};
    auto nextKey = value("SELECT coalesce(max(key), 0) + 1 FROM main.span_summary_lists", {}, "reading summary keys");
    if (!nextKey) return nextKey.error();
    auto bytes = copySummaryLists(*nextKey);
    if (!bytes) return bytes.error();
    auto insert = prepare(
        "INSERT INTO main.span_summary_runs(run, format, tag, levels, step_class, span_count, bytes, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        {to_, head->int64(0)});
    if (!insert) return insert.error();
    insert->bind(3, head->textView(1));
    insert->bind(4, head->textView(2));
    insert->bind(5, head->int64(3));
    insert->bind(6, head->int64(4));
    insert->bind(7, *bytes);
    insert->bind(8, head->textView(5));
    if (const int r = insert->step(); r != SQLITE_DONE) return db_.error("copying span summaries", r);
    return Ok{};
  }

  // The run's lists and their chunks; returns the bytes of every list.
  Result<std::int64_t> copySummaryLists(std::int64_t nextKey) {
    auto lists = prepare(
        "SELECT rank, kind, level, key, chunk_ns, first_chunk, lookback_ns, items, bytes FROM src.span_summary_lists "
        "WHERE run = ?1 ORDER BY key",
        {from_});
    auto insert = prepare(
        "INSERT INTO main.span_summary_lists(run, rank, kind, level, key, chunk_ns, first_chunk, lookback_ns, "
        "items, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        {});
    if (!lists) return lists.error();
    if (!insert) return insert.error();
    std::int64_t total = 0;
    std::int64_t keyShift = 0;
    bool first = true;
    int rc = 0;
    while ((rc = lists->step()) == SQLITE_ROW) {
      const Statement& l = *lists;
      if (first) keyShift = nextKey - l.int64(3);
      first = false;
      const std::int64_t key = l.int64(3);
      auto bytes = l.int32(1) == static_cast<int>(sm::ListKind::Buckets)
                       ? copyChunks(key, key + keyShift, l.int64(8))
                       : recodeChunks(key, key + keyShift, l.int32(0));
      if (!bytes) return bytes.error();
      insert->reset();
      insert->bind(1, to_);
      for (int c = 0; c < 8; ++c) insert->bind(c + 2, c == 3 ? key + keyShift : l.int64(c));
      insert->bind(10, *bytes);
      if (const int r = insert->step(); r != SQLITE_DONE) return db_.error("copying span summary lists", r);
      total += *bytes;
    }
    if (rc != SQLITE_DONE) return db_.error("reading span summary lists", rc);
    return total;
  }

  // A bucket list's chunks hold no string ids: copied as they are.
  Result<std::int64_t> copyChunks(std::int64_t key, std::int64_t newKey, std::int64_t bytes) {
    auto s =
        run("INSERT INTO main.span_summary_chunks(id, items, data) SELECT ?3 + (id & ?4), items, data "
            "FROM src.span_summary_chunks WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
            {key << sm::kChunkIdBits, (key << sm::kChunkIdBits) | sm::kMaxRelativeChunk, newKey << sm::kChunkIdBits,
             sm::kMaxRelativeChunk},
            "copying span summary chunks");
    if (!s) return s.error();
    return bytes;
  }

  // A whole-span or step list's chunks, re-encoded with this store's string
  // ids; returns their new size.
  Result<std::int64_t> recodeChunks(std::int64_t key, std::int64_t newKey, int rank) {
    if (strings_.empty()) {
      auto s = loadStringMap();
      if (!s) return s.error();
    }
    auto chunks = prepare("SELECT id, items, data FROM src.span_summary_chunks WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
                          {key << sm::kChunkIdBits, (key << sm::kChunkIdBits) | sm::kMaxRelativeChunk});
    auto insert = prepare("INSERT INTO main.span_summary_chunks(id, items, data) VALUES (?1, ?2, ?3)", {});
    if (!chunks) return chunks.error();
    if (!insert) return insert.error();
    std::int64_t total = 0;
    std::string data;
    int rc = 0;
    while ((rc = chunks->step()) == SQLITE_ROW) {
      const auto* blob = static_cast<const char*>(sqlite3_column_blob(chunks->get(), 2));
      const auto size = static_cast<std::size_t>(sqlite3_column_bytes(chunks->get(), 2));
      if (!recode(std::string_view(blob, size), data)) {
        return damaged("has a span summary chunk of rank " + std::to_string(rank) + " that does not decode");
      }
      insert->reset();
      insert->bind(1, (newKey << sm::kChunkIdBits) | (chunks->int64(0) & sm::kMaxRelativeChunk));
      insert->bind(2, chunks->int64(1));
      sqlite3_bind_blob(insert->get(), 3, data.data(), static_cast<int>(data.size()), SQLITE_STATIC);
      if (const int r = insert->step(); r != SQLITE_DONE) return db_.error("copying span summary chunks", r);
      total += static_cast<std::int64_t>(data.size());
    }
    if (rc != SQLITE_DONE) return db_.error("reading span summary chunks", rc);
    return total;
  }

  Status loadStringMap() {
    auto stmt = prepare("SELECT src, dst FROM temp.copy_strings", {});
    if (!stmt) return stmt.error();
    int rc = 0;
    while ((rc = stmt->step()) == SQLITE_ROW) strings_.emplace(stmt->int64(0), stmt->int64(1));
    if (rc != SQLITE_DONE) return db_.error("mapping strings", rc);
    strings_.emplace(0, 0);
    return Ok{};
  }

  // One chunk: per stream (zigzag stream, items, bytes, spans), each span
  // decoded and encoded again with mapped ids. Deltas are kept as they are.
  bool recode(std::string_view in, std::string& out) const {
    out.clear();
    sm::Decoder d(in);
    sm::Encoder head;
    sm::Encoder spans;
    while (!d.atEnd()) {
      const std::uint64_t stream = d.getSigned();
      const std::uint64_t items = d.get();
      const std::uint64_t bytes = d.get();
      if (!d.ok() || bytes > d.left()) return false;
      sm::Decoder section(d.take(bytes));
      sm::SpanCursor at;
      sm::SpanCursor outAt;
      SummarySpan s;
      std::uint64_t n = 0;
      spans.clear();
      while (!section.atEnd()) {
        if (!sm::decodeSpan(section, at, s)) return false;
        for (StringId* id : {&s.span.kind, &s.span.name, &s.span.table}) {
          const auto it = strings_.find(static_cast<std::int64_t>(*id));
          if (it == strings_.end()) return false;
          *id = StringId{it->second};
        }
        sm::encodeSpan(spans, outAt, s.span, s.cls);
        ++n;
      }
      if (n != items) return false;
      head.clear();
      head.putSigned(stream);
      head.put(items);
      head.put(spans.bytes().size());
      out += head.bytes();
      out += spans.bytes();
    }
    return true;
  }

  Database& db_;
  fs::path source_;
  std::int64_t from_;
  int version_;
  std::int64_t to_ = 0;
  std::int64_t firstSpan_ = 1;
  std::int64_t lastSpan_ = 0;
  StringMap strings_;
};

// A connection of its own to `target` that reads URIs (for ATTACH), with the
// writer's settings.
Result<std::unique_ptr<Database>> openCopyConnection(const fs::path& target) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(target, ec);  // never read as a URI: it starts with '/'
  auto opened =
      sqlite::Connection::open((ec ? target : absolute).string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, target);
  const int rc = opened.rc;
  auto db = std::make_unique<Database>(std::move(opened.connection));
  if (rc != SQLITE_OK) {
    return Error{detail::storeName(target) + " cannot be opened: " + db->connection().message(rc), ErrorKind::Io};
  }
  sqlite3_extended_result_codes(db->handle(), 1);
  if (auto s = detail::applyConnectionPragmas(*db, OpenMode::ReadWrite); !s) return s.error();
  return db;
}

// Attaches `source` read-only as "src". In a folder where SQLite cannot
// create the -shm of a WAL store, and when no log holds data, the main file
// is read as immutable (as openStore does).
Status attachSource(Database& db, const fs::path& source) {
  auto attach = [&db](const std::string& uri) -> int {
    auto stmt = db.prepare("ATTACH DATABASE ?1 AS src");
    if (!stmt) return db.lastCode();
    stmt->bind(1, uri);
    const int rc = stmt->step();
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
  };
  int rc = attach(absoluteUri(source, "mode=ro"));
  if (rc != SQLITE_OK && isSidecarCode(rc) && fileSizeOr0(fs::path(source.string() + "-wal")) < 32) {
    rc = attach(absoluteUri(source, "immutable=1"));
  }
  if (rc != SQLITE_OK) {
    return Error{detail::storeName(source) + " cannot be attached for reading: " + sqlite3_errmsg(db.handle()),
                 ErrorKind::Io, source.string()};
  }
  return Ok{};
}

// Puts `from` at `to` unless `to` exists; 0 or an errno (EEXIST: it exists).
int linkIntoPlace(const fs::path& from, const fs::path& to) {
  if (::link(from.c_str(), to.c_str()) == 0) return 0;
  int err = errno;
#ifdef RENAME_NOREPLACE
  if (err != EEXIST) {  // a file system without hard links
    err = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0 ? 0 : errno;
  }
#endif
  return err;
}

// fsync of a file or folder; 0 or an errno.
int syncPath(const fs::path& path, bool folder) {
  const int fd = ::open(path.c_str(), folder ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return errno;
  const int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

// VACUUM INTO `temp`, then the copy's journal set to DELETE so that it is
// one file: reading it needs no -wal or -shm.
Status vacuumInto(const fs::path& store, const fs::path& temp, const fs::path& out) {
  {
    auto opened = detail::openValidated(store, OpenMode::ReadOnly);
    if (!opened) return opened.error();
    Database& db = *opened->db;
    auto stmt = db.prepare("VACUUM INTO ?1");
    if (!stmt) return stmt.error();
    stmt->bind(1, temp.string());
    if (const int rc = stmt->step(); rc != SQLITE_DONE) {
      return Error{detail::storeName(store) + ": writing a snapshot to " + out.string() +
                       " failed: " + sqlite3_errmsg(db.handle()),
                   ErrorKind::Io, out.string()};
    }
  }
  auto opened = sqlite::Connection::open(temp, SQLITE_OPEN_READWRITE);
  const int rc = opened.rc;
  Database copy(std::move(opened.connection));
  if (rc != SQLITE_OK) {
    return Error{"snapshot " + out.string() + " cannot be opened: " + copy.connection().message(rc), ErrorKind::Io,
                 out.string()};
  }
  sqlite3_extended_result_codes(copy.handle(), 1);
  return copy.exec("PRAGMA journal_mode=DELETE");
}

}  // namespace

Result<RunId> TraceStore::importRunFrom(const fs::path& source, RunId sourceRun) {
  const std::string what =
      "cannot import " + runText(sourceRun) + " of " + detail::storeName(source) + " into " + detail::storeName(path());
  if (sqlite3_db_readonly(db_->handle(), "main") != 0) {
    return Error{what + ": this store is open read-only; importing needs OpenMode::ReadWrite", ErrorKind::Usage,
                 path().string()};
  }
  int sourceVersion = 0;
  {
    auto src = openStore(source, OpenMode::ReadOnly);  // missing, not a store, newer, corrupt
    if (!src) return Error{what + ": " + src.error().message, src.error().kind, source.string()};
    auto record = src->run(sourceRun);
    if (!record) return Error{what + ": " + record.error().message, record.error().kind, source.string()};
    if (record->status == RunStatus::Running) {
      return Error{what + ": the run is still being written (status 'running'); only a complete or failed run " +
                       "can be imported (mark it failed first if its writer is gone)",
                   ErrorKind::InvalidInput, source.string()};
    }
    sourceVersion = src->schemaVersion();
  }
  auto db = openCopyConnection(path());
  if (!db) return db.error();
  if (auto s = attachSource(**db, source); !s) return Error{what + ": " + s.error().message, s.error().kind};
  if (auto s = (*db)->exec("BEGIN IMMEDIATE"); !s) return Error{what + ": " + s.error().message, s.error().kind};
  auto copied = RunCopier(**db, source, sourceRun, sourceVersion).copy();
  if (copied) {
    if (auto s = (*db)->exec("COMMIT"); !s) copied = s.error();
  }
  if (!copied) {
    (void)(*db)->exec("ROLLBACK");
    const Error& e = copied.error();
    return Error{what + " (nothing was imported): " + e.message, e.kind, e.file.empty() ? path().string() : e.file};
  }
  (void)(*db)->exec("DETACH DATABASE src");
  return copied;
}

Status writeStoreSnapshot(const fs::path& store, const fs::path& outPath) {
  const std::string what = detail::storeName(store) + ": cannot write a snapshot to " + outPath.string();
  std::error_code statusError;
  if (fs::exists(fs::symlink_status(outPath, statusError))) {
    return Error{what + ": it exists already; choose a new path", ErrorKind::InvalidInput, outPath.string()};
  }
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  const fs::path out = fs::absolute(outPath, ec);  // starts with '/': never read as a URI
  if (ec) return Error{what + ": " + ec.message(), ErrorKind::Io, outPath.string()};
  const fs::path temp = out.string() + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const auto removeTemp = [&temp] {
    std::error_code ignored;
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(temp.string() + suffix, ignored);
  };
  if (auto s = vacuumInto(store, temp, outPath); !s) {
    removeTemp();
    return s;
  }
  int err = syncPath(temp, false);
  if (err == 0) err = linkIntoPlace(temp, out);
  removeTemp();
  if (err == EEXIST) {
    return Error{what + ": it exists already; choose a new path", ErrorKind::InvalidInput, outPath.string()};
  }
  if (err != 0) return Error{what + ": " + std::strerror(err), ErrorKind::Io, outPath.string()};
  (void)syncPath(out.parent_path(), true);  // the new name, durable
  return Ok{};
}

}  // namespace shardscope::core::store
