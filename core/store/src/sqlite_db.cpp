#include "sqlite_db.h"

#include <cstdint>

namespace shardscope::core::store::detail {

namespace {
// SQLITE_TRANSIENT spelled without the macro's C-style cast.
const sqlite3_destructor_type kTransient =
    reinterpret_cast<sqlite3_destructor_type>(static_cast<std::intptr_t>(-1));
}  // namespace

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

void Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), kTransient);
}

std::string Statement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) {
    return {};
  }
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

std::string storeName(const std::filesystem::path& path) {
  return "trace store '" + path.string() + "'";
}

Status Database::exec(const char* sql) {
  char* msg = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &msg);
  sqlite3_free(msg);
  if (rc != SQLITE_OK) {
    return error(std::string("running '") + sql + "'", rc);
  }
  return Ok{};
}

Result<Statement> Database::prepare(std::string_view sql) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return error("preparing a query", rc);
  }
  return Statement(stmt);
}

Result<std::int64_t> Database::queryInt(const char* sql) const {
  auto stmt = prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  const int rc = stmt->step();
  if (rc == SQLITE_ROW) {
    return stmt->int64(0);
  }
  if (rc == SQLITE_DONE) {
    return std::int64_t{0};
  }
  return error(std::string("running '") + sql + "'", rc);
}

Error Database::error(std::string_view what) const {
  return error(what, sqlite3_extended_errcode(db_));
}

Error Database::error(std::string_view what, int code) const {
  const std::string name = storeName(path_);
  const std::string detail = std::string(what) + ": " + sqlite3_errmsg(db_);
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Error{name + " is corrupt or not a ShardScope trace store (" + detail + ")"};
    case SQLITE_FULL:
      return Error{name + ": the disk is full (" + detail + ")"};
    case SQLITE_READONLY:
      return Error{name + " is open read-only or not writable (" + detail + ")"};
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error{name + " is locked by another writer (" + detail + ")"};
    default:
      return Error{name + ": " + detail};
  }
}

}  // namespace shardscope::core::store::detail
