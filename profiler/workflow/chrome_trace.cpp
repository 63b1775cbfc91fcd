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
  // The window in store time; the query looks back by the longest span so that spans starting
  // before the window and reaching into it are found too.
  auto extents = store->spanExtents(id);
  if (!extents) return extents.error();
  std::int64_t run_start = std::numeric_limits<std::int64_t>::max(), longest = 0;
  for (const st::SpanExtent& e : *extents) {
    run_start = std::min(run_start, e.min_start_ns);
    longest = std::max(longest, e.max_duration_ns);
  }
  if (extents->empty()) run_start = 0;
  const auto at = [run_start](double ms) { return run_start + static_cast<std::int64_t>(ms * 1e6); };
  const std::int64_t from = request.from_ms ? at(*request.from_ms) : std::numeric_limits<std::int64_t>::min() / 2;
  const std::int64_t to = request.to_ms ? at(*request.to_ms) : std::numeric_limits<std::int64_t>::max() / 2;
  auto spans = store->spansInWindow(id, request.ranks, from - longest, to);
  if (!spans) return spans.error();
  auto collectives = store->collectives(id);
  if (!collectives) return collectives.error();
  auto strings = store->strings();
  if (!strings) return strings.error();
  auto ranks = store->ranks(id);
  if (!ranks) return ranks.error();

  const std::set<int> wanted(request.ranks.begin(), request.ranks.end());
  const auto keep = [&](int rank, std::int64_t s, std::int64_t e) {
    return (wanted.empty() || wanted.contains(rank)) && e >= from && s <= to;
  };
  ChromeTraceOutcome outcome;
  outcome.run = id;
  outcome.origin_ns = std::numeric_limits<std::int64_t>::max();
  std::map<int, std::set<int>> threads;  // per rank, its threads
  for (const st::Span& s : *spans) {
    if (!keep(s.rank, s.start_ns, s.end_ns)) continue;
    outcome.origin_ns = std::min(outcome.origin_ns, s.start_ns);
    threads[s.rank].insert(s.stream < 0 ? kStepThread : s.stream);
  }
  for (const st::Collective& c : *collectives)
    if (keep(c.rank, c.start_ns, c.end_ns)) {
      outcome.origin_ns = std::min(outcome.origin_ns, c.start_ns);
      threads[c.rank].insert(kCollectiveThread);
    }
  if (outcome.origin_ns == std::numeric_limits<std::int64_t>::max()) outcome.origin_ns = 0;
  const std::int64_t origin = outcome.origin_ns;

  out << R"({"displayTimeUnit":"ns","otherData":{"tool":"shardscope","run":)" << static_cast<long long>(id)
      << R"(,"origin_ns":)" << origin << R"(},"traceEvents":[)";
  bool first = true;
  std::map<int, std::string> hosts;
  for (const st::RankInfo& r : *ranks) hosts[r.rank] = r.host;
  for (const auto& [rank, ts] : threads) {
    const std::string host = hosts.contains(rank) ? " (" + hosts[rank] + ")" : std::string();
    writeEvent(out,
               {{"ph", "M"},
                {"name", "process_name"},
                {"pid", rank},
                {"args", {{"name", "rank " + std::to_string(rank) + host}}}},
               first);
    writeEvent(out, {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", rank}, {"args", {{"sort_index", rank}}}},
               first);
    for (int t : ts)
      writeEvent(out,
                 {{"ph", "M"}, {"name", "thread_name"}, {"pid", rank}, {"tid", t}, {"args", {{"name", threadName(t)}}}},
                 first);
  }
  for (const st::Span& s : *spans) {
    if (!keep(s.rank, s.start_ns, s.end_ns)) continue;
    nlohmann::json args = {{"step", s.step}, {"bytes", s.bytes}};
    if (s.correlation != 0) args["correlation"] = s.correlation;
    if (s.table != st::kNoString) args["table"] = std::string(strings->at(s.table));
    writeEvent(out,
               {{"ph", "X"},
                {"name", std::string(strings->at(s.name))},
                {"cat", std::string(strings->at(s.kind))},
                {"pid", s.rank},
                {"tid", s.stream < 0 ? kStepThread : s.stream},
                {"ts", micros(s.start_ns, origin)},
                {"dur", static_cast<double>(s.end_ns - s.start_ns) / 1000.0},
                {"args", std::move(args)}},
               first);
    ++outcome.spans;
  }
  for (const st::Collective& c : *collectives) {
    if (!keep(c.rank, c.start_ns, c.end_ns)) continue;
    nlohmann::json args = {
        {"group", std::string(strings->at(c.group))}, {"bytes", c.bytes}, {"peers", c.peers}, {"step", c.step}};
    if (c.process_group != st::kNoString) args["process_group"] = std::string(strings->at(c.process_group));
    if (c.algorithm != st::kNoString) args["algorithm"] = std::string(strings->at(c.algorithm));
    if (c.seq >= 0) args["seq"] = c.seq;
    writeEvent(out,
               {{"ph", "X"},
                {"name", std::string(strings->at(c.op))},
                {"cat", "collective"},
                {"pid", c.rank},
                {"tid", kCollectiveThread},
                {"ts", micros(c.start_ns, origin)},
                {"dur", static_cast<double>(c.end_ns - c.start_ns) / 1000.0},
                {"args", std::move(args)}},
               first);
    ++outcome.collectives;
  }
  out << "\n]}\n";
  if (!out) return core::Error{"writing the Chrome trace failed", core::ErrorKind::Io};
  return outcome;
}

}  // namespace shardscope::profiler
