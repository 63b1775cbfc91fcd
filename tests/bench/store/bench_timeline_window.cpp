// bench_timeline_window: the timeline's window queries on a large run against
// the bars in docs/timeline.md: first paint of the whole run < 1 s after
// opening, each pan/zoom frame < 33 ms including the store query, memory
// < 500 MB. Generates an engine-shaped run (steps of ~105 spans per rank on
// three streams), builds its summaries (timed), then times the whole run and
// a scripted zoom/pan session at 1280 px, read from the spans (raw) and from
// the summaries, in the same process on the same store.
//
//   bench_timeline_window [--ranks R] [--steps S] [--dir D] [--store F [--no-build]] [--keep]
//                         [--pixels P] [--frames N] [--raw-every K] [--visible V]
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/timeline_window.h"

namespace st = shardscope::core::store;
namespace pr = shardscope::profiler;
namespace fs = std::filesystem;

namespace {

struct Options {
  int ranks = 64;
  int steps = 1500;
  fs::path dir = fs::temp_directory_path();
  fs::path store;  // reuse a store this program generated (--keep)
  bool keep = false;
  bool build = true;  // --no-build: view with the summaries the store has
  int pixels = 1280;
  int frames = 200;
  int rawEvery = 10;  // the raw path on every K-th frame of the session (it reads every span of a window)
  int visible = 0;    // ranks per frame, 0: all
  int repeat = -1;    // --repeat I: time frame I of the session 50 times (for a profiler), then stop
};

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "bench_timeline_window: %s\n", msg.c_str());
  std::exit(1);
}

template <class T>
T must(shardscope::core::Result<T> r) {
  if (!r) die(r.error().message);
  return std::move(r).value();
}

void must(const shardscope::core::Status& s) {
  if (!s) die(s.error().message);
}

// Peak resident memory since the last reset (Linux: VmHWM, reset through clear_refs).
void resetPeakMemory() { std::ofstream("/proc/self/clear_refs") << "5"; }
double peakMemoryMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

std::uint64_t fileSize(const fs::path& p) {
  std::error_code ec;
  std::uint64_t n = 0;
  for (const char* suffix : {"", "-wal"}) {
    const auto s = fs::file_size(fs::path(p.string() + suffix), ec);
    n += ec ? 0 : s;
  }
  return n;
}

void removeStore(const fs::path& p) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(fs::path(p.string() + suffix), ec);
}

// Interned names of the generated run.
struct Names {
  st::StringId step, input, embFwd, embBwd, dense, a2aIds, a2aPooled, a2aGrads, allreduce, sync, memcpy, copy;
  std::vector<st::StringId> tables, denseOps;
};

Names internNames(st::RunWriter& w) {
  const auto id = [&w](const std::string& s) { return must(w.intern(s)); };
  Names n{id("step"),
          id("input"),
          id("emb_fwd"),
          id("emb_bwd"),
          id("dense"),
          id("a2a_ids"),
          id("a2a_pooled"),
          id("a2a_grads"),
          id("dense_allreduce"),
          id("replica_sync"),
          id("memcpy"),
          id("Memcpy HtoD (Pinned -> Device)"),
          {},
          {}};
  for (int t = 0; t < 32; ++t) n.tables.push_back(id("table_" + std::to_string(t)));
  for (int d = 0; d < 6; ++d) n.denseOps.push_back(id("gemm_" + std::to_string(d)));
  return n;
}

// One rank's step as the engine records it: 105 spans on three streams.
// Returns the step's end.
std::int64_t stepSpans(const Names& n, int rank, int step, std::int64_t t0, std::mt19937_64& rng,
                       std::vector<st::Span>& out) {
  const auto u = [&rng](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const auto add = [&](int stream, st::StringId kind, st::StringId name, std::int64_t start, std::int64_t dur) {
    st::Span s;
    s.rank = rank;
    s.stream = stream;
    s.kind = kind;
    s.name = name;
    s.start_ns = start;
    s.end_ns = start + dur;
    s.step = step;
    s.correlation = static_cast<std::int64_t>(out.size()) + 1;
    out.push_back(s);
    return start + dur;
  };
  std::int64_t t = add(0, n.input, n.input, t0, u(100'000, 300'000));
  for (const st::StringId table : n.tables) t = add(0, n.embFwd, table, t + u(1'000, 5'000), u(20'000, 150'000));
  const std::int64_t fwdEnd = t;
  for (const st::StringId op : n.denseOps) t = add(0, n.dense, op, t + u(2'000, 10'000), u(400'000, 1'500'000));
  const std::int64_t denseEnd = t;
  for (const st::StringId table : n.tables) t = add(0, n.embBwd, table, t + u(1'000, 5'000), u(40'000, 300'000));
  const std::int64_t stepEnd = add(0, n.step, n.step, t0, t - t0 + u(200'000, 600'000));
  add(1, n.a2aIds, n.a2aIds, t0 + 50'000, u(200'000, 1'000'000));
  add(1, n.a2aPooled, n.a2aPooled, fwdEnd, u(300'000, 2'000'000));
  add(1, n.a2aGrads, n.a2aGrads, denseEnd, u(300'000, 2'000'000));
  const std::int64_t ar = add(1, n.allreduce, n.allreduce, denseEnd + 2'500'000, u(1'000'000, 3'000'000));
  add(1, n.sync, n.sync, ar + 10'000, u(500'000, 1'000'000));
  for (int c = 0; c < 28; ++c) add(2, n.memcpy, n.copy, t0 + c * 600'000 + u(0, 100'000), u(5'000, 40'000));
  return stepEnd;
}

// Writes the run; returns its id.
st::RunId generate(const Options& o, const fs::path& path) {
  removeStore(path);
  auto writer = must(st::RunWriter::begin(path, {st::RunKind::Emulate, "bench timeline", {}, {}, {}, {}}));
  const Names names = internNames(writer);
  for (int r = 0; r < o.ranks; ++r) must(writer.addRank({r, "host" + std::to_string(r / 8), r % 8, -1, -1}));
  std::mt19937_64 rng(42);
  std::vector<std::int64_t> clock(static_cast<std::size_t>(o.ranks), 1'000'000);
  std::vector<st::Span> batch;
  for (int step = 0; step < o.steps; ++step) {
    batch.clear();
    for (int r = 0; r < o.ranks; ++r) {
      auto& t = clock[static_cast<std::size_t>(r)];
      t = stepSpans(names, r, step, t, rng, batch) + 20'000;
    }
    must(writer.addSpans(batch));
  }
  must(writer.finish());
  return writer.run();
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
};
Percentiles percentiles(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
  return {at(0.5), at(0.99), v.back()};
}

// A seeded zoom/pan session over [lo, hi): pans of 5..25 % of the window,
// zooms in and out by 1.25..2x around a random point, between 1 ms and the
// whole run. The first frame is the whole run.
std::vector<std::pair<std::int64_t, std::int64_t>> session(int frames, std::int64_t lo, std::int64_t hi) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto whole = static_cast<double>(hi - lo);
  double t0 = static_cast<double>(lo);
  double width = whole;
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (int f = 0; f < frames; ++f) {
    out.emplace_back(static_cast<std::int64_t>(t0), static_cast<std::int64_t>(t0 + width));
    const double action = unit(rng);
    if (action < 0.4) {
      t0 += width * (0.05 + 0.2 * unit(rng)) * (unit(rng) < 0.5 ? -1 : 1);
    } else {
      const double focus = t0 + width * unit(rng);
      const double factor = 1.25 + 0.75 * unit(rng);
      width = std::clamp(action < 0.7 ? width / factor : width * factor, 1e6, whole);
      t0 = focus -
           (focus - t0) * width / (static_cast<double>(out.back().second) - static_cast<double>(out.back().first));
    }
    t0 = std::clamp(t0, static_cast<double>(lo), static_cast<double>(hi) - width);
  }
  return out;
}

// This thread's CPU time: steadier than the wall clock on a shared machine.
double cpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Frame {
  double ms = 0;
  double cpu = 0;
  int level = -1;
  std::int64_t spans = 0;
};

Frame frame(const st::TraceStore& store, const st::StringTable& strings, pr::TimelineRequest r) {
  const auto t0 = Clock::now();
  const double c0 = cpuMs();
  auto w = must(pr::timelineWindow(store, strings, r));
  return {msSince(t0), cpuMs() - c0, w.summary_level, w.span_count};
}

void printFrames(const char* what, const std::vector<Frame>& frames) {
  std::vector<double> ms, cpu;
  std::int64_t spans = 0;
  for (const Frame& f : frames) {
    ms.push_back(f.ms);
    cpu.push_back(f.cpu);
    spans += f.spans;
  }
  const Percentiles p = percentiles(ms);
  const Percentiles c = percentiles(cpu);
  std::printf("%-28s %4zu frames  p50 %7.1f  p99 %7.1f  max %7.1f ms  (cpu %6.1f %6.1f %6.1f)  %9lld spans/frame\n",
              what, frames.size(), p.p50, p.p99, p.max, c.p50, c.p99, c.max,
              static_cast<long long>(frames.empty() ? 0 : spans / static_cast<std::int64_t>(frames.size())));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--ranks")
      o.ranks = std::stoi(next());
    else if (a == "--steps")
      o.steps = std::stoi(next());
    else if (a == "--dir")
      o.dir = next();
    else if (a == "--store")
      o.store = next();
    else if (a == "--keep")
      o.keep = true;
    else if (a == "--no-build")
      o.build = false;
    else if (a == "--pixels")
      o.pixels = std::stoi(next());
    else if (a == "--frames")
      o.frames = std::stoi(next());
    else if (a == "--raw-every")
      o.rawEvery = std::stoi(next());
    else if (a == "--visible")
      o.visible = std::stoi(next());
    else if (a == "--repeat")
      o.repeat = std::stoi(next());
    else {
      std::printf(
          "usage: bench_timeline_window [--ranks R (64)] [--steps S (1500)] [--dir D (%s)] [--store F [--no-build]]\n"
          "                             [--keep]\n"
          "                             [--pixels P (1280)] [--frames N (200)] [--raw-every K (10, 0: none)]\n"
          "                             [--visible V (0: all ranks)]\n",
          fs::temp_directory_path().c_str());
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  if (o.ranks < 1 || o.steps < 1 || o.pixels < 1 || o.frames < 1 || o.rawEvery < 0 || o.visible < 0) {
    die("need positive --ranks, --steps, --pixels, --frames");
  }
  return o;
}

int runViews(const Options& o, const fs::path& path, st::RunId run) {
  malloc_trim(0);
  resetPeakMemory();
  const auto open0 = Clock::now();
  const auto store = must(st::openStore(path, st::OpenMode::ReadOnly));
  const auto strings = must(store.strings());
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& e : must(store.spanExtents(run))) {
    lo = std::min(lo, e.min_start_ns);
    hi = std::max(hi, e.max_end_ns);
  }
  pr::TimelineRequest whole{run, {}, lo, hi, o.pixels};
  for (int r = 0; r < o.visible; ++r) whole.ranks.push_back(r);
  const Frame first = frame(store, strings, whole);
  const double firstPaint = msSince(open0);
  std::printf(
      "\nfirst paint (open, strings, whole run): %.1f ms (window %.1f ms, level %d, %lld spans); bar < 1000 ms: %s\n",
      firstPaint, first.ms, first.level, static_cast<long long>(first.spans), firstPaint < 1000 ? "PASS" : "FAIL");

  const auto windows = session(o.frames, lo, hi);
  if (o.repeat >= 0 && o.repeat < o.frames) {
    pr::TimelineRequest r = whole;
    std::tie(r.t0_ns, r.t1_ns) = windows[static_cast<std::size_t>(o.repeat)];
    std::vector<Frame> again;
    for (int k = 0; k < 50; ++k) again.push_back(frame(store, strings, r));
    printFrames(("frame " + std::to_string(o.repeat) + " x 50").c_str(), again);
    return 0;
  }
  std::vector<Frame> summary, summarySampled, raw;
  std::vector<std::vector<Frame>> byLevel(st::kSummaryMaxLevel + 2);
  for (std::size_t i = 0; i < windows.size(); ++i) {
    pr::TimelineRequest r = whole;
    std::tie(r.t0_ns, r.t1_ns) = windows[i];
    summary.push_back(frame(store, strings, r));
    byLevel[static_cast<std::size_t>(summary.back().level + 1)].push_back(summary.back());
    if (o.rawEvery > 0 && i % static_cast<std::size_t>(o.rawEvery) == 0) summarySampled.push_back(summary.back());
  }
  const double viewMb = peakMemoryMb();
  std::printf("\nsession at %d px over %s ranks:\n", o.pixels,
              o.visible == 0 ? "all" : std::to_string(o.visible).c_str());
  printFrames("summaries where they pay (default)", summary);
  for (std::size_t l = 0; l < byLevel.size(); ++l) {
    if (byLevel[l].empty()) continue;
    const std::string what = l == 0
                                 ? "  read raw"
                                 : "  level " + std::to_string(l - 1) + " (bucket " +
                                       std::to_string(st::summaryLevelWidth(static_cast<int>(l) - 1) / 1000) + " us)";
    printFrames(what.c_str(), byLevel[l]);
  }
  const Percentiles p = percentiles([&] {
    std::vector<double> v;
    for (const Frame& f : summary) v.push_back(f.ms);
    return v;
  }());
  std::vector<std::size_t> order(summary.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return summary[a].ms > summary[b].ms; });
  std::printf("slowest frames:");
  for (std::size_t k = 0; k < std::min<std::size_t>(5, order.size()); ++k) {
    const auto& [t0, t1] = windows[order[k]];
    std::printf("  #%zu (%.0f ms wide, level %d) %.1f ms", order[k], static_cast<double>(t1 - t0) / 1e6,
                summary[order[k]].level, summary[order[k]].ms);
  }
  std::printf("\nframe max %.1f ms (bar < 33 ms): %s\n", p.max, p.max < 33 ? "PASS" : "FAIL");
  std::printf("peak memory while viewing %.0f MB (bar < 500 MB): %s\n", viewMb, viewMb < 500 ? "PASS" : "FAIL");

  if (o.rawEvery > 0) {
    pr::TimelineRequest exact = whole;
    exact.exact = true;
    malloc_trim(0);
    resetPeakMemory();
    const Frame rawWhole = frame(store, strings, exact);
    std::printf("\nraw (exact = true) whole run: %.1f ms, %lld spans, peak memory %.0f MB\n", rawWhole.ms,
                static_cast<long long>(rawWhole.spans), peakMemoryMb());
    for (std::size_t i = 0; i < windows.size(); i += static_cast<std::size_t>(o.rawEvery)) {
      std::tie(exact.t0_ns, exact.t1_ns) = windows[i];
      raw.push_back(frame(store, strings, exact));
    }
    printFrames("raw, every k-th frame", raw);
    printFrames("summaries, the same frames", summarySampled);
  }
  if (!o.keep && o.store.empty()) {
    removeStore(path);
  } else {
    std::printf("\nkept %s\n", path.c_str());
  }
  return firstPaint < 1000 && p.max < 33 && viewMb < 500 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const fs::path path = o.store.empty() ? o.dir / "bench_timeline_window.db" : o.store;
  std::printf("bench_timeline_window: %s, %d px, %d frames\n", path.c_str(), o.pixels, o.frames);
  if (o.store.empty()) {
    const auto g0 = Clock::now();
    generate(o, path);
    std::printf("generated %d ranks x %d steps in %.1f s, %.0f MB\n", o.ranks, o.steps, msSince(g0) / 1e3,
                static_cast<double>(fileSize(path)) / 1e6);
  }
  st::RunId run{};
  {
    auto store = must(st::openStore(path, st::OpenMode::ReadWrite));
    run = must(store.listRuns()).back().id;
    const std::int64_t spans = must(store.spanCount(run));
    if (!o.build) {
      std::printf("%lld spans; viewing with the summaries the store has\n", static_cast<long long>(spans));
      return runViews(o, path, run);
    }
    const std::uint64_t before = fileSize(path);
    resetPeakMemory();
    const auto b0 = Clock::now();
    must(pr::buildTimelineSummaries(store, run));
    const double buildMs = msSince(b0);
    const auto info = *must(store.spanSummaryInfo(run));
    { auto closed = std::move(store); }  // the last connection checkpoints the log into the file
    std::string levels;
    for (const int l : info.levels) {
      levels += ' ';
      levels += std::to_string(l);
    }
    std::printf(
        "%lld spans; summaries built in %.1f s (peak memory %.0f MB): levels%s, %.1f MB encoded, "
        "store %.0f -> %.0f MB\n",
        static_cast<long long>(spans), buildMs / 1e3, peakMemoryMb(), levels.c_str(),
        static_cast<double>(info.bytes) / 1e6, static_cast<double>(before) / 1e6,
        static_cast<double>(fileSize(path)) / 1e6);
  }
  return runViews(o, path, run);
}
