// Thin RAII wrappers over the SQLite C API for the trace store: a connection
// that knows its file (so every error names it) and a prepared statement.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "shardscope/core/result.h"

namespace shardscope::core::store::detail {

class Statement {
 public:
  Statement() = default;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  [[nodiscard]] sqlite3_stmt* get() const { return stmt_; }

  // Parameters are 1-based, as in SQLite.
  void bind(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bind(int index, int value) { sqlite3_bind_int64(stmt_, index, value); }
  void bind(int index, std::string_view text);  // copied by SQLite
  void bindNull(int index) { sqlite3_bind_null(stmt_, index); }
  // kNoString-style ids: 0 is stored as NULL.
  void bindIdOrNull(int index, std::int64_t id) {
    if (id == 0) {
      bindNull(index);
    } else {
      bind(index, id);
    }
  }

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  void reset() { sqlite3_reset(stmt_); }

  // Columns are 0-based.
  [[nodiscard]] std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  [[nodiscard]] int int32(int col) const { return sqlite3_column_int(stmt_, col); }
  [[nodiscard]] std::string text(int col) const;
  [[nodiscard]] bool isNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  Database(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database() { sqlite3_close_v2(db_); }

  [[nodiscard]] sqlite3* handle() const { return db_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  [[nodiscard]] Status exec(const char* sql);
  [[nodiscard]] Result<Statement> prepare(std::string_view sql) const;
  // Runs a statement that returns one integer (e.g. a PRAGMA).
  [[nodiscard]] Result<std::int64_t> queryInt(const char* sql) const;

  // An Error for the last failed call on this connection. `what` says what
  // we were doing ("inserting spans"); corruption and a full disk get their
  // own wording.
  [[nodiscard]] Error error(std::string_view what) const;
  [[nodiscard]] Error error(std::string_view what, int code) const;

 private:
  sqlite3* db_;
  std::filesystem::path path_;
};

// "trace store '/x/y.db'" — the prefix of every message about a file.
[[nodiscard]] std::string storeName(const std::filesystem::path& path);

}  // namespace shardscope::core::store::detail
