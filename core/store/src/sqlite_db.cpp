#include "sqlite_db.h"

#include <cstdint>
#include <utility>

namespace shardscope::core::store::detail {

std::string storeName(const std::filesystem::path& path) { return "trace store '" + path.string() + "'"; }

std::string fileUri(const std::filesystem::path& path, std::string_view query) {
  std::string uri = "file:";
  for (const unsigned char c : path.string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      constexpr const char* kHex = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xf];
    } else {
      uri += static_cast<char>(c);
    }
  }
  uri += '?';
  uri.append(query);
  return uri;
}

Status Database::exec(const char* sql) {
  char* msg = nullptr;
  const int rc = sqlite3_exec(handle(), sql, nullptr, nullptr, &msg);
  sqlite3_free(msg);
  if (rc != SQLITE_OK) {
    return error(std::string("running '") + sql + "'", rc);
  }
  return Ok{};
}

Result<Statement> Database::prepare(std::string_view sql) const {
  auto prepared = conn_.prepare(sql, /*persistent=*/true);
  if (prepared.rc != SQLITE_OK) {
    return error("preparing a query", prepared.rc);
  }
  return std::move(prepared.stmt);
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

Error Database::error(std::string_view what) const { return error(what, sqlite3_extended_errcode(handle())); }

Error Database::error(std::string_view what, int code) const {
  const std::string name = storeName(path());
  const std::string detail = std::string(what) + ": " + sqlite3_errmsg(handle());
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Error{name + " is corrupt or not a ShardScope trace store (" + detail + ")"};
    case SQLITE_FULL:
      return Error{name + ": the disk is full (" + detail + ")", ErrorKind::Io};
    case SQLITE_IOERR:
      return Error{name + ": reading or writing the file failed (" + detail + ")", ErrorKind::Io};
    case SQLITE_READONLY:
      return Error{name + " is open read-only or not writable (" + detail + ")", ErrorKind::Io};
    case SQLITE_CANTOPEN:
      return Error{name + " or a file beside it (" + path().filename().string() + "-wal, " +
                       path().filename().string() + "-shm) cannot be opened or created (" + detail +
                       "); is its folder writable?",
                   ErrorKind::Io};
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error{name + " is locked by another writer (" + detail + ")", ErrorKind::Io};
    default:
      return Error{name + ": " + detail};
  }
}

}  // namespace shardscope::core::store::detail
