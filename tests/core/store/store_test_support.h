// Helpers shared by the trace store tests: temp paths, a small sample run,
// raw SQLite access for forging foreign or damaged files.
#pragma once

#include <sqlite3.h>

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"

// Printable enums in QCOMPARE failures (found by argument-dependent lookup).
namespace shardscope::core::store {
inline char* toString(RunStatus s) { return qstrdup(std::string(toText(s)).c_str()); }
inline char* toString(RunKind k) { return qstrdup(std::string(toText(k)).c_str()); }
inline char* toString(RunId id) { return qstrdup(std::to_string(static_cast<std::int64_t>(id)).c_str()); }
inline char* toString(StringId id) { return qstrdup(std::to_string(static_cast<std::int64_t>(id)).c_str()); }
inline char* toString(BookmarkId id) { return qstrdup(std::to_string(static_cast<std::int64_t>(id)).c_str()); }
}  // namespace shardscope::core::store

namespace storetest {

namespace st = shardscope::core::store;

inline std::filesystem::path pathIn(const QTemporaryDir& dir, const char* name) {
  return std::filesystem::path(dir.path().toStdString()) / name;
}

// <dir>/<prefix><n>.db
inline std::filesystem::path numberedPath(const QTemporaryDir& dir, const char* prefix, int n) {
  std::string name(prefix);
  name.append(std::to_string(n)).append(".db");
  return std::filesystem::path(dir.path().toStdString()) / name;
}

// A span with only the fields most tests care about.
inline st::Span span(int rank, int stream, st::StringId name, std::int64_t start, std::int64_t end) {
  st::Span s;
  s.rank = rank;
  s.stream = stream;
  s.kind = name;
  s.name = name;
  s.start_ns = start;
  s.end_ns = end;
  return s;
}

// A deterministic span pattern: `perRank` back-to-back spans of 100 ns on
// each of `ranks` ranks, streams alternating 0/1, names "op0".."op3".
struct SampleRun {
  st::RunId run{};
  std::vector<st::Span> spans;
};

inline SampleRun writeSampleRun(const std::filesystem::path& path, int ranks, int perRank, bool finish = true,
                                std::string label = "sample") {
  SampleRun out;
  st::RunHeader header;
  header.kind = st::RunKind::Emulate;
  header.label = std::move(label);
  header.model_json = R"({"name":"tiny"})";
  auto writer = st::RunWriter::begin(path, header);
  if (!writer) {
    qFatal("%s", writer.error().message.c_str());
  }
  out.run = writer->run();
  std::vector<st::StringId> names;
  for (int i = 0; i < 4; ++i) {
    names.push_back(*writer->intern("op" + std::to_string(i)));
  }
  const st::StringId kind = *writer->intern("kernel");
  for (int r = 0; r < ranks; ++r) {
    for (int i = 0; i < perRank; ++i) {
      st::Span s;
      s.rank = r;
      s.stream = i % 2;
      s.kind = kind;
      s.name = names[static_cast<std::size_t>(i % 4)];
      s.start_ns = std::int64_t{i} * 100;
      s.end_ns = s.start_ns + 100;
      s.step = i / 10;
      s.correlation = i;
      s.bytes = 64;
      out.spans.push_back(s);
      if (!writer->addSpan(s)) {
        qFatal("addSpan failed");
      }
    }
  }
  if (finish && !writer->finish()) {
    qFatal("finish failed");
  }
  if (!finish && !writer->commit()) {
    qFatal("commit failed");
  }
  return out;
}

inline st::TraceStore openOrDie(const std::filesystem::path& path, st::OpenMode mode = st::OpenMode::ReadOnly) {
  auto store = st::openStore(path, mode);
  if (!store) {
    qFatal("%s", store.error().message.c_str());
  }
  return std::move(store).value();
}

// Runs SQL on a file with plain SQLite, bypassing the store's checks.
inline void rawExec(const std::filesystem::path& path, const char* sql) {
  sqlite3* db = nullptr;
  QCOMPARE_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* msg = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
  const std::string err = msg != nullptr ? msg : "";
  sqlite3_free(msg);
  sqlite3_close(db);
  QVERIFY2(rc == SQLITE_OK, err.c_str());
}

inline QByteArray readAll(const std::filesystem::path& path) {
  QFile f(QString::fromStdString(path.string()));
  if (!f.open(QIODevice::ReadOnly)) {
    return {};
  }
  return f.readAll();
}

inline void writeAll(const std::filesystem::path& path, const QByteArray& bytes) {
  QFile f(QString::fromStdString(path.string()));
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(f.write(bytes), bytes.size());
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// An error's kind as text ("i/o", "invalid input"), for QCOMPARE.
inline std::string kindOf(const shardscope::core::Error& error) { return std::string(toString(error.kind)); }
inline std::string kindName(shardscope::core::ErrorKind kind) { return std::string(toString(kind)); }

}  // namespace storetest
