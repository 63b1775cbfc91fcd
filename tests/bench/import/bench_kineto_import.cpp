// bench_kineto_import [--mb N] [--no-store | --store-only] [--keep]: writes a synthetic Kineto
// trace of about N MB (default 200; 2048 for the 2 GB bar) into a temp file,
// then measures on one core: importKineto into a counting sink (parse only),
// importKineto into a temp trace store (the full import), peak RSS of both
// (getrusage), and baselines over the same bytes: raw read throughput,
// nlohmann::json::sax_parse with a no-op handler (the in-process baseline
// the ratios are against) and the importer's own JSON scanner skipping the
// whole document (validation only). Bars: >= 100 MB/s for the full import,
// peak RSS < 200 MB for 2 GB (docs/BENCHMARKS.md).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_scanner.h"  // profiler/import: the importer's scanner, for its no-op baseline
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/import/store_import_sink.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
long peakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// One training step of a TorchRec-like rank: launches, kernels, cpu ops, NCCL.
std::uint64_t writeTrace(const std::string& path, std::uint64_t target_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::uint64_t n = 0;
  auto put = [&](const char* s, std::size_t len) {
    std::fwrite(s, 1, len, f);
    n += len;
  };
  const std::string head =
      R"J({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
"traceEvents": [
)J";
  put(head.data(), head.size());
  static const char* kKernels[] = {
      "void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float, float, 8>(...)",
      "void fbgemm_gpu::split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1<float>(...)",
      "ampere_sgemm_128x64_tn",
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(...)",
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float>>>(...)",
      "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
  };
  char buf[2048];
  double t = 1000.0;
  long corr = 1;
  bool first = true;
  for (long step = 0; n < target_bytes; ++step) {
    const double step_start = t;
    const double step_len = 2000.0 * 500 / 100;
    int len =
        std::snprintf(buf, sizeof buf,
                      R"J(%s{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%ld", "pid": 77, "tid": 77, )J"
                      R"J("ts": %.3f, "dur": %.3f, "args": {"External id": 0}})J",
                      first ? "" : ",\n", step, step_start, step_len);
    first = false;
    put(buf, static_cast<std::size_t>(len));
    for (int i = 0; i < 500 && n < target_bytes; ++i) {
      t += 2.0;
      ++corr;
      len =
          std::snprintf(buf, sizeof buf,
                        ",\n"
                        R"J({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 77, "tid": 77, "ts": %.3f, )J"
                        R"J("dur": 1.250, "args": {"External id": %ld, "Sequence number": %ld, "Fwd thread id": 0, )J"
                        R"J("Record function id": 0}})J"
                        ",\n"
                        R"J({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 77, "tid": 77, )J"
                        R"J("ts": %.3f, "dur": 0.500, "args": {"External id": %ld, "cbid": 211, "correlation": %ld}})J",
                        t, corr, corr, t + 0.2, corr, corr);
      put(buf, static_cast<std::size_t>(len));
      if (i % 50 == 7) {
        len = std::snprintf(
            buf, sizeof buf,
            ",\n"
            R"J({"ph": "X", "cat": "kernel", )J"
            R"J("name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7, )J"
            R"J("ts": %.3f, "dur": 3.000, "args": {"External id": %ld, "device": 0, "stream": 7, )J"
            R"J("correlation": %ld, "registers per thread": 96, "grid": [8, 1, 1], "block": [640, 1, 1], )J"
            R"J("Collective name": "all_to_allv", "In msg nelems": 262144, "Out msg nelems": 262144, )J"
            R"J("Group size": 8, "dtype": "Float", "In split size": "[]", "Out split size": "[]", )J"
            R"J("Process Group Name": "0", "Process Group Description": "default_pg", )J"
            R"J("Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}})J",
            t + 5.0, corr, corr);
      } else {
        len = std::snprintf(
            buf, sizeof buf,
            ",\n"
            R"J({"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": 1.500, )J"
            R"J("args": {"External id": %ld, "queued": 0, "device": 0, "context": 1, "stream": 7, )J"
            R"J("correlation": %ld, "registers per thread": 40, "shared memory": 0, "blocks per SM": 4.5, )J"
            R"J("warps per SM": 18.0, "grid": [528, 1, 1], "block": [128, 1, 1], )J"
            R"J("est. achieved occupancy %%": 100}})J",
            kKernels[i % 6], t + 5.0, corr, corr);
      }
      put(buf, static_cast<std::size_t>(len));
    }
    t = step_start + step_len;
  }
  const std::string tail = "\n],\n\"traceName\": \"bench.json\", \"baseTimeNanoseconds\": 1733000000000000000}\n";
  put(tail.data(), tail.size());
  std::fclose(f);
  return n;
}

class CountingSink : public profiler::TraceEventSink {
 public:
  core::Status beginRank(const profiler::ImportRankInfo&) override { return core::Ok{}; }
  core::Status event(const profiler::TraceEvent& e) override {
    ++events;
    bytes += e.name.size();
    return core::Ok{};
  }
  core::Status endRank() override { return core::Ok{}; }
  std::uint64_t events = 0, bytes = 0;
};

struct NoOp {
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(std::int64_t) { return true; }
  bool number_unsigned(std::uint64_t) { return true; }
  bool number_float(double, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool key(std::string&) { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};

// The mapped trace, handed to the scanner in 64 KiB chunks as the importer reads.
class MappedSource : public profiler::json::ChunkSource {
 public:
  MappedSource(const char* p, std::size_t n) : p_(p), left_(n) {}
  std::ptrdiff_t read(char* buf, std::size_t n) override {
    n = std::min(n, left_);
    std::memcpy(buf, p_, n);
    p_ += n;
    left_ -= n;
    return static_cast<std::ptrdiff_t>(n);
  }

 private:
  const char* p_;
  std::size_t left_;
};

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t mb = 200;
  bool store = true, keep = false, count = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc)
      mb = std::stoull(argv[++i]);
    else if (a == "--no-store")
      store = false;
    else if (a == "--keep")
      keep = true;
    else if (a == "--store-only")
      count = false;
    else {
      std::cerr << "usage: bench_kineto_import [--mb N] [--no-store | --store-only] [--keep]\n";
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("shardscope_bench_kineto_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string trace = (dir / "trace.json").string();
  double t0 = now();
  const std::uint64_t bytes = writeTrace(trace, mb << 20);
  const double mbytes = static_cast<double>(bytes) / (1 << 20);
  std::printf("trace: %.1f MB written in %.1f s (%s)\n", mbytes, now() - t0, trace.c_str());

  double dt = 0;
  double parse_mbs = 0, store_mbs = 0, scanner_mbs = 0, nlohmann_mbs = 0;
  long parse_rss = 0, store_rss = 0;
  if (count) {
    CountingSink counting;
    t0 = now();
    auto parsed = profiler::importKineto(trace, counting);
    dt = now() - t0;
    if (!parsed) {
      std::fprintf(stderr, "%s\n", parsed.error().message.c_str());
      return 1;
    }
    parse_mbs = mbytes / dt;
    parse_rss = peakRssMb();
    std::printf("importKineto -> counting sink: %.1f MB/s (%.2f s, %llu events), peak RSS %ld MB\n", parse_mbs, dt,
                static_cast<unsigned long long>(counting.events), parse_rss);
  }

  if (store) {
    const std::string st = (dir / "bench.sqlite").string();
    profiler::StoreImportOptions o;
    o.label = "bench";
    auto sink = profiler::StoreImportSink::create(st, o);
    if (!sink) {
      std::fprintf(stderr, "%s\n", sink.error().message.c_str());
      return 1;
    }
    t0 = now();
    auto r = profiler::importKineto(trace, **sink);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().message.c_str());
      return 1;
    }
    if (auto f = (*sink)->finish(); !f) {
      std::fprintf(stderr, "%s\n", f.error().message.c_str());
      return 1;
    }
    dt = now() - t0;
    store_mbs = mbytes / dt;
    store_rss = peakRssMb();
    std::printf("importKineto -> trace store:   %.1f MB/s (%.2f s, %llu spans), peak RSS %ld MB\n", store_mbs, dt,
                static_cast<unsigned long long>(r->events), store_rss);
  }

  // Baselines over the same bytes (after the RSS figures: the mapping counts in RSS).
  int fd = open(trace.c_str(), O_RDONLY);
  if (fd >= 0) {
    std::vector<char> chunk(1 << 20);
    t0 = now();
    std::uint64_t sum = 0;
    for (ssize_t k; (k = read(fd, chunk.data(), chunk.size())) > 0;) sum += static_cast<std::uint64_t>(k);
    dt = now() - t0;
    std::printf("baseline raw read:             %.1f MB/s (%llu bytes)\n", mbytes / dt,
                static_cast<unsigned long long>(sum));
    void* m = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      const char* p = static_cast<const char*>(m);
      NoOp noop;
      t0 = now();
      const bool ok = nlohmann::json::sax_parse(p, p + bytes, &noop);
      dt = now() - t0;
      nlohmann_mbs = mbytes / dt;
      std::printf("baseline sax_parse no-op:      %.1f MB/s (%s)\n", nlohmann_mbs, ok ? "ok" : "parse error");
      MappedSource src(p, bytes);
      profiler::json::Scanner scanner(src, 64 << 10);
      t0 = now();
      const bool valid = scanner.skipValue() && scanner.peek() == -1;
      dt = now() - t0;
      scanner_mbs = mbytes / dt;
      std::printf("baseline scanner no-op:        %.1f MB/s (%s)\n", scanner_mbs,
                  valid ? "ok" : scanner.error().c_str());
      munmap(m, bytes);
    }
    close(fd);
  }
  if (!keep) fs::remove_all(dir);

  if (nlohmann_mbs > 0) {
    std::printf("\nvs nlohmann sax_parse no-op (%.1f MB/s, this process):", nlohmann_mbs);
    if (parse_mbs > 0) std::printf("  parse only %.2fx", parse_mbs / nlohmann_mbs);
    if (store_mbs > 0) std::printf("  full import %.2fx", store_mbs / nlohmann_mbs);
    std::printf("  scanner no-op %.2fx\n", scanner_mbs / nlohmann_mbs);
  }
  if (store_mbs > 0)
    std::printf("bar: full import >= 100 MB/s: %s (%.1f MB/s); peak RSS %ld MB (bar < 200 MB at --mb 2048)\n",
                store_mbs >= 100 ? "met" : "MISSED", store_mbs, std::max(parse_rss, store_rss));
  return 0;
}
