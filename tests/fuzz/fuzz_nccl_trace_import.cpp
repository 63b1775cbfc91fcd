// libFuzzer target for the NCCL profiler trace importer
// (profiler/import/nccl_trace_import.cpp): JSON lines, one file per process.
//
// Build (clang only), from the repository root:
//   CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
//     -DSHARDSCOPE_FUZZ=ON -DSHARDSCOPE_BUILD_TESTS=OFF -DSHARDSCOPE_BUILD_GUI=OFF \
//     -DSHARDSCOPE_WITH_MPI=OFF -DSHARDSCOPE_WITH_CUDA=OFF
//   ninja -C build/fuzz fuzz_nccl_trace_import
// Run, seeded with tests/fuzz/seeds/nccl (new inputs go to the first folder):
//   mkdir -p build/fuzz/corpus/nccl
//   build/fuzz/tests/fuzz/fuzz_nccl_trace_import build/fuzz/corpus/nccl tests/fuzz/seeds/nccl \
//     -max_total_time=120 -rss_limit_mb=2048 -max_len=16384 -timeout=10
// A finding leaves crash-<sha1> (or leak-, timeout-, oom-): replay it with
// `fuzz_nccl_trace_import crash-<sha1>`, fix it, and add the input as a case
// in tests/profiler/nccl_plugin/test_nccl_trace_import.cpp.
//
// Each input is written as a file and read with readNcclTrace. Checked:
// - an error names the file (and, for a line, "line N: /path");
// - every call handed over keeps the documented ranges (rank < nranks,
//   end >= start, GPU times in pairs, peers inside the communicator, bytes,
//   seq and step >= 0), in line order, as many as the summary counts;
// - a file that reads is valid JSON line by line (nlohmann::json::accept);
// - a file that reads also imports into a store (nothing the check passed
//   may fail later), and the same file given twice is refused as one rank twice.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardscope/profiler/import/nccl_trace_import.h"

using namespace shardscope;

namespace {

[[noreturn]] void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_nccl_trace_import: %s %s\n", what, detail.c_str());
  std::abort();
}

bool writeFile(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const std::size_t n = std::fwrite(data, 1, size, f);
  std::fclose(f);
  return n == size;
}

core::Status checkCall(const profiler::NcclTraceCall& c, std::int64_t& last_line) {
  if (c.line <= last_line) die("calls out of line order");
  last_line = c.line;
  if (c.comm.nranks < 1 || c.comm.rank < 0 || c.comm.rank >= c.comm.nranks) die("rank outside its communicator");
  if (c.end_ns < c.start_ns || c.start_ns < 0) die("call ends before it starts");
  if ((c.gpu_start_ns >= 0) != (c.gpu_end_ns >= 0) || c.gpu_end_ns < c.gpu_start_ns) die("GPU times not a pair");
  if (c.bytes < 0 || c.seq < 0 || c.step < -1 || c.count < 0) die("negative bytes, seq, step or count");
  for (int p : c.peers)
    if (p < 0 || p >= c.comm.nranks) die("peer outside the communicator");
  if (c.op.empty()) die("empty op");
  return core::Ok{};
}

void removeStore(const std::string& store) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((store + suffix).c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string dir = "/tmp/fuzz_nccl_" + std::to_string(getpid());
  static const bool made = std::filesystem::create_directories(dir) || std::filesystem::is_directory(dir);
  if (!made) die("cannot make", dir);
  const std::string path = dir + "/trace.jsonl";
  if (!writeFile(path, data, size)) die("cannot write", path);

  std::int64_t last_line = 0;
  std::uint64_t calls = 0;
  auto sum = profiler::readNcclTrace(path, [&](const profiler::NcclTraceCall& c) {
    ++calls;
    return checkCall(c, last_line);
  });
  if (!sum.ok()) {
    const std::string& m = sum.error().message;
    if (!m.starts_with(path + ": ")) die("error without the file's name", m);
    if (sum.error().file != path) die("error's file field is not the file", m);
    return 0;
  }
  if (sum->calls != calls) die("summary counts other calls than were handed over");
  if (sum->header.rank < 0 || sum->header.rank >= sum->header.nranks) die("header rank outside the job");
  // Every line of an accepted file is JSON that nlohmann accepts too.
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!nlohmann::json::accept(line)) die("accepted a line nlohmann rejects", std::string(line));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }

  const std::string store = dir + "/store.sqlite";
  removeStore(store);
  auto imported = profiler::importNcclTraces({path}, store);
  if (!imported.ok()) die("a file that reads does not import", imported.error().message);
  std::uint64_t written = 0;
  for (const auto& r : imported->ranks) written += static_cast<std::uint64_t>(r.collectives);
  if (written != imported->calls || imported->calls > sum->calls) die("import counts differ from the file's calls");
  auto twice = profiler::importNcclTraces({path, path}, store);
  if (twice.ok() || twice.error().message.find("was already imported from") == std::string::npos)
    die("the same file twice was not refused as one rank twice", twice.ok() ? "" : twice.error().message);
  removeStore(store);
  return 0;
}
