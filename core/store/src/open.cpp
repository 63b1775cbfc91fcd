// Opening a trace store file: the checks before SQLite reads it, creating a
// new store so that no other process sees it half made, and reading a store
// in a folder where SQLite cannot create the files a WAL database keeps
// beside it. Whether a file is corrupt is SQLite's verdict only.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include "schema.h"

namespace shardscope::core::store::detail {

namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 16> kSqliteMagic = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                               'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
// A WAL file shorter than its 32-byte header holds no frames.
constexpr std::uint64_t kWalHeaderBytes = 32;

std::uint64_t fileSizeOr0(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

fs::path sidecar(const fs::path& path, const char* suffix) { return fs::path(path.string() + suffix); }

std::uint32_t readBigEndian(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v = (v << 8) | p[i];
  }
  return v;
}

// What the main file's header claims, for explaining a corrupt verdict.
struct FileFacts {
  std::uint64_t size = 0;
  std::uint64_t header_bytes = 0;  // page size x the header's page count; 0 when not trustworthy
};

// Checks an existing file before SQLite sees it, so that a directory, an
// empty file or a text file gets a message that says so. Whether the pages
// are whole is left to SQLite, which also reads the write-ahead log: the
// main file alone may be shorter than its header says while a WAL holds
// the rest (a checkpoint that ran out of disk space stops half way).
Result<FileFacts> checkFileHeader(const fs::path& path) {
  const std::string name = storeName(path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return Error{name + " is a directory, not a trace store file"};
  }
  FileFacts facts;
  facts.size = fileSizeOr0(path);
  if (facts.size == 0) {
    // A WAL-mode store that was never checkpointed may keep everything in
    // <file>-wal; SQLite recovers it, so let it try.
    if (fileSizeOr0(sidecar(path, "-wal")) > 0) {
      return facts;
    }
    return Error{name +
                 " is empty (0 bytes); it is not a ShardScope trace store. "
                 "Delete it, or choose another path to create a new store"};
  }
  std::array<unsigned char, 100> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{name + " cannot be read (permission denied?)", ErrorKind::Io};
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
  // The in-header page count is trustworthy only when the version-valid-for
  // number matches the change counter (SQLite >= 3.7.0 keeps them in step).
  if (readBigEndian(header.data() + 92, 4) == readBigEndian(header.data() + 24, 4)) {
    facts.header_bytes = pageSize * readBigEndian(header.data() + 28, 4);
  }
  return facts;
}

bool isCorruptCode(int code) { return (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB; }

// SQLite's codes for "cannot open or create the -wal or -shm file".
bool isSidecarCode(int code) { return (code & 0xff) == SQLITE_CANTOPEN || (code & 0xff) == SQLITE_READONLY; }

std::string truncationNote(const fs::path& path, const FileFacts& facts) {
  if (facts.header_bytes <= facts.size || fileSizeOr0(sidecar(path, "-wal")) >= kWalHeaderBytes) {
    return {};
  }
  return "; the file is truncated (" + std::to_string(facts.size) + " bytes; its header says " +
         std::to_string(facts.header_bytes) + ")";
}

// One try at opening and validating; `code` is SQLite's when it failed.
struct Attempt {
  Result<OpenedStore> store;
  int code = SQLITE_OK;
};

Attempt openAndValidate(const fs::path& path, const std::string& target, int flags, OpenMode mode,
                        const FileFacts& facts) {
  auto opened = sqlite::Connection::open(target, flags, path);
  const int openRc = opened.rc;
  auto db = std::make_unique<Database>(std::move(opened.connection));
  if (openRc != SQLITE_OK) {
    return {Error{storeName(path) + " cannot be opened: " + db->connection().message(openRc), ErrorKind::Io}, openRc};
  }
  sqlite3_extended_result_codes(db->handle(), 1);
  sqlite3_busy_timeout(db->handle(), 10'000);  // wait for other writers instead of failing at once
  auto version = validateSchema(*db);          // SQLite reads the file (and its WAL) here first
  if (!version) {
    const int code = db->lastCode();
    Error error = version.error();
    if (isCorruptCode(code)) {
      error.message += truncationNote(path, facts);
    }
    return {std::move(error), code};
  }
  if (auto s = applyConnectionPragmas(*db, mode); !s) {
    return {s.error(), db->lastCode()};
  }
  return {OpenedStore{std::move(db), *version}, SQLITE_OK};
}

// A WAL store needs its -shm index to be read, and SQLite creates it (and
// an empty -wal) when missing. In a folder the user cannot write, or on
// read-only media, it cannot: when no write-ahead log holds data, the main
// file is the whole store and is read as immutable; otherwise the data in
// the log cannot be read here, which the error says.
Result<OpenedStore> openForReading(const fs::path& path, const FileFacts& facts) {
  Attempt first = openAndValidate(path, path.string(), SQLITE_OPEN_READONLY, OpenMode::ReadOnly, facts);
  if (first.store || !isSidecarCode(first.code)) {
    return std::move(first.store);
  }
  const fs::path wal = sidecar(path, "-wal");
  const std::uint64_t walBytes = fileSizeOr0(wal);
  if (walBytes >= kWalHeaderBytes) {
    return Error{storeName(path) + " cannot be read here: its write-ahead log " + wal.string() + " (" +
                     std::to_string(walBytes) + " bytes) holds data that is not in the main file yet, and SQLite " +
                     "reads it only with an index file (" + sidecar(path, "-shm").filename().string() +
                     ") that it cannot open or create in this read-only folder or medium (" +
                     first.store.error().message + "). Copy the store together with its -wal file to a writable " +
                     "folder, or open it once where its folder is writable, to read it",
                 ErrorKind::Io};
  }
  return std::move(openAndValidate(path, fileUri(path, "immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                                   OpenMode::ReadOnly, facts)
                       .store);
}

Result<OpenedStore> openForWriting(const fs::path& path, OpenMode mode, const FileFacts& facts) {
  Attempt attempt = openAndValidate(path, path.string(), SQLITE_OPEN_READWRITE, mode, facts);
  if (!attempt.store && isSidecarCode(attempt.code)) {
    Error error = attempt.store.error();
    error.message += ". Writing a store needs write access to the file and to its folder, where SQLite keeps " +
                     sidecar(path, "-wal").filename().string() + " and " + sidecar(path, "-shm").filename().string();
    return error;
  }
  if (!attempt.store) {
    return std::move(attempt.store);
  }
  Database& db = *attempt.store->db;
  int& version = attempt.store->schema_version;
  if (auto s = ensureWal(db); !s) {
    return s.error();
  }
  if (version < kSchemaVersion) {
    auto migrated = migrate(db);
    if (!migrated) {
      return Error{storeName(path) + " could not be migrated from schema " + std::to_string(version) + " to " +
                       std::to_string(kSchemaVersion) + ": " + migrated.error().message + " (the file is unchanged)",
                   migrated.error().kind};
    }
    version = *migrated;
  }
  return std::move(attempt.store);
}

void removeWithSidecars(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    fs::remove(sidecar(path, suffix), ec);
  }
}

// Puts `from` at `to` unless `to` exists; 0 or an errno (EEXIST: it exists).
int linkIntoPlace(const fs::path& from, const fs::path& to) {
  if (::link(from.c_str(), to.c_str()) == 0) {
    return 0;
  }
  int err = errno;
#ifdef RENAME_NOREPLACE
  if (err != EEXIST) {  // a file system without hard links
    err = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0 ? 0 : errno;
  }
#endif
  return err;
}

// A new store is written under a private name beside `path` and linked to
// `path` only if that is still free, so no process ever sees a half-made
// store (an empty file, tables without their version markers). When another
// process creates `path` first, its store is the one used.
Status createStore(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  const fs::path temp = path.string() + ".creating-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const auto failed = [&](const std::string& why) {
    removeWithSidecars(temp);
    return Error{storeName(path) + " cannot be created: " + why, ErrorKind::Io};
  };
  {
    auto opened = sqlite::Connection::open(temp.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path);
    const int rc = opened.rc;
    Database db(std::move(opened.connection));
    if (rc != SQLITE_OK) {
      return failed(db.connection().message(rc));
    }
    sqlite3_extended_result_codes(db.handle(), 1);
    if (auto s = initialiseSchema(db); !s) {
      std::string why = s.error().message;  // "trace store '<path>': the disk is full (...)"
      const std::string name = storeName(path);
      if (why.starts_with(name)) {
        why.erase(0, why.starts_with(name + ": ") ? name.size() + 2 : name.size() + 1);
      }
      return failed(why);
    }
  }  // closing checkpoints the log into the file (fsynced) and deletes it
  if (fs::exists(sidecar(temp, "-wal"))) {
    return failed("its write-ahead log could not be checkpointed into " + temp.string());
  }
  const int err = linkIntoPlace(temp, path);
  removeWithSidecars(temp);
  if (err != 0 && err != EEXIST) {
    return Error{storeName(path) + " cannot be created: " + std::strerror(err), ErrorKind::Io};
  }
  return Ok{};
}

}  // namespace

Result<OpenedStore> openValidated(const fs::path& path, OpenMode mode) {
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (ec) {  // not "no such file": e.g. a folder on the way that we may not enter
    return Error{storeName(path) + " cannot be accessed: " + ec.message(), ErrorKind::Io};
  }
  if (!exists) {
    if (mode != OpenMode::Create) {
      return Error{storeName(path) + " does not exist"};
    }
    if (auto s = createStore(path); !s) {
      return s.error();
    }
  }
  auto facts = checkFileHeader(path);
  if (!facts) {
    return facts.error();
  }
  return mode == OpenMode::ReadOnly ? openForReading(path, *facts) : openForWriting(path, mode, *facts);
}

}  // namespace shardscope::core::store::detail

namespace shardscope::core::store {

bool isSqliteFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 16> header{};
  if (!in.read(header.data(), static_cast<std::streamsize>(header.size()))) return false;
  return std::memcmp(header.data(), "SQLite format 3", header.size()) == 0;
}

}  // namespace shardscope::core::store
