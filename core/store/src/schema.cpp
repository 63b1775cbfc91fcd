#include "schema.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include "shardscope/core/store/store_types.h"

namespace shardscope::core::store::detail {

namespace {

namespace fs = std::filesystem;

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
  end_ns    INTEGER NOT NULL
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

constexpr std::array<char, 16> kSqliteMagic = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                               'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

std::uint32_t readBigEndian(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v = (v << 8) | p[i];
  }
  return v;
}

std::uint64_t fileSizeOr0(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// Checks an existing file before SQLite sees it, so that a text file or a
// truncated store gets a message that says so.
Status checkFileHeader(const fs::path& path) {
  const std::string name = storeName(path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return Error{name + " is a directory, not a trace store file"};
  }
  const std::uint64_t size = fileSizeOr0(path);
  if (size == 0) {
    // A WAL-mode store that was never checkpointed may keep everything in
    // <file>-wal; SQLite recovers it, so let it try.
    if (fileSizeOr0(fs::path(path.string() + "-wal")) > 0) {
      return Ok{};
    }
    return Error{name +
                 " is empty (0 bytes); it is not a ShardScope trace store. "
                 "Delete it, or choose another path to create a new store"};
  }
  std::array<unsigned char, 100> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{name + " cannot be read (permission denied?)"};
  }
  in.read(reinterpret_cast<char*>(header.data()), static_cast<std::streamsize>(header.size()));
  if (static_cast<std::size_t>(in.gcount()) < header.size() ||
      std::memcmp(header.data(), kSqliteMagic.data(), kSqliteMagic.size()) != 0) {
    return Error{name + " is not a ShardScope trace store (not an SQLite database file)"};
  }
  std::uint64_t pageSize = readBigEndian(header.data() + 16, 2);
  if (pageSize == 1) {
    pageSize = 65536;
  }
  const std::uint32_t changeCounter = readBigEndian(header.data() + 24, 4);
  const std::uint32_t pageCount = readBigEndian(header.data() + 28, 4);
  const std::uint32_t validFor = readBigEndian(header.data() + 92, 4);
  if (pageSize < 512 || (pageSize & (pageSize - 1)) != 0) {
    return Error{name + " is corrupt (invalid page size " + std::to_string(pageSize) + " in the header)"};
  }
  // The in-header page count is trustworthy only when validFor matches the
  // change counter (SQLite >= 3.7.0 keeps them in step).
  if (validFor == changeCounter && pageCount > 0 && size < pageSize * pageCount) {
    return Error{name + " is corrupt: the file is truncated (" + std::to_string(size) + " bytes; its header says " +
                 std::to_string(pageSize * pageCount) + ")"};
  }
  return Ok{};
}

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
  auto version = db.queryInt("PRAGMA user_version");
  if (!version) {
    return fail(version.error());
  }
  if (*version != 0) {  // another process created it between our checks
    return db.exec("COMMIT");
  }
  if (auto s = db.exec(kSchemaV1); !s) {
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

Result<std::unique_ptr<Database>> openConnection(const fs::path& path, int flags) {
  auto opened = sqlite::Connection::open(path, flags);
  const int rc = opened.rc;
  auto db = std::make_unique<Database>(std::move(opened.connection));
  if (rc != SQLITE_OK) {
    const bool creating = (flags & SQLITE_OPEN_CREATE) != 0;
    return Error{storeName(path) + (creating ? " cannot be created: " : " cannot be opened: ") +
                 db->connection().message(rc)};
  }
  sqlite3_extended_result_codes(db->handle(), 1);
  return db;
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

// Brings a schema-1 store to the current schema in one transaction (so a
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

}  // namespace

Result<OpenedStore> openValidated(const fs::path& path, OpenMode mode) {
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (!exists) {
    if (mode != OpenMode::Create) {
      return Error{storeName(path) + " does not exist"};
    }
    auto db = openConnection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!db) {
      return db.error();
    }
    if (auto s = applyConnectionPragmas(**db, mode); !s) {
      return s.error();
    }
    if (auto s = initialiseSchema(**db); !s) {
      return Error{storeName(path) + " cannot be created: " + s.error().message};
    }
    auto version = validateSchema(**db);
    if (!version) {
      return version.error();
    }
    return OpenedStore{std::move(*db), *version};
  }

  if (auto s = checkFileHeader(path); !s) {
    return s.error();
  }
  const int flags = mode == OpenMode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  auto db = openConnection(path, flags);
  if (!db) {
    return db.error();
  }
  if (auto s = applyConnectionPragmas(**db, mode); !s) {
    return s.error();
  }
  auto version = validateSchema(**db);
  if (!version) {
    return version.error();
  }
  if (mode != OpenMode::ReadOnly) {
    if (auto s = ensureWal(**db); !s) {
      return s.error();
    }
    if (*version < kSchemaVersion) {
      auto migrated = migrate(**db);
      if (!migrated) {
        return Error{storeName(path) + " could not be migrated from schema " + std::to_string(*version) + " to " +
                     std::to_string(kSchemaVersion) + ": " + migrated.error().message + " (the file is unchanged)"};
      }
      version = *migrated;
    }
  }
  return OpenedStore{std::move(*db), *version};
}

}  // namespace shardscope::core::store::detail
