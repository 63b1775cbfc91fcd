// The trace store's connection: the shared SQLite RAII layer
// (shardscope/core/store/sqlite.h) with the store's error wording, so every
// error names the store file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "shardscope/core/result.h"
#include "shardscope/core/store/sqlite.h"

namespace shardscope::core::store::detail {

using Statement = sqlite::Statement;

class Database {
 public:
  explicit Database(sqlite::Connection connection) : conn_(std::move(connection)) {}

  [[nodiscard]] const sqlite::Connection& connection() const { return conn_; }
  [[nodiscard]] sqlite3* handle() const { return conn_.handle(); }
  [[nodiscard]] const std::filesystem::path& path() const { return conn_.path(); }

  [[nodiscard]] Status exec(const char* sql);
  [[nodiscard]] Result<Statement> prepare(std::string_view sql) const;
  // Runs a statement that returns one integer (e.g. a PRAGMA).
  [[nodiscard]] Result<std::int64_t> queryInt(const char* sql) const;

  // An Error for the last failed call on this connection. `what` says what
  // we were doing ("inserting spans"); corruption and a full disk get their
  // own wording. Only SQLite's SQLITE_CORRUPT / SQLITE_NOTADB is called
  // corrupt (an invalid input); what the environment refuses (no space, an
  // I/O error, a file that cannot be opened or written, a lock held too
  // long) is an I/O error.
  [[nodiscard]] Error error(std::string_view what) const;
  [[nodiscard]] Error error(std::string_view what, int code) const;
  // The extended result code of the last failed call.
  [[nodiscard]] int lastCode() const { return sqlite3_extended_errcode(handle()); }

 private:
  sqlite::Connection conn_;
};

// "trace store '/x/y.db'" — the prefix of every message about a file.
[[nodiscard]] std::string storeName(const std::filesystem::path& path);

// "file:<path>?<query>" for SQLite's URI opens and ATTACH ("immutable=1",
// "mode=ro"), the characters with a meaning in URIs escaped.
[[nodiscard]] std::string fileUri(const std::filesystem::path& path, std::string_view query);

}  // namespace shardscope::core::store::detail
