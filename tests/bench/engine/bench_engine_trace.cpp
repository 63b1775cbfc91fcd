// bench_engine_trace: what recording spans costs an emulate run. A DCNv2-like
// model (the preset's 26 tables, dims and pooling, rows capped so that it fits
// a small machine) planned on 4 GPUs as one sharding group, emulated with
// trace_spans on and off in alternating order, several rounds. Reports the
// mean step time of each (over every measured rank and step of every round)
// and the overhead of tracing; the bar is < 3%. Step times include generating
// and routing the ids, the forward and the backward; writing the store comes
// after each rank and is not in them. It also times recording alone (ns per
// span x spans per step), the part of the overhead that no machine noise hides.
// No assertions: it prints a table, and --json FILE writes the figures.
//
//   bench_engine_trace [--rounds N] [--steps S] [--batch B] [--max-rows R] [--threads T] [--json FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "shardscope/core/presets.h"
#include "shardscope/planner/sweep.h"
#include "shardscope/profiler/engine/emulate.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace sp = shardscope::profiler;
namespace core = shardscope::core;
namespace fs = std::filesystem;

namespace {

struct Options {
  int rounds = 5;
  std::uint32_t steps = 3;
  std::uint32_t batch = 8192;        // samples per GPU; the group's batch is 4x (a step ~0.5 s on 2 cores)
  std::uint64_t max_rows = 200'000;  // per table
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::string json;
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "bench_engine_trace: %s\n", msg.c_str());
  std::exit(1);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(std::string("missing value after ") += a);
      return argv[++i];
    };
    const auto number = [&]() -> unsigned long long {
      const std::string v = value();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n == 0) die(a + " expects a positive integer, got \"" + v + "\"");
      return n;
    };
    if (a == "--rounds")
      o.rounds = static_cast<int>(number());
    else if (a == "--steps")
      o.steps = static_cast<std::uint32_t>(number());
    else if (a == "--batch")
      o.batch = static_cast<std::uint32_t>(number());
    else if (a == "--max-rows")
      o.max_rows = number();
    else if (a == "--threads")
      o.threads = static_cast<unsigned>(number());
    else if (a == "--json")
      o.json = value();
    else if (a == "--help" || a == "-h") {
      std::printf(
          "bench_engine_trace [--rounds N] [--steps S] [--batch B] [--max-rows R] [--threads T] [--json FILE]\n");
      std::exit(0);
    } else {
      die("unknown argument " + a);
    }
  }
  return o;
}

struct Sample {
  double step_ms = 0;  // mean over measured ranks and steps
  double emb_ms = 0;   // forward + backward
};

Sample measure(const core::ModelSpec& model, const core::ClusterSpec& cluster, const core::ShardPlan& plan,
               const Options& o, bool spans, const fs::path& store, std::size_t& span_rows) {
  sp::EmulateOptions e;
  e.steps = o.steps;
  e.warmup = 1;
  e.threads = o.threads;
  e.trace_spans = spans;
  e.label = spans ? "bench tracing on" : "bench tracing off";
  auto r = sp::runEmulate(model, cluster, plan, e, store);
  if (!r) die(r.error().message);
  Sample s;
  for (const auto& rank : r->ranks) {
    s.step_ms += rank.step_ms;
    s.emb_ms += rank.fwd_ms + rank.bwd_ms;
  }
  s.step_ms /= static_cast<double>(r->ranks.size());
  s.emb_ms /= static_cast<double>(r->ranks.size());
  std::size_t shards = 0;
  for (std::uint32_t g = 0; g < plan.sharding_group_size; ++g) {
    for (const auto& t : plan.tables)
      for (const auto& sh : t.shards) shards += sh.group_rank == g ? 1 : 0;
  }
  span_rows =
      spans ? o.steps * (2 * plan.sharding_group_size + 2 * shards) : 0;  // step + input per rank, fwd + bwd per shard
  return s;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// What one recorded span costs on its own (a push_back of a POD), timed over
// many spans: the noise-free part of the overhead.
double nsPerSpan() {
  sp::TraceRecorder rec(true);
  const std::uint32_t kind = rec.name(sp::span_kind::kEmbFwd), name = rec.name("cat_0");
  constexpr int kSpans = 2'000'000;
  const std::int64_t t0 = sp::traceNowNs();
  for (int i = 0; i < kSpans; ++i) rec.span({i & 3, sp::kComputeStream, kind, name, name, i, i + 1, i >> 8, 64});
  const std::int64_t t1 = sp::traceNowNs();
  if (rec.spanCount() != kSpans) die("recorder lost spans");
  return static_cast<double>(t1 - t0) / kSpans;
}

double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  auto preset = core::modelPreset("dcnv2");
  if (!preset) die(preset.error().message);
  core::ModelSpec model = std::move(*preset);
  model.name += " (rows capped)";
  for (auto& t : model.tables) t.rows = std::min(t.rows, o.max_rows);
  model.batch_size_per_gpu = o.batch;
  auto cluster_preset = core::clusterPreset("h100x8");
  if (!cluster_preset) die(cluster_preset.error().message);
  core::ClusterSpec cluster = std::move(*cluster_preset);
  cluster.nodes = 1;
  cluster.gpus_per_node = 4;
  shardscope::planner::SweepOptions so;
  so.only_group_size = 4;
  so.only_layout = core::RankLayout::Strided;
  const auto swept = shardscope::planner::sweep(model, cluster, nullptr, {}, so);
  if (swept.grids.empty()) die("the planner gave no plan");
  const core::ShardPlan plan = swept.grids.front().plan;

  const fs::path store = fs::temp_directory_path() / ("bench_engine_trace_" + std::to_string(::getpid()) + ".sqlite");
  std::vector<double> on, off, on_emb, off_emb;
  std::size_t spans_per_run = 0;
  std::printf("%d rounds of %u steps, 4 ranks, batch %u per GPU, %u threads; store %s\n", o.rounds, o.steps, o.batch,
              o.threads, store.c_str());
  for (int round = 0; round < o.rounds; ++round) {
    // Alternate which goes first so that drift on a shared machine hits both.
    for (int k = 0; k < 2; ++k) {
      const bool spans = (round + k) % 2 == 0;
      std::size_t span_rows = 0;
      const Sample s = measure(model, cluster, plan, o, spans, store, span_rows);
      (spans ? on : off).push_back(s.step_ms);
      (spans ? on_emb : off_emb).push_back(s.emb_ms);
      if (spans) spans_per_run = span_rows;
      std::printf("round %d  tracing %-3s  step %8.2f ms  emb %8.2f ms\n", round, spans ? "on" : "off", s.step_ms,
                  s.emb_ms);
      std::fflush(stdout);
    }
  }
  std::error_code ec;
  fs::remove(store, ec);
  fs::remove(fs::path(store.string() + "-wal"), ec);
  fs::remove(fs::path(store.string() + "-shm"), ec);

  const double overhead = (mean(on) / mean(off) - 1.0) * 100.0;
  // Each round's pair ran back to back: the median of the pairs' ratios is
  // the figure least moved by other load on a shared machine.
  std::vector<double> pair_pct;
  for (std::size_t i = 0; i < std::min(on.size(), off.size()); ++i) pair_pct.push_back((on[i] / off[i] - 1.0) * 100.0);
  const double overhead_median = median(pair_pct);
  const double span_ns = nsPerSpan();
  const double spans_per_rank_step = static_cast<double>(spans_per_run) / (4.0 * o.steps);
  const double direct_pct = span_ns * spans_per_rank_step / (mean(off) * 1e6) * 100.0;
  std::printf("\n%-12s %10s %10s %10s %10s\n", "", "step ms", "median", "sd", "emb ms");
  std::printf("%-12s %10.2f %10.2f %10.2f %10.2f\n", "tracing on", mean(on), median(on), stddev(on), mean(on_emb));
  std::printf("%-12s %10.2f %10.2f %10.2f %10.2f\n", "tracing off", mean(off), median(off), stddev(off), mean(off_emb));
  std::printf("overhead of the means %.2f%%, median of the round pairs %.2f%% (bar < 3%%)\n", overhead,
              overhead_median);
  std::printf("recording alone: %.1f ns per span x %.0f spans per rank-step = %.5f%% of a step\n", span_ns,
              spans_per_rank_step, direct_pct);

  if (!o.json.empty()) {
    nlohmann::ordered_json j;
    j["bench"] = "bench_engine_trace";
    j["model"] = model.name;
    j["tables"] = model.tables.size();
    j["max_rows"] = o.max_rows;
    j["batch_size_per_gpu"] = o.batch;
    j["group_size"] = 4;
    j["threads"] = o.threads;
    j["rounds"] = o.rounds;
    j["steps"] = o.steps;
    j["spans_per_run"] = spans_per_run;
    j["step_ms_on"] = mean(on);
    j["step_ms_off"] = mean(off);
    j["step_ms_sd_on"] = stddev(on);
    j["step_ms_sd_off"] = stddev(off);
    j["emb_ms_on"] = mean(on_emb);
    j["emb_ms_off"] = mean(off_emb);
    j["step_ms_median_on"] = median(on);
    j["step_ms_median_off"] = median(off);
    j["overhead_percent"] = overhead;
    j["overhead_percent_median_of_pairs"] = overhead_median;
    j["ns_per_span"] = span_ns;
    j["spans_per_rank_step"] = spans_per_rank_step;
    j["recording_overhead_percent"] = direct_pct;
    j["bar_percent"] = 3.0;
    std::ofstream out(o.json);
    out << j.dump(2) << "\n";
    if (!out) die("cannot write " + o.json);
  }
  return 0;
}
