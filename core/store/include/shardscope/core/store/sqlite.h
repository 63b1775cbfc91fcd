// RAII over the SQLite C API, shared by every reader and writer of SQLite
// files (the trace store, the Nsight Systems importer): a connection that
// knows its file and closes on destruction, and a prepared statement. Error
// wording stays with the caller, which knows what the file is.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace shardscope::core::sqlite {

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
  [[nodiscard]] std::string text(int col) const { return std::string(textView(col)); }
  // Valid until the next step, reset or finalize.
  [[nodiscard]] std::string_view textView(int col) const;
  [[nodiscard]] bool isNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class Connection;

// The result of Connection::open: the connection (open or not: SQLite hands
// out a handle that must be closed even when opening failed) and the code.
struct Opened;

class Connection {
 public:
  Connection(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  Connection(Connection&& other) noexcept : db_(other.db_), path_(std::move(other.path_)) { other.db_ = nullptr; }
  Connection& operator=(Connection&&) = delete;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { sqlite3_close_v2(db_); }

  // sqlite3_open_v2 with SQLITE_OPEN_NOMUTEX added to `flags`.
  [[nodiscard]] static Opened open(const std::filesystem::path& path, int flags);
  // Opens `target` (another file name, or a URI with SQLITE_OPEN_URI in
  // `flags`) for the file `path`, which path() and messages name.
  [[nodiscard]] static Opened open(const std::string& target, int flags, const std::filesystem::path& path);

  [[nodiscard]] sqlite3* handle() const { return db_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // sqlite3_errmsg of the last failed call, or of `code` when the connection never opened.
  [[nodiscard]] std::string message(int code) const;

  // The statement and SQLITE_OK, or an empty statement and the error code.
  struct Prepared {
    Statement stmt;
    int rc = SQLITE_OK;
  };
  [[nodiscard]] Prepared prepare(std::string_view sql, bool persistent = false) const;

 private:
  sqlite3* db_;
  std::filesystem::path path_;
};

struct Opened {
  Connection connection;
  int rc = SQLITE_OK;
};

}  // namespace shardscope::core::sqlite
