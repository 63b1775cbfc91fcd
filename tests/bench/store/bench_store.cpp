// bench_store: speed of the trace store against the bars in
// docs/formats/store.md — writer insert rate (absolute, and relative to a
// bare SQLite insert loop into an unindexed table over the same rows) and
// the latency of an 8-rank window query over 1/100 of a 10M-span run.
//
//   bench_store [--spans N] [--ranks R] [--dir D] [--batch B] [--queries Q]
//               [--no-layouts] [--keep]
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"

namespace st = shardscope::core::store;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::int64_t spans = 10'000'000;
  int ranks = 64;
  fs::path dir = fs::temp_directory_path();
  std::size_t batch = 64 * 1024;
  int queries = 50;
  bool layouts = true;
  bool keep = false;
};

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "bench_store: %s\n", msg.c_str());
  std::exit(1);
}

std::uint64_t sizeOf(const fs::path& p) {
  std::error_code ec;
  const auto a = fs::file_size(p, ec);
  const auto b = fs::file_size(fs::path(p.string() + "-wal"), ec);
  return (ec ? 0 : b) + a;
}

void removeStore(const fs::path& p) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    fs::remove(fs::path(p.string() + suffix), ec);
  }
}

// Spans as an emulator emits them: round-robin over ranks, each rank's
// spans in time order on 4 streams, a few long step-level spans.
std::vector<st::Span> makeSpans(const Options& o, const std::vector<st::StringId>& names,
                                const std::vector<st::StringId>& kinds, const std::vector<st::StringId>& tables) {
  std::vector<st::Span> spans;
  spans.reserve(static_cast<std::size_t>(o.spans));
  std::mt19937_64 rng(42);
  for (std::int64_t i = 0; i < o.spans; ++i) {
    const auto k = i / o.ranks;
    st::Span s;
    s.rank = static_cast<int>(i % o.ranks);
    s.stream = static_cast<int>(k % 4);
    s.kind = kinds[static_cast<std::size_t>(k % 3)];
    s.name = names[static_cast<std::size_t>(rng() % names.size())];
    s.start_ns = 1'700'000'000'000'000'000 + k * 200 + (s.rank * 7) % 50;
    s.end_ns = s.start_ns + (k % 4096 == 0 ? 100'000 : 50 + static_cast<std::int64_t>(rng() % 400));
    s.step = k / 2000;
    s.correlation = i;
    s.bytes = (k % 3 == 2) ? 65536 : 0;
    s.table = (k % 2 == 0) ? tables[static_cast<std::size_t>(k / 2 % tables.size())] : st::kNoString;
    spans.push_back(s);
  }
  return spans;
}

sqlite3* openRaw(const fs::path& path) {
  removeStore(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    die("cannot open " + path.string());
  }
  return db;
}

void execRaw(sqlite3* db, const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    die(std::string(sql) + ": " + (msg ? msg : "?"));
  }
}

// The pragmas the store uses for writers (see schema.cpp), for fairness.
constexpr const char* kPragmas =
    "PRAGMA page_size=8192; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536; PRAGMA wal_autocheckpoint=4096;";

enum class Layout { Unindexed, RowidPlusIndex, ClusteredUnsorted, ClusteredSorted };

// A bare prepared-statement loop: bind, step, reset, commit every batch.
double rawInsert(const Options& o, const fs::path& path, const std::vector<st::Span>& input, Layout layout) {
  sqlite3* db = openRaw(path);
  execRaw(db, kPragmas);
  const char* columns =
      "run INTEGER NOT NULL, rank INTEGER NOT NULL, start_ns INTEGER NOT NULL, stream INTEGER NOT NULL,"
      "seq INTEGER NOT NULL, end_ns INTEGER NOT NULL, kind INTEGER NOT NULL, name INTEGER NOT NULL,"
      "step INTEGER NOT NULL, correlation INTEGER NOT NULL, bytes INTEGER NOT NULL, table_id INTEGER";
  std::string ddl;
  switch (layout) {
    case Layout::Unindexed:
    case Layout::RowidPlusIndex:
      ddl = std::string("CREATE TABLE spans(") + columns + ");";
      if (layout == Layout::RowidPlusIndex) {
        ddl += "CREATE INDEX spans_window ON spans(run, rank, start_ns);";
      }
      break;
    case Layout::ClusteredUnsorted:
    case Layout::ClusteredSorted:
      ddl = std::string("CREATE TABLE spans(") + columns +
            ", PRIMARY KEY (run, rank, start_ns, stream, seq)) WITHOUT ROWID;";
      break;
  }
  execRaw(db, ddl.c_str());
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO spans VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", -1, &ins,
                     nullptr);
  std::vector<st::Span> batch;
  const auto t0 = Clock::now();
  std::int64_t seq = 0;
  for (std::size_t begin = 0; begin < input.size(); begin += o.batch) {
    const std::size_t end = std::min(input.size(), begin + o.batch);
    batch.assign(input.begin() + static_cast<std::ptrdiff_t>(begin), input.begin() + static_cast<std::ptrdiff_t>(end));
    if (layout == Layout::ClusteredSorted) {
      std::sort(batch.begin(), batch.end(), [](const st::Span& a, const st::Span& b) {
        return a.rank != b.rank ? a.rank < b.rank : a.start_ns < b.start_ns;
      });
    }
    execRaw(db, "BEGIN");
    for (const st::Span& s : batch) {
      sqlite3_bind_int64(ins, 1, 1);
      sqlite3_bind_int64(ins, 2, s.rank);
      sqlite3_bind_int64(ins, 3, s.start_ns);
      sqlite3_bind_int64(ins, 4, s.stream);
      sqlite3_bind_int64(ins, 5, seq++);
      sqlite3_bind_int64(ins, 6, s.end_ns);
      sqlite3_bind_int64(ins, 7, static_cast<std::int64_t>(s.kind));
      sqlite3_bind_int64(ins, 8, static_cast<std::int64_t>(s.name));
      sqlite3_bind_int64(ins, 9, s.step);
      sqlite3_bind_int64(ins, 10, s.correlation);
      sqlite3_bind_int64(ins, 11, s.bytes);
      if (s.table == st::kNoString) {
        sqlite3_bind_null(ins, 12);
      } else {
        sqlite3_bind_int64(ins, 12, static_cast<std::int64_t>(s.table));
      }
      if (sqlite3_step(ins) != SQLITE_DONE) {
        die(std::string("insert: ") + sqlite3_errmsg(db));
      }
      sqlite3_reset(ins);
    }
    execRaw(db, "COMMIT");
  }
  const double secs = secondsSince(t0);
  sqlite3_finalize(ins);
  sqlite3_close(db);
  return secs;
}

struct Percentiles {
  double min, median, p95, max;
};
Percentiles percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
  return {v.front(), at(0.5), at(0.95), v.back()};
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        die("missing value after " + a);
      }
      return argv[++i];
    };
    if (a == "--spans") {
      o.spans = std::stoll(next());
    } else if (a == "--ranks") {
      o.ranks = std::stoi(next());
    } else if (a == "--dir") {
      o.dir = next();
    } else if (a == "--batch") {
      o.batch = std::stoull(next());
    } else if (a == "--queries") {
      o.queries = std::stoi(next());
    } else if (a == "--no-layouts") {
      o.layouts = false;
    } else if (a == "--keep") {
      o.keep = true;
    } else {
      std::printf(
          "usage: bench_store [--spans N (10000000)] [--ranks R (64)] [--dir D (%s)]\n"
          "                   [--batch B (65536)] [--queries Q (50)] [--no-layouts] [--keep]\n",
          fs::temp_directory_path().c_str());
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  if (o.spans < o.ranks || o.ranks < 8 || o.batch == 0 || o.queries < 1) {
    die("need --spans >= --ranks >= 8, --batch > 0, --queries > 0");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const fs::path storePath = o.dir / "bench_store_writer.db";
  const fs::path rawPath = o.dir / "bench_store_raw.db";
  std::printf("bench_store: %lld spans, %d ranks, batch %zu, dir %s, SQLite %s\n", static_cast<long long>(o.spans),
              o.ranks, o.batch, o.dir.c_str(), sqlite3_libversion());

  // Strings are interned up front so the row array holds integers only and
  // both the writer and the raw loop insert exactly the same rows.
  removeStore(storePath);
  st::WriterOptions wopts;
  wopts.rows_per_commit = o.batch;
  auto writer = st::RunWriter::begin(storePath, {st::RunKind::Emulate, "bench", {}, {}, {}, {}}, wopts);
  if (!writer) {
    die(writer.error().message);
  }
  std::vector<st::StringId> names, kinds, tables;
  for (int i = 0; i < 40; ++i) {
    names.push_back(*writer->intern("op_" + std::to_string(i)));
  }
  for (const char* k : {"kernel", "memcpy", "nccl"}) {
    kinds.push_back(*writer->intern(k));
  }
  for (int i = 0; i < 26; ++i) {
    tables.push_back(*writer->intern("t_" + std::to_string(i)));
  }
  const auto genStart = Clock::now();
  const std::vector<st::Span> spans = makeSpans(o, names, kinds, tables);
  std::printf("generated rows in %.2f s\n\n", secondsSince(genStart));
  const double n = static_cast<double>(o.spans);

  std::printf("%-52s %10s %14s %10s\n", "insert (same rows, same pragmas)", "seconds", "spans/s", "file MB");
  auto row = [&](const char* what, double secs, std::uint64_t bytes) {
    std::printf("%-52s %10.2f %14.0f %10.1f\n", what, secs, n / secs, static_cast<double>(bytes) / 1e6);
    std::fflush(stdout);
  };

  const double rawSecs = rawInsert(o, rawPath, spans, Layout::Unindexed);
  row("raw loop, unindexed rowid table (baseline)", rawSecs, sizeOf(rawPath));
  removeStore(rawPath);
  if (o.layouts) {
    const std::pair<Layout, const char*> variants[] = {
        {Layout::RowidPlusIndex, "raw loop, rowid table + index(run,rank,start_ns)"},
        {Layout::ClusteredUnsorted, "raw loop, WITHOUT ROWID clustered, arrival order"},
        {Layout::ClusteredSorted, "raw loop, WITHOUT ROWID clustered, batch sorted"},
    };
    for (const auto& [layout, label] : variants) {
      const double secs = rawInsert(o, rawPath, spans, layout);
      row(label, secs, sizeOf(rawPath));
      removeStore(rawPath);
    }
  }

  const auto w0 = Clock::now();
  for (const st::Span& s : spans) {
    if (auto r = writer->addSpan(s); !r) {
      die(r.error().message);
    }
  }
  if (auto r = writer->finish(); !r) {
    die(r.error().message);
  }
  const double writerSecs = secondsSince(w0);
  row("RunWriter::addSpan + finish (the store)", writerSecs, sizeOf(storePath));
  const st::RunId run = writer->run();
  { auto drop = std::move(*writer); }

  const double writerRate = n / writerSecs;
  const double ratio = rawSecs / writerSecs;
  std::printf("\nwriter: %.0f spans/s (bar >= 1,000,000): %s\n", writerRate, writerRate >= 1e6 ? "PASS" : "FAIL");
  std::printf("writer / raw unindexed: %.0f%% (bar >= 50%%): %s\n", ratio * 100, ratio >= 0.5 ? "PASS" : "FAIL");

  // Window queries: 8 consecutive ranks, a window of 1/100 of the run.
  auto opened = st::openStore(storePath, st::OpenMode::ReadOnly);
  if (!opened) {
    die(opened.error().message);
  }
  st::TraceStore store = std::move(opened).value();
  auto extents = store.spanExtents(run);
  if (!extents) {
    die(extents.error().message);
  }
  std::int64_t tMin = INT64_MAX, tMax = INT64_MIN;
  for (const auto& e : *extents) {
    tMin = std::min(tMin, e.min_start_ns);
    tMax = std::max(tMax, e.max_end_ns);
  }
  const std::int64_t width = (tMax - tMin) / 100;
  std::mt19937_64 rng(7);
  std::vector<double> ms;
  double returned = 0;
  for (int q = 0; q < o.queries; ++q) {
    const int first = static_cast<int>(rng() % static_cast<std::uint64_t>(o.ranks - 7));
    std::vector<int> ranks;
    for (int r = 0; r < 8; ++r) {
      ranks.push_back(first + r);
    }
    const std::int64_t t0 = tMin + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(tMax - tMin - width));
    const auto q0 = Clock::now();
    auto got = store.spansInWindow(run, ranks, t0, t0 + width);
    ms.push_back(secondsSince(q0) * 1e3);
    if (!got) {
      die(got.error().message);
    }
    returned += static_cast<double>(got->size());
  }
  const Percentiles p = percentiles(ms);
  std::printf("\nwindow query, 8 ranks x 1/100 of the run (%lld ns), %d queries, %.0f spans each on average\n",
              static_cast<long long>(width), o.queries, returned / o.queries);
  std::printf("  first %.2f ms   min %.2f ms   median %.2f ms   p95 %.2f ms   max %.2f ms\n", ms.front(), p.min,
              p.median, p.p95, p.max);
  std::printf("window query max %.2f ms (bar < 50 ms): %s\n", p.max, p.max < 50 ? "PASS" : "FAIL");

  if (o.keep) {
    std::printf("\nkept %s\n", storePath.c_str());
  } else {
    removeStore(storePath);
  }
  const bool pass = writerRate >= 1e6 && ratio >= 0.5 && p.max < 50;
  return pass ? 0 : 1;
}
