// The trace store schema and the steps of opening a file: creating it,
// validating it (application id, schema version, meta table), migrating it,
// and the connection settings of readers and writers.
#pragma once

#include <filesystem>
#include <memory>

#include "shardscope/core/result.h"
#include "shardscope/core/store/trace_store.h"
#include "sqlite_db.h"

namespace shardscope::core::store::detail {

struct OpenedStore {
  std::unique_ptr<Database> db;
  int schema_version = 0;
};

// Opens `path` and validates it; with OpenMode::Create a missing file is
// created and initialised. Writable connections get the writer pragmas
// (WAL, synchronous=NORMAL, ...). Never changes an existing valid store.
// A ReadOnly open of a store in a folder where SQLite cannot create the
// store's -shm file falls back to reading the main file as immutable when
// no write-ahead log holds data (open.cpp; docs/formats/store.md).
[[nodiscard]] Result<OpenedStore> openValidated(const std::filesystem::path& path, OpenMode mode);

// Writes the current schema into a new, empty database (schema.cpp).
[[nodiscard]] Status initialiseSchema(Database& db);
// Reads application id, user_version and meta; refuses what this build
// cannot read. Returns the schema version.
[[nodiscard]] Result<int> validateSchema(Database& db);
// Brings an older schema to the current one in one transaction.
[[nodiscard]] Result<int> migrate(Database& db);
// Switches the journal to WAL unless it is WAL already.
[[nodiscard]] Status ensureWal(Database& db);
// Busy timeout, cache, and for writers synchronous=NORMAL and the WAL
// checkpoint interval.
[[nodiscard]] Status applyConnectionPragmas(Database& db, OpenMode mode);

}  // namespace shardscope::core::store::detail
