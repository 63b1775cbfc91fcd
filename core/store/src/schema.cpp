#include "schema.h"

#include <string>

#include "shardscope/core/store/store_types.h"

namespace shardscope::core::store::detail {

namespace {

// Schema 1. Spans are appended to a plain rowid table in batches sorted by
// (rank, start_ns); span_blocks is a block range index over them: one row
// per run of at most 1024 consecutive ids of one rank, with the block's
// start range and latest end. A per-span B-tree index halved the insert rate
// (docs/formats/store.md has the measurements behind this choice).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE strings(
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);

CREATE TABLE runs(
  id           INTEGER PRIMARY KEY,
  kind         TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')),
  label        TEXT NOT NULL DEFAULT '',
  model_json   TEXT NOT NULL DEFAULT '',
  cluster_json TEXT NOT NULL DEFAULT '',
  plan_json    TEXT NOT NULL DEFAULT '',
  config_json  TEXT NOT NULL DEFAULT '',  -- schema 2: the engine's run configuration
  created_at   TEXT NOT NULL,
  finished_at  TEXT,
  error        TEXT
);

CREATE TABLE ranks(
  run            INTEGER NOT NULL,
  rank           INTEGER NOT NULL,
  host           TEXT NOT NULL DEFAULT '',
  device         INTEGER NOT NULL DEFAULT -1,
  sharding_group INTEGER NOT NULL DEFAULT -1,
  replica_group  INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (run, rank)
) WITHOUT ROWID;

CREATE TABLE spans(
  id          INTEGER PRIMARY KEY,
  run         INTEGER NOT NULL,
  rank        INTEGER NOT NULL,
  stream      INTEGER NOT NULL,
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER NOT NULL,
  kind        INTEGER NOT NULL,
  name        INTEGER NOT NULL,
  step        INTEGER NOT NULL,
  correlation INTEGER NOT NULL,
  bytes       INTEGER NOT NULL,
  table_id    INTEGER
);

CREATE TABLE span_blocks(
  run          INTEGER NOT NULL,
  rank         INTEGER NOT NULL,
  min_start_ns INTEGER NOT NULL,
  max_start_ns INTEGER NOT NULL,
  max_end_ns   INTEGER NOT NULL,
  first_id     INTEGER NOT NULL,
  last_id      INTEGER NOT NULL,
  PRIMARY KEY (run, rank, min_start_ns, first_id)
) WITHOUT ROWID;

CREATE TABLE span_extent(
  run          INTEGER NOT NULL,
  rank         INTEGER NOT NULL,
  span_count   INTEGER NOT NULL,
  min_start_ns INTEGER NOT NULL,
  max_end_ns   INTEGER NOT NULL,
  max_dur_ns   INTEGER NOT NULL,
  max_block_ns INTEGER NOT NULL,
  PRIMARY KEY (run, rank)
) WITHOUT ROWID;

CREATE TABLE collectives(
  id        INTEGER PRIMARY KEY,
  run       INTEGER NOT NULL,
  rank      INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  op        INTEGER NOT NULL,
  group_id  INTEGER,
  algorithm INTEGER,
  bytes     INTEGER NOT NULL,
  peers     INTEGER NOT NULL,
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER NOT NULL,
  process_group INTEGER,                 -- schema 4: the call's process group (string id)
  seq           INTEGER NOT NULL DEFAULT -1  -- schema 4: its number in that group, -1 unknown
);
CREATE INDEX collectives_by_run ON collectives(run, rank, start_ns);

CREATE TABLE step_summaries(
  run        INTEGER NOT NULL,
  step       INTEGER NOT NULL,
  rank       INTEGER NOT NULL,
  emb_fwd_ns INTEGER NOT NULL,
  emb_bwd_ns INTEGER NOT NULL,
  dense_ns   INTEGER NOT NULL,
  comm_ns    INTEGER NOT NULL,
  wait_ns    INTEGER NOT NULL,
  total_ns   INTEGER NOT NULL,
  PRIMARY KEY (run, step, rank)
) WITHOUT ROWID;

CREATE TABLE table_stats(
  run         INTEGER NOT NULL,
  rank        INTEGER NOT NULL,
  table_id    INTEGER NOT NULL,
  lookups     INTEGER NOT NULL,
  unique_rows INTEGER NOT NULL,
  time_ns     INTEGER NOT NULL,
  PRIMARY KEY (run, rank, table_id)
) WITHOUT ROWID;

-- schema 3: each table's measured access in a run (one shardscope.access/1
-- table entry as JSON: hottest ids and counts over row buckets).
CREATE TABLE table_access(
  run         INTEGER NOT NULL,
  name        TEXT NOT NULL,
  access_json TEXT NOT NULL,
  PRIMARY KEY (run, name)
) WITHOUT ROWID;

CREATE TABLE bookmarks(
  id         INTEGER PRIMARY KEY,
  run        INTEGER NOT NULL,
  ts_ns      INTEGER NOT NULL,
  label      TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX bookmarks_by_run ON bookmarks(run, ts_ns);

CREATE TABLE notes(
  id         INTEGER PRIMARY KEY,
  run        INTEGER NOT NULL,
  text       TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX notes_by_run ON notes(run, id);
)sql";

// Schema 5: per-rank span summaries for views zoomed far out
// (span_summaries.h, docs/formats/store.md). Created with new stores and by
// the migration from 4; a run without rows here has no summaries.
constexpr const char* kSchemaV5Summaries = R"sql(
CREATE TABLE IF NOT EXISTS span_summary_runs(
  run        INTEGER PRIMARY KEY,
  format     INTEGER NOT NULL,  -- encoding version (kSpanSummaryFormat)
  tag        TEXT NOT NULL,     -- the classifier's version
  levels     TEXT NOT NULL,     -- the levels built, finest first ("3 5 6 7")
  step_class INTEGER NOT NULL,
  span_count INTEGER NOT NULL,  -- the run's spans when built
  bytes      INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS span_summary_lists(
  run         INTEGER NOT NULL,
  rank        INTEGER NOT NULL,
  kind        INTEGER NOT NULL,  -- 0 buckets, 1 whole spans, 2 steps
  level       INTEGER NOT NULL,
  key         INTEGER NOT NULL,  -- its chunks' ids: key * 2^32 + (chunk - first_chunk)
  chunk_ns    INTEGER NOT NULL,  -- chunk = floor(start / chunk_ns)
  first_chunk INTEGER NOT NULL,
  lookback_ns INTEGER NOT NULL,  -- the longest item (end - start): how far back a window looks
  items       INTEGER NOT NULL,
  bytes       INTEGER NOT NULL,
  PRIMARY KEY (run, rank, kind, level)
) WITHOUT ROWID;
-- Keyed by a computed rowid, so a window reads a range of it with no index,
-- and a chunk of a few KiB stays on its page (a WITHOUT ROWID row spills
-- past ~2 KiB into a mostly empty overflow page). One row holds every
-- stream of one chunk of one list.
CREATE TABLE IF NOT EXISTS span_summary_chunks(
  id    INTEGER PRIMARY KEY,
  items INTEGER NOT NULL,
  data  BLOB NOT NULL
);
)sql";

}  // namespace

Status applyConnectionPragmas(Database& db, OpenMode mode) {
  // Wait for other writers instead of failing at once.
  sqlite3_busy_timeout(db.handle(), 10'000);
  if (mode == OpenMode::ReadOnly) {
    return db.exec("PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;");
  }
  // WAL: readers see committed batches while a writer appends, and a killed
  // writer loses at most its open transaction. synchronous=NORMAL: a commit
  // does not fsync; a process crash loses nothing committed, a power loss
  // may lose the last commits but never corrupts the file.
  return db.exec(
      "PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;"
      "PRAGMA wal_autocheckpoint=4096;");
}

Status ensureWal(Database& db) {
  auto stmt = db.prepare("PRAGMA journal_mode");
  if (!stmt) {
    return stmt.error();
  }
  if (stmt->step() == SQLITE_ROW && stmt->text(0) == "wal") {
    return Ok{};
  }
  stmt->reset();
  return db.exec("PRAGMA journal_mode=WAL");
}

Status initialiseSchema(Database& db) {
  // page_size must precede the first table; 8 KiB measured best for spans.
  if (auto s = db.exec("PRAGMA page_size=8192"); !s) {
    return s;
  }
  if (auto s = ensureWal(db); !s) {
    return s;
  }
  if (auto s = db.exec("BEGIN IMMEDIATE"); !s) {
    return s;
  }
  auto fail = [&db](Status s) {
    (void)db.exec("ROLLBACK");
    return s;
  };
  if (auto s = db.exec(kSchemaV1); !s) {
    return fail(s);
  }
  if (auto s = db.exec(kSchemaV5Summaries); !s) {
    return fail(s);
  }
  const std::string pragmas = "PRAGMA application_id=" + std::to_string(kApplicationId) +
                              "; PRAGMA user_version=" + std::to_string(kSchemaVersion) + ";";
  if (auto s = db.exec(pragmas.c_str()); !s) {
    return fail(s);
  }
  const std::string meta = "INSERT INTO meta(key, value) VALUES ('schema_version', '" + std::to_string(kSchemaVersion) +
                           "'), ('application_id', '" + std::to_string(kApplicationId) +
                           "'), ('application', 'ShardScope trace store'), "
                           "('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));";
  if (auto s = db.exec(meta.c_str()); !s) {
    return fail(s);
  }
  return db.exec("COMMIT");
}

// Reads application id, user_version and meta; refuses what we cannot read.
Result<int> validateSchema(Database& db) {
  const std::string name = storeName(db.path());
  auto appId = db.queryInt("PRAGMA application_id");
  if (!appId) {
    return appId.error();
  }
  auto version = db.queryInt("PRAGMA user_version");
  if (!version) {
    return version.error();
  }
  if (*appId != kApplicationId) {
    return Error{name + " is an SQLite database but not a ShardScope trace store (application_id " +
                 std::to_string(*appId) + ", expected " + std::to_string(kApplicationId) + ")"};
  }
  if (*version > kSchemaVersion) {
    return Error{name + " was written by a newer ShardScope (schema " + std::to_string(*version) +
                 "); this build reads schema <= " + std::to_string(kSchemaVersion) +
                 ". Open it with a newer ShardScope"};
  }
  if (*version < 1) {
    return Error{name + " has schema version " + std::to_string(*version) +
                 ", which no ShardScope release wrote (an interrupted creation?); refusing to open it"};
  }
  auto stmt = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!stmt) {
    if ((db.lastCode() & 0xff) != SQLITE_ERROR) {  // not "no such table": SQLite's own verdict
      return stmt.error();
    }
    return Error{name + " is corrupt: its meta table is missing (" + stmt.error().message + ")"};
  }
  const int rc = stmt->step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    return db.error("reading the meta table", rc);
  }
  const std::string metaVersion = rc == SQLITE_ROW ? stmt->text(0) : std::string("(none)");
  if (metaVersion != std::to_string(*version)) {
    return Error{name + " is corrupt: its meta table says schema " + metaVersion + " but its header says " +
                 std::to_string(*version)};
  }
  return static_cast<int>(*version);
}

// Brings an older store to the current schema in one transaction (so a
// failure leaves it as it was). Another writer may have migrated it first.
Result<int> migrate(Database& db) {
  if (auto s = db.exec("BEGIN IMMEDIATE"); !s) {
    return s.error();
  }
  auto version = db.queryInt("PRAGMA user_version");
  if (!version) {
    (void)db.exec("ROLLBACK");
    return version.error();
  }
  if (*version >= kSchemaVersion) {
    if (auto s = db.exec("COMMIT"); !s) {
      return s.error();
    }
    return static_cast<int>(*version);
  }
  std::string sql;
  if (*version < 2) sql += "ALTER TABLE runs ADD COLUMN config_json TEXT NOT NULL DEFAULT '';";
  if (*version < 3)
    sql +=
        "CREATE TABLE IF NOT EXISTS table_access(run INTEGER NOT NULL, name TEXT NOT NULL, access_json TEXT NOT NULL, "
        "PRIMARY KEY (run, name)) WITHOUT ROWID;";
  if (*version < 4)
    sql +=
        "ALTER TABLE collectives ADD COLUMN process_group INTEGER;"
        "ALTER TABLE collectives ADD COLUMN seq INTEGER NOT NULL DEFAULT -1;";
  if (*version < 5) sql += kSchemaV5Summaries;
  sql += std::string("PRAGMA user_version=") + std::to_string(kSchemaVersion) + ";" + "UPDATE meta SET value = '" +
         std::to_string(kSchemaVersion) + "' WHERE key = 'schema_version';";
  if (auto s = db.exec(sql.c_str()); !s) {
    (void)db.exec("ROLLBACK");
    return s.error();
  }
  if (auto s = db.exec("COMMIT"); !s) {
    (void)db.exec("ROLLBACK");
    return s.error();
  }
  return kSchemaVersion;
}

}  // namespace shardscope::core::store::detail
