// A disk that fills up, for tests: an SQLite VFS that wraps the platform's
// one and fails writes that would grow a file once a byte budget is spent,
// as a full file system does (overwriting bytes a file already has still
// works). Installed as the default VFS, so every connection the store opens
// in the test process goes through it; the budget starts unlimited.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace storetest::fulldisk {

enum class Failure {
  Full,     // SQLITE_FULL, what SQLite reports for ENOSPC
  IoWrite,  // SQLITE_IOERR_WRITE, what it reports for other write errors (EIO, EFBIG)
};

namespace detail {

inline sqlite3_vfs* g_real = nullptr;
inline sqlite3_vfs g_vfs{};
inline std::atomic<std::int64_t> g_remaining{-1};  // bytes of growth left; -1: no limit
inline std::atomic<int> g_failedWrites{0};
inline std::atomic<Failure> g_failure{Failure::Full};

struct File {
  sqlite3_file base;
  sqlite3_file* real;  // placed right after this struct, in the same allocation
};

inline sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

inline int write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  sqlite3_file* r = real(f);
  std::int64_t remaining = g_remaining.load();
  if (remaining >= 0) {
    sqlite3_int64 size = 0;
    if (const int rc = r->pMethods->xFileSize(r, &size); rc != SQLITE_OK) {
      return rc;
    }
    const std::int64_t growth = std::max<std::int64_t>(0, offset + amount - size);
    do {
      if (growth > remaining) {
        ++g_failedWrites;
        return g_failure.load() == Failure::Full ? SQLITE_FULL : SQLITE_IOERR_WRITE;
      }
    } while (!g_remaining.compare_exchange_weak(remaining, remaining - growth));
  }
  return r->pMethods->xWrite(r, data, amount, offset);
}

inline int close(sqlite3_file* f) {
  sqlite3_file* r = real(f);
  const int rc = r->pMethods != nullptr ? r->pMethods->xClose(r) : SQLITE_OK;
  f->pMethods = nullptr;
  return rc;
}

// Every other method goes straight to the real file.
inline const sqlite3_io_methods g_methods = {
    3,
    close,
    [](sqlite3_file* f, void* p, int n, sqlite3_int64 o) { return real(f)->pMethods->xRead(real(f), p, n, o); },
    write,
    [](sqlite3_file* f, sqlite3_int64 size) { return real(f)->pMethods->xTruncate(real(f), size); },
    [](sqlite3_file* f, int flags) { return real(f)->pMethods->xSync(real(f), flags); },
    [](sqlite3_file* f, sqlite3_int64* size) { return real(f)->pMethods->xFileSize(real(f), size); },
    [](sqlite3_file* f, int lock) { return real(f)->pMethods->xLock(real(f), lock); },
    [](sqlite3_file* f, int lock) { return real(f)->pMethods->xUnlock(real(f), lock); },
    [](sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); },
    [](sqlite3_file* f, int op, void* arg) { return real(f)->pMethods->xFileControl(real(f), op, arg); },
    [](sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); },
    [](sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); },
    [](sqlite3_file* f, int page, int size, int extend, void volatile** p) {
      return real(f)->pMethods->xShmMap(real(f), page, size, extend, p);
    },
    [](sqlite3_file* f, int offset, int n, int flags) {
      return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
    },
    [](sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); },
    [](sqlite3_file* f, int deleteFlag) { return real(f)->pMethods->xShmUnmap(real(f), deleteFlag); },
    [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return real(f)->pMethods->xFetch(real(f), o, n, p); },
    [](sqlite3_file* f, sqlite3_int64 o, void* p) { return real(f)->pMethods->xUnfetch(real(f), o, p); },
};

inline int open(sqlite3_vfs* /*vfs*/, const char* name, sqlite3_file* f, int flags, int* outFlags) {
  auto* file = reinterpret_cast<File*>(f);
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  const int rc = g_real->xOpen(g_real, name, file->real, flags, outFlags);
  file->base.pMethods = file->real->pMethods != nullptr ? &g_methods : nullptr;
  return rc;
}

}  // namespace detail

// Registers the VFS as SQLite's default (once per process).
inline void install() {
  if (detail::g_real != nullptr) {
    return;
  }
  detail::g_real = sqlite3_vfs_find(nullptr);
  detail::g_vfs = *detail::g_real;  // the platform's methods for everything but files
  detail::g_vfs.iVersion = std::min(detail::g_real->iVersion, 3);
  detail::g_vfs.zName = "shardscope-test-full-disk";
  detail::g_vfs.pNext = nullptr;
  detail::g_vfs.szOsFile = static_cast<int>(sizeof(detail::File)) + detail::g_real->szOsFile;
  detail::g_vfs.xOpen = detail::open;
  sqlite3_vfs_register(&detail::g_vfs, 1);
}

// From now on, files may grow by `bytes` in all; then writes fail with `failure`.
inline void fillAfter(std::int64_t bytes, Failure failure = Failure::Full) {
  detail::g_failure = failure;
  detail::g_remaining = bytes;
}
// The disk has room again.
inline void makeRoom() { detail::g_remaining = -1; }
inline int failedWrites() { return detail::g_failedWrites.load(); }

}  // namespace storetest::fulldisk
