#include "shardscope/profiler/workflow/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/import/kineto_import.h"

namespace shardscope::profiler {

namespace {

namespace st = core::store;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Chrome's thread ids are numbers: the engine's streams keep theirs (0 compute,
// 1 comm, 2+ GPU streams); step spans (stream -1) and collectives get their own.
// The stream itself is in args.stream, so an import does not depend on them.
constexpr int kCollectiveThread = 1000;
constexpr int kStepThread = 1001;
// The Kineto importer reads |ts| below 4e15 us (kineto_values.h).
constexpr std::int64_t kMaxAbsNs = 4'000'000'000'000'000'000;

std::string threadName(int stream) {
  if (stream == 0) return "compute";
  if (stream == 1) return "comm";
  if (stream == kCollectiveThread) return "collectives";
  if (stream == kStepThread || stream < 0) return "steps";
  return "GPU stream " + std::to_string(stream - 2);
}

std::string jsonText(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// ns as Chrome's microseconds with exactly three decimals, in integer arithmetic: a double has
// 53 bits, so at epoch scale (1.7e18 ns) it would round the ns away. false beyond kMaxAbsNs.
bool appendMicros(std::string& out, std::int64_t ns) {
  if (ns <= -kMaxAbsNs || ns >= kMaxAbsNs) return false;
  const auto u = static_cast<std::uint64_t>(ns < 0 ? -ns : ns);
  if (ns < 0) out += '-';
  out += std::to_string(u / 1000);
  const auto f = static_cast<unsigned>(u % 1000);
  out += '.';
  out += static_cast<char>('0' + f / 100);
  out += static_cast<char>('0' + f / 10 % 10);
  out += static_cast<char>('0' + f % 10);
  return true;
}

// Whether a file name is one this export writes per rank: rank<N>.json.
bool isRankFile(std::string_view name) {
  if (!name.starts_with("rank") || !name.ends_with(".json") || name.size() <= 9) return false;
  const std::string_view digits = name.substr(4, name.size() - 9);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One rank's rows of the window: its spans, and its collectives as indices into the run's.
struct RankRows {
  std::vector<st::Span> spans;
  std::vector<std::size_t> collectives;
  [[nodiscard]] bool empty() const { return spans.empty() && collectives.empty(); }
};

// What every file of an export shares: the run, the window and its origin, the strings, the
// collectives, the ranks written.
class ChromeExport {
 public:
  static core::Result<ChromeExport> open(const ChromeTraceRequest& request);

  [[nodiscard]] const std::set<int>& ranks() const { return ranks_; }
  [[nodiscard]] ChromeTraceOutcome& outcome() { return outcome_; }
  [[nodiscard]] core::Result<RankRows> rows(int rank) const;
  // A file's start, up to traceEvents' '[': its metadata; `rank`: the one rank it holds.
  void head(std::ostream& out, std::optional<int> rank) const;
  // One rank's events, then the names of its process and threads.
  [[nodiscard]] core::Status write(int rank, const RankRows& rows, std::ostream& out, bool& first);
  static void tail(std::ostream& out) { out << "\n]}\n"; }

 private:
  ChromeExport(std::string path, st::TraceStore store) : path_(std::move(path)), store_(std::move(store)) {}
  // An "X" event; an error when a time is beyond what the files' microseconds hold.
  [[nodiscard]] core::Status event(std::ostream& out, bool& first, std::string_view name, std::string_view cat,
                                   int rank, int tid, std::int64_t start, std::int64_t end, const Json& args) const;

  std::string path_;
  st::TraceStore store_;
  st::RunId id_{};
  std::int64_t from_ = 0, to_ = 0;
  std::vector<st::Collective> collectives_;
  st::StringTable strings_;
  std::map<int, std::string> hosts_;
  std::set<int> ranks_;
  ChromeTraceOutcome outcome_;
};

core::Result<ChromeExport> ChromeExport::open(const ChromeTraceRequest& request) {
  auto store = st::openStore(request.store, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  ChromeExport ex(request.store, std::move(store).value());
  st::RunId id = request.run;
  if (id == st::RunId{}) {
    auto runs = ex.store_.listRuns();
    if (!runs) return runs.error();
    if (runs->empty()) return core::Error{request.store + ": the store holds no run", core::ErrorKind::InvalidInput};
    for (const st::RunRecord& r : *runs) id = std::max(id, r.id);
  }
  auto run = ex.store_.run(id);
  if (!run) return run.error();
  // The window in store time, from the run's first span. The store's window query finds spans
  // that start before the window and reach into it.
  auto extents = ex.store_.spanExtents(id);
  if (!extents) return extents.error();
  std::int64_t run_start = std::numeric_limits<std::int64_t>::max();
  for (const st::SpanExtent& e : *extents) run_start = std::min(run_start, e.min_start_ns);
  if (extents->empty()) run_start = 0;
  const auto at = [run_start](double ms) { return run_start + static_cast<std::int64_t>(ms * 1e6); };
  ex.from_ = request.from_ms ? at(*request.from_ms) : std::numeric_limits<std::int64_t>::min() / 2;
  ex.to_ = request.to_ms ? at(*request.to_ms) : std::numeric_limits<std::int64_t>::max() / 2;
  auto collectives = ex.store_.collectives(id);
  if (!collectives) return collectives.error();
  ex.collectives_ = std::move(collectives).value();
  auto strings = ex.store_.strings();
  if (!strings) return strings.error();
  ex.strings_ = std::move(strings).value();
  auto rank_info = ex.store_.ranks(id);
  if (!rank_info) return rank_info.error();
  for (const st::RankInfo& r : *rank_info) ex.hosts_[r.rank] = r.host;

  // The ranks written: the requested ones, else every rank with spans or collectives.
  ex.ranks_.insert(request.ranks.begin(), request.ranks.end());
  if (ex.ranks_.empty()) {
    for (const st::SpanExtent& e : *extents) ex.ranks_.insert(e.rank);
    for (const st::Collective& c : ex.collectives_) ex.ranks_.insert(c.rank);
  }
  ex.id_ = id;
  ex.outcome_.run = id;
  ex.outcome_.origin_ns = request.from_ms ? std::max(ex.from_, run_start) : run_start;
  return ex;
}

core::Result<RankRows> ChromeExport::rows(int rank) const {
  // [s, e) against the window [from, to) as the store's window query has it: an instant counts at its time.
  const auto overlaps = [this](std::int64_t s, std::int64_t e) {
    return s < to_ && (e > from_ || (s == e && s >= from_));
  };
  RankRows rows;
  const int one[] = {rank};
  auto spans = store_.spansInWindow(id_, one, from_, to_);
  if (!spans) return spans.error();
  rows.spans = std::move(spans).value();
  std::erase_if(rows.spans, [&](const st::Span& s) { return !overlaps(s.start_ns, s.end_ns); });
  for (std::size_t i = 0; i < collectives_.size(); ++i)
    if (collectives_[i].rank == rank && overlaps(collectives_[i].start_ns, collectives_[i].end_ns))
      rows.collectives.push_back(i);
  return rows;
}

void ChromeExport::head(std::ostream& out, std::optional<int> rank) const {
  const Json other = {{"tool", "shardscope"},
                      {"schema", kChromeExportSchema},
                      {"run", static_cast<std::int64_t>(id_)},
                      {"origin_ns", outcome_.origin_ns}};
  out << R"({"displayTimeUnit":"ns","otherData":)" << jsonText(other);
  if (rank) out << R"(,"distributedInfo":{"rank":)" << *rank << '}';
  out << R"(,"traceEvents":[)";
}

core::Status ChromeExport::event(std::ostream& out, bool& first, std::string_view name, std::string_view cat, int rank,
                                 int tid, std::int64_t start, std::int64_t end, const Json& args) const {
  std::string line = first ? "\n" : ",\n";
  line += R"({"ph":"X","name":)";
  line += jsonText(Json(name));
  line += R"(,"cat":)";
  line += jsonText(Json(cat));
  line += R"(,"pid":)";
  line += std::to_string(rank);
  line += R"(,"tid":)";
  line += std::to_string(tid);
  line += R"(,"ts":)";
  std::int64_t ts = 0, dur = 0;
  bool ok = !__builtin_sub_overflow(start, outcome_.origin_ns, &ts) && appendMicros(line, ts);
  line += R"(,"dur":)";
  ok = ok && !__builtin_sub_overflow(end, start, &dur) && appendMicros(line, dur);
  if (!ok)
    return core::Error{path_ + ": rank " + std::to_string(rank) + ": an event from " + std::to_string(start) + " to " +
                       std::to_string(end) + " ns is 4e18 ns or more from the origin (" +
                       std::to_string(outcome_.origin_ns) + " ns): beyond the trace's microseconds"};
  line += R"(,"args":)";
  line += jsonText(args);
  line += '}';
  out << line;
  first = false;
  return core::Ok{};
}

core::Status ChromeExport::write(int rank, const RankRows& rows, std::ostream& out, bool& first) {
  std::set<int> threads;
  for (const st::Span& s : rows.spans) {
    const int tid = s.stream < 0 ? kStepThread : s.stream;
    threads.insert(tid);
    Json args = {{"shardscope_kind", strings_.at(s.kind)}, {"stream", s.stream}, {"step", s.step}, {"bytes", s.bytes}};
    if (s.correlation != 0) args["correlation"] = s.correlation;
    if (s.table != st::kNoString) args["table"] = strings_.at(s.table);
    if (auto e = event(out, first, strings_.at(s.name), strings_.at(s.kind), rank, tid, s.start_ns, s.end_ns, args); !e)
      return e;
    ++outcome_.spans;
  }
  for (const std::size_t i : rows.collectives) {
    const st::Collective& c = collectives_[i];
    threads.insert(kCollectiveThread);
    Json args = {{"shardscope_collective", strings_.at(c.op)},
                 {"group", strings_.at(c.group)},
                 {"bytes", c.bytes},
                 {"peers", c.peers},
                 {"step", c.step}};
    if (c.process_group != st::kNoString) args["process_group"] = strings_.at(c.process_group);
    if (c.algorithm != st::kNoString) args["algorithm"] = strings_.at(c.algorithm);
    if (c.seq >= 0) args["seq"] = c.seq;
    if (auto e =
            event(out, first, strings_.at(c.op), "collective", rank, kCollectiveThread, c.start_ns, c.end_ns, args);
        !e)
      return e;
    ++outcome_.collectives;
  }
  if (threads.empty()) return core::Ok{};
  const auto meta = [&](const Json& e) {
    out << (first ? "\n" : ",\n") << jsonText(e);
    first = false;
  };
  const auto host = hosts_.find(rank);
  const std::string suffix = host != hosts_.end() && !host->second.empty() ? " (" + host->second + ")" : std::string();
  meta({{"ph", "M"},
        {"name", "process_name"},
        {"pid", rank},
        {"args", {{"name", "rank " + std::to_string(rank) + suffix}}}});
  meta({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", rank}, {"args", {{"sort_index", rank}}}});
  for (const int t : threads)
    meta({{"ph", "M"}, {"name", "thread_name"}, {"pid", rank}, {"tid", t}, {"args", {{"name", threadName(t)}}}});
  return core::Ok{};
}

}  // namespace

core::Result<ChromeTraceOutcome> writeChromeTrace(const ChromeTraceRequest& request, std::ostream& out) {
  auto ex = ChromeExport::open(request);
  if (!ex) return ex.error();
  const std::set<int>& ranks = ex->ranks();
  ex->head(out, ranks.size() == 1 ? std::optional<int>(*ranks.begin()) : std::nullopt);
  bool first = true;
  // One rank at a time: only its spans are in memory; its names follow its events.
  for (const int rank : ranks) {
    auto rows = ex->rows(rank);
    if (!rows) return rows.error();
    if (auto w = ex->write(rank, *rows, out, first); !w) return w.error();
  }
  ChromeExport::tail(out);
  if (!out) return core::Error{"writing the Chrome trace failed", core::ErrorKind::Io};
  return std::move(ex->outcome());
}

core::Result<ChromeTraceOutcome> writeChromeTraceFiles(const ChromeTraceRequest& request, const fs::path& dir) {
  auto ex = ChromeExport::open(request);
  if (!ex) return ex.error();
  const std::string folder = dir.string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return core::Error{folder + ": cannot make the folder (" + ec.message() + ")", core::ErrorKind::Io, folder};
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (isRankFile(it->path().filename().string()))
      return core::Error{folder + ": already holds " + it->path().filename().string() +
                             ": export into an empty folder (importing the folder would mix two exports)",
                         core::ErrorKind::Usage, folder};
  if (ec) return core::Error{folder + ": cannot list the folder (" + ec.message() + ")", core::ErrorKind::Io, folder};
  for (const int rank : ex->ranks()) {
    auto rows = ex->rows(rank);
    if (!rows) return rows.error();
    if (rows->empty()) continue;
    const std::string file = (dir / ("rank" + std::to_string(rank) + ".json")).string();
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out) return core::Error{file + ": cannot write (" + std::strerror(errno) + ")", core::ErrorKind::Io, file};
    ex->head(out, rank);
    bool first = true;
    if (auto w = ex->write(rank, *rows, out, first); !w) return w.error();
    ChromeExport::tail(out);
    out.close();
    if (!out) return core::Error{file + ": writing failed", core::ErrorKind::Io, file};
    ex->outcome().files.push_back(file);
  }
  return std::move(ex->outcome());
}

}  // namespace shardscope::profiler
