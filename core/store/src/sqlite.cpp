#include "shardscope/core/store/sqlite.h"

#include <cstdint>

namespace shardscope::core::sqlite {

namespace {
// SQLITE_TRANSIENT spelled without the macro's C-style cast.
const sqlite3_destructor_type kTransient = reinterpret_cast<sqlite3_destructor_type>(static_cast<std::intptr_t>(-1));
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

std::string_view Statement::textView(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) {
    return {};
  }
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

Opened Connection::open(const std::filesystem::path& path, int flags) { return open(path.string(), flags, path); }

Opened Connection::open(const std::string& target, int flags, const std::filesystem::path& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(target.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  return Opened{Connection(raw, path), rc};
}

std::string Connection::message(int code) const { return db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(code); }

Connection::Prepared Connection::prepare(std::string_view sql, bool persistent) const {
  sqlite3_stmt* stmt = nullptr;
  const unsigned flags = persistent ? SQLITE_PREPARE_PERSISTENT : 0U;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), flags, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Prepared{Statement(), rc};
  }
  return Prepared{Statement(stmt), SQLITE_OK};
}

}  // namespace shardscope::core::sqlite
