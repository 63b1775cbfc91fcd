// libFuzzer target for the Kineto importer (profiler/import/kineto_import.cpp
// and its JSON scanner, json_scanner.cpp).
//
// Build (clang only), from the repository root:
//   CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
//     -DSHARDSCOPE_FUZZ=ON -DSHARDSCOPE_BUILD_TESTS=OFF -DSHARDSCOPE_BUILD_GUI=OFF \
//     -DSHARDSCOPE_WITH_MPI=OFF -DSHARDSCOPE_WITH_CUDA=OFF
//   ninja -C build/fuzz fuzz_kineto_import
// Run, seeded with the small fixtures (new inputs go to the first folder):
//   mkdir -p build/fuzz/corpus
//   build/fuzz/tests/fuzz/fuzz_kineto_import build/fuzz/corpus tests/data/import \
//     -max_total_time=720 -rss_limit_mb=2048 -max_len=16384 -timeout=10 -jobs=1
// A finding leaves crash-<sha1> (or leak-, timeout-, oom-): replay it with
// `fuzz_kineto_import crash-<sha1>`, fix it, and add the input as a case in
// tests/profiler/import/test_kineto_import.cpp.
//
// Each input is imported as a file four ways: plain and gzip-compressed,
// each read in the default chunks and in chunks of 1..16 bytes (so that every
// value gets cut by a chunk boundary). Checked:
// - the same outcome every way: the same events and counts, or the same
//   error message (byte offsets, lines and columns included);
// - the sink contract: beginRank once (with a rank >= 0 unless it is
//   provisional: distributedInfo may follow the events), events only inside
//   it with end >= start and a step only on profiler steps, updateRank with a
//   final rank (the same one unless beginRank's was provisional), endRank
//   once on success and never after an error;
// - validity against nlohmann::json::accept: what nlohmann rejects is an
//   error; a syntax error is something nlohmann rejects (except nesting
//   deeper than the scanner's limit, which nlohmann does not have, and input
//   with a NUL byte, which nlohmann takes for the end of the input).
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/profiler/import/kineto_import.h"

using namespace shardscope;

namespace {

[[noreturn]] void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_kineto_import: %s %s\n", what, detail.c_str());
  std::abort();
}

// Checks the contract and keeps a printed form of what it received.
class CheckingSink : public profiler::TraceEventSink {
 public:
  core::Status beginRank(const profiler::ImportRankInfo& r) override {
    if (state != 0) die("beginRank twice");
    if (r.rank_final && r.rank < 0) die("beginRank with a negative final rank");
    state = 1;
    rank = r.rank;
    provisional = !r.rank_final;
    log += "begin " + std::to_string(r.rank) + " " + std::to_string(r.world_size) + " " + r.backend + "\n";
    return core::Ok{};
  }
  core::Status event(const profiler::TraceEvent& e) override {
    if (state != 1) die("event outside a rank");
    if (e.end_ns < e.start_ns) die("event ends before it starts");
    if ((e.step >= 0) != (e.kind == profiler::TraceEventKind::ProfilerStep)) die("step on a non-step event");
    log += std::to_string(static_cast<int>(e.kind));
    for (std::int64_t v : {e.start_ns, e.end_ns, e.stream, e.correlation, e.step, e.in_nelems, e.out_nelems,
                           std::int64_t{e.device}, std::int64_t{e.group_size}}) {
      log += ' ';
      log += std::to_string(v);
    }
    for (std::string_view s : {e.name, e.collective, e.dtype, e.group_ranks}) {
      log += '|';
      log.append(s.data(), s.size());
    }
    log += '\n';
    return core::Ok{};
  }
  core::Status updateRank(const profiler::ImportRankInfo& r) override {
    if (state != 1) die("updateRank outside a rank");
    if (!r.rank_final || r.rank < 0) die("updateRank without a final rank");
    if (!provisional && r.rank != rank) die("updateRank changed a final rank");
    rank = r.rank;
    provisional = false;
    log += "update " + std::to_string(r.world_size) + " " + std::to_string(r.base_time_ns) + "\n";
    return core::Ok{};
  }
  core::Status endRank() override {
    if (state != 1) die("endRank outside a rank");
    if (provisional) die("endRank before the rank was final");
    state = 2;
    return core::Ok{};
  }
  int state = 0;  // 0 before beginRank, 1 inside, 2 after endRank
  int rank = -1;
  bool provisional = false;  // beginRank's rank may change once, with updateRank
  std::string log;
};

std::string describe(const core::Result<profiler::KinetoStats>& r, const CheckingSink& sink) {
  if (!r.ok()) return "error: " + r.error().message + "\n" + sink.log;
  std::string s = "ok " + std::to_string(r->events) + " " + std::to_string(r->missing_time) + " " +
                  std::to_string(r->rank_after_events) + " " + std::to_string(r->rank_from_fallback) + " " +
                  std::to_string(r->bytes_json) + "\n";
  for (const auto* m : {&r->by_cat, &r->unknown_cats, &r->other_phases}) {
    for (const auto& [k, v] : *m) s += k + "=" + std::to_string(v) + ";";
    s += "\n";
  }
  return s + sink.log;
}

std::string importOnce(const std::string& path, std::size_t chunk, int fallback_rank, std::string* error) {
  CheckingSink sink;
  profiler::KinetoOptions o;
  o.fallback_rank = fallback_rank;
  o.chunk_bytes = chunk;
  auto r = profiler::importKineto(path, sink, o);
  if (r.ok() && sink.state != 2) die("success without endRank");
  if (!r.ok() && sink.state == 2) die("error after endRank");
  if (!r.ok() && error != nullptr) *error = r.error().message;
  return describe(r, sink);
}

bool writeFile(const std::string& path, const std::uint8_t* data, std::size_t size, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb1");
    if (f == nullptr) return false;
    const int n = size == 0 ? 0 : gzwrite(f, data, static_cast<unsigned>(size));
    gzclose(f);
    return size == 0 || n == static_cast<int>(size);
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const std::size_t n = std::fwrite(data, 1, size, f);
  std::fclose(f);
  return n == size;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/fuzz_kineto_" + std::to_string(getpid()) + ".json";
  std::uint32_t h = 2166136261u;  // FNV-1a: a chunk size that follows the input
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  const std::size_t tiny = 1 + h % 16;
  const int fallback = size % 3 == 0 ? 1 : -1;
  // Input that is gzip already is read as gzip either way: compare plain runs only.
  const bool gz_magic = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;

  if (!writeFile(path, data, size, false)) die("cannot write", path);
  std::string error;
  const std::string plain = importOnce(path, 0, fallback, &error);
  const std::string plain_tiny = importOnce(path, tiny, fallback, nullptr);
  if (plain != plain_tiny)
    die("plain: default chunks and tiny chunks differ",
        "chunk " + std::to_string(tiny) + "\n" + plain + "\n---\n" + plain_tiny);

  if (!gz_magic) {
    const bool accepted = nlohmann::json::accept(data, data + size);
    const bool ok = plain.starts_with("ok ");
    if (!accepted && ok) die("imported JSON that nlohmann rejects");
    // nlohmann takes a NUL byte between tokens for the end of the input: the
    // scanner, like RFC 8259, does not, so that direction skips such input.
    const bool nul = std::memchr(data, 0, size) != nullptr;
    if (accepted && !nul && error.find("syntax error") != std::string::npos &&
        error.find("nested more than") == std::string::npos)
      die("syntax error on JSON that nlohmann accepts", error);

    if (!writeFile(path, data, size, true)) die("cannot write", path);
    const std::string gz = importOnce(path, 0, fallback, nullptr);
    const std::string gz_tiny = importOnce(path, tiny, fallback, nullptr);
    if (gz != plain) die("gzip and plain differ", plain + "\n---\n" + gz);
    if (gz_tiny != plain) die("gzip tiny chunks and plain differ", plain + "\n---\n" + gz_tiny);
  }
  return 0;
}
