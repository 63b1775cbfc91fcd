// bench_engine_kernels: throughput of the engine's CPU embedding kernels on this
// machine, against what the memory system allows, measured in the same process:
//   copy    streaming copy bandwidth (GB/s counting read + write)
//   gather  random-row gather bound: the same rows at the same ids, summed per bag
//           as 32-bit words by a plain loop (auto-vectorized), same threads
//   fwd     embeddingForward (Sum) on those ids: GB/s of row bytes read, % of gather
//   bwd     embeddingBackwardAdagrad (Sum) on those ids
// No assertions: it prints a table, and --json FILE writes the figures.
// --write-inputs DIR writes the main configuration's inputs for torch_embedding_bag.py.
//
//   bench_engine_kernels [--threads T] [--rows R] [--dim D] [--bags B] [--pooling P]
//                        [--reps N] [--seed S] [--no-extra] [--write-inputs DIR] [--json FILE]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/thread_pool.h"

namespace sp = shardscope::profiler;
namespace fs = std::filesystem;

namespace {

struct Options {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::uint64_t rows = 2'000'000;  // x 128 x 4 B = 1 GB: far past any cache, well under 4 GB
  std::uint32_t dim = 128;
  std::size_t bags = 16384;
  std::uint32_t pooling = 32;
  int reps = 5;
  std::uint64_t seed = 1;
  bool extra = true;
  std::string write_inputs;
  std::string json;
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "bench_engine_kernels: %s\n", msg.c_str());
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
    const auto number = [&]() -> std::uint64_t {
      const std::string v = value();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0') die((std::string("expected a number after ") += a) += ", got " + v);
      return n;
    };
    if (a == "--threads") {
      o.threads = static_cast<unsigned>(number());
    } else if (a == "--rows") {
      o.rows = number();
    } else if (a == "--dim") {
      o.dim = static_cast<std::uint32_t>(number());
    } else if (a == "--bags") {
      o.bags = number();
    } else if (a == "--pooling") {
      o.pooling = static_cast<std::uint32_t>(number());
    } else if (a == "--reps") {
      o.reps = static_cast<int>(number());
    } else if (a == "--seed") {
      o.seed = number();
    } else if (a == "--no-extra") {
      o.extra = false;
    } else if (a == "--write-inputs") {
      o.write_inputs = value();
    } else if (a == "--json") {
      o.json = value();
    } else {
      die(std::string("unknown option ") += a);
    }
  }
  if (o.threads == 0 || o.rows == 0 || o.dim == 0 || o.bags == 0 || o.pooling == 0 || o.reps <= 0) {
    die("--threads, --rows, --dim, --bags, --pooling and --reps must be positive");
  }
  if (o.rows > 0xffffffffULL) die("--rows must fit in 32 bits (ids are uint32)");
  return o;
}

using Clock = std::chrono::steady_clock;

struct Timing {
  double best = 0;
  double median = 0;
};

// One warm-up, then `reps` timed runs.
template <typename F>
Timing timeIt(int reps, const F& f) {
  f();
  std::vector<double> t(static_cast<std::size_t>(std::max(reps, 1)));
  for (double& x : t) {
    const auto t0 = Clock::now();
    f();
    x = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  std::sort(t.begin(), t.end());
  const double* sorted = t.data();
  if (sorted == nullptr) return Timing{};
  return Timing{sorted[0], sorted[t.size() / 2]};
}

struct Inputs {
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> ids;
};

Inputs makeInputs(const Options& o, std::uint64_t rows) {
  Inputs in;
  std::mt19937_64 rng(o.seed);
  in.offsets.resize(o.bags + 1);
  in.ids.resize(o.bags * o.pooling);
  for (std::size_t s = 0; s <= o.bags; ++s) in.offsets[s] = static_cast<std::uint32_t>(s * o.pooling);
  for (auto& id : in.ids) id = static_cast<std::uint32_t>(rng() % rows);
  return in;
}

double copyBandwidth(const Options& o, sp::ThreadPool& pool) {
  const std::size_t bytes = std::size_t{256} << 20;
  std::vector<char> src(bytes, 1);
  std::vector<char> dst(bytes, 0);
  const std::size_t block = std::size_t{1} << 20;
  const Timing t = timeIt(o.reps, [&] {
    pool.parallelFor(bytes / block, 1, [&](std::size_t b, std::size_t e) {
      std::memcpy(dst.data() + b * block, src.data() + b * block, (e - b) * block);
    });
  });
  return 2.0 * static_cast<double>(bytes) / t.best / 1e9;
}

// The plain gather: same rows, same ids, same threads; each bag's rows summed as
// 32-bit words by the plainest loop the compiler vectorizes.
Timing plainGather(const Options& o, const sp::EmbeddingShard& shard, const Inputs& in, sp::ThreadPool& pool) {
  const std::size_t words = shard.rowBytes() / 4;
  const auto* table = reinterpret_cast<const std::uint32_t*>(shard.weightBytes().data());
  std::vector<std::uint32_t> out(o.bags * words);
  return timeIt(o.reps, [&] {
    pool.parallelFor(o.bags, 16, [&](std::size_t b, std::size_t e) {
      for (std::size_t s = b; s < e; ++s) {
        std::uint32_t* acc = out.data() + s * words;
        std::fill(acc, acc + words, 0u);
        for (std::uint32_t p = in.offsets[s]; p < in.offsets[s + 1]; ++p) {
          const std::uint32_t* row = table + std::size_t{in.ids[p]} * words;
          for (std::size_t w = 0; w < words; ++w) acc[w] += row[w];
        }
      }
    });
  });
}

// The line-touch gather: one 8-byte load from every 64-byte line of every row
// looked up, with software prefetch `distance` ids ahead: the memory system's
// random-row throughput with almost no compute, the bound a kernel can approach.
Timing touchGather(const Options& o, const sp::EmbeddingShard& shard, const Inputs& in, sp::ThreadPool& pool,
                   std::uint32_t distance) {
  const std::size_t row_bytes = shard.rowBytes();
  const auto* table = reinterpret_cast<const char*>(shard.weightBytes().data());
  const auto n_ids = static_cast<std::uint32_t>(in.ids.size());
  std::vector<std::uint64_t> out(o.bags);
  return timeIt(o.reps, [&] {
    pool.parallelFor(o.bags, 16, [&](std::size_t b, std::size_t e) {
      for (std::size_t s = b; s < e; ++s) {
        std::uint64_t acc = 0;
        for (std::uint32_t p = in.offsets[s]; p < in.offsets[s + 1]; ++p) {
          if (distance > 0 && p + distance < n_ids) {
            const char* ahead = table + std::size_t{in.ids[p + distance]} * row_bytes;
            for (std::size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(ahead + off, 0, 0);
          }
          const char* row = table + std::size_t{in.ids[p]} * row_bytes;
          for (std::size_t off = 0; off < row_bytes; off += 64) {
            std::uint64_t v = 0;
            std::memcpy(&v, row + off, sizeof v);
            acc ^= v;
          }
        }
        out[s] = acc;
      }
    });
  });
}

struct Row {
  std::string name;
  std::uint64_t rows = 0;
  std::uint32_t dim = 0;
  double table_gb = 0;
  double gbps = 0;
  double median_gbps = 0;
  double plain_gbps = 0;
  double bound_gbps = 0;
  double pct = 0;
  double ms = 0;
};

Row forwardRow(const Options& o, sp::ThreadPool& pool, std::uint32_t dim, sp::WeightType type, sp::KernelIsa isa,
               const std::string& name, std::vector<float>* out_keep, Inputs* in_keep, sp::EmbeddingShard* shard_keep) {
  // Tables of other dims keep the main table's byte size, so all are equally far past the caches.
  const std::size_t elem = type == sp::WeightType::F32 ? 4 : 2;
  const std::uint64_t rows = std::max<std::uint64_t>(1, o.rows * o.dim * 4 / (std::uint64_t{dim} * elem));
  sp::EmbeddingShard shard(rows, dim, type);
  shard.initialize(o.seed, 0, 0);
  Inputs in = makeInputs(o, rows);
  const sp::Bags bags{in.offsets, in.ids};
  std::vector<float> out(o.bags * dim);
  const Timing plain = plainGather(o, shard, in, pool);
  double bound_s = plain.best;
  for (std::uint32_t distance : {0u, 4u, 8u, 16u})
    bound_s = std::min(bound_s, touchGather(o, shard, in, pool, distance).best);
  const Timing fwd =
      timeIt(o.reps, [&] { sp::embeddingForward(isa, shard, bags, sp::Pooling::Sum, out.data(), dim, &pool); });
  const double bytes = static_cast<double>(in.ids.size()) * static_cast<double>(shard.rowBytes());
  Row r;
  r.name = name;
  r.rows = rows;
  r.dim = dim;
  r.table_gb = static_cast<double>(shard.weightBytes().size()) / 1e9;
  r.gbps = bytes / fwd.best / 1e9;
  r.median_gbps = bytes / fwd.median / 1e9;
  r.plain_gbps = bytes / plain.best / 1e9;
  r.bound_gbps = bytes / bound_s / 1e9;
  r.pct = 100.0 * r.gbps / r.bound_gbps;
  r.ms = fwd.best * 1e3;
  if (out_keep != nullptr) *out_keep = std::move(out);
  if (in_keep != nullptr) *in_keep = std::move(in);
  if (shard_keep != nullptr) *shard_keep = std::move(shard);
  return r;
}

template <typename T>
void writeRaw(const fs::path& p, const T* data, std::size_t n) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(T)));
  if (!f) die(std::string("cannot write ") += p.string());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  sp::ThreadPool pool(o.threads);
  const sp::KernelIsa isa = sp::detectedKernelIsa();
  std::printf("bench_engine_kernels: threads %u, kernels %s, bags %zu x pooling %u, reps %d (best of)\n", o.threads,
              sp::kernelIsaName(isa), o.bags, o.pooling, o.reps);

  const double copy_gbps = copyBandwidth(o, pool);
  std::printf("streaming copy: %.2f GB/s (read + write)\n\n", copy_gbps);

  std::vector<Row> rows;
  std::vector<float> main_out;
  Inputs main_in;
  sp::EmbeddingShard main_shard;
  rows.push_back(forwardRow(o, pool, o.dim, sp::WeightType::F32, isa, "fwd f32", &main_out, &main_in, &main_shard));

  // Backward + AdaGrad on the main table and ids.
  const sp::Bags bags{main_in.offsets, main_in.ids};
  std::vector<float> grad(o.bags * o.dim);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& g : grad) g = dist(rng);
  sp::BackwardWorkspace ws;
  sp::BackwardStats stats;
  const sp::AdagradConfig config{1e-4f, 1e-8f};
  const Timing bwd = timeIt(o.reps, [&] {
    stats =
        sp::embeddingBackwardAdagrad(isa, main_shard, bags, sp::Pooling::Sum, grad.data(), o.dim, config, ws, &pool);
  });
  const double lookups = static_cast<double>(stats.lookups);
  const double bwd_bytes = static_cast<double>(stats.unique_rows) * static_cast<double>(main_shard.rowBytes()) * 2.0;

  if (o.extra) {
    rows.push_back(forwardRow(o, pool, o.dim, sp::WeightType::F32, sp::KernelIsa::Portable, "fwd f32 portable", nullptr,
                              nullptr, nullptr));
    rows.push_back(forwardRow(o, pool, o.dim, sp::WeightType::F16, isa, "fwd f16", nullptr, nullptr, nullptr));
    for (std::uint32_t d : {32u, 64u, 256u}) {
      if (d != o.dim)
        rows.push_back(forwardRow(o, pool, d, sp::WeightType::F32, isa, "fwd f32", nullptr, nullptr, nullptr));
    }
  }

  // The main configuration's inputs, weights and our output, for torch_embedding_bag.py;
  // written after the timings (writing a GB file disturbs them), so the weights are
  // the ones the backward passes left, and our output is recomputed on them.
  if (!o.write_inputs.empty()) {
    const fs::path dir = o.write_inputs;
    fs::create_directories(dir);
    writeRaw(dir / "offsets.u32", main_in.offsets.data(), main_in.offsets.size());
    writeRaw(dir / "ids.u32", main_in.ids.data(), main_in.ids.size());
    writeRaw(dir / "weights.f32", main_shard.f32Row(0), static_cast<std::size_t>(main_shard.rows()) * o.dim);
    sp::embeddingForward(main_shard, bags, sp::Pooling::Sum, main_out.data(), o.dim, &pool);
    writeRaw(dir / "ours_out.f32", main_out.data(), main_out.size());
    std::ofstream meta(dir / "meta.json");
    meta << "{\"rows\": " << main_shard.rows() << ", \"dim\": " << o.dim << ", \"bags\": " << o.bags
         << ", \"pooling\": " << o.pooling << ", \"threads\": " << o.threads << ", \"reps\": " << o.reps
         << ", \"seed\": " << o.seed << ", \"dtype\": \"f32\", \"mode\": \"sum\"}\n";
    if (!meta) die(std::string("cannot write ") += (dir / "meta.json").string());
  }

  main_shard = sp::EmbeddingShard();

  std::printf("gather = random-row bound (best of plain loop and line-touch with prefetch), GB/s of row bytes\n");
  std::printf("%-18s %5s %10s %8s %9s %9s %9s %7s %7s %9s\n", "kernel", "dim", "rows", "table GB", "ms", "GB/s",
              "median", "plain", "gather", "% gather");
  for (const Row& r : rows) {
    std::printf("%-18s %5u %10llu %8.2f %9.3f %9.2f %9.2f %7.2f %7.2f %8.1f%%\n", r.name.c_str(), r.dim,
                static_cast<unsigned long long>(r.rows), r.table_gb, r.ms, r.gbps, r.median_gbps, r.plain_gbps,
                r.bound_gbps, r.pct);
  }
  std::printf(
      "\nbwd+adagrad f32 dim %u: %.3f ms (median %.3f), %.1f M lookups/s, %llu unique rows, %.2f GB/s of unique rows "
      "read+written\n",
      o.dim, bwd.best * 1e3, bwd.median * 1e3, lookups / bwd.best / 1e6,
      static_cast<unsigned long long>(stats.unique_rows), bwd_bytes / bwd.best / 1e9);

  if (!o.json.empty()) {
    std::ostringstream j;
    j << "{\n  \"schema\": \"shardscope.bench-engine-kernels/1\",\n  \"threads\": " << o.threads << ",\n  \"isa\": \""
      << sp::kernelIsaName(isa) << "\",\n  \"bags\": " << o.bags << ",\n  \"pooling\": " << o.pooling
      << ",\n  \"reps\": " << o.reps << ",\n  \"copy_gbps\": " << copy_gbps << ",\n  \"forward\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      j << (i == 0 ? "\n" : ",\n") << "    {\"name\": \"" << r.name << "\", \"dim\": " << r.dim
        << ", \"rows\": " << r.rows << ", \"table_gb\": " << r.table_gb << ", \"ms\": " << r.ms
        << ", \"gbps\": " << r.gbps << ", \"median_gbps\": " << r.median_gbps
        << ", \"plain_gather_gbps\": " << r.plain_gbps << ", \"gather_bound_gbps\": " << r.bound_gbps
        << ", \"pct_of_gather\": " << r.pct << "}";
    }
    j << "\n  ],\n  \"backward\": {\"dim\": " << o.dim << ", \"ms\": " << bwd.best * 1e3
      << ", \"median_ms\": " << bwd.median * 1e3 << ", \"lookups\": " << stats.lookups
      << ", \"unique_rows\": " << stats.unique_rows << ", \"mlookups_per_s\": " << lookups / bwd.best / 1e6
      << ", \"gbps\": " << bwd_bytes / bwd.best / 1e9 << "}\n}\n";
    std::ofstream f(o.json);
    f << j.str();
    if (!f) die(std::string("cannot write ") += o.json);
  }
  return 0;
}
