// shardscope-cli export-trace: a stored run (or part of it) as Chrome trace
// JSON for Perfetto and chrome://tracing (profiler/workflow/chrome_trace.h).
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "profiling_commands.h"
#include "shardscope/core/units.h"
#include "shardscope/profiler/workflow/chrome_trace.h"

namespace shardscope::app::cli {

namespace {
constexpr const char* kExportHelp =
    R"(usage: shardscope-cli export-trace --store F [--run ID] [--ranks 0,1,...] [--from-ms A] [--to-ms B]
                                  (--out trace.json | --per-rank-dir DIR)

Writes one run of the trace store F (default: the newest) as Chrome trace
JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open: a process
per rank, a thread per stream (compute, comm, GPU streams) and one for the
collectives; every span an event with its kind as category and step, bytes,
CUPTI correlation and table as arguments; every collective with its group,
process group, algorithm, sequence number and bytes. Times are exact to the
ns, and each event names the row it came from, so `import kineto` reads the
export back into the same spans and collectives.

  --out F.json          every rank in one file (one rank: it imports as is)
  --per-rank-dir DIR    one file per rank, DIR/rank<N>.json, each with
                        distributedInfo.rank: `import kineto DIR` reads them;
                        DIR is made if missing and must hold no rank<N>.json
  --ranks 0,1,...       only these ranks
  --from-ms A           the window, in ms from the run's first span (spans
  --to-ms B             that overlap it are written whole)

Exit 0 written, 1 store or run unreadable, 2 usage (also: DIR holds rank
files already), 3 a file cannot be written.
)";

std::optional<double> parseMs(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v >= 0) || v > 1e12) return std::nullopt;
  return v;
}

std::optional<std::vector<int>> parseRanks(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto v = core::parseWholeNumber(item, 0, static_cast<std::uint64_t>(std::numeric_limits<int>::max()));
    if (!v) return std::nullopt;
    out.push_back(static_cast<int>(*v));
  }
  if (out.empty()) return std::nullopt;
  return out;
}
}  // namespace

int runExportTrace(Args args) {
  if (args.flag("--help")) {
    std::cout << kExportHelp;
    return kExitOk;
  }
  auto store = args.option("--store");
  auto run = args.option("--run");
  auto ranks = args.option("--ranks");
  auto from = args.option("--from-ms");
  auto to = args.option("--to-ms");
  auto out = args.option("--out");
  auto dir = args.option("--per-rank-dir");
  if (auto bad = args.problem()) return usageError("export-trace: " + *bad);
  if (!store) return usageError("export-trace needs --store <file>");
  if (!out && !dir) return usageError("export-trace needs --out <file.json> or --per-rank-dir <folder>");
  if (out && dir) return usageError("export-trace: --out and --per-rank-dir exclude each other");
  profiler::ChromeTraceRequest request;
  request.store = *store;
  if (run) {
    const auto id = parsePositive(*run, static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()));
    if (!id) return usageError("export-trace: --run must be a positive run id, got '" + *run + "'");
    request.run = core::store::RunId{static_cast<std::int64_t>(*id)};
  }
  if (ranks) {
    auto list = parseRanks(*ranks);
    if (!list) return usageError("export-trace: --ranks must be ranks such as 0,1,5, got '" + *ranks + "'");
    request.ranks = std::move(*list);
  }
  if (from && !(request.from_ms = parseMs(*from)))
    return usageError("export-trace: --from-ms must be a number of ms >= 0, got '" + *from + "'");
  if (to && !(request.to_ms = parseMs(*to)))
    return usageError("export-trace: --to-ms must be a number of ms >= 0, got '" + *to + "'");
  if (request.from_ms && request.to_ms && *request.to_ms < *request.from_ms)
    return usageError("export-trace: --to-ms is before --from-ms");

  if (dir) {
    auto written = profiler::writeChromeTraceFiles(request, *dir);
    if (!written) return fail(written.error(), "export-trace: ");
    std::cout << "run " << static_cast<long long>(written->run) << ": " << written->spans << " spans and "
              << written->collectives << " collectives written to " << written->files.size() << " file(s) in " << *dir
              << "\n";
    return kExitOk;
  }
  std::ofstream file(*out, std::ios::binary | std::ios::trunc);
  if (!file)
    return fail(core::Error{*out + ": cannot write (" + std::strerror(errno) + ")", core::ErrorKind::Io, *out});
  auto written = profiler::writeChromeTrace(request, file);
  file.close();
  if (!written) return fail(written.error(), "export-trace: ");
  if (!file) return fail(core::Error{*out + ": writing failed", core::ErrorKind::Io, *out});
  std::cout << "run " << static_cast<long long>(written->run) << ": " << written->spans << " spans and "
            << written->collectives << " collectives written to " << *out << "\n";
  return kExitOk;
}

}  // namespace shardscope::app::cli
