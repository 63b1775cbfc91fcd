// The trace store schema (version 1) and the checks run when a file is
// opened: header, application id, schema version, meta table.
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
[[nodiscard]] Result<OpenedStore> openValidated(const std::filesystem::path& path, OpenMode mode);

}  // namespace shardscope::core::store::detail
