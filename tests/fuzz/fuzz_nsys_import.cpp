// libFuzzer target for the Nsight Systems importer (profiler/import/nsys_import.cpp).
//
// An input is SQL: it is run against a new SQLite database file, which is then
// imported as an nsys export (the importer's real input is a database, whose
// interesting variations are its tables, columns and values; raw bytes would
// mostly be "not a database"). Seeded with tests/data/import/nsys_small.sql,
// the fixture the unit tests build their exports from. Build as for
// fuzz_kineto_import; run with scripts/fuzz-all (docs/BENCHMARKS.md).
//
// Checked, besides ASan/UBSan/LeakSanitizer: the sink contract (beginRank
// once, events only inside it with end >= start, endRank once on success and
// never after an error); an error names the file; the report's counts match
// the events received.
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "shardscope/profiler/import/nsys_import.h"

using namespace shardscope;

namespace {

[[noreturn]] void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_nsys_import: %s %s\n", what, detail.c_str());
  std::abort();
}

class CheckingSink : public profiler::TraceEventSink {
 public:
  core::Status beginRank(const profiler::ImportRankInfo& r) override {
    if (state != 0) die("beginRank twice");
    if (r.rank < 0) die("beginRank with a negative rank");
    state = 1;
    return core::Ok{};
  }
  core::Status event(const profiler::TraceEvent& e) override {
    if (state != 1) die("event outside a rank");
    if (e.end_ns < e.start_ns) die("event ends before it starts");
    ++events;
    return core::Ok{};
  }
  core::Status updateRank(const profiler::ImportRankInfo&) override {
    if (state != 1) die("updateRank outside a rank");
    return core::Ok{};
  }
  core::Status endRank() override {
    if (state != 1) die("endRank outside a rank");
    state = 2;
    return core::Ok{};
  }
  int state = 0;
  std::uint64_t events = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/fuzz_nsys_" + std::to_string(getpid()) + ".sqlite";
  std::remove(path.c_str());
  const std::string sql(reinterpret_cast<const char*>(data), size);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) die("cannot create", path);
  // Keep SQL that would take long or grow big out: the importer is the target.
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
  int ticks = 0;  // about 10 million virtual-machine steps, then stop (recursive queries)
  sqlite3_progress_handler(
      db, 1000, [](void* t) { return ++*static_cast<int*>(t) > 10000 ? 1 : 0; }, &ticks);
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);  // what runs of it builds the file
  sqlite3_close(db);

  CheckingSink sink;
  profiler::NsysImportReport report;
  profiler::NsysOptions o;
  o.report = &report;
  const core::Status s = profiler::importNsys(path, sink, o);
  if (s.ok() && sink.state != 2) die("success without endRank");
  if (!s.ok() && sink.state == 2) die("error after endRank");
  if (!s.ok() && s.error().message.find(path) == std::string::npos)
    die("an error that does not name the file", s.error().message);
  if (s.ok() && report.events() != sink.events)
    die("the report's counts differ from the events received",
        std::to_string(report.events()) + " vs " + std::to_string(sink.events));
  std::remove(path.c_str());
  return 0;
}
