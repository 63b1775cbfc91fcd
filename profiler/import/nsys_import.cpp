// Nsight Systems SQLite export -> TraceEventSink. Each activity table is read
// by one prepared statement ordered by start; a k-way merge over the current
// rows hands the sink one time-ordered stream. Columns are picked from
// PRAGMA table_info because they change between nsys versions.
#include "shardscope/profiler/import/nsys_import.h"

#include <sqlite3.h>

#include <array>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "import_gpus.h"
#include "shardscope/core/store/sqlite.h"

namespace shardscope::profiler {
namespace {

using Stmt = core::sqlite::Statement;

// A read-only export: the shared connection with the importer's error wording.
class Db {
 public:
  Db(core::sqlite::Connection connection, std::string path) : conn_(std::move(connection)), path_(std::move(path)) {}
  [[nodiscard]] sqlite3* get() const { return conn_.handle(); }
  [[nodiscard]] const std::string& path() const { return path_; }

  // "<file>: corrupt or truncated SQLite database while reading X (detail)".
  [[nodiscard]] core::Error error(std::string_view what, int rc) const {
    std::ostringstream os;
    os << path_ << ": ";
    switch (rc & 0xff) {
      case SQLITE_NOTADB:
        os << "not an SQLite database";
        break;
      case SQLITE_CORRUPT:
        os << "corrupt or truncated SQLite database";
        break;
      case SQLITE_IOERR:
        os << "read error";
        break;
      default:
        os << "SQLite error";
        break;
    }
    os << " while " << what << " (" << sqlite3_errmsg(conn_.handle()) << ")";
    return core::Error{os.str()};
  }

  [[nodiscard]] core::Result<Stmt> prepare(const std::string& sql, std::string_view what) const {
    auto prepared = conn_.prepare(sql);
    if (prepared.rc != SQLITE_OK) return error(what, prepared.rc);
    return std::move(prepared.stmt);
  }

 private:
  core::sqlite::Connection conn_;
  std::string path_;
};

std::string sqlIdent(std::string_view ident) {
  std::string out = "\"";
  for (char c : ident) {
    out += c;
    if (c == '"') out += '"';
  }
  out += '"';
  return out;
}

std::string_view columnText(sqlite3_stmt* s, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
  if (p == nullptr) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(s, col))};
}

std::optional<std::int64_t> parseInt(std::string_view s) {
  std::int64_t v = 0;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return v;
}

// Digits right after `key` and an optional '=', ':', '_' or ' ' in `text`
// (ASCII case-insensitive), e.g. "rank=3", "RANK 3", "rank3".
std::optional<std::int64_t> valueAfter(std::string_view text, std::string_view key) {
  for (std::size_t i = 0; i + key.size() <= text.size(); ++i) {
    bool match = true;
    for (std::size_t k = 0; k < key.size() && match; ++k) {
      char c = text[i + k];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      match = c == key[k];
    }
    if (!match) continue;
    std::size_t j = i + key.size();
    if (j < text.size() && (text[j] == '=' || text[j] == ':' || text[j] == '_' || text[j] == ' ' || text[j] == '-'))
      ++j;
    std::size_t d = j;
    while (d < text.size() && text[d] >= '0' && text[d] <= '9') ++d;
    if (d > j) return parseInt(text.substr(j, d - j));
  }
  return std::nullopt;
}

// --- the tables ------------------------------------------------------------

// Every source is read through the same column layout, NULL where a table
// (or this nsys version) lacks the column.
enum Col : int { kStart, kEnd, kDevice, kStream, kCorrelation, kName1, kName2, kExtra, kColumns };

enum class Source { Nvtx, Runtime, Kernel, Memcpy, Memset };

struct TableSpec {
  Source source;
  const char* table;
  // Candidate columns for kDevice..kExtra, "" = none.
  std::array<const char*, 6> columns;
  const char* where;  // extra filter or ""
};

// Order = tie-break order in the merge: an NVTX range that starts with a
// kernel launch encloses it, and a launch precedes its kernel.
constexpr std::array<TableSpec, 5> kTables{{
    {Source::Nvtx, "NVTX_EVENTS", {"", "globalTid", "", "text", "textId", ""}, "\"end\" IS NOT NULL"},
    {Source::Runtime, "CUPTI_ACTIVITY_KIND_RUNTIME", {"", "globalTid", "correlationId", "nameId", "", ""}, ""},
    {Source::Kernel,
     "CUPTI_ACTIVITY_KIND_KERNEL",
     {"deviceId", "streamId", "correlationId", "demangledName", "shortName", ""},
     ""},
    {Source::Memcpy, "CUPTI_ACTIVITY_KIND_MEMCPY", {"deviceId", "streamId", "correlationId", "", "", "copyKind"}, ""},
    {Source::Memset, "CUPTI_ACTIVITY_KIND_MEMSET", {"deviceId", "streamId", "correlationId", "", "", ""}, ""},
}};

struct Cursor {
  const TableSpec* spec = nullptr;
  Stmt stmt;
  bool has_row = false;
  TraceEvent event;  // the current row, its name valid until the next step
};

class Importer {
 public:
  Importer(Db& db, TraceEventSink& sink, const NsysOptions& options, NsysImportReport& report)
      : db_(db), sink_(sink), options_(options), report_(report) {}

  core::Status run();

 private:
  core::Result<std::unordered_set<std::string>> tables();
  core::Result<std::unordered_set<std::string>> columnsOf(const std::string& table);
  core::Status rankInfo(const std::unordered_set<std::string>& tables, ImportRankInfo& info);
  void listGpus(const std::unordered_set<std::string>& tables, ImportRankInfo& info);
  core::Result<std::optional<std::string>> firstText(const std::string& sql, std::string_view what);
  // Advances `c` to its next usable row; has_row = false at the end.
  core::Status advance(Cursor& c);
  // true: the row became c.event; false: skipped (counted).
  core::Result<bool> decode(Cursor& c);
  // A name column: text as is, an integer through StringIds. nullopt = skip (counted).
  core::Result<std::optional<std::string_view>> nameAt(sqlite3_stmt* s, int col);
  core::Result<std::optional<std::string_view>> lookup(std::int64_t id);

  Db& db_;
  TraceEventSink& sink_;
  const NsysOptions& options_;
  NsysImportReport& report_;
  Stmt string_stmt_;
  std::unordered_map<std::int64_t, std::string> strings_;  // node-based: views stay valid
  std::unordered_set<std::int64_t> missing_strings_;
  std::uint64_t rows_read_ = 0, rows_total_ = 0;
};

core::Result<std::unordered_set<std::string>> Importer::tables() {
  auto st = db_.prepare("SELECT name FROM sqlite_master WHERE type = 'table'", "listing tables");
  if (!st) return st.error();
  std::unordered_set<std::string> out;
  int rc = 0;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) out.emplace(st->textView(0));
  if (rc != SQLITE_DONE) return db_.error("listing tables", rc);
  return out;
}

core::Result<std::unordered_set<std::string>> Importer::columnsOf(const std::string& table) {
  const std::string what = "reading the columns of " + table;
  auto st = db_.prepare("PRAGMA table_info(" + sqlIdent(table) + ")", what);
  if (!st) return st.error();
  std::unordered_set<std::string> out;
  int rc = 0;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) out.emplace(st->textView(1));
  if (rc != SQLITE_DONE) return db_.error(what, rc);
  return out;
}

core::Result<std::optional<std::string>> Importer::firstText(const std::string& sql, std::string_view what) {
  auto st = db_.prepare(sql, what);
  if (!st) return st.error();
  const int rc = sqlite3_step(st->get());
  if (rc == SQLITE_DONE) return std::optional<std::string>{};
  if (rc != SQLITE_ROW) return db_.error(what, rc);
  if (sqlite3_column_type(st->get(), 0) == SQLITE_NULL) return std::optional<std::string>{};
  return std::optional<std::string>{st->text(0)};
}

core::Status Importer::rankInfo(const std::unordered_set<std::string>& tables, ImportRankInfo& info) {
  info.source = db_.path();
  info.rank = options_.rank;
  info.world_size = options_.world_size;

  std::optional<std::int64_t> rank_hint, world_hint;
  if (tables.count("MPI_RANKS") != 0) {  // nsys --trace=mpi
    auto cols = columnsOf("MPI_RANKS");
    if (!cols) return cols.error();
    if (cols->count("rank") != 0) {
      auto v = firstText("SELECT \"rank\" FROM MPI_RANKS LIMIT 1", "reading MPI_RANKS");
      if (!v) return v.error();
      if (*v) rank_hint = parseInt(**v);
    }
  }
  if (!rank_hint && tables.count("NVTX_EVENTS") != 0) {
    auto cols = columnsOf("NVTX_EVENTS");
    if (!cols) return cols.error();
    std::string expr;
    const bool text = cols->count("text") != 0, text_id = cols->count("textId") != 0;
    if (text && text_id) {
      expr = "COALESCE(n.text, (SELECT value FROM StringIds s WHERE s.id = n.textId))";
    } else if (text) {
      expr = "n.text";
    } else if (text_id) {
      expr = "(SELECT value FROM StringIds s WHERE s.id = n.textId)";
    }
    if (!expr.empty()) {
      auto v = firstText("SELECT t FROM (SELECT " + expr + " AS t FROM NVTX_EVENTS n) WHERE t LIKE 'rank%' LIMIT 1",
                         "looking for a rank hint in NVTX_EVENTS");
      if (!v) return v.error();
      if (*v) {
        rank_hint = valueAfter(**v, "rank");
        world_hint = valueAfter(**v, "world_size");
      }
    }
  }
  if (!rank_hint) rank_hint = valueAfter(std::filesystem::path(db_.path()).stem().string(), "rank");

  if (info.rank < 0)
    info.rank = rank_hint && *rank_hint >= 0 && *rank_hint < (1 << 30) ? static_cast<int>(*rank_hint) : 0;
  if (info.world_size < 0 && world_hint && *world_hint > 0 && *world_hint < (1 << 30)) {
    info.world_size = static_cast<int>(*world_hint);
  }

  if (tables.count("TARGET_INFO_SESSION_START_TIME") != 0) {
    auto cols = columnsOf("TARGET_INFO_SESSION_START_TIME");
    if (!cols) return cols.error();
    if (cols->count("utcEpochNs") != 0) {
      auto v = firstText("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", "reading the session start");
      if (!v) return v.error();
      if (*v) info.base_time_ns = parseInt(**v).value_or(0);
    }
  }
  if (tables.count("CUPTI_ACTIVITY_KIND_KERNEL") != 0) {
    auto cols = columnsOf("CUPTI_ACTIVITY_KIND_KERNEL");
    if (!cols) return cols.error();
    if (cols->count("deviceId") != 0) {
      auto v = firstText("SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1", "reading the device");
      if (!v) return v.error();
      if (*v) info.device = static_cast<int>(parseInt(**v).value_or(-1));
    }
  }
  listGpus(tables, info);
  report_.rank = info.rank;
  report_.world_size = info.world_size;
  return core::Ok{};
}

// The GPUs the export lists: TARGET_INFO_GPU (its CUDA device id cuDevice, else id), or in exports
// of early 2021 TARGET_INFO_CUDA_GPU (deviceId, else id). What is absent, of another type or cannot
// be read leaves the GPU unknown: the events are the import, the GPU's name only labels them.
void Importer::listGpus(const std::unordered_set<std::string>& tables, ImportRankInfo& info) {
  static constexpr std::array<std::pair<const char*, std::array<const char*, 2>>, 2> kGpuTables{{
      {"TARGET_INFO_GPU", {"cuDevice", "id"}},
      {"TARGET_INFO_CUDA_GPU", {"deviceId", "id"}},
  }};
  for (const auto& [table, device_columns] : kGpuTables) {
    if (tables.count(table) == 0 || !info.gpus.empty()) continue;
    auto cols = columnsOf(table);
    if (!cols || cols->count("name") == 0) continue;
    std::vector<std::string> ids;
    for (const char* c : device_columns)
      if (cols->count(c) != 0) ids.push_back(sqlIdent(c));
    const std::string device = ids.empty()       ? std::string("NULL")
                               : ids.size() == 1 ? ids[0]
                                                 : "COALESCE(" + ids[0] + ", " + ids[1] + ")";
    // Rows past a node's GPUs would only be skipped: the scan stops early.
    const std::string sql = "SELECT \"name\", " + device + " FROM " + sqlIdent(table) + " LIMIT " +
                            std::to_string(import_detail::kMaxListedGpus * 16);
    const std::string what = std::string("reading ") + table;
    auto st = db_.prepare(sql, what);
    int rc = SQLITE_DONE;
    while (st && (rc = sqlite3_step(st->get())) == SQLITE_ROW) {
      if (sqlite3_column_type(st->get(), 0) != SQLITE_TEXT) continue;
      const bool has_id = sqlite3_column_type(st->get(), 1) == SQLITE_INTEGER;
      const std::int64_t id = has_id ? sqlite3_column_int64(st->get(), 1) : -1;
      const int gpu = id >= 0 && id <= (std::int64_t{1} << 24) ? static_cast<int>(id) : -1;
      import_detail::listGpu(info.gpus, gpu, columnText(st->get(), 0));
    }
    if (!st || rc != SQLITE_DONE) {
      info.gpus.clear();
      report_.warnings.push_back((st ? db_.error(what, rc) : st.error()).message + ": the GPU is unknown");
    }
  }
}

core::Result<std::optional<std::string_view>> Importer::lookup(std::int64_t id) {
  if (auto it = strings_.find(id); it != strings_.end()) return std::optional<std::string_view>{it->second};
  if (missing_strings_.count(id) != 0) return std::optional<std::string_view>{};
  sqlite3_stmt* s = string_stmt_.get();
  sqlite3_reset(s);
  sqlite3_bind_int64(s, 1, id);
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_TEXT) {
    auto [it, inserted] = strings_.emplace(id, std::string(columnText(s, 0)));
    (void)inserted;
    sqlite3_reset(s);
    return std::optional<std::string_view>{it->second};
  }
  sqlite3_reset(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_.error("reading StringIds", rc);
  missing_strings_.insert(id);
  return std::optional<std::string_view>{};
}

core::Result<std::optional<std::string_view>> Importer::nameAt(sqlite3_stmt* s, int col) {
  switch (sqlite3_column_type(s, col)) {
    case SQLITE_NULL:
      return std::optional<std::string_view>{};
    case SQLITE_TEXT:
      return std::optional<std::string_view>{columnText(s, col)};
    case SQLITE_INTEGER: {
      auto name = lookup(sqlite3_column_int64(s, col));
      if (!name) return name.error();
      if (!*name) ++report_.skipped_unknown_string;
      return *name;
    }
    default:
      ++report_.skipped_bad_type;
      return std::optional<std::string_view>{};
  }
}

std::string_view profilerStepPrefix() { return "ProfilerStep#"; }

core::Result<bool> Importer::decode(Cursor& c) {
  sqlite3_stmt* s = c.stmt.get();
  if (sqlite3_column_type(s, kStart) != SQLITE_INTEGER || sqlite3_column_type(s, kEnd) != SQLITE_INTEGER) {
    ++report_.skipped_bad_type;
    return false;
  }
  TraceEvent e;
  e.start_ns = sqlite3_column_int64(s, kStart);
  e.end_ns = sqlite3_column_int64(s, kEnd);
  if (e.end_ns < e.start_ns) {
    ++report_.skipped_end_before_start;
    return false;
  }
  auto intOr = [s](int col, std::int64_t fallback) {
    return sqlite3_column_type(s, col) == SQLITE_INTEGER ? sqlite3_column_int64(s, col) : fallback;
  };
  e.device = static_cast<int>(intOr(kDevice, -1));
  e.stream = intOr(kStream, 0);
  e.correlation = intOr(kCorrelation, 0);

  // Name: the first of kName1/kName2 that is not NULL.
  std::optional<std::string_view> name;
  const Source source = c.spec->source;
  if (source == Source::Memcpy) {
    name = nsysMemcpyName(intOr(kExtra, 0));
  } else if (source == Source::Memset) {
    name = std::string_view("Memset");
  } else {
    const int col = sqlite3_column_type(s, kName1) != SQLITE_NULL ? kName1 : kName2;
    if (sqlite3_column_type(s, col) == SQLITE_NULL) {
      ++report_.skipped_null_name;
      return false;
    }
    auto n = nameAt(s, col);
    if (!n) return n.error();
    name = *n;
    if (!name) return false;
  }
  e.name = *name;

  switch (source) {
    case Source::Nvtx: {
      // globalTid packs pid and tid; the thread id is the low 24 bits.
      e.stream = e.stream & 0xffffff;
      e.kind = TraceEventKind::Annotation;
      const std::string_view prefix = profilerStepPrefix();
      if (e.name.size() > prefix.size() && e.name.substr(0, prefix.size()) == prefix) {
        const std::string_view digits = e.name.substr(prefix.size());
        const bool all_digits = digits.find_first_not_of("0123456789") == std::string_view::npos;
        if (auto n = parseInt(digits); all_digits && n) {
          e.kind = TraceEventKind::ProfilerStep;
          e.step = *n;
        }
      }
      break;
    }
    case Source::Runtime:
      e.stream = e.stream & 0xffffff;
      e.kind = TraceEventKind::Runtime;
      break;
    case Source::Kernel:
      e.kind = TraceEventKind::Kernel;
      e.collective = nsysCollectiveFromKernelName(e.name);
      break;
    case Source::Memcpy:
      e.kind = TraceEventKind::Memcpy;
      break;
    case Source::Memset:
      e.kind = TraceEventKind::Memset;
      break;
  }
  c.event = e;
  return true;
}

core::Status Importer::advance(Cursor& c) {
  c.has_row = false;
  for (;;) {
    const int rc = sqlite3_step(c.stmt.get());
    if (rc == SQLITE_DONE) return core::Ok{};
    if (rc != SQLITE_ROW) return db_.error(std::string("reading ") + c.spec->table, rc);
    ++rows_read_;
    if ((rows_read_ & 1023) == 0) {
      if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
        return core::Error{db_.path() + ": import cancelled"};
      }
      if (options_.progress && (rows_read_ & 0xffff) == 0) options_.progress(rows_read_, rows_total_);
    }
    auto ok = decode(c);
    if (!ok) return ok.error();
    if (*ok) {
      c.has_row = true;
      return core::Ok{};
    }
  }
}

core::Status Importer::run() {
  auto all = tables();
  if (!all) return all.error();
  if (all->count("StringIds") == 0) {
    return core::Error{db_.path() + ": not an Nsight Systems export: no StringIds table"};
  }
  auto ss = db_.prepare("SELECT value FROM StringIds WHERE id = ?", "reading StringIds");
  if (!ss) return ss.error();
  string_stmt_ = std::move(*ss);

  ImportRankInfo info;
  if (auto st = rankInfo(*all, info); !st) return st.error();

  std::vector<Cursor> cursors;
  for (const TableSpec& spec : kTables) {
    if (all->count(spec.table) == 0) {
      report_.absent_tables.emplace_back(spec.table);
      continue;
    }
    auto cols = columnsOf(spec.table);
    if (!cols) return cols.error();
    if (cols->count("start") == 0 || cols->count("end") == 0) {
      report_.warnings.push_back(db_.path() + ": table " + spec.table + " has no start/end column; skipped");
      continue;
    }
    if ((spec.source == Source::Kernel || spec.source == Source::Runtime || spec.source == Source::Nvtx) &&
        cols->count(spec.columns[3]) == 0 && (spec.columns[4][0] == '\0' || cols->count(spec.columns[4]) == 0)) {
      std::string msg = db_.path() + ": table " + spec.table + " has no name column (expected " + spec.columns[3];
      if (spec.columns[4][0] != '\0') msg += std::string(" or ") + spec.columns[4];
      report_.warnings.push_back(msg + "); skipped");
      continue;
    }
    std::string select = "SELECT \"start\", \"end\"";
    for (const char* col : spec.columns) {
      select += ", ";
      select += col[0] != '\0' && cols->count(col) != 0 ? sqlIdent(col) : std::string("NULL");
    }
    std::string from = std::string(" FROM ") + sqlIdent(spec.table);
    if (spec.where[0] != '\0') from += std::string(" WHERE ") + spec.where;
    if (options_.progress) {
      auto n = firstText("SELECT COUNT(*)" + from, std::string("counting ") + spec.table);
      if (!n) return n.error();
      if (*n) rows_total_ += static_cast<std::uint64_t>(parseInt(**n).value_or(0));
    }
    auto st = db_.prepare(select + from + " ORDER BY \"start\", \"end\" DESC", std::string("reading ") + spec.table);
    if (!st) return st.error();
    Cursor c;
    c.spec = &spec;
    c.stmt = std::move(*st);
    cursors.push_back(std::move(c));
  }
  for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"}) {
    if (all->count(t) == 0)
      report_.warnings.push_back(db_.path() + ": no " + t + " table (nothing of that kind traced)");
  }

  if (auto st = sink_.beginRank(info); !st) return st.error();
  for (Cursor& c : cursors) {
    if (auto st = advance(c); !st) return st.error();
  }
  for (;;) {
    Cursor* next = nullptr;
    for (Cursor& c : cursors) {
      if (c.has_row && (next == nullptr || c.event.start_ns < next->event.start_ns)) next = &c;
    }
    if (next == nullptr) break;
    if (auto st = sink_.event(next->event); !st) return st.error();
    switch (next->event.kind) {
      case TraceEventKind::Kernel:
        ++report_.kernels;
        break;
      case TraceEventKind::Memcpy:
        ++report_.memcpys;
        break;
      case TraceEventKind::Memset:
        ++report_.memsets;
        break;
      case TraceEventKind::Runtime:
        ++report_.runtime_calls;
        break;
      case TraceEventKind::ProfilerStep:
        ++report_.profiler_steps;
        break;
      default:
        ++report_.nvtx_ranges;
        break;
    }
    if (auto st = advance(*next); !st) return st.error();
  }
  if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
    return core::Error{db_.path() + ": import cancelled"};
  }
  if (options_.progress) options_.progress(rows_read_, rows_total_);
  return sink_.endRank();
}

}  // namespace

std::string_view nsysCollectiveFromKernelName(std::string_view name) {
  std::size_t pos = name.find("ncclDevKernel_");
  std::size_t len = std::strlen("ncclDevKernel_");
  if (pos == std::string_view::npos) {
    pos = name.find("ncclKernel_");
    len = std::strlen("ncclKernel_");
  }
  if (pos == std::string_view::npos) return {};
  std::string_view rest = name.substr(pos + len);
  const std::size_t stop = rest.find_first_of("_(<");
  const std::string_view op = rest.substr(0, stop);
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kOps{{
      {"AllReduce", "all_reduce"},
      {"AllGather", "all_gather"},
      {"ReduceScatter", "reduce_scatter"},
      {"Broadcast", "broadcast"},
      {"Reduce", "reduce"},
      {"SendRecv", "send_recv"},
      {"Send", "send"},
      {"Recv", "recv"},
      {"AllToAll", "all_to_all"},
  }};
  for (const auto& [kernel, collective] : kOps) {
    if (op == kernel) return collective;
  }
  return {};
}

std::string_view nsysMemcpyName(std::int64_t copy_kind) {
  // CUpti_ActivityMemcpyKind.
  static constexpr std::array<std::string_view, 11> kNames{"Memcpy",      "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
                                                           "Memcpy AtoH", "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA",
                                                           "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
  if (copy_kind < 0 || copy_kind >= static_cast<std::int64_t>(kNames.size())) return kNames[0];
  return kNames[static_cast<std::size_t>(copy_kind)];
}

core::Status importNsys(const std::string& path, TraceEventSink& sink, const NsysOptions& options) {
  NsysImportReport local;
  NsysImportReport& report = options.report != nullptr ? *options.report : local;
  report = NsysImportReport{};

  {  // SQLite opens anything lazily; check the header so the message is clear.
    std::ifstream in(path, std::ios::binary);
    if (!in) return core::Error{path + ": cannot open for reading"};
    std::array<char, 16> header{};
    in.read(header.data(), static_cast<std::streamsize>(header.size()));
    if (in.gcount() == 0) return core::Error{path + ": empty file (expected an `nsys export --type sqlite` file)"};
    if (in.gcount() != static_cast<std::streamsize>(header.size()) ||
        std::memcmp(header.data(), "SQLite format 3", header.size()) != 0) {
      return core::Error{
          path +
          ": not an SQLite database (expected the \"SQLite format 3\" header of an `nsys export --type sqlite` file)"};
    }
  }
  auto opened = core::sqlite::Connection::open(path, SQLITE_OPEN_READONLY);
  const int rc = opened.rc;
  Db db(std::move(opened.connection), path);  // closes even when open failed
  sqlite3* raw = db.get();
  if (rc != SQLITE_OK) return db.error("opening", rc);
  sqlite3_extended_result_codes(raw, 0);
  // SQLite sorts a whole unindexed table inside the first step of a query:
  // the cancel flag is also checked every few thousand VM instructions.
  if (options.cancel != nullptr)
    sqlite3_progress_handler(
        raw, 10000,
        [](void* flag) { return static_cast<const std::atomic<bool>*>(flag)->load(std::memory_order_relaxed) ? 1 : 0; },
        const_cast<std::atomic<bool>*>(options.cancel));

  Importer importer(db, sink, options, report);
  auto st = importer.run();
  if (!st && options.cancel != nullptr && options.cancel->load()) st = core::Error{path + ": import cancelled"};
  // Warnings also on failure: what was skipped before it.
  std::vector<std::string> structural = std::move(report.warnings);
  report.warnings.clear();
  {
    const auto add = [&](std::uint64_t n, const char* what) {
      if (n == 0) return;
      std::ostringstream os;
      os << path << ": skipped " << n << ' ' << what;
      report.warnings.push_back(os.str());
    };
    add(report.skipped_null_name, "rows without a name (NULL name id or NVTX text)");
    add(report.skipped_unknown_string, "rows whose name id is not in StringIds");
    add(report.skipped_end_before_start, "rows with end < start");
    add(report.skipped_bad_type, "rows with a start, end or name of an unexpected type (expected integers)");
  }
  report.warnings.insert(report.warnings.begin(), structural.begin(), structural.end());
  return st;
}

}  // namespace shardscope::profiler
