#include "shardscope/profiler/workflow/chrome_trace.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "shardscope/core/store/trace_store.h"

namespace shardscope::profiler {

namespace {

namespace st = core::store;

// Chrome's thread ids are numbers: the engine's streams keep theirs (0 compute,
// 1 comm, 2+ GPU streams); step spans (stream -1) and collectives get their own.
constexpr int kCollectiveThread = 1000;
constexpr int kStepThread = 1001;

std::string threadName(int stream) {
  if (stream == 0) return "compute";
  if (stream == 1) return "comm";
  if (stream == kCollectiveThread) return "collectives";
  if (stream == kStepThread || stream < 0) return "steps";
  return "GPU stream " + std::to_string(stream - 2);
}

void writeEvent(std::ostream& out, const nlohmann::json& e, bool& first) {
  out << (first ? "\n" : ",\n") << e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  first = false;
}

double micros(std::int64_t ns, std::int64_t origin) { return static_cast<double>(ns - origin) / 1000.0; }

}  // namespace

core::Result<ChromeTraceOutcome> writeChromeTrace(const ChromeTraceRequest& request, std::ostream& out) {
  auto store = st::openStore(request.store, st::OpenMode::ReadOnly);
  if (!store) return store.error();
  st::RunId id = request.run;
  if (id == st::RunId{}) {
    auto runs = store->listRuns();
    if (!runs) return runs.error();
    if (runs->empty()) return core::Error{request.store + ": the store holds no run", core::ErrorKind::InvalidInput};
    for (const st::RunRecord& r : *runs) id = std::max(id, r.id);
  }
  auto run = store->run(id);
  if (!run) return run.error();
  // The window in store time, from the run's first span. The store's window query finds spans
  // that start before the window and reach into it.
  auto extents = store->spanExtents(id);
  if (!extents) return extents.error();
  std::int64_t run_start = std::numeric_limits<std::int64_t>::max();
  for (const st::SpanExtent& e : *extents) run_start = std::min(run_start, e.min_start_ns);
  if (extents->empty()) run_start = 0;
  const auto at = [run_start](double ms) { return run_start + static_cast<std::int64_t>(ms * 1e6); };
  const std::int64_t from = request.from_ms ? at(*request.from_ms) : std::numeric_limits<std::int64_t>::min() / 2;
  const std::int64_t to = request.to_ms ? at(*request.to_ms) : std::numeric_limits<std::int64_t>::max() / 2;
  auto collectives = store->collectives(id);
  if (!collectives) return collectives.error();
  auto strings = store->strings();
  if (!strings) return strings.error();
  auto rank_info = store->ranks(id);
  if (!rank_info) return rank_info.error();

  // The ranks written: the requested ones, else every rank with spans or collectives.
  std::set<int> ranks(request.ranks.begin(), request.ranks.end());
  if (ranks.empty()) {
    for (const st::SpanExtent& e : *extents) ranks.insert(e.rank);
    for (const st::Collective& c : *collectives) ranks.insert(c.rank);
  }
  const auto overlaps = [&](std::int64_t s, std::int64_t e) { return e >= from && s <= to; };
  std::map<int, std::string> hosts;
  for (const st::RankInfo& r : *rank_info) hosts[r.rank] = r.host;

  ChromeTraceOutcome outcome;
  outcome.run = id;
  outcome.origin_ns = request.from_ms ? std::max(from, run_start) : run_start;
  const std::int64_t origin = outcome.origin_ns;
  out << R"({"displayTimeUnit":"ns","otherData":{"tool":"shardscope","run":)" << static_cast<long long>(id)
      << R"(,"origin_ns":)" << origin << R"(},"traceEvents":[)";
  bool first = true;
  // One rank at a time: only its spans are in memory; its names follow its events.
  for (const int rank : ranks) {
    const int one[] = {rank};
    auto spans = store->spansInWindow(id, one, from, to);
    if (!spans) return spans.error();
    std::set<int> threads;
    for (const st::Span& s : *spans) {
      if (!overlaps(s.start_ns, s.end_ns)) continue;
      const int tid = s.stream < 0 ? kStepThread : s.stream;
      threads.insert(tid);
      nlohmann::json args = {{"step", s.step}, {"bytes", s.bytes}};
      if (s.correlation != 0) args["correlation"] = s.correlation;
      if (s.table != st::kNoString) args["table"] = std::string(strings->at(s.table));
      writeEvent(out,
                 {{"ph", "X"},
                  {"name", std::string(strings->at(s.name))},
                  {"cat", std::string(strings->at(s.kind))},
                  {"pid", rank},
                  {"tid", tid},
                  {"ts", micros(s.start_ns, origin)},
                  {"dur", static_cast<double>(s.end_ns - s.start_ns) / 1000.0},
                  {"args", std::move(args)}},
                 first);
      ++outcome.spans;
    }
    for (const st::Collective& c : *collectives) {
      if (c.rank != rank || !overlaps(c.start_ns, c.end_ns)) continue;
      threads.insert(kCollectiveThread);
      nlohmann::json args = {
          {"group", std::string(strings->at(c.group))}, {"bytes", c.bytes}, {"peers", c.peers}, {"step", c.step}};
      if (c.process_group != st::kNoString) args["process_group"] = std::string(strings->at(c.process_group));
      if (c.algorithm != st::kNoString) args["algorithm"] = std::string(strings->at(c.algorithm));
      if (c.seq >= 0) args["seq"] = c.seq;
      writeEvent(out,
                 {{"ph", "X"},
                  {"name", std::string(strings->at(c.op))},
                  {"cat", "collective"},
                  {"pid", rank},
                  {"tid", kCollectiveThread},
                  {"ts", micros(c.start_ns, origin)},
                  {"dur", static_cast<double>(c.end_ns - c.start_ns) / 1000.0},
                  {"args", std::move(args)}},
                 first);
      ++outcome.collectives;
    }
    if (threads.empty()) continue;
    const std::string host = hosts.contains(rank) ? " (" + hosts[rank] + ")" : std::string();
    writeEvent(out,
               {{"ph", "M"},
                {"name", "process_name"},
                {"pid", rank},
                {"args", {{"name", "rank " + std::to_string(rank) + host}}}},
               first);
    writeEvent(out, {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", rank}, {"args", {{"sort_index", rank}}}},
               first);
    for (const int t : threads)
      writeEvent(out,
                 {{"ph", "M"}, {"name", "thread_name"}, {"pid", rank}, {"tid", t}, {"args", {{"name", threadName(t)}}}},
                 first);
  }
  out << "\n]}\n";
  if (!out) return core::Error{"writing the Chrome trace failed", core::ErrorKind::Io};
  return outcome;
}

}  // namespace shardscope::profiler
